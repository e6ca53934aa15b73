// The dense matrix-core executor (raw API, no Kokkos) on the GPU against the double
// reference within its precision's bound, and against the plan emulator with NVIDIA's
// instructions within the summation-order bound (docs/PRECISION.md): presets x f16/bf16/
// tf32/f64 x boundaries, aligned grids, the catalogue, random stencils, large boxes, odd
// and prime extents, rows on every alignment, strided grids, a fused periodic plan, and the
// errors. Skips, saying why, without a GPU of compute capability 8.0+.
#include <cuda_runtime_api.h>

#include "SparStencil_Catalogue.hpp"
#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_DenseEmulator.hpp"
#include "SparStencil_DenseExecutor.hpp"
#include "SparStencil_Presets.hpp"
#include "cuda/gpu_grids.hpp"
#include "test_grid_utils.hpp"

namespace sparstencil::test {
namespace {

#define SKIP_WITHOUT_DENSE_GPU()                                                                       \
  do {                                                                                                 \
    if (cuda_sptc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU test skipped";            \
    if (cuda_sptc::device_info(0).major < 8)                                                           \
      GTEST_SKIP() << "device 0 is below compute capability 8.0 (no mma.sync of the kernel): skipped"; \
  } while (0)

inline constexpr Precision dense_precisions[] = {Precision::f16, Precision::bf16, Precision::tf32, Precision::f64};
constexpr int dense_precision_count           = sizeof dense_precisions / sizeof dense_precisions[0];

std::vector<long> contiguous(const std::vector<long>& extents) {
  std::vector<long> strides(extents.size(), 1);
  for (int a = static_cast<int>(extents.size()) - 2; a >= 0; --a) strides[a] = strides[a + 1] * extents[a + 1];
  return strides;
}

/// The kernel's result against the reference and the NVIDIA emulation (summation_order_slack).
template <int D>
void expect_gpu_matches(const Plan& plan, std::uint64_t seed, std::vector<long> in_strides = {},
                        std::vector<long> out_strides = {}) {
  std::array<int, D> extents{};
  for (int a = 0; a < D; ++a) extents[a] = static_cast<int>(plan.grid[a]);
  if (in_strides.empty()) in_strides = contiguous(plan.grid);
  if (out_strides.empty()) out_strides = contiguous(plan.grid);
  const HostGrid<D> in     = random_grid<D>(extents, grid_format(plan), seed);
  const HostGrid<D> before = random_grid<D>(extents, grid_format(plan), seed + 1);
  const dense::DenseExecutor executor(plan);
  const HostGrid<D> got = run_on_gpu<D>(
      grid_format(plan), in, before, in_strides, out_strides,
      [&](const void* d_in, void* d_out) { executor.apply(d_in, in_strides.data(), d_out, out_strides.data()); });
  const std::string what = name(plan.original) + " " + to_string(plan.precision) +
                           (plan.float_grids ? " on float grids " : " ") + to_string(plan.boundary) + " tile " +
                           impl::tuple_string(plan.tile) + " steps " + std::to_string(plan.fused_steps) + " grid " +
                           impl::tuple_string(plan.grid) + " [" + executor.describe() + "]";
  const SparseExpectation<D> want = sparse_expectation(plan, in, before);
  EXPECT_TRUE(within_bound(got, want.expected, want.slack, 1.0, want.margin)) << "vs reference: " << what;

  HostGrid<D> emulated = before;
  dense::emulate(plan, in, emulated,
                 cuda_sptc::device_info(0).major >= 9 ? dense::Vendor::nvidia_sm90 : dense::Vendor::nvidia);
  const HostGrid<D> order_slack = summation_order_slack(plan, in, before, emulated);
  EXPECT_TRUE(within_bound(got, emulated, order_slack, 1.0)) << "vs emulator: " << what;
  if (plan.boundary == Boundary::interior) {
    const Stencil<D>& applied = as<D>(plan.stencil);
    for (std::size_t flat = 0; flat < got.values.size(); ++flat) {
      if (!in_interior(applied, extents, got.point(flat))) {
        ASSERT_EQ(got.values[flat], before.values[flat]) << "rim changed: " << what;
      }
    }
  }
}

template <int D>
PlanRequest dense_request(const Stencil<D>& s, Precision p, Boundary b, const std::array<int, D>& grid, int steps = 1) {
  PlanRequest r = request_for<D>(s, p, b, steps, grid);
  r.backends    = {"dense"};
  return r;
}

/// Odd and prime grids of several blocks, partial blocks at every far edge.
template <int D>
std::array<int, D> larger_grid(int variant) {
  if constexpr (D == 1) return {variant ? 20011 : 16411};
  else if constexpr (D == 2) return {variant ? 67 : 53, variant ? 557 : 521};
  else return {variant ? 13 : 11, variant ? 37 : 41, variant ? 131 : 139};
}

TEST(DenseExecutor, PresetsEveryPrecisionAndBoundary) {
  SKIP_WITHOUT_DENSE_GPU();
  std::uint64_t seed = 1;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (Precision p : dense_precisions) {
            for (Boundary b : all_boundaries) {
              expect_gpu_matches<D>(make_plan(dense_request<D>(s, p, b, larger_grid<D>(seed % 2))), seed);
              ++seed;
            }
          }
        },
        any);
  }
}

/// Grids whose rows start 16 bytes aligned, several whole blocks: the 16-byte copies and
/// stores inside the grid, value by value at the walls.
template <int D>
std::array<int, D> aligned_grid() {
  if constexpr (D == 1) return {3 * 8192 + 64};
  else if constexpr (D == 2) return {150, 520};
  else return {10, 35, 264};
}

TEST(DenseExecutor, AlignedGridsOfThePresets) {
  SKIP_WITHOUT_DENSE_GPU();
  std::uint64_t seed = 100;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (Precision p : dense_precisions) {
            const Boundary b = all_boundaries[seed % 3];
            expect_gpu_matches<D>(make_plan(dense_request<D>(s, p, b, aligned_grid<D>())), ++seed);
          }
        },
        any);
  }
}

TEST(DenseExecutor, CatalogueAndRandomStencils) {
  SKIP_WITHOUT_DENSE_GPU();
  std::uint64_t seed = 500;
  for (const auto& entry : load_catalogue(reference_catalogue_path())) {
    std::visit(
        [&](const auto& s) {
          constexpr int D         = std::decay_t<decltype(s)>::rank;
          std::array<int, D> grid = larger_grid<D>(seed % 2);
          for (int a = 0; a < D; ++a) grid[a] = std::max(grid[a], 2 * s.radius()[a] + 3);
          const Plan plan = make_plan(
              dense_request<D>(s, dense_precisions[seed % dense_precision_count], all_boundaries[seed % 3], grid));
          expect_gpu_matches<D>(plan, ++seed);
        },
        entry.stencil);
  }
  std::mt19937_64 rng(11);
  for (int i = 0; i < 30; ++i, ++seed) {
    const Precision p = dense_precisions[i % dense_precision_count];
    const Boundary b  = all_boundaries[(i / 3) % 3];
    if (i % 3 == 0)
      expect_gpu_matches<1>(make_plan(dense_request<1>(random_stencil<1>(rng, 1 + i % 6), p, b, {4099})), seed);
    else if (i % 3 == 1)
      expect_gpu_matches<2>(make_plan(dense_request<2>(random_stencil<2>(rng, 1 + i % 5), p, b, larger_grid<2>(i % 2))),
                            seed);
    else
      expect_gpu_matches<3>(make_plan(dense_request<3>(random_stencil<3>(rng, 1 + i % 3), p, b, larger_grid<3>(i % 2))),
                            seed);
  }
}

/// Boxes whose rows span many k chunks (a 15 x 15 box, a 7 x 7 x 7 box): where f64 on
/// sm_90 splits a tile's outputs into halves that reach different chunks.
TEST(DenseExecutor, LargeBoxesInEveryPrecision) {
  SKIP_WITHOUT_DENSE_GPU();
  std::mt19937_64 rng(17);
  std::uint64_t seed = 700;
  for (Precision p : dense_precisions) {
    const Boundary b = all_boundaries[seed % 3];
    expect_gpu_matches<2>(make_plan(dense_request<2>(random_box<2>(rng, 7), p, b, {131, 301})), ++seed);
    expect_gpu_matches<3>(make_plan(dense_request<3>(random_box<3>(rng, 3), p, b, {13, 37, 71})), ++seed);
  }
}

TEST(DenseExecutor, StridedGridsAndAFusedPlan) {
  SKIP_WITHOUT_DENSE_GPU();
  const Plan plan = make_plan(dense_request<2>(presets::box_2d9p(), Precision::f64, Boundary::fixed_rim, {45, 301}));
  expect_gpu_matches<2>(plan, 3, {301 * 3, 3}, {320, 1});
  const Plan half = make_plan(dense_request<3>(presets::heat_3d(), Precision::f16, Boundary::periodic, {9, 21, 70}));
  expect_gpu_matches<3>(half, 5, {21 * 80 + 7, 80, 1}, {21 * 70 * 2, 70 * 2, 2});
  const Plan tf32 = make_plan(dense_request<2>(presets::box_2d49p(), Precision::tf32, Boundary::interior, {37, 211}));
  expect_gpu_matches<2>(tf32, 6, {2 * 211, 1}, {211, 1});
  expect_gpu_matches<2>(
      make_plan(dense_request<2>(presets::heat_2d(), Precision::f16, Boundary::periodic, {61, 263}, 3)), 7);
}

TEST(DenseExecutor, RowsOnEveryAlignment) {
  SKIP_WITHOUT_DENSE_GPU();
  // Rows starting on 2-, 4-, 8- and 16-byte boundaries (the pieces copies and stores of
  // unaligned rows take): widths 1, 2, 4 and 6 past a multiple of 8, contiguous and with
  // input and output rows of other padded strides.
  std::uint64_t seed = 1300;
  for (const Stencil<2>& s : {presets::heat_2d(), presets::box_2d49p()}) {
    for (int width : {1001, 1002, 1004, 1006}) {
      for (Precision p : dense_precisions) {
        for (Boundary b : all_boundaries)
          expect_gpu_matches<2>(make_plan(dense_request<2>(s, p, b, {37, width})), seed++);
      }
      const Plan plan = make_plan(dense_request<2>(s, Precision::f16, Boundary::fixed_rim, {37, width}));
      expect_gpu_matches<2>(plan, seed++, {width + 3, 1}, {width + 5, 1});
    }
  }
}

/// Blocks made by hand (the planner picks larger ones for these cases): a unit of every
/// group count the kernel compiles on its own (8, 4, 2, 1 groups of f16, bf16 and tf32
/// tiles; 4, 2, 1 of f64), and two units in a block of 16 tiles.
TEST(DenseExecutor, UnitsOfEveryGroupCount) {
  SKIP_WITHOUT_DENSE_GPU();
  std::uint64_t seed = 900;
  for (Precision p : dense_precisions) {
    for (const std::vector<int>& tiles : {std::vector<int>{16, 1}, {16, 4}, {32, 4}, {64, 4}, {64, 8}}) {
      Plan plan = make_plan(dense_request<2>(presets::box_2d49p(), p, all_boundaries[seed % 3], {67, 557}));
      if (tiles[0] * tiles[1] > (p == Precision::f64 ? 256 : 512)) continue;  // one unit a wave at most
      plan.tiles_per_block = tiles;
      size_block_image(plan);
      fill_block_tables(plan);
      expect_gpu_matches<2>(plan, ++seed);
    }
  }
}

/// f16 and bf16 operands read from float grids (results staged and stored as float): the
/// presets under every boundary on odd and aligned grids, large boxes, strided grids and
/// units of every group count (the float staging of every block shape), with the float
/// values copied beside the image (the presets, 2-D boxes) and rounded as they are loaded
/// (a 7 x 7 x 7 box; a radius-10 box planned for the A100's smaller blocks).
TEST(DenseExecutor, FloatGridsAsSixteenBitOperands) {
  SKIP_WITHOUT_DENSE_GPU();
  auto on_float = [](PlanRequest r) {
    r.float_grids = true;
    return make_plan(r);
  };
  std::uint64_t seed = 1100;
  std::mt19937_64 rng(23);
  for (Precision p : {Precision::f16, Precision::bf16}) {
    for (const AnyStencil& any : presets::standard_set()) {
      std::visit(
          [&](const auto& s) {
            constexpr int D = std::decay_t<decltype(s)>::rank;
            for (Boundary b : all_boundaries)
              expect_gpu_matches<D>(on_float(dense_request<D>(s, p, b, larger_grid<D>(seed % 2))), ++seed);
            expect_gpu_matches<D>(on_float(dense_request<D>(s, p, all_boundaries[seed % 3], aligned_grid<D>())),
                                  ++seed);
          },
          any);
    }
    expect_gpu_matches<2>(on_float(dense_request<2>(random_box<2>(rng, 7), p, Boundary::fixed_rim, {131, 301})),
                          ++seed);
    for (Boundary b : all_boundaries) {
      const Plan box3 = on_float(dense_request<3>(random_box<3>(rng, 3), p, b, {13, 37, 71}));
      ASSERT_FALSE(dense::copies_beside(box3));
      expect_gpu_matches<3>(box3, ++seed);
      PlanRequest wide = dense_request<2>(random_box<2>(rng, 10), p, b, {67, 301});
      wide.device      = "a100";
      const Plan box2  = on_float(wide);
      ASSERT_FALSE(dense::copies_beside(box2));
      expect_gpu_matches<2>(box2, ++seed);
      if (b == Boundary::periodic) expect_gpu_matches<3>(box3, ++seed, {37 * 80 + 3, 80, 1}, {37 * 71 * 2, 71 * 2, 2});
    }
    expect_gpu_matches<2>(on_float(dense_request<2>(presets::box_2d49p(), p, Boundary::interior, {37, 211})), ++seed,
                          {2 * 211, 1}, {211 + 5, 1});
    expect_gpu_matches<3>(on_float(dense_request<3>(presets::heat_3d(), p, Boundary::periodic, {9, 21, 70})), ++seed,
                          {21 * 80 + 7, 80, 1}, {21 * 70 * 2, 70 * 2, 2});
    for (const std::vector<int>& tiles : {std::vector<int>{16, 1}, {16, 4}, {32, 4}, {64, 4}, {64, 8}}) {
      Plan plan            = on_float(dense_request<2>(presets::box_2d49p(), p, all_boundaries[seed % 3], {67, 557}));
      plan.tiles_per_block = tiles;
      size_block_image(plan);
      fill_block_tables(plan);
      expect_gpu_matches<2>(plan, ++seed);
    }
  }
}

TEST(DenseExecutor, ClearErrors) {
  SKIP_WITHOUT_DENSE_GPU();
  const Plan plan = make_plan(dense_request<2>(presets::heat_2d(), Precision::f16, Boundary::periodic, {32, 64}));
  const dense::DenseExecutor executor(plan);
  DeviceBuffer a(32 * 64 * 2), b(32 * 64 * 2);
  EXPECT_ERROR_MENTIONS(executor.apply(nullptr, b.data), "null");
  EXPECT_ERROR_MENTIONS(executor.apply(a.data, a.data), "overlap");
  const long bad[2] = {64, 0};
  EXPECT_ERROR_MENTIONS(executor.apply(a.data, bad, b.data, bad), "strides must be positive");
  PlanRequest g = dense_request<2>(presets::heat_2d(), Precision::f16, Boundary::periodic, {32, 64});
  g.backends    = {"generic"};
  EXPECT_ERROR_MENTIONS(dense::DenseExecutor{make_plan(g)}, "not dense");
}

}  // namespace
}  // namespace sparstencil::test
