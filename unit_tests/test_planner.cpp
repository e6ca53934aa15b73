// The planner, operand packing, the gather table and the plan emulator: every plan the
// planner can make computes the stencil within the documented tensor-core bound.
#include "test_utils.hpp"
#include "SparStencil_CudaSptcModel.hpp"
#include "SparStencil_WallBands.hpp"

namespace sparstencil::test {
namespace {

/// Emulates `plan` on random data and checks it against `steps` reference steps of the
/// original stencil (all points for periodic, else those at least the plan's radius from
/// the rim), within the precision's bound.
template <int D>
void expect_emulation_matches(const Plan& plan, std::uint64_t seed) {
  const Stencil<D>& original = as<D>(plan.original);
  std::array<int, D> extents;
  for (int a = 0; a < D; ++a) extents[a] = static_cast<int>(plan.grid[a]);
  const HostGrid<D> in     = random_grid<D>(extents, plan.precision, seed);
  HostGrid<D> out          = random_grid<D>(extents, plan.precision, seed + 1);
  const HostGrid<D> before = out;
  cuda_sptc::emulate(plan, in, out);
  const SparseExpectation<D> want = sparse_expectation(plan, in, before);
  EXPECT_TRUE(within_bound(out, want.expected, want.slack, 1.0, want.margin))
      << original.name() << " " << to_string(plan.precision) << " " << to_string(plan.boundary) << " tile "
      << impl::tuple_string(plan.tile) << " steps " << plan.fused_steps;
  // The rim of one step where fused launches are exact everywhere, else the fused one's.
  const Stencil<D>& applied = as<D>(plan.fusion_exact_everywhere() ? plan.original : plan.stencil);
  if (plan.boundary == Boundary::interior) {  // the rim of out untouched, bit for bit
    for (std::size_t flat = 0; flat < out.values.size(); ++flat) {
      if (!in_interior(applied, extents, out.point(flat))) ASSERT_EQ(out.values[flat], before.values[flat]);
    }
  }
}

/// Every packed entry decodes to the rounded A' value; metadata is legal and ordered.
/// Row-run plans may split a column's taps over two K rows (parity split): each nonzero
/// of A' is then carried by exactly one of the K rows reading its column, the others 0.
void expect_packing_round_trips(const Plan& plan, const KernelMatrix& a) {
  const int k_total = static_cast<int>(plan.order.columns.size());
  for (int row = 0; row < plan.a.m_blocks * 16; ++row) {
    std::vector<int> carried(a.cols, 0);
    for (int k = 0; k < k_total; ++k) {
      const int c = plan.order.columns[k];
      const double want =
          (row < a.rows && c != zero_column) ? cuda_sptc::emulation::operand_value(plan.precision, a(row, c)) : 0.0;
      const double got = cuda_sptc::unpack_operand(plan.a, plan.precision, row, k);
      if (plan.runs.empty() || got != 0.0) ASSERT_EQ(got, want) << "row " << row << " k " << k;
      if (c != zero_column && got != 0.0) ++carried[c];
    }
    for (int c = 0; c < a.cols && row < a.rows; ++c) {
      if (cuda_sptc::emulation::operand_value(plan.precision, a(row, c)) != 0.0)
        ASSERT_EQ(carried[c], 1) << "row " << row << " column " << c;
    }
  }
  for (std::uint32_t word : plan.a.metadata) {
    for (int shift = 0; shift < 32; shift += 4) {
      const std::uint32_t nibble = (word >> shift) & 0xFu;
      if (plan.precision == Precision::tf32) {
        ASSERT_TRUE(nibble == 0x4u || nibble == 0xEu || nibble == 0u) << std::hex << nibble;
      } else {
        ASSERT_TRUE(nibble == 0u || (nibble & 3u) < (nibble >> 2)) << std::hex << nibble;  // i0 < i1
      }
    }
  }
}

/// Most nonzeros any row of A' has in one group of 4 (2 for tf32): from the order for the
/// gather form, from the packed operand for row-run plans (which split taps over K rows).
int nonzeros_per_group(const Plan& plan, const KernelMatrix& a) {
  const int group = plan.precision == Precision::tf32 ? 2 : 4;
  if (plan.runs.empty()) return max_nonzeros_per_group(a, plan.order, group);
  int worst = 0;
  for (int row = 0; row < 16 * plan.a.m_blocks; ++row) {
    for (std::size_t start = 0; start < plan.order.columns.size(); start += group) {
      int n = 0;
      for (int k = 0; k < group; ++k)
        n += cuda_sptc::unpack_operand(plan.a, plan.precision, row, static_cast<int>(start) + k) != 0.0;
      worst = std::max(worst, n);
    }
  }
  return worst;
}

TEST(Planner, CandidateTiles) {
  EXPECT_EQ(cuda_sptc::candidate_tiles(1, {1}).size(), 3u);
  EXPECT_EQ(cuda_sptc::candidate_tiles(2, {1, 1}).size(), 11u);
  EXPECT_EQ(cuda_sptc::candidate_tiles(3, {1, 1, 1}).size(), 36u);
  for (const auto& t : cuda_sptc::candidate_tiles(3, {1, 1, 1})) {
    const int outputs = t[0] * t[1] * t[2];
    EXPECT_TRUE(outputs == 16 || outputs == 32);
  }
  // Radius 4 in 3-D: only tiles whose patch stays within 1024 points, and the 16-output
  // row (row-run plans hold A' in shared memory).
  bool row = false;
  for (const auto& t : cuda_sptc::candidate_tiles(3, {4, 4, 4})) {
    if (t == std::vector<int>{1, 1, 16}) {
      row = true;
      continue;
    }
    EXPECT_LE((t[0] + 8) * (t[1] + 8) * (t[2] + 8), 1024);
  }
  EXPECT_TRUE(row);
}

TEST(Planner, PresetsEveryPrecisionBoundaryAndTileEmulateCorrectly) {
  std::uint64_t seed = 1;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (Precision p : sparse_precisions) {
            for (Boundary b : all_boundaries) {
              const PlanRequest r = request_for(s, p, b);
              for (const auto& tile : cuda_sptc::candidate_tiles(D, radius_vector(s))) {
                const Plan plan = cuda_sptc::make_sparse_plan(r, tile);
                expect_packing_round_trips(plan, morph(s, tile_of<D>(tile)));
                expect_emulation_matches<D>(plan, seed++);
              }
            }
          }
        },
        any);
  }
}

TEST(Planner, CatalogueStencilsEmulateCorrectly) {
  std::uint64_t seed = 1000;
  for (const auto& entry : load_catalogue(reference_catalogue_path())) {
    std::visit(
        [&](const auto& s) {
          constexpr int D     = std::decay_t<decltype(s)>::rank;
          const PlanRequest r = request_for(s, Precision::f16, Boundary::periodic);
          for (const auto& tile : cuda_sptc::candidate_tiles(D, radius_vector(s))) {
            const Plan plan = cuda_sptc::make_sparse_plan(r, tile);
            EXPECT_LE(nonzeros_per_group(plan, morph(s, tile_of<D>(tile))), 2);
            expect_emulation_matches<D>(plan, seed++);
          }
        },
        entry.stencil);
  }
}

TEST(Planner, RandomStencilsEveryTileEmulateCorrectly) {
  // 3 x 170 random stencils, radius 1-4, random precision and boundary, one or two fused
  // steps, every candidate tile.
  std::mt19937_64 rng(404);
  std::uniform_int_distribution<int> radius(1, 4), pick(0, 2);
  int plans = 0;
  int fused = 0;
  auto run  = [&](const auto& s) {
    constexpr int D = std::decay_t<decltype(s)>::rank;
    // Two fused steps in 1-D and 2-D where the small test grid holds the doubled radius
    // (3-D fused patches near 1000 columns make Edmonds too slow for a unit test; the
    // presets cover 3-D fusion).
    const auto grid    = small_grid<D>();
    const int smallest = *std::min_element(grid.begin(), grid.end());
    const int steps    = (D < 3 && pick(rng) == 0 && 4 * s.max_radius() + 1 <= smallest) ? 2 : 1;
    fused += steps == 2;
    const PlanRequest r = request_for(s, sparse_precisions[pick(rng)], all_boundaries[pick(rng)], steps);
    for (const auto& tile : cuda_sptc::candidate_tiles(D, radius_vector(fuse(s, steps)))) {  // as the planner does
      const Plan plan      = cuda_sptc::make_sparse_plan(r, tile);
      const KernelMatrix a = morph(as<D>(plan.stencil), tile_of<D>(tile));  // fused when steps = 2
      ASSERT_LE(nonzeros_per_group(plan, a), plan.precision == Precision::tf32 ? 1 : 2);
      expect_emulation_matches<D>(plan, rng());
      ++plans;
    }
  };
  for (int i = 0; i < 170; ++i) {
    run(random_stencil<1>(rng, radius(rng)));
    run(random_stencil<2>(rng, radius(rng)));
    run(random_stencil<3>(rng, radius(rng)));
  }
  EXPECT_GT(plans, 5000);
  EXPECT_GT(fused, 40);
}

TEST(Planner, FusedPlansMatchRepeatedSteps) {
  std::uint64_t seed = 77;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (int t : {2, 3}) {
            for (Boundary b : all_boundaries) {
              PlanRequest r = request_for(s, Precision::f16, b, t);
              r.backends    = {"cuda_sptc"};
              // Under walls the executor steps the band t r_a wide along each wall (its wall
              // kernel, emulated): the planner's plan and the row tile's equal t steps everywhere.
              std::vector<int> row_tile(D, 1);
              row_tile.back() = 16;
              for (const Plan& plan : {make_plan(r), cuda_sptc::make_sparse_plan(r, row_tile)}) {
                EXPECT_TRUE(plan.fusion_exact_everywhere());
                expect_emulation_matches<D>(plan, seed++);
              }
            }
          }
        },
        any);
  }
}

TEST(Planner, WallBandsCoverTheBandOnce) {
  // Boxes cover every point of the band (t r_a along each wall, to the ends of 16-byte runs
  // along the fastest axis) exactly once and nothing else; each block's region fits the
  // wall kernel's shared memory; where no region can, the planner refuses the fused plan
  // naming the band.
  auto check = [](const auto& s, const std::vector<long>& grid, int steps, Boundary b) {
    constexpr int D              = std::decay_t<decltype(s)>::rank;
    PlanRequest r                = request_for<D>(s, Precision::f16, b, steps);
    r.grid                       = grid;
    r.backends                   = {"cuda_sptc"};
    const Plan plan              = make_plan(r);
    const cuda_sptc::WallBands w = cuda_sptc::wall_bands(plan);
    std::array<long, 3> n{1, 1, 1};
    for (int a = 0; a < D; ++a) n[3 - D + a] = grid[a];
    std::vector<int> covered(static_cast<std::size_t>(n[0] * n[1] * n[2]), 0);
    for (const auto& box : w.boxes) {
      for (long z = box.lo[0]; z < box.hi[0]; ++z)
        for (long y = box.lo[1]; y < box.hi[1]; ++y)
          for (long x = box.lo[2]; x < box.hi[2]; ++x) ++covered[static_cast<std::size_t>((z * n[1] + y) * n[2] + x)];
    }
    long band = 0;
    for (long z = 0; z < n[0]; ++z)
      for (long y = 0; y < n[1]; ++y)
        for (long x = 0; x < n[2]; ++x) {
          const bool in_band = cuda_sptc::in_wall_band(w, n, {z, y, x});
          band += in_band;
          ASSERT_EQ(covered[static_cast<std::size_t>((z * n[1] + y) * n[2] + x)], in_band ? 1 : 0)
              << s.name() << " t " << steps << " at " << z << "," << y << "," << x;
        }
    EXPECT_GT(band, 0);
    EXPECT_LE(w.shared_bytes, cuda_sptc::wall_shared_limit);
  };
  for (Boundary b : {Boundary::interior, Boundary::fixed_rim}) {
    check(presets::heat_2d(), {97, 203}, 7, b);
    check(presets::box_2d49p(), {40, 300}, 3, b);
    check(presets::heat_3d(), {30, 41, 70}, 4, b);
    check(presets::box_3d27p(), {13, 17, 150}, 3, b);
    check(presets::heat_1d(), {1001}, 5, b);
  }
  check(presets::box_2d9p(), {50, 77}, 1, Boundary::fixed_rim);  // one step: the rim and the runs it cuts
  // Blocks of 256 threads where the largest region gives each 8 points a step, else 128:
  // 2-D bands at depth 7 (regions of 14 x 78 and 46 x 15 points), 3-D faces (34 x 66 a plane).
  auto block_threads = [](const auto& s, const auto& grid, int steps) {
    constexpr int D = std::decay_t<decltype(s)>::rank;
    PlanRequest r   = request_for<D>(s, Precision::f16, Boundary::fixed_rim, steps, grid);
    r.backends      = {"cuda_sptc"};
    return cuda_sptc::wall_block_threads(cuda_sptc::wall_bands(make_plan(r)).largest_region);
  };
  EXPECT_EQ(block_threads(presets::box_2d9p(), std::array<int, 2>{10240, 10240}, 7), 128);
  EXPECT_EQ(block_threads(presets::heat_2d(), std::array<int, 2>{10240, 10240}, 1), 128);
  EXPECT_EQ(block_threads(presets::heat_3d(), std::array<int, 3>{512, 512, 512}, 1), 256);
  check(presets::box_2d49p(), {50, 77}, 1, Boundary::interior);
  EXPECT_TRUE(cuda_sptc::wall_bands(make_plan([] {
                PlanRequest r = request_for<2>(presets::heat_2d(), Precision::f16, Boundary::periodic, 3);
                r.backends    = {"cuda_sptc"};
                return r;
              }()))
                  .boxes.empty());  // periodic: no wall kernel
  PlanRequest wide = request_for<3>(box<3>(4), Precision::f16, Boundary::fixed_rim, 3, {64, 64, 64});
  wide.backends    = {"cuda_sptc"};
  EXPECT_ERROR_MENTIONS(make_plan(wide), "band along the walls", "shared memory");
}

TEST(Planner, EveryPairingRuleEmulatesCorrectly) {
  // The three rules side by side on row tiles (where all apply) and the matchings on the
  // other tiles: each gives a valid plan that computes the stencil.
  std::uint64_t seed = 900;
  std::mt19937_64 rng(12);
  std::vector<AnyStencil> stencils = presets::standard_set();
  stencils.push_back(box<2>(7));
  for (int i = 0; i < 20; ++i) stencils.push_back(random_stencil<2>(rng, 1 + i % 4));
  for (const AnyStencil& any : stencils) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          PlanRequest r   = request_for(s, Precision::f16, Boundary::periodic);
          if (D == 2 && s.max_radius() == 7) r.grid = {40, 64};
          for (const auto& tile : cuda_sptc::candidate_tiles(D, radius_vector(s))) {
            const bool row = std::all_of(tile.begin(), tile.end() - 1, [](int e) { return e == 1; });
            for (Pairing rule : {Pairing::hierarchical, Pairing::edmonds, Pairing::strided_swapping}) {
              if (rule == Pairing::strided_swapping && !row) continue;
              r.pairing       = rule;
              const Plan plan = cuda_sptc::make_sparse_plan(r, tile);
              // A forced rule gives the gather form, also on 16-output rows.
              EXPECT_TRUE(plan.runs.empty());
              EXPECT_EQ(plan.pairing, rule == Pairing::hierarchical ? "hierarchical"
                                      : rule == Pairing::edmonds    ? "edmonds"
                                                                    : "strided swapping");
              expect_emulation_matches<D>(plan, seed++);
            }
          }
        },
        any);
  }
}

/// Where the CUDA kernel's copy puts 4-byte pair w of an image row held with pairs
/// interleaved D apart (as its in-place interleaving does): bits (half, unit, pair) of w within its
/// block of D pairs become (unit, pair, half).
int placed_pair(int w, int interleave) {
  const int mask = interleave - 1, shift = interleave == 4 ? 1 : interleave == 8 ? 2 : 3;
  return (w & ~mask) | ((w << 1) & mask) | ((w >> shift) & 1);
}

/// The image value (offset in the plan's shared-memory image, as `gather` counts it) that
/// K row k of a row-run plan reads through its run.
int value_read_by_run(const Plan& p, int k) {
  const int D = p.dims(), V = 16 / storage_bytes(p.precision);
  const sparstencil::Run& run = p.runs.at(k / V);
  int x                       = run.offset[D - 1] + k % V;  // position the run reads, from the tile origin
  if (p.interleave != 0) {  // the value the kernel's copy put at that place of the ring row
    const int lead = cuda_sptc::row_run_layout(p).lead, held = lead + x;
    int pair = held / 2 / p.interleave * p.interleave;
    while (placed_pair(pair, p.interleave) != held / 2) ++pair;
    x = 2 * pair + held % 2 - lead;
  }
  const std::vector<int> stride = p.shared_strides();
  int offset                    = (x + p.shared_lead[D - 1]) * stride[D - 1];
  for (int a = 0; a + 1 < D; ++a) offset += (run.offset[a] + p.shared_lead[a]) * stride[a];
  return offset;
}

TEST(Planner, RowRunsReadWhatTheGatherTableSays) {
  // The CUDA kernel reads B' through the runs, the emulator through the gather table:
  // wherever A' has a column, both must name the same value. Presets, catalogue stencils
  // and random ones, 1-3-D, all precisions with sparse operands, fused too.
  std::mt19937_64 rng(31);
  std::vector<AnyStencil> stencils = presets::standard_set();
  for (const auto& entry : load_catalogue(reference_catalogue_path())) stencils.push_back(entry.stencil);
  for (int i = 0; i < 12; ++i) stencils.push_back(random_stencil<2>(rng, 1 + i % 5));
  for (int i = 0; i < 6; ++i) stencils.push_back(random_stencil<3>(rng, 1 + i % 2));
  int checked = 0;
  for (const AnyStencil& any : stencils) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (Precision precision : sparse_precisions) {
            for (int steps : {1, 2}) {
              for (Pairing rule : {Pairing::best, Pairing::parity_split, Pairing::interleaved}) {
                PlanRequest r = request_for(s, precision, Boundary::periodic, steps);
                r.pairing     = rule;
                std::vector<int> tile(D, 1);
                tile[D - 1] = 16;
                Plan plan;
                try {
                  plan = cuda_sptc::make_sparse_plan(r, tile);
                } catch (const std::exception&) {
                  continue;  // grid too small for the fused radius
                }
                ASSERT_FALSE(plan.runs.empty()) << name(any);
                ASSERT_EQ(plan.runs.size() * (16 / storage_bytes(precision)), plan.gather.size());
                for (std::size_t k = 0; k < plan.gather.size(); ++k) {
                  if (plan.gather[k] < 0) continue;
                  ASSERT_EQ(value_read_by_run(plan, static_cast<int>(k)), plan.gather[k])
                      << name(any) << " " << to_string(precision) << " t=" << steps << " K row " << k;
                }
                // Runs start aligned in the kernel's image rows: one 16-byte ldmatrix row each.
                const cuda_sptc::RowRunLayout layout = cuda_sptc::row_run_layout(plan);
                const int lead                       = layout.lead;
                for (const sparstencil::Run& run : plan.runs) {
                  EXPECT_EQ((lead + run.offset[D - 1]) % (16 / storage_bytes(precision)), 0);
                }
                // 1-D/2-D rings hold whole steps (a step's rows never wrap) and the steps in
                // flight; a step's outputs are staged in its own first rows.
                if (D < 3) {
                  EXPECT_EQ(layout.ring % layout.rows, 0) << name(any);
                  EXPECT_GE(layout.ring, layout.rows * (layout.ahead + 1) + 2 * layout.row_halo) << name(any);
                  EXPECT_TRUE(layout.stage_in_ring);
                  EXPECT_EQ(layout.stage_pitch, layout.pitch);
                }
                // The packed A' carries every weight once (taps split by parity included).
                expect_packing_round_trips(plan, morph(as<D>(plan.stencil), tile_of<D>(tile)));
                if (rule == Pairing::parity_split) EXPECT_EQ(plan.interleave, 0);
                ++checked;
              }
            }
          }
        },
        any);
  }
  EXPECT_GT(checked, 600);
}

TEST(Planner, InterleavedRowsHalveTheChunksOfWideRows) {
  // Rows of 3-7 taps break 2:4 on consecutive values: split by parity they cost two
  // chunks, held interleaved one (16-bit values; tf32 keeps its rows as they are). The
  // cost model picks between the two forms where they measured apart (H200, the
  // benchmark's grids; on small grids the launch hides the difference): rows as they are
  // for 2-D single steps, interleaved rows for Box-3D27P and fused 3-D plans.
  struct Case {
    const char* stencil;
    std::vector<long> grid;
    int natural, interleaved, interleave;
    bool best_interleaved;
  };
  const std::vector<Case> cases = {{"box2d49p", {10240, 10240}, 14, 7, 8, false},
                                   {"box2d9p", {10240, 10240}, 6, 3, 4, false},
                                   {"box3d27p", {512, 512, 512}, 18, 9, 4, true}};
  for (const Case& c : cases) {
    PlanRequest r;
    r.stencil  = presets::by_name(c.stencil);
    r.grid     = c.grid;
    r.device   = "h200";
    r.backends = {"cuda_sptc"};
    std::vector<int> tile(c.grid.size(), 1);
    tile.back()      = 16;
    const bool three = c.grid.size() == 3;
    const Plan best  = cuda_sptc::make_sparse_plan(r, tile);
    EXPECT_EQ(best.a.k_chunks, c.best_interleaved ? c.interleaved : c.natural) << c.stencil;
    EXPECT_EQ(best.interleave, c.best_interleaved ? c.interleave : 0) << c.stencil;
    if (three) {  // fused three steps (radius 3): 98 chunks as they are, 49 interleaved
      PlanRequest fused = r;
      fused.steps       = 3;
      EXPECT_NE(cuda_sptc::make_sparse_plan(fused, tile).interleave, 0) << c.stencil;
    }
    r.pairing              = Pairing::interleaved;
    const Plan interleaved = cuda_sptc::make_sparse_plan(r, tile);
    EXPECT_EQ(interleaved.a.k_chunks, c.interleaved) << c.stencil;
    EXPECT_EQ(interleaved.interleave, c.interleave) << c.stencil;
    EXPECT_EQ(interleaved.pairing, "row runs, pairs interleaved " + std::to_string(c.interleave) + " apart");
    r.pairing          = Pairing::parity_split;
    const Plan natural = cuda_sptc::make_sparse_plan(r, tile);
    EXPECT_EQ(natural.a.k_chunks, c.natural) << c.stencil;
    EXPECT_TRUE(cuda_sptc::row_run_layout(natural).paired) << c.stencil;  // every row split by parity
    // 2-D boxes: every pair reads the runs of the pair before one row down.
    EXPECT_EQ(cuda_sptc::row_run_layout(natural).shifted, !three) << c.stencil;
    EXPECT_EQ(natural.pairing, "row runs, parity split") << c.stencil;
    r.pairing   = Pairing::interleaved;
    r.precision = Precision::tf32;
    EXPECT_EQ(cuda_sptc::make_sparse_plan(r, tile).interleave, 0) << c.stencil;
    // The plan round-trips through JSON with its layout.
    EXPECT_EQ(plan_from_json(to_json(interleaved)), interleaved);
  }
  // Taps spanning 8 to 15 values (15 x 15 box) interleave 16 apart, a block of 32 values
  // for every tile, where the rows shift (2-D); 16 values or more have no interleaved form.
  PlanRequest r;
  r.stencil       = box<2>(7);
  r.grid          = {256, 256};
  r.backends      = {"cuda_sptc"};
  r.pairing       = Pairing::interleaved;
  const Plan wide = cuda_sptc::make_sparse_plan(r, {1, 16});
  EXPECT_EQ(wide.interleave, 16);
  EXPECT_EQ(wide.a.k_chunks, 15);
  const cuda_sptc::RowRunLayout wide_layout = cuda_sptc::row_run_layout(wide);
  EXPECT_TRUE(wide_layout.shifted);
  EXPECT_EQ(wide_layout.row_values, 4 * 32);      // a block per tile of the strip
  EXPECT_EQ(wide_layout.copied_values, 48 + 32);  // the distinct values they hold
  // 48 ring rows (one step in flight: 2 x 16 + 14, whole steps) with the outputs staged in
  // them keep 8 warps a block (staged beside 46 rows, 7).
  EXPECT_EQ(wide_layout.ring, 48);
  EXPECT_EQ(wide_layout.warps, 8);
  r.pairing = Pairing::best;
  EXPECT_EQ(cuda_sptc::make_sparse_plan(r, {1, 16}).interleave,
            16);          // the cost model's pick (H100: 350-360 against 311-313)
  r.stencil = box<3>(4);  // 3-D: no block per tile
  r.grid    = {16, 16, 64};
  r.pairing = Pairing::interleaved;
  EXPECT_EQ(cuda_sptc::make_sparse_plan(r, {1, 1, 16}).interleave, 0);
  r.stencil = box<2>(8);
  r.grid    = {256, 256};
  EXPECT_EQ(cuda_sptc::make_sparse_plan(r, {1, 16}).interleave, 0);
  // Only row tiles have these forms.
  EXPECT_THROW(cuda_sptc::make_sparse_plan(r, {4, 4}), std::runtime_error);
  r.pairing = Pairing::parity_split;
  EXPECT_THROW(cuda_sptc::make_sparse_plan(r, {4, 4}), std::runtime_error);
}

TEST(Planner, EmulationCatchesACorruptedPlan) {
  // The emulator check must be able to fail: swap two gather entries, flip a metadata
  // nibble, and the result leaves the bound.
  const auto s         = presets::box_2d9p();
  Plan plan            = cuda_sptc::make_sparse_plan(request_for(s, Precision::f16, Boundary::periodic), {4, 4});
  const auto extents   = small_grid<2>();
  const HostGrid<2> in = random_grid<2>(extents, Precision::f16, 3);
  HostGrid<2> expected(extents), magnitude(extents);
  reference_apply(s, in, expected, Boundary::periodic);
  reference_apply(abs_weights(s), abs(in), magnitude, Boundary::periodic);
  const double factor = cuda_sptc::step_error_bound(Precision::f16, s.size()).factor;
  auto emulated       = [&](const Plan& p) {
    HostGrid<2> out(extents);
    cuda_sptc::emulate(p, in, out);
    return out;
  };
  EXPECT_TRUE(within_bound(emulated(plan), expected, magnitude, factor));
  Plan swapped = plan;
  std::swap(swapped.gather[0], swapped.gather[2]);
  EXPECT_FALSE(within_bound(emulated(swapped), expected, magnitude, factor));
  Plan flipped = plan;
  flipped.a.metadata[0] ^= 0x4u;  // lane 0, row 0, group 0: another position
  EXPECT_FALSE(within_bound(emulated(flipped), expected, magnitude, factor));
}

// A forced pairing rule plans the tiles it applies to and drops the others, saying why;
// it never fails on a tile the user did not ask for.
TEST(Planner, ForcedPairingsTakeTheTilesTheyApplyTo) {
  for (Pairing rule : {Pairing::parity_split, Pairing::interleaved, Pairing::strided_swapping, Pairing::hierarchical,
                       Pairing::edmonds}) {
    for (const bool forced : {false, true}) {
      PlanRequest r;
      r.stencil = presets::heat_2d();
      r.grid    = {64, 64};
      r.pairing = rule;
      if (forced) r.backends = {"cuda_sptc"};
      const Plan plan = make_plan(r);
      if (forced) EXPECT_EQ(plan.backend, "cuda_sptc");
      if (plan.backend != "cuda_sptc") continue;
      const bool row = plan.tile[0] == 1;
      if (rule == Pairing::parity_split || rule == Pairing::interleaved) {
        EXPECT_TRUE(cuda_sptc::is_row_run_tile(plan.tile)) << static_cast<int>(rule);
      }
      if (rule == Pairing::strided_swapping) EXPECT_TRUE(row);
      expect_emulation_matches<2>(plan, 4000 + static_cast<int>(rule));
    }
  }
  PlanRequest r;
  r.stencil = presets::heat_2d();
  r.grid    = {64, 64};
  r.pairing = Pairing::parity_split;
  EXPECT_ERROR_MENTIONS(cuda_sptc::make_sparse_plan(r, {4, 4}), "tile (4,4)", "parity_split", "16-output row tiles");
  r.pairing = Pairing::strided_swapping;
  EXPECT_ERROR_MENTIONS(cuda_sptc::make_sparse_plan(r, {2, 8}), "tile (2,8)", "strided_swapping");
  const std::string text = explain(make_plan(r));
  EXPECT_NE(text.find("takes row tiles"), std::string::npos) << text;
}

// Values a precision cannot hold are refused naming them, or reported where allowed;
// never a silent inf (a 16-bit plan of weights past 65504 picked the sparse executor).
TEST(Planner, RangeOfEveryPrecisionIsChecked) {
  PlanRequest r;
  r.stencil   = parse_stencil("0:100000 1:-99999.5");
  r.grid      = {101};
  r.precision = Precision::f16;
  EXPECT_ERROR_MENTIONS(make_plan(r), "worst-case output 200000", "f16's largest value 65504", "input_magnitude");
  r.allow_overflow   = true;
  const Plan allowed = make_plan(r);
  EXPECT_EQ(allowed.backend, "generic");  // f16 operands cannot hold the weights
  ASSERT_EQ(allowed.warnings.size(), 1u);
  EXPECT_NE(explain(allowed).find("warning"), std::string::npos);
  EXPECT_NE(explain(allowed).find("exceeds the f16 operands' largest value"), std::string::npos) << explain(allowed);
  EXPECT_EQ(plan_from_json(to_json(allowed)).warnings, allowed.warnings);  // kept in the plan's JSON
  r.allow_overflow = false;
  r.precision      = Precision::f32;  // float holds these
  EXPECT_NO_THROW(make_plan(r));
  // A biharmonic stencil (sum of |weights| 64) fused three times: 64^3 > 65504 in f16.
  r.stencil =
      parse_stencil("0,0:20 1,0:-8 -1,0:-8 0,1:-8 0,-1:-8 1,1:2 1,-1:2 -1,1:2 -1,-1:2 2,0:1 -2,0:1 0,2:1 0,-2:1");
  r.grid      = {64, 64};
  r.precision = Precision::f16;
  r.steps     = 3;
  EXPECT_ERROR_MENTIONS(make_plan(r), "3 fused steps", "65504");
  r.steps = 1;
  EXPECT_NO_THROW(make_plan(r));
  r.input_magnitude = 2000;  // 64 x 2000 > 65504
  EXPECT_ERROR_MENTIONS(make_plan(r), "input magnitude 2000");
  r.input_magnitude = -1;
  EXPECT_ERROR_MENTIONS(make_plan(r), "input magnitude -1");
  // float weights near 1e300 (were NaN on float Views).
  r.stencil         = parse_stencil("0:1e300 1:-1");
  r.grid            = {64};
  r.input_magnitude = 1;
  r.precision       = Precision::f32;
  EXPECT_ERROR_MENTIONS(make_plan(r), "a weight of magnitude 1e+300", "f32's sums");
  r.precision = Precision::f64;  // double holds them
  EXPECT_NO_THROW(make_plan(r));
  r.input_magnitude = 1e10;
  EXPECT_ERROR_MENTIONS(make_plan(r), "worst-case output inf", "f64");  // past a double itself
}

// Sizes are counted in 64 bits and extents limited to what the executors index.
TEST(Planner, SizesAreCheckedIn64Bits) {
  PlanRequest r;
  r.stencil = presets::heat_3d();
  r.grid    = {(1L << 31) - 1, (1L << 31) - 1, (1L << 31) - 1};
  EXPECT_ERROR_MENTIONS(make_plan(r), "more than 2^62 points");
  r.stencil = presets::heat_2d();
  r.grid    = {1000000000000L, 1000000000000L};
  EXPECT_ERROR_MENTIONS(make_plan(r), "grid extent 1000000000000 along axis 0", "2^31 - 1");
  r.grid = {-5, 10};
  EXPECT_ERROR_MENTIONS(make_plan(r), "extent below 1");
  r.grid          = {(1L << 31) - 1, 1024};  // large but countable: predicted for that many points
  r.device        = "gpu";                   // (a description without a memory size: 8.8 TB of f16 grids)
  const Plan plan = make_plan(r);
  EXPECT_NEAR(plan.predicted.gstencils * plan.predicted.seconds * 1e9, 1024.0 * ((1L << 31) - 1), 1e6);
}

TEST(Planner, ChoosesAndExplains) {
  PlanRequest r;
  r.stencil       = parse_stencil("box2d:r=3");
  r.grid          = {10240, 10240};
  r.precision     = Precision::f16;
  const Plan plan = make_plan(r);
  EXPECT_EQ(plan.backend, "cuda_sptc");
  EXPECT_FALSE(plan.bids.empty());
  const std::string text = explain(plan);
  for (const char* part : {"backend", "cuda_sptc", "why", "tile", "patch", "nonzeros", "padding", "S =", "MMAs",
                           "bound", "GStencil/s", "bids", "chosen", "slower", "generic"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " missing from:\n" << text;
  }
  // Precisions without a sparse form go to the plain or the dense matrix cores, devices
  // without matrix cores to the generic executor.
  r.precision = Precision::f64;
  EXPECT_NE(make_plan(r).backend, "cuda_sptc");
  EXPECT_NE(explain(make_plan(r)).find("no sparse tensor-core form"), std::string::npos);
  r.precision = Precision::f16;
  r.device    = "cpu";
  EXPECT_EQ(make_plan(r).backend, "generic");
  EXPECT_NE(explain(make_plan(r)).find("no sparse tensor cores"), std::string::npos);
}

// The generic prediction knows which shapes have a compiled kernel: a 5 x 5 box (run-time
// offsets and weights, 25 terms) is predicted slower than the compiled 7 x 7 box (49).
TEST(Planner, GenericPredictionKnowsCompiledShapes) {
  for (bool gpu : {false, true}) {
    EXPECT_TRUE(generic::has_compiled_kernel(parse_stencil("box2d:r=3"), gpu));
    EXPECT_TRUE(generic::has_compiled_kernel(parse_stencil("star3d:r=1"), gpu));
    EXPECT_FALSE(generic::has_compiled_kernel(parse_stencil("box2d:r=2"), gpu));
    EXPECT_FALSE(generic::has_compiled_kernel(parse_stencil("star3d:r=2"), gpu));
    // The compute-bound boxes: a streaming kernel on GPUs only.
    EXPECT_EQ(generic::has_compiled_kernel(parse_stencil("box2d:r=7"), gpu), gpu);
    EXPECT_EQ(generic::has_compiled_kernel(parse_stencil("box3d:r=2"), gpu), gpu);
  }
  PlanRequest r;
  r.grid              = {10240, 10240};
  r.precision         = Precision::f32;
  r.backends          = {"generic"};
  r.stencil           = parse_stencil("box2d:r=3");
  const Plan compiled = make_plan(r);
  r.stencil           = parse_stencil("box2d:r=2");
  const Plan runtime  = make_plan(r);
  EXPECT_GT(runtime.predicted.compute_seconds, compiled.predicted.compute_seconds);
  // Whatever the precision: run-time shapes are bound by their loads, not the FMA rate.
  r.precision = Precision::f64;
  EXPECT_DOUBLE_EQ(make_plan(r).predicted.compute_seconds, runtime.predicted.compute_seconds);
}

// The sparse model keeps the order of what was measured on the H200 (perf_tests/RESULTS.md,
// f16 at 10240^2 and 512^3): the faster image-row form, the fastest fusion depth at walls,
// and few resident warps where A' fills shared memory.
TEST(Planner, SparseModelKeepsTheMeasuredOrder) {
  auto plan = [](const AnyStencil& s, int steps, Boundary b, Pairing form = Pairing::best) {
    PlanRequest r;
    r.stencil   = s;
    r.grid      = dimension(s) == 3 ? std::vector<long>{512, 512, 512} : std::vector<long>{10240, 10240};
    r.precision = Precision::f16;
    r.device    = "h200";
    r.steps     = steps;
    r.boundary  = b;
    r.pairing   = form;
    r.backends  = {"cuda_sptc"};
    return make_plan(r);
  };
  auto per_step = [&](const AnyStencil& s, int steps, Boundary b) {
    return plan(s, steps, b).predicted.seconds / steps;
  };
  // Heat-2D t = 3: rows as they are (1711 GStencil/s) beat interleaved rows (1572-1608);
  // Box-3D27P t = 1: interleaved (395) beats rows as they are (362).
  EXPECT_EQ(plan(presets::heat_2d(), 3, Boundary::periodic).interleave, 0);
  EXPECT_NE(plan(presets::box_3d27p(), 1, Boundary::periodic).interleave, 0);
  // Depth 7 is the fastest under fixed_rim for Heat-2D (2435 against 2294 at 6, 1900 at 8)
  // and Box-2D9P (2415, 2275, 2191); Star-2D13P fuses 2 (733 against 685 and 645).
  for (const AnyStencil& s : {AnyStencil(presets::heat_2d()), AnyStencil(presets::box_2d9p())}) {
    EXPECT_LT(per_step(s, 7, Boundary::fixed_rim), per_step(s, 6, Boundary::fixed_rim)) << name(s);
    EXPECT_LT(per_step(s, 7, Boundary::fixed_rim), per_step(s, 8, Boundary::fixed_rim)) << name(s);
  }
  const AnyStencil star = presets::star_2d13p();
  EXPECT_LT(per_step(star, 2, Boundary::fixed_rim), per_step(star, 1, Boundary::fixed_rim));
  EXPECT_LT(per_step(star, 2, Boundary::fixed_rim), per_step(star, 3, Boundary::fixed_rim));
  // Box-2D49P t = 6: A' leaves one warp an SM, 3.5x slower a step than t = 5 (67 against 232).
  const Plan deep = plan(presets::box_2d49p(), 6, Boundary::periodic);
  EXPECT_EQ(cuda_sptc::sparse_cost_terms(deep).resident_warps, 1);
  EXPECT_GT(deep.predicted.seconds / 6, 2.5 * per_step(presets::box_2d49p(), 5, Boundary::periodic));
  EXPECT_EQ(cuda_sptc::sparse_cost_terms(plan(presets::heat_2d(), 1, Boundary::periodic)).resident_warps, 16);
}

// The model paper's four scenarios (§4.1) on the H100, each with its verdict in explain().
TEST(Planner, RowsNotWholeSixteenByteUnitsGoToThePlainCores) {
  // Measured on the H200 (perf_tests/RESULTS.md, 2026-11-29), f16 single steps at walls:
  // on 3001 x 4099 (rows on 2-byte boundaries) the generic executor takes 26-28 us a step
  // for Heat-2D and 49 for Box-2D49P, the sparse executor 83-92, the dense 63-75; on
  // 3000 x 4098 and 4100 (4- and 8-byte) generic 26-27 and 49, dense 49-51 and 61-65; on
  // 3000 x 4096 the sparse one 21 and 33 (generic 26 and 49).
  for (const AnyStencil& s : {AnyStencil(presets::heat_2d()), AnyStencil(presets::box_2d49p())}) {
    PlanRequest r;
    r.stencil       = s;
    r.precision     = Precision::f16;
    r.device        = "h200";
    r.boundary      = Boundary::fixed_rim;
    r.grid          = {3001, 4099};
    r.row_alignment = 2;
    const Plan odd  = make_plan(r);
    EXPECT_EQ(odd.backend, "generic") << explain(odd);
    EXPECT_NE(explain(odd).find("rows on 2-byte boundaries"), std::string::npos);
    for (const auto& [width, alignment] : {std::pair<long, int>{4098, 4}, {4100, 8}}) {
      r.grid          = {3000, width};
      r.row_alignment = alignment;
      EXPECT_EQ(make_plan(r).backend, "generic") << explain(make_plan(r));
    }
    r.grid          = {3000, 4096};
    r.row_alignment = 16;
    EXPECT_EQ(make_plan(r).backend, "cuda_sptc") << explain(make_plan(r));
  }
}

TEST(Planner, ExplainsTheFourScenarios) {
  struct Case {
    const char* stencil;
    std::vector<long> grid;
    int steps, scenario;
    const char* verdict;
  };
  const Case cases[] = {
      {"heat2d", {10240, 10240}, 1, 1, "no gain possible"},          // memory bound on both sides
      {"box3d27p", {512, 512, 512}, 3, 2, "tensor cores lose"},      // fusion inflates alpha / S
      {"box2d49p", {10240, 10240}, 1, 3, "tensor cores win"},        // 49 FMAs a point: plain cores compute bound
      {"box2d:r=8", {10240, 10240}, 1, 4, "alpha < S P_TC / P_CU"},  // compute bound on both
      {"box2d:r=7", {10240, 10240}, 1, 3, "tensor cores win"},       // interleaved 16 apart: half the MMAs
  };
  for (const Case& c : cases) {
    PlanRequest r;
    r.stencil       = parse_stencil(c.stencil);
    r.grid          = c.grid;
    r.steps         = c.steps;
    const Plan plan = make_plan(r);
    ASSERT_TRUE(plan.scenario.known) << c.stencil;
    EXPECT_EQ(plan.scenario.number(), c.scenario) << c.stencil << "\n" << explain(plan);
    const std::string text = explain(plan);
    for (const char* part : {"scenario", c.verdict, "roofline", "ridge", "speedup", "calibrated model"}) {
      EXPECT_NE(text.find(part), std::string::npos) << part << " missing from:\n" << text;
    }
    // The decision follows the calibrated model's speedup.
    EXPECT_EQ(plan.backend == "cuda_sptc", plan.scenario.predicted_speedup > 1) << c.stencil;
  }
  // No sparse side to compare: no scenario.
  PlanRequest r;
  r.stencil   = presets::heat_2d();
  r.grid      = {1024, 1024};
  r.precision = Precision::f64;
  EXPECT_FALSE(make_plan(r).scenario.known);
  EXPECT_EQ(explain(make_plan(r)).find("scenario"), std::string::npos);
}

// Fused steps on the generic executor: both forms predicted, the faster one taken;
// temporal blocking moves the grid once a launch, but pays for its halo and, as measured on
// the H100, for its index work (generic_temporal_efficiency).
TEST(Planner, GenericFusionByTemporalBlocking) {
  PlanRequest r;
  r.stencil                = presets::heat_2d();
  r.grid                   = {10240, 10240};
  r.precision              = Precision::f32;
  r.backends               = {"generic"};
  r.steps                  = 4;
  const Prediction blocked = generic::predict(r, true);
  const Prediction unfused = generic::predict(r, false);
  EXPECT_TRUE(blocked.temporal_blocking);
  EXPECT_FALSE(unfused.temporal_blocking);
  // One launch reads and writes the grid once: less device-memory time than four.
  EXPECT_LT(blocked.memory_seconds, unfused.memory_seconds / 2);
  const Plan plan = make_plan(r);
  EXPECT_EQ(plan.predicted.temporal_blocking, blocked.seconds < unfused.seconds);
  EXPECT_DOUBLE_EQ(plan.predicted.seconds, std::min(blocked.seconds, unfused.seconds));
  EXPECT_NE(explain(plan).find(plan.predicted.temporal_blocking ? "by temporal blocking" : "4 launches of one step"),
            std::string::npos)
      << explain(plan);
  // A device whose temporal kernel reached the generic rate would fuse this memory-bound star.
  r.device = "cpu";
  EXPECT_TRUE(make_plan(r).predicted.temporal_blocking);
  EXPECT_NE(explain(make_plan(r)).find("by temporal blocking"), std::string::npos);
  // A halo of 7 x 3 points of doubles around every tile does not fit team scratch.
  r.device    = "h100";
  r.stencil   = presets::box_2d49p();
  r.precision = Precision::f64;
  r.steps     = 7;
  EXPECT_FALSE(make_plan(r).predicted.temporal_blocking);
  EXPECT_ERROR_MENTIONS(generic::predict(r, true), "temporal blocking of 7 steps", "team scratch");
  EXPECT_NE(explain(make_plan(r)).find("7 launches of one step"), std::string::npos);
  r.stencil           = presets::heat_2d();
  r.precision         = Precision::f32;
  r.steps             = 4;
  r.device            = "cpu";
  const Plan cpu_plan = make_plan(r);
  EXPECT_TRUE(plan_from_json(to_json(cpu_plan)) == cpu_plan);
}

// The streaming temporal kernel on a GPU (docs/COST_MODEL.md): Heat-2D
// fuses, each compiled depth faster per step than the one before, as measured; past its
// deepest compiled depth only FusedKernel is left, which loses to single steps in 2-D.
TEST(Planner, GenericStreamingTemporalBlocking) {
  PlanRequest r;
  r.stencil  = presets::heat_2d();
  r.grid     = {10240, 10240};
  r.backends = {"generic"};
  for (Precision precision : {Precision::f32, Precision::f64}) {
    r.precision     = precision;
    r.steps         = 1;
    double per_step = generic::predict(r).seconds;
    for (int t = 2; t <= generic::stream_temporal_depth(2, 1); ++t) {
      r.steps             = t;
      const Prediction pr = generic::predict(r);
      EXPECT_TRUE(pr.temporal_blocking) << to_string(precision) << ", t = " << t;
      EXPECT_LT(pr.seconds / t, per_step) << to_string(precision) << ", t = " << t;
      per_step = pr.seconds / t;
    }
    r.steps = generic::stream_temporal_depth(2, 1) + 1;
    EXPECT_FALSE(make_plan(r).predicted.temporal_blocking) << to_string(precision);
  }
  // Box-2D49P in double: depth 2 (its deepest) pays, by more than the 2% iterate's
  // automatic depth asks (measured: 158 GStencil/s against 111 for single steps, whose
  // double sums reach a third of the f64 FMA rate).
  r.stencil             = presets::box_2d49p();
  r.precision           = Precision::f64;
  r.steps               = 1;
  const double box_step = generic::predict(r).seconds;
  r.steps               = 2;
  EXPECT_TRUE(make_plan(r).predicted.temporal_blocking);
  EXPECT_LT(generic::predict(r).seconds / 2, 0.98 * box_step);
  // 3-D radius 1 streams in 32 x 32 spans at depth 2 (a third of its sums redundant):
  // predicted, as measured, within a third of a single step's time for two steps.
  r.stencil                 = presets::heat_3d();
  r.grid                    = {512, 512, 512};
  r.precision               = Precision::f32;
  const Prediction blocked  = generic::predict(r, true);
  const Prediction one_step = generic::predict(r, false);
  EXPECT_TRUE(blocked.temporal_blocking);
  EXPECT_GT(blocked.seconds, 0.66 * one_step.seconds);
  EXPECT_LT(blocked.seconds, 1.33 * one_step.seconds);
  // Under walls a 3-D single step computes the interior box and launches over the rim
  // (measured 0.65-0.7 of the periodic rate; in 2-D the same): two fused steps pay there,
  // for the star and the box (measured 1.13-1.25x).
  r.boundary = Boundary::fixed_rim;
  for (const AnyStencil& stencil : {presets::heat_3d(), presets::box_3d27p()}) {
    r.stencil            = stencil;
    r.steps              = 1;
    const double step    = generic::predict(r).seconds;
    r.steps              = 2;
    const Prediction two = generic::predict(r);
    EXPECT_TRUE(two.temporal_blocking) << name(stencil);
    EXPECT_LT(two.seconds / 2, 0.98 * step) << name(stencil);
    r.boundary = Boundary::periodic;
    r.steps    = 1;
    EXPECT_LT(generic::predict(r).seconds, 0.8 * step) << name(stencil);
    r.boundary = Boundary::fixed_rim;
  }
  r.stencil             = presets::heat_2d();
  r.grid                = {10240, 10240};
  r.steps               = 1;
  const double walls_2d = generic::predict(r).seconds;
  r.boundary            = Boundary::periodic;
  EXPECT_GT(generic::predict(r).seconds, 0.98 * walls_2d);
}

// The generic model against what its kernels ran on the H200 (perf_tests/RESULTS.md,
// 2026-11-29, periodic, us a step): single steps bound by an SM's byte rate where the
// device's bandwidth share would be faster, and the streaming temporal kernel's depths.
TEST(Planner, GenericModelKeepsTheMeasuredOrder) {
  auto per_step = [](const AnyStencil& s, Precision p, int steps, std::optional<bool> temporal = std::nullopt) {
    PlanRequest r;
    r.stencil   = s;
    r.grid      = dimension(s) == 1 ? std::vector<long>{10240000} : std::vector<long>{10240, 10240};
    r.precision = p;
    r.device    = "h200";
    r.steps     = steps;
    r.backends  = {"generic"};
    return generic::predict(r, temporal).seconds / steps;
  };
  struct Measured {
    AnyStencil stencil;
    Precision precision;
    int steps;
    double us;
  };
  const Measured runs[] = {
      {presets::heat_1d(), Precision::f16, 1, 32.7},  {presets::heat_1d(), Precision::f64, 1, 50.5},
      {presets::heat_2d(), Precision::f16, 1, 145.7}, {presets::heat_2d(), Precision::f32, 1, 241.3},
      {presets::heat_2d(), Precision::f64, 1, 446.6}, {presets::heat_2d(), Precision::f32, 5, 85.1},
      {presets::heat_2d(), Precision::f16, 5, 124.3}, {presets::box_2d9p(), Precision::f64, 4, 160.9}};
  for (const Measured& m : runs) {
    EXPECT_NEAR(per_step(m.stencil, m.precision, m.steps) * 1e6, m.us, 0.16 * m.us)
        << name(m.stencil) << ' ' << to_string(m.precision) << " t = " << m.steps;
  }
  // 16-bit values: two fused steps run slower a step than one (Heat-2D 175.8 against
  // 145.7, Box-2D49P 389.5 against 345.2), five faster (Heat-2D 124.3).
  for (const AnyStencil& s : {AnyStencil(presets::heat_2d()), AnyStencil(presets::box_2d49p())}) {
    EXPECT_GT(per_step(s, Precision::f16, 2, true), per_step(s, Precision::f16, 1)) << name(s);
  }
  EXPECT_LT(per_step(presets::heat_2d(), Precision::f16, 5, true), per_step(presets::heat_2d(), Precision::f16, 1));
}

TEST(Planner, JsonRoundTripsExactly) {
  for (const AnyStencil& any : presets::standard_set()) {
    PlanRequest r;
    r.stencil = any;
    r.grid.assign(dimension(any), 1000);
    for (int steps : {1, 3}) {
      r.steps         = steps;
      const Plan plan = make_plan(r);
      const Plan back = plan_from_json(to_json(plan));
      EXPECT_TRUE(back == plan) << name(any);
      EXPECT_EQ(explain(back), explain(plan));
    }
  }
  EXPECT_ERROR_MENTIONS(plan_from_json("{"), "not valid JSON");
  EXPECT_ERROR_MENTIONS(plan_from_json("{}"), "field 'original'");
}

TEST(Planner, RequestErrors) {
  PlanRequest r;
  r.stencil = presets::heat_2d();
  r.grid    = {100};
  EXPECT_ERROR_MENTIONS(make_plan(r), "grid has 1 extents but the stencil is 2-D");
  r.grid  = {100, 100};
  r.steps = 0;
  EXPECT_ERROR_MENTIONS(make_plan(r), "fused step count 0");
  r.steps = 40;
  EXPECT_ERROR_MENTIONS(make_plan(r), "beyond the supported radius");
  r.steps = 30;
  r.grid  = {100, 50};
  EXPECT_ERROR_MENTIONS(make_plan(r), "grid extent 50 along axis 1 is too small for radius 30");
  r.steps  = 1;
  r.device = "tpu";
  EXPECT_ERROR_MENTIONS(make_plan(r), "unknown device 'tpu'", "h100");
  r.device   = "cpu";
  r.backends = {"cuda_sptc"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "device cpu has no sparse tensor cores");
  r.device    = "h100";
  r.precision = Precision::f32;
  EXPECT_ERROR_MENTIONS(make_plan(r), "precision f32 has no sparse tensor-core form");
  r.precision = Precision::f16;
  r.backends.clear();
  for (int bad : {0, 3, 32, -16}) {
    r.row_alignment = bad;
    EXPECT_ERROR_MENTIONS(make_plan(r), "row alignment " + std::to_string(bad) + " bytes", "power of two from 1 to 16");
  }
  r.row_alignment = 16;
  // Grids the device cannot hold: refused, naming the bytes and the device's memory.
  r.grid = {2147483647, 2147483647};
  EXPECT_ERROR_MENTIONS(make_plan(r), "grid (2147483647,2147483647) needs", "GiB for its input and output",
                        "device h100 holds 79.6 GiB");
  r.grid   = {100000, 100000};  // 37 GiB of f16
  r.device = "h200";
  EXPECT_NO_THROW(make_plan(r));
  r.precision = Precision::f64;  // 149 GiB
  r.backends  = {"generic"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "device h200 holds 140.4 GiB");
}

}  // namespace
}  // namespace sparstencil::test
