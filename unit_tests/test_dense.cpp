// The dense matrix-core backend on the host: each vendor's fragment layout against the
// vendor's own tables, its plans (every preset, the catalogue, random stencils, the three
// boundaries, odd and prime grids, f16, bf16, tf32, f64), and their emulation through the
// kernel's fragment mapping with NVIDIA's and AMD's instructions against the double
// reference within the precision's bound.
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

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
  // B values in runs of b_run consecutive k of the lane's one column, each run starting
  // at a multiple of it (within a 16-byte run of the image).
  for (int lane = 0; lane < L::lanes; ++lane) {
    for (int i = 0; i < L::b_values; i += L::b_run) {
      EXPECT_EQ(L::b(lane, i).row % L::b_run, 0) << L::instruction;
      for (int j = 0; j < L::b_run; ++j) {
        EXPECT_EQ(L::b(lane, i + j).col, dense::b_column<L>(lane)) << L::instruction;
        EXPECT_EQ(L::b(lane, i + j).row, L::b(lane, i).row + j) << L::instruction;
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
  expect_layout_covers_once<dense::NvidiaTF32>();
  expect_layout_covers_once<dense::NvidiaF64>();
  expect_layout_covers_once<dense::NvidiaF64Sm90>();
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
      EXPECT_EQ(t.at("A").at(lane).at(i), nlohmann::json({e.row, e.col}))
          << instruction << " A lane " << lane << " value " << i;
    }
    for (int i = 0; i < L::b_values; ++i) {
      const Element e = L::b(lane, i);
      EXPECT_EQ(t.at("B").at(lane).at(i), nlohmann::json({e.row, e.col}))
          << instruction << " B lane " << lane << " value " << i;
    }
    for (int i = 0; i < L::c_values; ++i) {
      const Element e = L::c(lane, i);
      EXPECT_EQ(t.at("D").at(lane).at(i), nlohmann::json({e.row, e.col}))
          << instruction << " D lane " << lane << " value " << i;
    }
  }
}

TEST(DenseFragments, AmdLayoutsAreTheCalculatorsTables) {
  // The source tree's data folder, or SPARSTENCIL_TEST_DATA's where the binary was carried
  // to another machine (scripts/gpu_carry.sh).
  const char* folder     = std::getenv("SPARSTENCIL_TEST_DATA");
  const std::string path = std::string(folder != nullptr ? folder : SPARSTENCIL_TEST_DATA) + "/amd_mfma_layouts.json";
  std::ifstream file(path);
  ASSERT_TRUE(file) << "missing " << path << " (set SPARSTENCIL_TEST_DATA to the folder holding it)";
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
    // m16n8k8 .tf32: A row groupID for a0, a2, groupID + 8 for a1, a3; column
    // threadID_in_group for a0, a1, + 4 for a2, a3. B row threadID_in_group for b0, + 4
    // for b1; column groupID. C as f16's.
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(dense::NvidiaTF32::a(lane, i).row, i % 2 ? group + 8 : group) << lane << " tf32 a" << i;
      EXPECT_EQ(dense::NvidiaTF32::a(lane, i).col, i < 2 ? thread : thread + 4) << lane << " tf32 a" << i;
      EXPECT_EQ(dense::NvidiaTF32::c(lane, i).row, i < 2 ? group : group + 8);
      EXPECT_EQ(dense::NvidiaTF32::c(lane, i).col, thread * 2 + (i & 1));
    }
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(dense::NvidiaTF32::b(lane, i).row, thread + 4 * i) << lane << " tf32 b" << i;
      EXPECT_EQ(dense::NvidiaTF32::b(lane, i).col, group) << lane << " tf32 b" << i;
    }
    // m8n8k4 .f64: A row groupID, column threadID_in_group; B row threadID_in_group,
    // column groupID; C row groupID, columns threadID_in_group * 2 + i.
    // m16n8k4 .f64 (sm_90): A row groupID for a0, groupID + 8 for a1, column
    // threadID_in_group; B as m8n8k4's; C as f16's.
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(dense::NvidiaF64Sm90::a(lane, i).row, group + 8 * i);
      EXPECT_EQ(dense::NvidiaF64Sm90::a(lane, i).col, thread);
    }
    EXPECT_EQ(dense::NvidiaF64Sm90::b(lane, 0).row, thread);
    EXPECT_EQ(dense::NvidiaF64Sm90::b(lane, 0).col, group);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(dense::NvidiaF64Sm90::c(lane, i).row, i < 2 ? group : group + 8);
      EXPECT_EQ(dense::NvidiaF64Sm90::c(lane, i).col, thread * 2 + (i & 1));
    }
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

/// The kernel loads NvidiaF16's B of two groups with one ldmatrix.x4 (PTX "ldmatrix":
/// lanes 8 m .. 8 m + 7 name the rows of matrix m; lane l receives row l / 4, values
/// 2 (l % 4) and 2 (l % 4) + 1 of matrix m in register m). With matrix m = group m / 2,
/// run m % 2 of the chunk (rows: the group's tiles), register m must be B values
/// 2 (m % 2) and 2 (m % 2) + 1 of the layout.
TEST(DenseFragments, LdmatrixGivesTheF16BLayout) {
  for (int lane = 0; lane < 32; ++lane) {
    for (int m = 0; m < 4; ++m) {
      for (int e = 0; e < 2; ++e) {
        const Element b = dense::NvidiaF16::b(lane, 2 * (m % 2) + e);
        EXPECT_EQ(b.col, lane / 4) << "lane " << lane << " matrix " << m;  // the matrix row: the tile
        EXPECT_EQ(b.row, 8 * (m % 2) + 2 * (lane % 4) + e) << "lane " << lane << " matrix " << m;  // the run, its value
      }
    }
  }
}

inline constexpr Precision dense_precisions[] = {Precision::f16, Precision::bf16, Precision::tf32, Precision::f64};
constexpr int dense_precision_count           = sizeof dense_precisions / sizeof dense_precisions[0];

/// A dense plan of `s` emulated with both vendors' instructions, against the reference.
template <int D>
void expect_dense_plan_emulates(const Plan& plan, std::uint64_t seed) {
  std::array<int, D> extents;
  for (int a = 0; a < D; ++a) extents[a] = static_cast<int>(plan.grid[a]);
  const HostGrid<D> in            = random_grid<D>(extents, grid_format(plan), seed);
  const HostGrid<D> before        = random_grid<D>(extents, grid_format(plan), seed + 1);
  const SparseExpectation<D> want = sparse_expectation(plan, in, before);
  for (dense::Vendor vendor : {dense::Vendor::nvidia, dense::Vendor::nvidia_sm90, dense::Vendor::amd}) {
    if (vendor == dense::Vendor::nvidia_sm90 && plan.precision != Precision::f64) continue;  // f64 alone differs
    HostGrid<D> out = before;
    if (vendor == dense::Vendor::amd && plan.precision == Precision::tf32) {  // no tf32 MFMA on gfx90a
      EXPECT_ERROR_MENTIONS(dense::emulate(plan, in, out, vendor), "AMD", "tf32");
      continue;
    }
    dense::emulate(plan, in, out, vendor);
    if (plan.float_grids) {  // results stored as float: many of them no 16-bit value
      std::size_t wider = 0;
      for (double v : out.values) wider += v != impl::operand_value(plan.precision, v);
      EXPECT_GT(wider, out.values.size() / 8) << name(plan.original) << " " << to_string(plan.precision);
    }
    EXPECT_TRUE(within_bound(out, want.expected, want.slack, 1.0, want.margin))
        << name(plan.original) << " " << to_string(plan.precision) << (plan.float_grids ? " on float grids" : "") << " "
        << to_string(plan.boundary) << " tile " << impl::tuple_string(plan.tile) << " "
        << (vendor == dense::Vendor::amd      ? "AMD"
            : vendor == dense::Vendor::nvidia ? "NVIDIA"
                                              : "NVIDIA sm_90");
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
  r.backends      = {"dense"};
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

/// The request with its f16 or bf16 operands read from float grids (float_grids).
PlanRequest on_float_grids(PlanRequest r, bool float_grids = true) {
  r.float_grids = float_grids;
  return r;
}

TEST(DensePlans, PresetsEveryPrecisionAndBoundaryEmulateOnBothVendors) {
  std::uint64_t seed = 1;
  for (const AnyStencil& any : presets::standard_set()) {
    for (Precision p : dense_precisions) {
      for (Boundary b : all_boundaries) {
        std::visit(
            [&](const auto& s) {
              constexpr int D     = std::decay_t<decltype(s)>::rank;
              const PlanRequest r = request_for<D>(s, p, b, 1, dense_grid<D>(seed % 2));
              expect_request_plans_and_emulates<D>(r, seed);
              if (p == Precision::f16 || p == Precision::bf16)
                expect_request_plans_and_emulates<D>(on_float_grids(r), seed + 1000);
            },
            any);
        ++seed;
      }
    }
  }
}

/// The runs the kernel reads are the gather table's elements: every K row with a weight
/// reads the image value its patch column names, every weight of A is carried once.
template <int D>
void expect_runs_are_the_gather(const Plan& plan) {
  const std::vector<int> runs = dense::run_offsets(plan);
  const int V                 = 16 / storage_bytes(plan.precision);
  std::set<int> carried;
  for (std::size_t k = 0; k < plan.order.columns.size(); ++k) {
    if (plan.order.columns[k] == zero_column) continue;
    ASSERT_EQ(runs[k / V] + static_cast<int>(k % V), plan.gather[k]) << name(plan.original) << " K row " << k;
    EXPECT_TRUE(carried.insert(plan.order.columns[k]).second) << name(plan.original) << " column twice";
  }
  const KernelMatrix a = morph(as<D>(plan.stencil), tile_of<D>(plan.tile));
  EXPECT_EQ(static_cast<int>(carried.size()) + plan.order.dropped_columns, a.cols) << name(plan.original);
  EXPECT_EQ(plan.runs.size() * V, plan.order.columns.size());
}

TEST(DensePlans, RunsReadWhatTheGatherTableNames) {
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (Precision p : dense_precisions)
            expect_runs_are_the_gather<D>(dense::make_dense_plan(request_for<D>(s, p, Boundary::periodic)));
        },
        any);
  }
  for (const auto& entry : load_catalogue(reference_catalogue_path())) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          expect_runs_are_the_gather<D>(dense::make_dense_plan(request_for<D>(s, Precision::f16, Boundary::periodic)));
        },
        entry.stencil);
  }
}

/// sm_90 f64 (the image as A): each half of a tile's outputs multiplies exactly the k
/// chunks where its rows of A' hold a weight, each chunk's offsets are its values' places
/// in the image, and B holds A' transposed as the layout places it.
dense::PartTables expect_part_tables_hold_each_halfs_weights(const Plan& plan) {
  using L                     = dense::NvidiaF64Sm90;
  const int K                 = static_cast<int>(plan.order.columns.size());
  const std::vector<double> a = dense::a_row_major(plan);
  const std::vector<int> runs = dense::run_offsets(plan);
  const dense::PartTables t   = dense::part_tables<L>(plan);
  EXPECT_EQ(t.first.size(), 3u);
  if (t.first.size() != 3u) return t;
  EXPECT_EQ(t.offsets.size(), static_cast<std::size_t>(t.first[2]) * L::k);  // what the kernel may read
  EXPECT_EQ(t.b.size(), static_cast<std::size_t>(t.first[2]) * L::lanes * L::b_values);
  if (t.offsets.size() != static_cast<std::size_t>(t.first[2]) * L::k) return t;
  for (int part = 0; part < 2; ++part) {
    std::vector<int> reached;
    for (int kc = 0; kc < K / L::k; ++kc) {
      for (int k = kc * L::k; k < (kc + 1) * L::k; ++k) {
        bool weight = false;
        for (int n = 0; n < L::n; ++n) weight = weight || a[static_cast<std::size_t>(part * L::n + n) * K + k] != 0.0;
        if (weight) {
          reached.push_back(kc);
          break;
        }
      }
    }
    EXPECT_EQ(t.first[part + 1] - t.first[part], static_cast<int>(reached.size()))
        << name(plan.original) << " part " << part;
    if (t.first[part + 1] - t.first[part] != static_cast<int>(reached.size())) return t;
    for (std::size_t c = 0; c < reached.size(); ++c) {
      const int chunk = t.first[part] + static_cast<int>(c);
      for (int k = 0; k < L::k; ++k) {
        const int at = reached[c] * L::k + k;
        EXPECT_EQ(t.offsets[chunk * L::k + k], runs[at / 2] + at % 2);
      }
      for (int lane = 0; lane < L::lanes; ++lane) {
        const Element e = L::b(lane, 0);
        EXPECT_EQ(t.b[dense::b_fragment<L>(chunk, lane)],
                  a[static_cast<std::size_t>(part * L::n + e.col) * K + reached[c] * L::k + e.row]);
      }
    }
  }
  return t;
}

TEST(DensePlans, Sm90F64HalvesMultiplyOnlyTheChunksTheyReach) {
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          expect_part_tables_hold_each_halfs_weights(
              dense::make_dense_plan(request_for<D>(s, Precision::f64, Boundary::periodic)));
        },
        any);
  }
  // A 7 x 7 x 7 box: each row of 24 values (6 chunks) reaches 4 chunks from either half.
  std::mt19937_64 rng(3);
  const Plan plan = dense::make_dense_plan(
      request_for<3>(random_box<3>(rng, 3), Precision::f64, Boundary::periodic, 1, {64, 64, 64}));
  const dense::PartTables t = expect_part_tables_hold_each_halfs_weights(plan);
  ASSERT_EQ(t.first.size(), 3u);
  EXPECT_EQ(plan.a.k_chunks, 49 * 6);
  EXPECT_EQ(t.first[1], 49 * 4);
  EXPECT_EQ(t.first[2], 2 * 49 * 4);
}

TEST(DensePlans, CatalogueAndRandomStencilsEmulate) {
  std::uint64_t seed = 500;
  int planned        = 0;
  for (const auto& entry : load_catalogue(reference_catalogue_path())) {
    std::visit(
        [&](const auto& s) {
          constexpr int D         = std::decay_t<decltype(s)>::rank;
          const Precision p       = dense_precisions[seed % dense_precision_count];
          const Boundary b        = all_boundaries[seed % 3];
          std::array<int, D> grid = small_grid<D>();
          for (int a = 0; a < D; ++a) grid[a] = std::max(grid[a], 2 * s.radius()[a] + 3);
          const bool f = (p == Precision::f16 || p == Precision::bf16) && seed % 3 == 0;  // float grids
          expect_request_plans_and_emulates<D>(on_float_grids(request_for<D>(s, p, b, 1, grid), f), ++seed);
          ++planned;
        },
        entry.stencil);
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 36; ++i, ++seed) {
    const Precision p = dense_precisions[i % dense_precision_count];
    const Boundary b  = all_boundaries[(i / 3) % 3];
    const bool f      = (p == Precision::f16 || p == Precision::bf16) && (i / 4) % 2 == 1;  // float grids
    if (i % 3 == 0) {
      expect_request_plans_and_emulates<1>(
          on_float_grids(request_for<1>(random_stencil<1>(rng, 1 + i % 5), p, b, 1, {4099}), f), seed);
    } else if (i % 3 == 1) {
      expect_request_plans_and_emulates<2>(on_float_grids(request_for<2>(random_stencil<2>(rng, 1 + i % 4), p, b), f),
                                           seed);
    } else {
      expect_request_plans_and_emulates<3>(on_float_grids(request_for<3>(random_stencil<3>(rng, 1 + i % 3), p, b), f),
                                           seed);
    }
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
  r.device    = "mi250x";  // AMD's MFMA has no tf32
  r.precision = Precision::tf32;
  EXPECT_ERROR_MENTIONS(make_plan(r), "dense", "mi250x", "tf32");
  r.precision = Precision::f16;
  r.device    = "h100";
  // A weight past f16's range cannot be held in A'.
  r.stencil        = Stencil<2>({{{0, 0}, 1e5}, {{0, 1}, 1.0}});
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
    const Plan plan      = dense::make_dense_plan(request_for<2>(presets::box_2d49p(), p, Boundary::periodic));
    const KernelMatrix a = morph(as<2>(plan.stencil), tile_of<2>(plan.tile));
    for (int row = 0; row < 16; ++row) {
      for (std::size_t k = 0; k < plan.order.columns.size(); ++k) {
        const int c       = plan.order.columns[k];
        const double want = c == zero_column ? 0.0 : impl::operand_value(p, a(row, c));
        ASSERT_EQ(dense::unpack_dense(plan.a, p, row, static_cast<int>(k)), want) << to_string(p);
      }
    }
    EXPECT_EQ(plan.order.dropped_columns, 0);  // a box reads its whole patch
    EXPECT_EQ(plan.tile, (std::vector<int>{1, 16}));
    EXPECT_EQ(plan.order.columns.size() % plan.mma.k, 0u);
  }
}

/// Mutations of a dense plan that would index outside what the kernel holds are refused.
TEST(DensePlans, VerifyRefusesInconsistentPlans) {
  const Plan good = dense::make_dense_plan(request_for<2>(presets::heat_2d(), Precision::f16, Boundary::periodic));
  EXPECT_NO_THROW(verify(good));
  Plan p = good;
  p.a.values.pop_back();
  EXPECT_ERROR_MENTIONS(verify(p), "a.values");
  p = good;
  p.a.metadata.push_back(0);
  EXPECT_ERROR_MENTIONS(verify(p), "metadata");
  p       = good;
  p.mma.k = 32;
  EXPECT_ERROR_MENTIONS(verify(p), "mma");
  p                 = good;
  p.tiles_per_block = {1, 8};  // 8 tiles: AMD's N takes 16
  p.tile_offsets.resize(8);
  EXPECT_ERROR_MENTIONS(verify(p), "tiles_per_block", "multiple of 16");
  p       = good;
  p.dense = false;
  EXPECT_ANY_THROW(verify(p));
  // Tiles other than a row of 16 outputs, tables that read the image's row padding or
  // move a tile's results, runs past the copied values, groups across rows.
  p      = good;
  p.tile = {4, 4};
  EXPECT_ERROR_MENTIONS(verify(p), "tile", "row of 16");
  p = good;
  p.runs.clear();
  EXPECT_ERROR_MENTIONS(verify(p), "runs");
  p           = good;
  p.gather[0] = p.shared_extent.back();  // inside the image, in a row's padding
  EXPECT_ERROR_MENTIONS(verify(p), "gather", "image layout");
  p = good;
  std::swap(p.tile_offsets[0], p.tile_offsets[1]);
  EXPECT_ERROR_MENTIONS(verify(p), "tile_offsets");
  p                           = good;
  p.runs.back().offset.back() = 16 + 8 * ((p.shared_extent.back() - p.shared_lead.back()) / 8);
  EXPECT_ERROR_MENTIONS(verify(p), "runs");
  p                 = good;
  p.tiles_per_block = {8, 2};  // 16 tiles, but 8 rows: a group of 16 would span two columns
  size_block_image(p);
  fill_block_tables(p);
  EXPECT_ERROR_MENTIONS(verify(p), "rows of tiles", "multiple of 16");
  // More tiles a block than one unit a wave takes: the kernel and the emulator refuse it.
  p                 = good;
  p.tiles_per_block = {64, 16};
  size_block_image(p);
  fill_block_tables(p);
  EXPECT_NO_THROW(verify(p));
  HostGrid<2> in({19, 37}), out({19, 37});
  p.grid = {19, 37};
  EXPECT_ERROR_MENTIONS(dense::emulate(p, in, out, dense::Vendor::nvidia), "tiles", "one unit a wave");
  // tf32: a word a value, k = 8.
  const Plan tf32 = dense::make_dense_plan(request_for<2>(presets::heat_2d(), Precision::tf32, Boundary::periodic));
  EXPECT_NO_THROW(verify(tf32));
  p = tf32;
  p.a.values.resize(p.a.values.size() / 2);  // packed as two values a word
  EXPECT_ERROR_MENTIONS(verify(p), "a.values", "tf32");
  p       = tf32;
  p.mma.k = 16;
  EXPECT_ERROR_MENTIONS(verify(p), "mma", "m16n8k8");
}

/// Float grids read as 16-bit operands: only f16/bf16 on the dense backend; inputs within
/// f16's range, outputs within float's; results staged as float (room for them); older
/// JSON without the field reads grids of the operand format.
TEST(DensePlans, FloatGridsAreCheckedAndPlanned) {
  PlanRequest r =
      on_float_grids(request_for<2>(presets::box_2d9p(), Precision::f16, Boundary::periodic, 1, {300, 301}));
  const Plan chosen = make_plan(r);  // generic (f32) or dense: the sparse executor reads 16-bit grids only
  EXPECT_NE(chosen.backend, "cuda_sptc");
  EXPECT_TRUE(chosen.float_grids);
  r.backends      = {"dense"};
  const Plan plan = make_plan(r);
  r.backends.clear();
  EXPECT_TRUE(plan.float_grids);
  EXPECT_EQ(grid_format(plan), Precision::f32);
  EXPECT_NE(explain(plan).find("f16 operands on float grids"), std::string::npos) << explain(plan);
  bool sparse_refused = false;
  for (const Bid& b : chosen.bids) {
    sparse_refused = sparse_refused || (b.backend == "cuda_sptc" && b.outcome == Bid::Outcome::cannot_run &&
                                        b.reason.find("float grids") != std::string::npos);
  }
  EXPECT_TRUE(sparse_refused) << explain(chosen);
  r.backends = {"cuda_sptc"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "cuda_sptc", "float grids as tf32");
  r.backends.clear();
  // Results are staged as float where the 16-bit image was: shared memory holds them. A
  // 2-D block also holds its float values beside the image (copied as they are); a 7 x 7 x 7
  // box's block would shrink to hold them, so it rounds them as it loads them, its blocks
  // those of half_t grids.
  const int rows = plan.tiles_per_block[0];
  EXPECT_GE(dense::image_region_bytes(plan), static_cast<std::size_t>(rows) * plan.shared_pitch * 4);
  EXPECT_TRUE(dense::copies_beside(plan));
  PlanRequest f16_grids = r;
  f16_grids.float_grids = false;
  EXPECT_GT(dense::shared_bytes(plan), dense::shared_bytes(dense::make_dense_plan(f16_grids)));
  const PlanRequest box3 = request_for<3>(box<3>(3), Precision::f16, Boundary::periodic, 1, {64, 64, 64});
  const Plan on_float    = dense::make_dense_plan(on_float_grids(box3));
  EXPECT_FALSE(dense::copies_beside(on_float));
  EXPECT_EQ(on_float.tiles_per_block, dense::make_dense_plan(box3).tiles_per_block);
  EXPECT_LE(dense::shared_bytes(on_float), dense::max_shared_bytes(on_float.device));
  // Only f16/bf16 operands are read from float grids.
  for (Precision p : {Precision::tf32, Precision::f32, Precision::f64}) {
    PlanRequest other = r;
    other.precision   = p;
    EXPECT_ERROR_MENTIONS(make_plan(other), "float grids", "f16 or bf16", to_string(p));
  }
  Plan bad      = plan;
  bad.precision = Precision::tf32;
  EXPECT_ERROR_MENTIONS(verify(bad), "float_grids", "tf32");
  // Inputs past f16's largest value: the dense backend cannot read them as f16 operands
  // (named: an error saying why; else the generic executor runs them at f32); bf16 holds
  // them. The worst-case output is held to float's range, not f16's.
  r.input_magnitude = 70000;
  EXPECT_EQ(make_plan(r).backend, "generic");
  EXPECT_TRUE(make_plan(r).warnings.empty());
  r.backends = {"dense"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "dense", "input magnitude 70000", "f16", "65504");
  r.precision = Precision::bf16;
  EXPECT_EQ(make_plan(r).backend, "dense");
  r.backends.clear();
  r.precision       = Precision::f16;
  r.input_magnitude = 60000;
  r.stencil         = Stencil<2>({{{0, 0}, 2.0}, {{0, 1}, 2.0}});  // outputs up to 240000: past f16, within float
  r.backends        = {"dense"};
  EXPECT_EQ(make_plan(r).backend, "dense");
  r.backends.clear();
  r.precision       = Precision::bf16;
  r.input_magnitude = 1e38;  // within bf16; outputs up to 4e38 pass float
  EXPECT_ERROR_MENTIONS(make_plan(r), "worst-case output", "float grids");
  // JSON: the field round-trips; plans written before it read grids of the operand format.
  nlohmann::json j = nlohmann::json::parse(to_json(plan));
  EXPECT_EQ(j.at("float_grids"), true);
  j.erase("float_grids");
  const Plan older = plan_from_json(j.dump());
  EXPECT_FALSE(older.float_grids);
  EXPECT_EQ(grid_format(older), Precision::f16);
}

/// The planner asks the dense model where its device has matrix cores: explain() lists it.
TEST(DensePlans, BidsBesideTheOtherBackends) {
  PlanRequest r;
  r.stencil       = presets::box_2d49p();
  r.grid          = {10240, 10240};
  r.precision     = Precision::f64;
  const Plan plan = make_plan(r);
  bool listed     = false;
  for (const Bid& bid : plan.bids) listed = listed || bid.backend == "dense";
  EXPECT_TRUE(listed) << explain(plan);
  EXPECT_NE(explain(plan).find("dense"), std::string::npos);
  r.device       = "mi250x";
  r.backends     = {"dense"};
  const Plan amd = make_plan(r);
  EXPECT_EQ(amd.backend, "dense");
  EXPECT_GT(amd.predicted.gstencils, 0.0);
}

/// HIP devices are planned by their architecture: gfx90a as an MI250X die (matrix cores
/// described), any other as a GPU without them, so the dense trait refuses it.
TEST(DensePlans, AmdArchitecturesMapToTheirDescriptions) {
  EXPECT_EQ(amd_device_name("gfx90a:sramecc+:xnack-"), "mi250x");
  EXPECT_EQ(amd_device_name("gfx90a"), "mi250x");
  EXPECT_EQ(amd_device_name("gfx942:sramecc+:xnack-"), "gpu");
  EXPECT_EQ(amd_device_name("gfx9"), "gpu");
  EXPECT_TRUE(device_description(amd_device_name("gfx90a")).has_dense_matrix_cores());
  EXPECT_FALSE(device_description(amd_device_name("gfx1100")).has_dense_matrix_cores());
}

}  // namespace
}  // namespace sparstencil::test
