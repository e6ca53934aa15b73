// The CUDA sparse tensor-core executor (raw API, no Kokkos) against the double reference
// within the tensor-core bound, and against the plan emulator within the f32
// summation-order bound (docs/PRECISION.md): presets x f16/bf16/tf32 x boundaries x every
// tile, fused presets, the catalogue, random stencils, odd and prime extents, rows on
// every alignment, strided grids, and the errors. Skips, saying why, without a GPU of
// compute capability 8.0+.
#include <cuda_runtime_api.h>

#include <cstring>

#include "SparStencil_Catalogue.hpp"
#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_Fuse.hpp"
#include "SparStencil_Presets.hpp"
#include "SparStencil_SparseExecutor.hpp"
#include "cuda/gpu_grids.hpp"
#include "test_grid_utils.hpp"

namespace sparstencil::test {
namespace {

#define SKIP_WITHOUT_SPARSE_GPU()                                                                   \
  do {                                                                                              \
    if (cuda_sptc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU test skipped";         \
    if (!cuda_sptc::has_sparse_tensor_cores(cuda_sptc::device_info(0)))                             \
      GTEST_SKIP() << "device 0 is below compute capability 8.0 (no sparse tensor cores): skipped"; \
  } while (0)

/// The kernel's result against the reference (tensor-core bound) and the emulator
/// (f32 summation order: 2^-22 (terms + 2) sum |w||in| plus one unit in the last place
/// of the storage format, since results rounded from slightly different sums may land on
/// neighbouring values). Interior plans leave the rim bit for bit.
/// Plans whose A' does not fit the kernel's registers (the planner does not choose them;
/// tests that walk every tile meet them), counted and reported rather than run.
int unfit_plans = 0;

template <int D>
void expect_gpu_matches(const Plan& plan, std::uint64_t seed, std::vector<long> in_strides = {},
                        std::vector<long> out_strides = {}) {
  if (!cuda_sptc::fits_kernel(plan)) {
    ++unfit_plans;
    EXPECT_ERROR_MENTIONS(cuda_sptc::SparseExecutor{plan}, "holds in registers");
    return;
  }
  std::array<int, D> extents{};
  for (int a = 0; a < D; ++a) extents[a] = static_cast<int>(plan.grid[a]);
  if (in_strides.empty()) in_strides = cuda_sptc::contiguous_strides(plan.grid);
  if (out_strides.empty()) out_strides = cuda_sptc::contiguous_strides(plan.grid);
  const HostGrid<D> in     = random_grid<D>(extents, plan.precision, seed);
  const HostGrid<D> before = random_grid<D>(extents, plan.precision, seed + 1);
  const cuda_sptc::SparseExecutor executor(plan);
  const HostGrid<D> got =
      run_on_gpu<D>(plan.precision, in, before, in_strides, out_strides,
                    [&](const void* d_in, void* d_out) { executor.apply(d_in, in_strides, d_out, out_strides); });
  const std::string what = name(plan.original) + " " + to_string(plan.precision) + " " + to_string(plan.boundary) +
                           " tile " + impl::tuple_string(plan.tile) + " steps " + std::to_string(plan.fused_steps) +
                           " grid " + impl::tuple_string(plan.grid) + " [" + executor.describe() + "]";

  const SparseExpectation<D> want = sparse_expectation(plan, in, before);
  EXPECT_TRUE(within_bound(got, want.expected, want.slack, 1.0, want.margin)) << "vs reference: " << what;

  HostGrid<D> emulated = before;
  cuda_sptc::emulate(plan, in, emulated);
  const HostGrid<D> order_slack = summation_order_slack(plan, in, before, emulated);
  EXPECT_TRUE(within_bound(got, emulated, order_slack, 1.0)) << "vs emulator: " << what;
  if (plan.boundary == Boundary::interior) {
    // The rim of one step where fused launches are exact everywhere, else the fused one's.
    const Stencil<D>& applied = as<D>(plan.fusion_exact_everywhere() ? plan.original : plan.stencil);
    for (std::size_t flat = 0; flat < got.values.size(); ++flat) {
      if (!in_interior(applied, extents, got.point(flat))) {
        ASSERT_EQ(got.values[flat], before.values[flat]) << "rim changed: " << what;
      }
    }
  }
}

/// A request with the sparse executor forced, on `grid`.
template <int D>
PlanRequest sparse_request(const Stencil<D>& s, Precision p, Boundary b, const std::array<int, D>& grid,
                           int steps = 1) {
  PlanRequest r = request_for<D>(s, p, b, steps, grid);
  r.backends    = {"cuda_sptc"};
  return r;
}

TEST(SparseExecutor, PresetsEveryTilePrecisionAndBoundary) {
  SKIP_WITHOUT_SPARSE_GPU();
  std::uint64_t seed = 1;
  unfit_plans        = 0;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (Precision p : sparse_precisions) {
            for (Boundary b : all_boundaries) {
              for (const auto& tile : cuda_sptc::candidate_tiles(D, radius_vector(s))) {
                expect_gpu_matches<D>(cuda_sptc::make_sparse_plan(sparse_request<D>(s, p, b, small_grid<D>()), tile),
                                      seed++);
              }
              // Both row-run forms on the row tile, whichever the planner picks.
              for (Pairing form : {Pairing::parity_split, Pairing::interleaved}) {
                PlanRequest r = sparse_request<D>(s, p, b, small_grid<D>());
                r.pairing     = form;
                std::vector<int> row_tile(D, 1);
                row_tile.back() = 16;
                expect_gpu_matches<D>(cuda_sptc::make_sparse_plan(r, row_tile), seed++);
              }
            }
          }
        },
        any);
  }
  std::printf("presets: %d tile plans exceed the kernel's registers (refused with a clear error)\n", unfit_plans);
}

TEST(SparseExecutor, PresetsOnLargerOddAndPrimeGrids) {
  SKIP_WITHOUT_SPARSE_GPU();
  // Several blocks per thread block along axis 0, the vector copy path (aligned rows)
  // and the element path (odd rows), partial blocks at every far edge.
  std::uint64_t seed = 100;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          std::vector<std::array<int, D>> grids;
          if constexpr (D == 1) grids = {{100000}, {10007}};
          else if constexpr (D == 2) grids = {{300, 1000}, {211, 523}};
          else grids = {{40, 50, 128}, {23, 29, 67}};
          for (const auto& grid : grids) {
            for (Precision p : sparse_precisions) {
              for (Boundary b : all_boundaries)
                expect_gpu_matches<D>(make_plan(sparse_request<D>(s, p, b, grid)), seed++);
            }
          }
        },
        any);
  }
}

TEST(SparseExecutor, InterleavedRowsOnAlignedGrids) {
  SKIP_WITHOUT_SPARSE_GPU();
  // 2-D interleaved rows whose pairs all lie inside the grid are copied pair by pair
  // straight to their interleaved places; elsewhere (the edges, periodic wraps) as they
  // are and interleaved in place. Rows of 200 values (16-byte aligned) put whole strips
  // inside; 16-bit values; every boundary; pairs 4, 8 and 16 apart (the 15 x 15 box).
  std::uint64_t seed          = 500;
  std::vector<AnyStencil> set = presets::standard_set();
  set.push_back(box<2>(7));
  set.push_back(box<2>(5));
  int n = 0;
  for (const AnyStencil& any : set) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          if constexpr (D == 2) {
            for (Precision p : {Precision::f16, Precision::bf16}) {
              for (Boundary b : all_boundaries) {
                PlanRequest r   = sparse_request<2>(s, p, b, {83, 200});
                r.pairing       = Pairing::interleaved;
                const Plan plan = cuda_sptc::make_sparse_plan(r, {1, 16});
                ASSERT_NE(plan.interleave, 0) << name(any);
                expect_gpu_matches<2>(plan, seed++);
                ++n;
              }
            }
          }
        },
        any);
  }
  EXPECT_EQ(n, 36);
}

TEST(SparseExecutor, FusedPresets) {
  SKIP_WITHOUT_SPARSE_GPU();
  std::uint64_t seed = 200;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          std::array<int, D> grid{};
          grid.fill(D == 3 ? 24 : 61);
          grid[D - 1] = D == 1 ? 3001 : 203;
          for (int steps : {2, 3}) {
            for (Boundary b : all_boundaries) {
              // Under walls the wall kernel steps the band along each wall: t steps everywhere.
              for (Precision p : {Precision::f16, Precision::tf32}) {
                expect_gpu_matches<D>(make_plan(sparse_request<D>(s, p, b, grid, steps)), seed++);
              }
            }
          }
        },
        any);
  }
}

TEST(SparseExecutor, CatalogueStencils) {
  SKIP_WITHOUT_SPARSE_GPU();
  std::uint64_t seed = 300;
  int n              = 0;
  std::vector<std::string> unplanned;
  for (const auto& entry : load_catalogue(reference_catalogue_path())) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          // Rotate precision and boundary over the catalogue; every entry runs its planned tile.
          const Precision p       = sparse_precisions[n % 3];
          const Boundary b        = all_boundaries[(n / 3) % 3];
          std::array<int, D> grid = small_grid<D>();
          for (int a = 0; a < D; ++a) grid[a] = std::max(grid[a], 2 * s.radius()[a] + 3);
          if (cuda_sptc::candidate_tiles(D, radius_vector(s)).empty()) {  // the planner offers no sparse plan
            unplanned.push_back(entry.name);
            return;
          }
          expect_gpu_matches<D>(make_plan(sparse_request<D>(s, p, b, grid)), seed++);
          ++n;
        },
        entry.stencil);
  }
  EXPECT_GT(n, 70);
  // Stated, not hidden: stencils whose every tile's patch is above the planner's limit.
  std::printf("catalogue: %d stencils run on the sparse executor; no sparse plan for %zu:", n, unplanned.size());
  for (const auto& u : unplanned) std::printf(" %s", u.c_str());
  std::printf("\n");
}

TEST(SparseExecutor, RandomStencilsRandomTiles) {
  SKIP_WITHOUT_SPARSE_GPU();
  std::mt19937_64 rng(77);
  std::uniform_int_distribution<int> radius(1, 4), pick(0, 2);
  for (int i = 0; i < 60; ++i) {
    auto run = [&](const auto& s) {
      constexpr int D    = std::decay_t<decltype(s)>::rank;
      const auto grid    = small_grid<D>();
      const int smallest = *std::min_element(grid.begin(), grid.end());
      const int steps    = (D < 3 && pick(rng) == 0 && 4 * s.max_radius() + 1 <= smallest) ? 2 : 1;
      PlanRequest r      = sparse_request<D>(s, sparse_precisions[pick(rng)], all_boundaries[pick(rng)], grid, steps);
      const auto tiles   = cuda_sptc::candidate_tiles(D, radius_vector(fuse(s, steps)));
      const auto& tile   = tiles[std::uniform_int_distribution<std::size_t>(0, tiles.size() - 1)(rng)];
      // Row tiles: either row-run form, or the planner's.
      const Pairing forms[] = {Pairing::best, Pairing::parity_split, Pairing::interleaved};
      if (tile.back() == 16 && std::count(tile.begin(), tile.end(), 1) == D - 1) r.pairing = forms[pick(rng)];
      expect_gpu_matches<D>(cuda_sptc::make_sparse_plan(r, tile), 500 + i);
    };
    const int r = radius(rng);
    switch (i % 3) {
      case 0: run(random_stencil<1>(rng, r)); break;
      case 1: run(random_stencil<2>(rng, r)); break;
      default: run(random_stencil<3>(rng, std::min(r, 2))); break;
    }
  }
}

TEST(SparseExecutor, StridedGrids) {
  SKIP_WITHOUT_SPARSE_GPU();
  // Padded rows (element path, gaps left alone), and the last axis not contiguous (a
  // column-major array under a row-major plan).
  const Stencil<2> s            = as<2>(presets::by_name("box2d49p"));
  const std::array<int, 2> grid = {67, 131};
  std::uint64_t seed            = 900;
  for (Precision p : sparse_precisions) {
    for (Boundary b : all_boundaries) {
      const Plan plan = make_plan(sparse_request<2>(s, p, b, grid));
      expect_gpu_matches<2>(plan, seed++, {131 + 9, 1}, {131 + 3, 1});
      expect_gpu_matches<2>(plan, seed++, {1, 67}, {1, 67});
    }
  }
  const Stencil<3> s3 = as<3>(presets::by_name("heat3d"));
  const Plan plan3    = make_plan(sparse_request<3>(s3, Precision::f16, Boundary::periodic, {9, 10, 40}));
  expect_gpu_matches<3>(plan3, seed++, {10 * 48 + 16, 48, 1}, {1, 9, 90});
}

TEST(SparseExecutor, RowsOnEveryAlignment) {
  SKIP_WITHOUT_SPARSE_GPU();
  // Rows starting on 2-, 4-, 8- and 16-byte boundaries (the pieces copies and stores of
  // unaligned rows take): widths 1, 2, 4 and 6 past a multiple of 8, contiguous and with
  // input and output rows of other padded strides.
  std::uint64_t seed = 1300;
  for (const char* name : {"heat2d", "box2d49p"}) {
    const Stencil<2> s = as<2>(presets::by_name(name));
    for (int width : {1001, 1002, 1004, 1006}) {
      for (Precision p : sparse_precisions) {
        for (Boundary b : all_boundaries)
          expect_gpu_matches<2>(make_plan(sparse_request<2>(s, p, b, {37, width})), seed++);
      }
      const Plan plan = make_plan(sparse_request<2>(s, Precision::f16, Boundary::fixed_rim, {37, width}));
      expect_gpu_matches<2>(plan, seed++, {width + 3, 1}, {width + 5, 1});
    }
  }
}

TEST(SparseExecutor, ClearErrors) {
  SKIP_WITHOUT_SPARSE_GPU();
  const Stencil<2> s = as<2>(presets::by_name("heat2d"));
  PlanRequest r      = sparse_request<2>(s, Precision::f16, Boundary::periodic, {32, 64});
  r.backends         = {"generic"};
  EXPECT_ERROR_MENTIONS(cuda_sptc::SparseExecutor{make_plan(r)}, "the plan is for the generic backend");
  r.backends = {"cuda_sptc"};
  const cuda_sptc::SparseExecutor executor(make_plan(r));
  DeviceBuffer buffer(2 * 32 * 64 * 2);
  auto* base = static_cast<unsigned char*>(buffer.data);
  EXPECT_ERROR_MENTIONS(executor.apply(base, base + 100, nullptr), "overlap");
  EXPECT_ERROR_MENTIONS(executor.apply(nullptr, base, nullptr), "null");
  EXPECT_ERROR_MENTIONS(executor.apply(base, {64}, base + 4096, {64, 1}), "need 2 strides");
  EXPECT_ERROR_MENTIONS(executor.apply(base, {64, 0}, base + 4096, {64, 1}), "positive");
  Plan on_float        = make_plan(r);  // a plan made by hand: the planner gives none
  on_float.float_grids = true;
  EXPECT_ERROR_MENTIONS(cuda_sptc::SparseExecutor{on_float}, "float grids");
}

}  // namespace
}  // namespace sparstencil::test
