#include "SparStencil_CudaSptcModel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "SparStencil_Fuse.hpp"
#include "SparStencil_Planner.hpp"
#include "SparStencil_SparseCostModel.hpp"
#include "SparStencil_RowRuns.hpp"
#include "SparStencil_SparseKernelFacts.hpp"
#include "SparStencil_SparseOperand.hpp"
#include "SparStencil_WallBands.hpp"

namespace sparstencil::cuda_sptc {
namespace {

int product(const std::vector<int>& v) {
  int n = 1;
  for (int x : v) n *= x;
  return n;
}

}  // namespace

std::vector<std::vector<int>> candidate_tiles(int dims, const std::vector<int>& radius) {
  std::vector<std::vector<int>> all;
  if (dims == 1) {
    all = {{16}, {32}, {64}};
  } else {
    for (int outputs : {16, 32}) {
      for (int a = 1; a <= outputs; a *= 2) {
        if (dims == 2) {
          all.push_back({a, outputs / a});
          continue;
        }
        for (int b = 1; a * b <= outputs; b *= 2) all.push_back({a, b, outputs / (a * b)});
      }
    }
  }
  std::vector<std::vector<int>> fitting;
  for (const auto& tile : all) {
    int patch = 1;
    for (int a = 0; a < dims; ++a) patch *= tile[a] + 2 * radius[a];
    // Row-run plans keep A' in shared memory: their 16-output row has no patch limit.
    if (patch <= max_patch_points || is_row_run_tile(tile)) fitting.push_back(tile);
  }
  return fitting;
}

namespace {

/// Block of tiles: 8 KiB of outputs (4096 16-bit or 2048 32-bit values; a block is one
/// step of a thread block's pipeline, and it must carry enough bytes to cover the memory
/// latency), laid out as a long run along the fastest axis (the whole block in 1-D, 256
/// or 128 values in 2-D and 3-D) times 16 rows of axis 0 (2-D) or axis 1 (3-D); a
/// multiple of 8 tiles (one MMA's N).
std::vector<int> tiles_per_block_for(const std::vector<int>& tile, Precision precision) {
  const int D      = static_cast<int>(tile.size());
  const int values = 8192 / storage_bytes(precision);
  std::vector<int> tpb(D, 1);
  tpb[D - 1] = std::max(1, (D == 1 ? values : values / 16) / tile[D - 1]);
  if (D == 2) tpb[0] = std::max(1, 16 / tile[0]);
  if (D == 3) tpb[1] = std::max(1, 16 / tile[1]);
  while (product(tpb) % 8 != 0) tpb[D - 1] *= 2;
  return tpb;
}

/// The tile-independent part of a sparse plan for `tile`.
Plan sparse_skeleton(const Plan& base, const std::vector<int>& tile) {
  if (tile.size() != base.grid.size()) {
    sparstencil::impl::fail("make_sparse_plan", "tile has ", tile.size(), " extents, need ", base.grid.size());
  }
  Plan p            = base;
  p.backend         = "cuda_sptc";
  p.tile            = tile;
  p.radius          = radius(p.stencil);
  p.mma             = mma_shape(p.precision);
  p.tiles_per_block = tiles_per_block_for(tile, p.precision);
  p.rows            = product(tile);
  for (std::size_t a = 0; a < tile.size(); ++a) p.patch.push_back(tile[a] + 2 * p.radius[a]);
  return p;
}

long round_up(long v, long m) { return (v + m - 1) / m * m; }

/// Every offset of the bounding box present with a nonzero weight: A' is a staircase.
template <int N>
bool is_full_box(const Stencil<N>& s) {
  std::size_t box_points = 1;
  for (int a = 0; a < N; ++a) box_points *= 2 * s.radius()[a] + 1;
  std::size_t nonzero = 0;
  for (const auto& term : s.terms()) nonzero += term.weight != 0.0;
  return nonzero == box_points;
}

/// A lower bound on K for a tile: every nonzero column appears once, and a row of n
/// nonzeros needs 2n columns (at most two per group of four, one per pair for tf32).
long k_lower_bound(const Plan& p) {
  return std::visit(
      [&](const auto& s) {
        constexpr int N = std::decay_t<decltype(s)>::rank;
        std::vector<char> used(static_cast<std::size_t>(product(p.patch)), 0);
        std::size_t nonzero_terms = 0;
        for (const auto& term : s.terms()) nonzero_terms += term.weight != 0.0;
        for (int row = 0; row < p.rows; ++row) {
          std::array<int, N> t{};
          for (int rest = row, a = N - 1; a >= 0; --a) {
            t[a] = rest % p.tile[a];
            rest /= p.tile[a];
          }
          for (const auto& term : s.terms()) {
            if (term.weight == 0.0) continue;
            int flat = 0;
            for (int a = 0; a < N; ++a) flat = flat * p.patch[a] + t[a] + term.offset[a] + p.radius[a];
            used[flat] = 1;
          }
        }
        const long columns = std::count(used.begin(), used.end(), 1);
        return round_up(std::max<long>({columns, 2 * static_cast<long>(nonzero_terms), 1}), p.mma.k);
      },
      p.stencil);
}

/// The prediction a tile cannot beat (K at its lower bound), for ordering and pruning.
Plan bounded_plan(const Plan& base, const std::vector<int>& tile) {
  Plan p                = sparse_skeleton(base, tile);
  p.mmas_per_tile_group = static_cast<long>((p.rows + 15) / 16) * (k_lower_bound(p) / p.mma.k);
  p.predicted           = predict_sparse(p);
  return p;
}

/// The shared-memory image of a block (size_block_image), the gather table over it and
/// the tile offsets. `cap_image`: large radii shrink the block along the fastest axis until
/// the image fits max_image_points (the gather kernel's offsets are 16-bit; row-run plans
/// size their blocks by row_run_layout instead).
void finish_geometry(Plan& p, bool cap_image) {
  const int D = p.dims();
  for (;;) {
    const long points = size_block_image(p);
    const int tiles   = product(p.tiles_per_block);
    if (!cap_image || points <= max_image_points || p.tiles_per_block[D - 1] % 2 != 0 || (tiles / 2) % 8 != 0) break;
    p.tiles_per_block[D - 1] /= 2;
  }
  fill_block_tables(p);
}

Plan full_sparse_plan(const Plan& base, const std::vector<int>& tile, Pairing rule_requested) {
  // 16-output row tiles of 16-bit values have two row-run forms, image rows as they are and
  // interleaved; the cost model picks. (Measured on the H100, perf_tests/RESULTS.md
  // 2026-11-23, a133d81: rows as they are win in 1-D, 2-D and Heat-3D, interleaved rows win
  // Box-3D27P, 383-386 against 347-355 single steps and 211-215 against 98 fused t = 3;
  // the model orders every preset so.)
  if (rule_requested == Pairing::best && is_row_run_tile(tile) && base.precision != Precision::tf32) {
    Plan as_they_are = full_sparse_plan(base, tile, Pairing::parity_split);
    Plan interleaved = full_sparse_plan(base, tile, Pairing::interleaved);
    return interleaved.interleave != 0 && better(interleaved, as_they_are) ? interleaved : as_they_are;
  }
  Plan p             = sparse_skeleton(base, tile);
  const long k_bound = k_lower_bound(p);
  std::visit(
      [&](const auto& s) {
        constexpr int N = std::decay_t<decltype(s)>::rank;
        typename std::decay_t<decltype(s)>::index_type t{};
        std::copy(tile.begin(), tile.end(), t.begin());
        const KernelMatrix a = morph(s, t);
        p.nonzeros           = a.nonzeros();
        // Algorithm 1 is linear and minimal on staircase matrices, which full boxes give
        // (Theorem 2; the tests check it against Edmonds). Elsewhere Edmonds runs where it
        // might shorten K.
        // SPIDER's strided swapping competes on row tiles; the shortest K wins (fewer zero
        // columns on a tie, then the order listed).
        const PatchGeometry<N> geometry(t, s.radius());
        auto consider = [&](ColumnOrder order, const char* how) {
          pad_columns(order, p.mma.k);
          const auto key = [](const ColumnOrder& o) { return std::make_pair(o.columns.size(), o.zero_columns); };
          if (p.pairing.empty() || key(order) < key(p.order)) {
            p.order   = std::move(order);
            p.pairing = how;
          }
        };
        const Pairing rule  = rule_requested;
        const bool row_tile = std::all_of(tile.begin(), tile.end() - 1, [](int e) { return e == 1; });
        // 16-output rows run as row runs (their own order and A', SparStencil_RowRuns.cpp)
        // unless a gather-form pairing rule is forced.
        const bool row_form = rule == Pairing::best || rule == Pairing::parity_split || rule == Pairing::interleaved;
        if (is_row_run_tile(tile) && row_form) {
          build_row_runs(p, a, rule);
          return;
        }
        if (rule != Pairing::best && row_form) {
          sparstencil::impl::fail("make_sparse_plan",
                                  "parity_split and interleaved pair row tiles (1 x ... x 16) only");
        }
        if (rule == Pairing::best || rule == Pairing::hierarchical) {
          consider(pair_columns_hierarchical(a, geometry), "hierarchical");
        }
        if (rule == Pairing::edmonds ||
            (rule == Pairing::best && !is_full_box(s) && static_cast<long>(p.order.columns.size()) > k_bound)) {
          consider(pair_columns_general(a), "edmonds");
        }
        if (rule == Pairing::strided_swapping || (rule == Pairing::best && row_tile)) {
          consider(pair_columns_strided(a, geometry), "strided swapping");
        }
        p.a = pack_operand(a, p.order, p.precision);
      },
      p.stencil);

  if (!p.runs.empty()) size_row_run_blocks(p);
  finish_geometry(p, p.runs.empty());
  const int k           = static_cast<int>(p.order.columns.size());
  p.sparsity            = static_cast<double>(p.nonzeros) / (16.0 * p.a.m_blocks * k);
  p.mmas_per_tile_group = static_cast<long>(p.a.m_blocks) * p.a.k_chunks;
  p.predicted           = predict_sparse(p);
  return p;
}

/// Why no plan of `bound`'s tile can fit either kernel form, from K's lower bound alone
/// (bounded_plan's): its A' chunks pass what the gather form holds in registers and what
/// the row-run form holds in shared memory. Nothing where a plan may fit: only the full
/// plan (fits_kernel) tells. Spares building A' for fused stencils of hundreds of
/// thousands of terms.
std::optional<std::string> too_long_for_kernel(const Plan& bound) {
  const long m_blocks     = (bound.rows + 15) / 16;
  const long chunks       = bound.mmas_per_tile_group / m_blocks;
  const long in_registers = max_register_chunks(static_cast<int>(m_blocks));
  const long in_shared    = static_cast<long>(max_row_run_shared_bytes / row_run_bytes_per_chunk);
  if (chunks <= std::max(in_registers, in_shared)) return std::nullopt;
  char reason[200];
  std::snprintf(reason, sizeof reason,
                "K of at least %ld (%ld chunks) exceeds the %ld chunks the kernel holds in "
                "registers and the %ld its row-run form holds in shared memory: not planned",
                chunks * bound.mma.k, chunks, in_registers, in_shared);
  return std::string(reason);
}

bool faster(const Plan& a, const Plan& b) {
  return std::tie(a.predicted.seconds, a.predicted.compute_seconds, a.predicted.shared_seconds) <
         std::tie(b.predicted.seconds, b.predicted.compute_seconds, b.predicted.shared_seconds);
}

}  // namespace

bool fits_kernel(const Plan& plan) {
  if (plan.backend != "cuda_sptc") return false;
  // Row-run plans keep A' in shared memory: the block must fit the smallest opt-in limit
  // of the sparse devices.
  if (!plan.runs.empty()) return row_run_layout(plan).shared_bytes <= max_row_run_shared_bytes;
  return plan.a.k_chunks <= max_register_chunks(plan.a.m_blocks);
}

namespace {

/// Why a forced pairing rule does not apply to `tile`, or nothing where it does: the row
/// forms take 16-output row tiles, strided swapping any row tile (1 x ... x n).
std::optional<std::string> pairing_excludes(Pairing rule, const std::vector<int>& tile) {
  const bool row = std::all_of(tile.begin(), tile.end() - 1, [](int e) { return e == 1; });
  if ((rule == Pairing::parity_split || rule == Pairing::interleaved) && !is_row_run_tile(tile)) {
    return std::string("the forced pairing ") + (rule == Pairing::parity_split ? "parity_split" : "interleaved") +
           " makes row runs, which take 16-output row tiles only";
  }
  if (rule == Pairing::strided_swapping && !row) {
    return std::string("the forced pairing strided_swapping takes row tiles (1 x ... x n) only");
  }
  return std::nullopt;
}

/// `fused`: the request's stencil fused over its steps (base_plan's).
std::optional<std::string> why_not(const PlanRequest& r, const AnyStencil& fused) {
  const DeviceDescription& device = device_description(r.device);
  if (!device.has_sparse_tensor_cores()) return "device " + r.device + " has no sparse tensor cores";
  if (!has_sparse_operands(r.precision)) {
    return std::string("precision ") + to_string(r.precision) + " has no sparse tensor-core form (f16, bf16 or tf32)";
  }
  if (r.float_grids) {
    return std::string("the sparse executor reads grids of its operand format: float grids as tf32, not ") +
           to_string(r.precision);
  }
  // A' holds the (fused) weights in the operand format: one it cannot hold would be inf.
  const double largest = largest_weight(fused);
  if (largest > largest_stored(r.precision)) {
    char text[160];
    std::snprintf(text, sizeof text, "a%s weight of magnitude %.6g exceeds the %s operands' largest value %.6g",
                  r.steps > 1 ? " fused" : "", largest, to_string(r.precision), largest_stored(r.precision));
    return std::string(text);
  }
  return std::nullopt;
}

class Model final : public BackendModel {
 public:
  std::string_view name() const override { return "cuda_sptc"; }
  std::optional<std::string> cannot_run(const PlanRequest& r, const Plan& base) const override {
    if (auto why = why_not(r, base.stencil)) return why;
    // A fused plan equals t steps only at points at least t r from a wall; the wall kernel
    // steps the band nearer (docs/BOUNDARIES.md), where its blocks fit shared memory.
    if (auto why = wall_bands_excluded(r.grid, r.stencil, r.steps, r.boundary)) return why;
    return std::nullopt;
  }

  Scenario scenario(const Plan& mine, const Plan& plain) const override { return scenario_of(plain, mine); }

  /// Branch and bound over the tiles: plan fully in order of their lower bounds, stop
  /// where a bound cannot beat the fastest plan so far. The choice equals an exhaustive
  /// search.
  Bids bid(const PlanRequest& r, const Plan& base, double to_beat) const override {
    Bids bids;
    const std::vector<std::vector<int>> tiles = candidate_tiles(base.dims(), radius(base.stencil));
    if (tiles.empty()) {
      bids.dropped.push_back({"cuda_sptc",
                              {},
                              0,
                              Bid::Outcome::cannot_run,
                              "no tile keeps the patch within " + std::to_string(max_patch_points) + " points"});
      return bids;
    }
    std::vector<Plan> bounds;
    for (const auto& tile : tiles) {
      if (const std::optional<std::string> why = pairing_excludes(r.pairing, tile)) {
        bids.dropped.push_back({"cuda_sptc", tile, 0, Bid::Outcome::dropped, *why});
        continue;
      }
      bounds.push_back(bounded_plan(base, tile));
    }
    std::stable_sort(bounds.begin(), bounds.end(), faster);
    char reason[160];
    double best = to_beat;
    for (const Plan& bound : bounds) {
      if (bound.predicted.seconds > 1.005 * best) {  // outside better()'s tie window
        bids.dropped.push_back({"cuda_sptc", bound.tile, bound.predicted.seconds, Bid::Outcome::dropped,
                                "lower bound (K at its minimum) cannot win: not planned"});
        continue;
      }
      if (const std::optional<std::string> why = too_long_for_kernel(bound)) {
        bids.dropped.push_back({"cuda_sptc", bound.tile, bound.predicted.seconds, Bid::Outcome::dropped, *why});
        continue;
      }
      Plan full = full_sparse_plan(base, bound.tile, r.pairing);
      if (!fits_kernel(full)) {
        std::snprintf(reason, sizeof reason, "K = %zu (%d chunks) exceeds the %d the kernel holds in registers",
                      full.order.columns.size(), full.a.k_chunks, max_register_chunks(full.a.m_blocks));
        bids.dropped.push_back({"cuda_sptc", bound.tile, full.predicted.seconds, Bid::Outcome::dropped, reason});
        continue;
      }
      std::snprintf(reason, sizeof reason, "%s bound, S = %.2f, %ld MMAs per 8 tiles", full.predicted.bound.c_str(),
                    full.sparsity, full.mmas_per_tile_group);
      best = std::min(best, full.predicted.seconds);
      bids.plans.push_back({std::move(full), reason});
    }
    if (bids.plans.empty() && std::isinf(to_beat)) {
      sparstencil::impl::fail("make_plan", "no tile gives a plan the sparse kernel can run (cuda_sptc forced): ",
                              bids.dropped.empty() ? std::string("none planned") : bids.dropped.back().reason);
    }
    return bids;
  }
};

}  // namespace

Plan make_sparse_plan(const PlanRequest& r, const std::vector<int>& tile) {
  Plan base    = base_plan(r);
  base.backend = "cuda_sptc";
  if (const std::optional<std::string> why = why_not(r, base.stencil))
    sparstencil::impl::fail("make_sparse_plan", *why);
  if (tile.size() != base.grid.size()) {
    sparstencil::impl::fail("make_sparse_plan", "tile has ", tile.size(), " extents, need ", base.grid.size());
  }
  if (const std::optional<std::string> why = pairing_excludes(r.pairing, tile)) {
    sparstencil::impl::fail("make_sparse_plan", "tile ", sparstencil::impl::tuple_string(tile), ": ", *why);
  }
  return full_sparse_plan(base, tile, r.pairing);
}

const BackendModel& model() {
  static const Model instance;
  return instance;
}

}  // namespace sparstencil::cuda_sptc
