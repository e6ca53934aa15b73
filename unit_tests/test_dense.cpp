// The dense matrix-core backend on the host: each vendor's fragment layout against the
// vendor's own tables, its plans (every preset, the catalogue, random stencils, the three
// boundaries, odd and prime grids, f16, bf16, f64), and their emulation through the
// kernel's fragment mapping with NVIDIA's and AMD's instructions against the double
// reference within the precision's bound.
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "SparStencil_Catalogue.hpp"
#include "SparStencil_DenseEmulator.hpp"
#include "SparStencil_Presets.hpp"
#include "test_grid_utils.hpp"

namespace sparstencil::test {
namespace {

using dense::Element;

/// Every (lane, value) of A, B and C lands on a distinct element and covers the matrix.
template <class L>
void expect_layout_covers_once() {
  std::set<std::pair<int, int>> a, b, c;
  for (int lane = 0; lane < L::lanes; ++lane) {
    for (int i = 0; i < L::a_values; ++i) {
      const Element e = L::a(lane, i);
      ASSERT_TRUE(e.row >= 0 && e.row < L::m && e.col >= 0 && e.col < L::k) << L::instruction;
      a.insert({e.row, e.col});
    }
    for (int i = 0; i < L::b_values; ++i) {
      const Element e = L::b(lane, i);
      ASSERT_TRUE(e.row >= 0 && e.row < L::k && e.col >= 0 && e.col < L::n) << L::instruction;
      b.insert({e.row, e.col});
    }
    for (int i = 0; i < L::c_values; ++i) {
      const Element e = L::c(lane, i);
      ASSERT_TRUE(e.row >= 0 && e.row < L::m && e.col >= 0 && e.col < L::n) << L::instruction;
      c.insert({e.row, e.col});
    }
  }
  // A values in runs of a_run consecutive k, each run starting at a multiple of it.
  for (int lane = 0; lane < L::lanes; ++lane) {
    for (int i = 0; i < L::a_values; i += L::a_run) {
      EXPECT_EQ(L::a(lane, i).col % L::a_run, 0) << L::instruction;
      for (int j = 1; j < L::a_run; ++j) {
        EXPECT_EQ(L::a(lane, i + j).row, L::a(lane, i).row) << L::instruction;
        EXPECT_EQ(L::a(lane, i + j).col, L::a(lane, i).col + j) << L::instruction;
      }
    }
  }
  EXPECT_EQ(static_cast<int>(a.size()), L::m * L::k) << L::instruction;
  EXPECT_EQ(L::lanes * L::a_values, L::m * L::k) << L::instruction;
  EXPECT_EQ(static_cast<int>(b.size()), L::k * L::n) << L::instruction;
  EXPECT_EQ(L::lanes * L::b_values, L::k * L::n) << L::instruction;
  EXPECT_EQ(static_cast<int>(c.size()), L::m * L::n) << L::instruction;
  EXPECT_EQ(L::lanes * L::c_values, L::m * L::n) << L::instruction;
}

TEST(DenseFragments, EveryLayoutCoversItsMatricesOnce) {
  expect_layout_covers_once<dense::NvidiaF16>();
  expect_layout_covers_once<dense::NvidiaF64>();
  expect_layout_covers_once<dense::AmdF16>();
  expect_layout_covers_once<dense::AmdF64>();
}

/// AMD's layouts against the tables AMD's matrix instruction calculator prints for CDNA2
/// (unit_tests/data/amd_mfma_layouts.json, which names the tool and its commit).
template <class L>
void expect_matches_table(const nlohmann::json& table, const char* instruction) {
  const nlohmann::json& t = table.at(instruction);
  for (int lane = 0; lane < 64; ++lane) {
    for (int i = 0; i < L::a_values; ++i) {
      const Element e = L::a(lane, i);
      EXPECT_EQ(t.at("A").at(lane).at(i), nlohmann::json({e.row, e.col})) << instruction << " A lane " << lane << " value " << i;
    }
    for (int i = 0; i < L::b_values; ++i) {
      const Element e = L::b(lane, i);
      EXPECT_EQ(t.at("B").at(lane).at(i), nlohmann::json({e.row, e.col})) << instruction << " B lane " << lane << " value " << i;
    }
    for (int i = 0; i < L::c_values; ++i) {
      const Element e = L::c(lane, i);
      EXPECT_EQ(t.at("D").at(lane).at(i), nlohmann::json({e.row, e.col})) << instruction << " D lane " << lane << " value " << i;
    }
  }
}

TEST(DenseFragments, AmdLayoutsAreTheCalculatorsTables) {
  std::ifstream file(SPARSTENCIL_TEST_DATA "/amd_mfma_layouts.json");
  ASSERT_TRUE(file) << "missing " << SPARSTENCIL_TEST_DATA "/amd_mfma_layouts.json";
  const nlohmann::json table = nlohmann::json::parse(file);
  expect_matches_table<dense::AmdF16>(table, "v_mfma_f32_16x16x16f16");
  expect_matches_table<dense::AmdF16>(table, "v_mfma_f32_16x16x16bf16_1k");
  expect_matches_table<dense::AmdF64>(table, "v_mfma_f64_16x16x4f64");
}

/// NVIDIA's layouts as the PTX ISA's fragment figures state them (groupID = lane >> 2,
/// threadID_in_group = lane % 4), row by row of each figure.
TEST(DenseFragments, NvidiaLayoutsAreThePtxFigures) {
  for (int lane = 0; lane < 32; ++lane) {
    const int group = lane >> 2, thread = lane % 4;
    // m16n8k16 .f16/.bf16 A: row groupID for a0, a1, a4, a5, groupID + 8 for a2, a3, a6,
    // a7; column threadID_in_group * 2 + (i & 1) for a0-a3, + 8 for a4-a7.
    for (int i = 0; i < 8; ++i) {
      const int row = (i == 2 || i == 3 || i == 6 || i == 7) ? group + 8 : group;
      const int col = thread * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      EXPECT_EQ(dense::NvidiaF16::a(lane, i).row, row) << lane << " a" << i;
      EXPECT_EQ(dense::NvidiaF16::a(lane, i).col, col) << lane << " a" << i;
    }
    // B: row threadID_in_group * 2 + (i & 1) for b0, b1, + 8 for b2, b3; column groupID.
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(dense::NvidiaF16::b(lane, i).row, thread * 2 + (i & 1) + (i >= 2 ? 8 : 0)) << lane << " b" << i;
      EXPECT_EQ(dense::NvidiaF16::b(lane, i).col, group) << lane << " b" << i;
    }
    // C (f32): row groupID for c0, c1, groupID + 8 for c2, c3; column threadID_in_group * 2 + (i & 1).
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(dense::NvidiaF16::c(lane, i).row, i < 2 ? group : group + 8) << lane << " c" << i;
      EXPECT_EQ(dense::NvidiaF16::c(lane, i).col, thread * 2 + (i & 1)) << lane << " c" << i;
    }
    // m8n8k4 .f64: A row groupID, column threadID_in_group; B row threadID_in_group,
    // column groupID; C row groupID, columns threadID_in_group * 2 + i.
    EXPECT_EQ(dense::NvidiaF64::a(lane, 0).row, group);
    EXPECT_EQ(dense::NvidiaF64::a(lane, 0).col, thread);
    EXPECT_EQ(dense::NvidiaF64::b(lane, 0).row, thread);
    EXPECT_EQ(dense::NvidiaF64::b(lane, 0).col, group);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(dense::NvidiaF64::c(lane, i).row, group);
      EXPECT_EQ(dense::NvidiaF64::c(lane, i).col, thread * 2 + i);
    }
  }
}

inline constexpr Precision dense_precisions[] = {Precision::f16, Precision::bf16, Precision::f64};

/// A dense plan of `s` emulated with both vendors' instructions, against the reference.
template <int D>
void expect_dense_plan_emulates(const Plan& plan, std::uint64_t seed) {
  std::array<int, D> extents;
  for (int a = 0; a < D; ++a) extents[a] = static_cast<int>(plan.grid[a]);
  const HostGrid<D> in = random_grid<D>(extents, plan.precision, seed);
  const HostGrid<D> before = random_grid<D>(extents, plan.precision, seed + 1);
  const SparseExpectation<D> want = sparse_expectation(plan, in, before);
  for (dense::Vendor vendor : {dense::Vendor::nvidia, dense::Vendor::amd}) {
    HostGrid<D> out = before;
    dense::emulate(plan, in, out, vendor);
    EXPECT_TRUE(within_bound(out, want.expected, want.slack, 1.0, want.margin))
        << name(plan.original) << " " << to_string(plan.precision) << " " << to_string(plan.boundary) << " tile "
        << impl::tuple_string(plan.tile) << " " << (vendor == dense::Vendor::amd ? "AMD" : "NVIDIA");
    if (plan.boundary == Boundary::interior) {  // the rim untouched, bit for bit
      for (std::size_t flat = 0; flat < out.values.size(); ++flat) {
        if (!in_interior(as<D>(plan.stencil), extents, out.point(flat))) {
          ASSERT_EQ(out.values[flat], before.values[flat]);
        }
      }
    }
  }
}

template <int D>
void expect_request_plans_and_emulates(PlanRequest r, std::uint64_t seed) {
  r.backends = {"dense"};
  const Plan plan = make_plan(r);
  ASSERT_EQ(plan.backend, "dense");
  ASSERT_TRUE(plan.dense);
  EXPECT_NO_THROW(verify(plan));
  EXPECT_TRUE(plan_from_json(to_json(plan)) == plan) << name(r.stencil);
  expect_dense_plan_emulates<D>(plan, seed);
}

/// Odd and prime grids a little larger than one block along the fastest axis.
template <int D>
std::array<int, D> dense_grid(int variant) {
  if constexpr (D == 1) return {variant ? 4099 : 4133};
  else if constexpr (D == 2) return {variant ? 19 : 23, variant ? 263 : 281};
  else return {variant ? 7 : 11, variant ? 17 : 13, variant ? 67 : 71};
}

TEST(DensePlans, PresetsEveryPrecisionAndBoundaryEmulateOnBothVendors) {
  std::uint64_t seed = 1;
  for (const AnyStencil& any : presets::standard_set()) {
    for (Precision p : dense_precisions) {
      for (Boundary b : all_boundaries) {
        std::visit([&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          expect_request_plans_and_emulates<D>(request_for<D>(s, p, b, 1, dense_grid<D>(seed % 2)), seed);
        }, any);
        ++seed;
      }
    }
  }
}

TEST(DensePlans, EveryTileOfEveryPresetEmulates) {
  std::uint64_t seed = 100;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit([&](const auto& s) {
      constexpr int D = std::decay_t<decltype(s)>::rank;
      for (const std::vector<int>& tile : dense::candidate_tiles(D)) {
        const Precision p = seed % 2 ? Precision::f64 : Precision::f16;
        const Plan plan   = dense::make_dense_plan(request_for<D>(s, p, Boundary::fixed_rim, 1, small_grid<D>()), tile);
        expect_dense_plan_emulates<D>(plan, ++seed);
      }
    }, any);
  }
}

TEST(DensePlans, CatalogueAndRandomStencilsEmulate) {
  std::uint64_t seed = 500;
  int planned        = 0;
  for (const auto& entry : load_catalogue(reference_catalogue_path())) {
    std::visit([&](const auto& s) {
      constexpr int D = std::decay_t<decltype(s)>::rank;
      const Precision p = dense_precisions[seed % 3];
      const Boundary b  = all_boundaries[seed % 3];
      std::array<int, D> grid = small_grid<D>();
      for (int a = 0; a < D; ++a) grid[a] = std::max(grid[a], 2 * s.radius()[a] + 3);
      expect_request_plans_and_emulates<D>(request_for<D>(s, p, b, 1, grid), ++seed);
      ++planned;
    }, entry.stencil);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 30; ++i, ++seed) {
    const Precision p = dense_precisions[i % 3];
    const Boundary b  = all_boundaries[(i / 3) % 3];
    if (i % 3 == 0) expect_request_plans_and_emulates<1>(request_for<1>(random_stencil<1>(rng, 1 + i % 5), p, b, 1, {4099}), seed);
    else if (i % 3 == 1) expect_request_plans_and_emulates<2>(request_for<2>(random_stencil<2>(rng, 1 + i % 4), p, b), seed);
    else expect_request_plans_and_emulates<3>(request_for<3>(random_stencil<3>(rng, 1 + i % 3), p, b), seed);
    ++planned;
  }
  EXPECT_GT(planned, 40);
}

TEST(DensePlans, FusedPlansArePeriodicOnly) {
  PlanRequest r = request_for<2>(presets::heat_2d(), Precision::f16, Boundary::periodic, 3, {29, 263});
  expect_request_plans_and_emulates<2>(r, 9);
  r.boundary = Boundary::fixed_rim;
  r.backends = {"dense"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "dense", "periodic");
}

TEST(DensePlans, ClearErrors) {
  PlanRequest r = request_for<2>(presets::heat_2d(), Precision::f32, Boundary::periodic);
  r.backends    = {"dense"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "dense", "f32");
  r.precision = Precision::f16;
  r.device    = "cpu";
  EXPECT_ERROR_MENTIONS(make_plan(r), "dense", "no dense matrix cores");
  r.device = "h100";
  EXPECT_ERROR_MENTIONS(dense::make_dense_plan(r, {3, 5}), "16 outputs");
  EXPECT_ERROR_MENTIONS(dense::make_dense_plan(r, {16}), "extents");
  // A weight past f16's range cannot be held in A'.
  r.stencil = Stencil<2>({{{0, 0}, 1e5}, {{0, 1}, 1.0}});
  r.allow_overflow = true;
  EXPECT_ERROR_MENTIONS(make_plan(r), "65504");
  // The emulator refuses another backend's plan.
  PlanRequest g = request_for<2>(presets::heat_2d(), Precision::f64, Boundary::periodic);
  g.backends    = {"generic"};
  HostGrid<2> in({19, 37}), out({19, 37});
  EXPECT_ERROR_MENTIONS(dense::emulate(make_plan(g), in, out, dense::Vendor::nvidia), "generic", "not dense");
}

/// The packed A' decodes to the morphed weights in the operand format, zero columns zero.
TEST(DensePlans, PackingRoundTrips) {
  for (Precision p : dense_precisions) {
    const Plan plan = dense::make_dense_plan(request_for<2>(presets::box_2d49p(), p, Boundary::periodic), {4, 4});
    const KernelMatrix a = morph(as<2>(plan.stencil), tile_of<2>(plan.tile));
    for (int row = 0; row < 16; ++row) {
      for (std::size_t k = 0; k < plan.order.columns.size(); ++k) {
        const int c       = plan.order.columns[k];
        const double want = c == zero_column ? 0.0 : dense::emulation::operand_value(p, a(row, c));
        ASSERT_EQ(dense::unpack_dense(plan.a, p, row, static_cast<int>(k)), want) << to_string(p);
      }
    }
    EXPECT_EQ(plan.order.dropped_columns, 0);  // a box reads its whole patch
    EXPECT_EQ(plan.order.columns.size() % plan.mma.k, 0u);
  }
}

/// Mutations of a dense plan that would index outside what the kernel holds are refused.
TEST(DensePlans, VerifyRefusesInconsistentPlans) {
  const Plan good = dense::make_dense_plan(request_for<2>(presets::heat_2d(), Precision::f16, Boundary::periodic), {4, 4});
  Plan p = good;
  p.a.values.pop_back();
  EXPECT_ERROR_MENTIONS(verify(p), "a.values");
  p = good;
  p.a.metadata.push_back(0);
  EXPECT_ERROR_MENTIONS(verify(p), "metadata");
  p = good;
  p.mma.k = 32;
  EXPECT_ERROR_MENTIONS(verify(p), "mma");
  p                 = good;
  p.tiles_per_block = {1, 8};  // 8 tiles: AMD's N takes 16
  p.tile_offsets.resize(8);
  EXPECT_ERROR_MENTIONS(verify(p), "tiles_per_block", "multiple of 16");
  p = good;
  p.dense = false;
  EXPECT_ANY_THROW(verify(p));
  // Tiles of other than 16 outputs (padded rows would land on real points), and tables
  // that read the image's row padding or move a tile's results.
  p      = good;
  p.tile = {2, 4};
  EXPECT_ERROR_MENTIONS(verify(p), "tile", "16");
  p           = good;
  p.gather[0] = p.shared_extent.back();  // inside the image, in a row's padding
  EXPECT_ERROR_MENTIONS(verify(p), "gather", "image layout");
  p = good;
  std::swap(p.tile_offsets[0], p.tile_offsets[1]);
  EXPECT_ERROR_MENTIONS(verify(p), "tile_offsets");
}

/// The planner asks the dense model where its device has matrix cores: explain() lists it.
TEST(DensePlans, BidsBesideTheOtherBackends) {
  PlanRequest r;
  r.stencil   = presets::box_2d49p();
  r.grid      = {10240, 10240};
  r.precision = Precision::f64;
  const Plan plan = make_plan(r);
  bool listed     = false;
  for (const Bid& bid : plan.bids) listed = listed || bid.backend == "dense";
  EXPECT_TRUE(listed) << explain(plan);
  EXPECT_NE(explain(plan).find("dense"), std::string::npos);
  r.device = "mi250x";
  r.backends = {"dense"};
  const Plan amd = make_plan(r);
  EXPECT_EQ(amd.backend, "dense");
  EXPECT_GT(amd.predicted.gstencils, 0.0);
}

}  // namespace
}  // namespace sparstencil::test
