/// Row-run plans: the K order of a 16-output row tile laid out as runs of V consecutive
/// values of the kernel's image rows (Plan::runs), its packed A', and the CUDA row-run
/// kernel's layout (row_run_layout).
///
/// A patch row whose taps span three or more neighbours breaks 2:4 (1:2 for tf32) on runs
/// of consecutive values: some output has more than two taps in a group of four. Two
/// forms keep 2:4 for every stencil, and the planner takes the one with fewer k chunks:
/// - natural rows (B' is the image itself): such a row is split by tap parity, even taps
///   and odd taps each on runs of their own (taps of one parity are two apart), at the
///   price of twice the MMAs on split rows; both parts read the same runs, chunk after
///   chunk, so the kernel loads that B' once for both;
/// - interleaved rows (16-bit values, taps spanning fewer than D values, D = 4, 8 or 16):
///   the kernel holds each image row with its 4-byte pairs interleaved D values apart, in
///   blocks of 2 D values: a block's 16-byte unit m holds the pairs at 4m, D + 4m, 4m + 2,
///   D + 4m + 2 (SPIDER's strided swapping, done while the rows are copied in). A group of
///   four is then two pairs D apart, and no output reaches both, so every row is read
///   once, whole (one chunk for a 7-wide row instead of two). Blocks of 32 values (D = 16,
///   taps spanning 8 to 15 values) are wider than a 16-output tile: there every tile's
///   patch row lies in one block of its own, the blocks of neighbouring tiles overlapping
///   by 16 values (the kernel copies them side by side). The kernel copies 2-D rows inside
///   the grid pair by pair to their places, other rows as they are, 16 bytes at a time,
///   and then interleaves each block in place; the planner's cost model chooses between
///   the forms (see build).
#include <algorithm>
#include <map>

#include "SparStencil_RowRuns.hpp"

#include <stdexcept>

#include "SparStencil_SparseOperand.hpp"
#include "SparStencil_Sparsity.hpp"

namespace sparstencil::cuda_sptc {

namespace {

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// Whether taps `dx` of one patch row keep every output of a 16-output row within
/// `group` / 2 nonzeros per aligned group of `group` positions.
bool fits_groups(const std::vector<int>& dx, int group) {
  for (int j = 0; j < 16; ++j) {
    std::map<int, int> per_group;
    for (int d : dx)
      if (++per_group[floor_div(j + d, group)] > group / 2) return false;
  }
  return true;
}

/// Position within a block of 2 D values (interleaved rows) of value `i` of the block's
/// 16-byte unit `i / 8`: unit m, pair p, half h, element e (i = 8m + 4p + 2h + e) is
/// value h D + 4m + 2p + e of the row.
int interleaved_position(int i, int D) {
  const int m = i >> 3, pair = (i >> 2) & 1, half = (i >> 1) & 1, e = i & 1;
  return half * D + 4 * m + 2 * pair + e;
}

/// 2-D: whether every unit of `unit` k chunks (its first chunk's runs) reads the runs of
/// the unit before one image row down (boxes): the kernel's shifted loops.
bool rows_shift(const std::vector<Run>& runs, std::size_t unit) {
  for (std::size_t r = 4 * unit; r < runs.size(); ++r) {
    if (r % (4 * unit) >= 4) continue;
    const Run &run = runs[r], &above = runs[r - 4 * unit];
    if (run.offset.size() != 2 || run.offset[1] != above.offset[1] || run.offset[0] != above.offset[0] + 1)
      return false;
  }
  return true;
}

/// One form's runs, K order and dense A' (column k: the weights K row k carries).
struct Layout {
  std::vector<Run> runs;
  std::vector<int> columns;
  std::vector<std::vector<double>> dense;
  bool split     = false;
  int interleave = 0, origin = 0;
  std::size_t chunks() const { return (runs.size() + 3) / 4; }
};

template <int D>
class RowRunBuilder {
 public:
  RowRunBuilder(const Plan& p, const Stencil<D>& s, const KernelMatrix& a)
      : a_(a), V_(16 / storage_bytes(p.precision)), r_(p.radius[D - 1]), n_(p.patch[D - 1]) {
    for (const Term<D>& t : s.terms()) {
      if (t.weight == 0.0) continue;
      taps_[std::vector<int>(t.offset.begin(), t.offset.end() - 1)].push_back(t.offset[D - 1]);
    }
    for (int ax = 0; ax + 1 < D; ++ax) patch_.push_back(p.patch[ax]), radius_.push_back(p.radius[ax]);
  }

  /// Natural rows: runs of V consecutive image values, split rows by tap parity.
  Layout natural(int group) const {
    Layout l;
    auto run_range = [&](const std::vector<int>& part) {
      const auto [lo, hi] = std::minmax_element(part.begin(), part.end());
      return std::make_pair(floor_div(*lo, V_), floor_div(15 + *hi, V_));
    };
    auto add_runs = [&](const std::vector<int>& row, const std::vector<int>& part, int first_run, int last_run) {
      for (int u = first_run; u <= last_run; ++u) add_run(l, row, part, u * V_, [&](int e) { return u * V_ + e; });
    };
    // Split rows first, chunk by chunk: the even part's chunk, then the odd part's over the
    // same runs (both padded to whole chunks of the row's reach), so the kernel loads that
    // B' once for both (Plan::runs: a chunk whose runs equal the previous chunk's).
    std::vector<std::pair<std::vector<int>, std::vector<int>>> fitting;  // rows read as they are
    for (const auto& [row, dx] : taps_) {
      if (fits_groups(dx, group)) {
        fitting.emplace_back(row, dx);
        continue;
      }
      l.split = true;
      std::vector<int> even, odd;
      for (int d : dx) (((d % 2) + 2) % 2 == 0 ? even : odd).push_back(d);
      auto [first_run, last_run] = run_range(dx);
      last_run                   = first_run + (last_run - first_run + 4) / 4 * 4 - 1;
      for (int u = first_run; u <= last_run; u += 4) {
        add_runs(row, even, u, u + 3);
        add_runs(row, odd, u, u + 3);
      }
    }
    for (const auto& [row, dx] : fitting) {
      const auto [first_run, last_run] = run_range(dx);
      add_runs(row, dx, first_run, last_run);
    }
    pad(l);
    return l;
  }

  /// Interleaved rows (V = 8) with pairs `interleave` apart, blocks starting `origin` from
  /// the tile origin; empty where a row's taps span `interleave` values or more, or (blocks
  /// of a tile's own, D = 16) its patch row passes the block.
  Layout interleaved(int interleave, int origin) const {
    Layout l;
    l.interleave = interleave, l.origin = origin;
    const int block = 2 * interleave;
    for (const auto& [row, dx] : taps_) {
      const auto [lo, hi] = std::minmax_element(dx.begin(), dx.end());
      if (*hi - *lo + 1 >= interleave) return {};
      if (block > 16 && (*lo < origin || 15 + *hi >= origin + block)) return {};
      for (int b = origin + floor_div(*lo - origin, block) * block; b <= 15 + *hi; b += block) {
        for (int m = 0; m < interleave / 4; ++m) {
          auto position = [&](int e) { return b + interleaved_position(8 * m + e, interleave); };
          bool read     = false;  // some output has a tap on the unit
          for (int e = 0; e < 8 && !read; ++e)
            for (int d : dx) read = read || (position(e) - d >= 0 && position(e) - d < 16);
          if (read) add_run(l, row, dx, b + 8 * m, position);
        }
      }
    }
    pad(l);
    return l;
  }

 private:
  /// One run at `offset` from the tile origin whose value e is image value position(e):
  /// the K rows' weights for the taps in `part` of patch row `row`.
  template <class Position>
  void add_run(Layout& l, const std::vector<int>& row, const std::vector<int>& part, int offset,
               Position position) const {
    std::vector<int> at(row.begin(), row.end());
    at.push_back(offset);
    l.runs.push_back({at});
    int base = 0;  // first patch column of this patch row
    for (int ax = 0; ax + 1 < D; ++ax) base = base * patch_[ax] + row[ax] + radius_[ax];
    base *= n_;
    for (int e = 0; e < V_; ++e) {
      const int q = position(e);  // image value from the tile origin
      std::vector<double> column(16, 0.0);
      bool any = false;
      for (int j = 0; j < 16; ++j) {
        if (std::find(part.begin(), part.end(), q - j) == part.end() || q + r_ < 0 || q + r_ >= n_) continue;
        column[j] = a_(j, base + q + r_);
        any       = any || column[j] != 0.0;
      }
      l.columns.push_back(any ? base + q + r_ : zero_column);
      l.dense.push_back(std::move(column));
    }
  }
  /// Whole MMA chunks: four runs each; padding runs (A' zero there) read the tile origin,
  /// or with interleaved rows the first run (a unit boundary).
  void pad(Layout& l) const {
    while (l.runs.size() % 4 != 0) {
      l.runs.push_back(l.interleave != 0 ? l.runs.front() : Run{std::vector<int>(D, 0)});
      for (int e = 0; e < V_; ++e) {
        l.columns.push_back(zero_column);
        l.dense.emplace_back(16, 0.0);
      }
    }
  }

  const KernelMatrix& a_;
  const int V_, r_, n_;
  std::vector<int> patch_, radius_;
  /// Nonzero taps per patch row (offsets along the other axes), rows in patch order.
  std::map<std::vector<int>, std::vector<int>> taps_;
};

template <int D>
void build(Plan& p, const Stencil<D>& s, const KernelMatrix& a, Pairing rule) {
  const RowRunBuilder<D> builder(p, s, a);
  const bool tf32 = p.precision == Precision::tf32;
  Layout best     = builder.natural(tf32 ? 2 : 4);  // 1:2 or 2:4
  // Interleaved rows (16-bit values; origins a multiple of V keep the blocks 16-byte
  // aligned in the grid, copied as they are), asked for by Pairing::interleaved: the fewest
  // chunks. (Under Pairing::best the planner plans both forms and its cost model picks one:
  // full_sparse_plan.)
  const bool wanted = !tf32 && rule == Pairing::interleaved;
  Layout interleaved;
  for (int interleave : {4, 8, 16}) {
    for (int origin = -2 * interleave; origin < 0 && wanted; origin += 8) {
      Layout l = builder.interleaved(interleave, origin);
      // A block per tile (D = 16) only where the kernel's shifted chunk loop takes the plan.
      if (interleave == 16 && (D != 2 || l.chunks() < 2 || !rows_shift(l.runs, 1))) continue;
      if (!l.runs.empty() && (interleaved.runs.empty() || l.chunks() < interleaved.chunks()))
        interleaved = std::move(l);
    }
  }
  if (!interleaved.runs.empty()) best = std::move(interleaved);
  p.runs                       = std::move(best.runs);
  p.interleave                 = best.interleave;
  p.interleave_origin          = best.origin;
  p.order                      = ColumnOrder{};
  p.order.columns              = std::move(best.columns);
  const std::vector<bool> used = nonzero_columns(a);
  p.order.zero_columns    = static_cast<int>(std::count(p.order.columns.begin(), p.order.columns.end(), zero_column));
  p.order.dropped_columns = static_cast<int>(std::count(used.begin(), used.end(), false));
  p.pairing = best.interleave != 0 ? "row runs, pairs interleaved " + std::to_string(best.interleave) + " apart"
              : best.split         ? "row runs, parity split"
                                   : "row runs";

  // The parts must add up to A exactly: every weight carried once, nothing invented.
  const std::vector<std::vector<double>>& dense = best.dense;
  KernelMatrix packed(16, static_cast<int>(dense.size()));
  ColumnOrder identity;
  KernelMatrix sum(a.rows, a.cols);
  for (int k = 0; k < packed.cols; ++k) {
    identity.columns.push_back(k);
    const int c = p.order.columns[k];
    for (int j = 0; j < 16; ++j) {
      packed(j, k) = dense[k][j];
      if (c != zero_column && j < a.rows) sum(j, c) += dense[k][j];
    }
  }
  if (sum.values != a.values) throw std::logic_error("row runs: the split parts do not add up to A'");
  p.a = pack_operand(packed, identity, p.precision);
}

}  // namespace

bool is_row_run_tile(const std::vector<int>& tile) {
  return !tile.empty() && tile.back() == 16 && std::all_of(tile.begin(), tile.end() - 1, [](int e) { return e == 1; });
}

void build_row_runs(Plan& p, const KernelMatrix& a, Pairing rule) {
  if (a.rows != 16) throw std::logic_error("build_row_runs: row tiles have 16 outputs");
  std::visit([&](const auto& s) { build(p, s, a, rule); }, p.stencil);
}

void size_row_run_blocks(Plan& p) {
  // One warp step: `rows` rows of the strip (folded rows in 1-D, rows of a plane in 3-D).
  const int D          = p.dims();
  const RowRunLayout l = row_run_layout(p);
  p.tiles_per_block.assign(D, 1);
  if (D == 1) {
    p.tiles_per_block[0] = l.rows * l.width / 16;
  } else {
    p.tiles_per_block[D - 2] = l.rows;
    p.tiles_per_block[D - 1] = l.width / 16;
  }
}

RowLoop row_loop(const Plan& plan, const RowRunLayout& l) {
  const int dims = plan.dims();
  if (plan.precision == Precision::tf32) return RowLoop::standard;
  if (l.distinct && dims != 2) return RowLoop::distinct;
  if (l.shifted && dims == 2) return l.paired ? RowLoop::shifted_pairs : RowLoop::shifted_chunks;
  return RowLoop::standard;
}

const char* row_loop_name(RowLoop loop, bool paired) {
  switch (loop) {
    case RowLoop::shifted_pairs: return "shifted pair loop";
    case RowLoop::shifted_chunks: return "shifted chunk loop";
    case RowLoop::distinct: return "pipelined distinct loop";
    case RowLoop::standard: break;
  }
  return paired ? "pipelined pair loop" : "chunk loop";
}

bool reads_previous_runs(const Plan& p, std::size_t chunk) {
  if (chunk % 2 == 0 || 4 * chunk + 4 > p.runs.size()) return false;
  for (std::size_t r = 4 * chunk; r < 4 * chunk + 4; ++r) {
    if (p.runs[r].offset != p.runs[r - 4].offset) return false;
  }
  return true;
}

RowRunLayout row_run_layout(const Plan& p) {
  if (p.runs.empty()) throw std::logic_error("row_run_layout: the plan has no runs");
  const int D     = p.dims();
  const int bytes = storage_bytes(p.precision);
  RowRunLayout l;
  l.vector     = 16 / bytes;
  l.rows       = p.precision == Precision::tf32 ? step_rows_tf32 : step_rows_16bit;
  const int V  = l.vector;
  l.row_halo   = D == 1 ? 0 : p.radius[D - 2];
  l.plane_halo = D == 3 ? p.radius[0] : 0;
  int first = 0, end = 16;  // positions runs read from a tile origin: [first, end)
  for (const Run& run : p.runs) {
    first = std::min(first, run.offset[D - 1]);
    end   = std::max(end, run.offset[D - 1] + V);
  }
  if (p.interleave != 0) {  // whole blocks of 2 D values, the first at a block start
    const int block = 2 * p.interleave;
    first           = p.interleave_origin + floor_div(first - p.interleave_origin, block) * block;
    end             = p.interleave_origin + floor_div(end - p.interleave_origin + block - 1, block) * block;
  }
  const std::size_t chunks = p.a.k_chunks;
  std::size_t sharing      = 0;  // odd chunks reading the runs of the chunk before
  for (std::size_t c = 1; c < chunks; c += 2) sharing += reads_previous_runs(p, c) ? 1 : 0;
  l.paired = chunks % 2 == 0 && sharing == chunks / 2;
  // (Not in 2-D: that variant spilled 32 bytes at 128 registers and ran 2-D interleaved
  // rows slower than the plain loop, Box-2D49P 409 against 432 GStencil/s.)
  l.distinct = chunks >= 2 && sharing == 0 && D != 2;
  // Units of one pair or one interleaved chunk; every unit's runs those of the unit before
  // one row down.
  const std::size_t unit = l.paired ? 2 : 1;
  l.shifted = (l.paired || sharing == 0) && chunks >= 2 * unit && D == 2 && p.precision != Precision::tf32 &&
              rows_shift(p.runs, unit);
  l.lead          = -first;
  l.row_values    = l.lead + l.width - 16 + end;
  l.copied_values = l.row_values;
  // Blocks of a tile's own (D = 16): one per tile, side by side, from the values of the
  // strip's tiles' blocks.
  if (p.interleave > 8) {
    l.lead          = -p.interleave_origin;
    l.row_values    = l.width / 16 * 2 * p.interleave;
    l.copied_values = l.width - 16 + 2 * p.interleave;
  }
  // pitch / V odd; the shifted loop's ring rows lie 16 bytes into their slot every other
  // 8 rows, so they keep a unit spare.
  l.pitch = l.row_values + (l.shifted ? V : 0);
  if ((l.pitch / V) % 2 == 0) l.pitch += V;
  // Two steps in flight where the ring stays small, else one.
  auto ring_for = [&](int ahead) {
    if (D == 3) return 2 * l.plane_halo + 1 + ahead;
    // 1-D/2-D rows: whole steps, so a step's rows never wrap (and an ldmatrix's 8 rows keep
    // their banks across the ring's end: the shifted loops' row shift has a 16-row period).
    return (l.rows * (ahead + 1) + 2 * l.row_halo + l.rows - 1) / l.rows * l.rows;
  };
  l.plane_values = (l.rows + 2 * l.row_halo) * l.pitch;
  // 3-D: in the step's first plane where it holds the rows; 1-D/2-D: in the step's first
  // rows, which no later step reads and the next step's request rewrites.
  l.stage_in_ring  = D < 3 || l.plane_values >= l.rows * (l.width + V);
  l.stage_pitch    = D < 3 ? l.pitch : l.width + V;
  auto warp_values = [&](int ring) {
    return (D == 3 ? ring * l.plane_values : ring * l.pitch) + (l.stage_in_ring ? 0 : l.rows * l.stage_pitch);
  };
  l.ahead                  = ring_for(2) == ring_for(1) || warp_values(ring_for(2)) * bytes <= 14 * 1024 ? 2 : 1;
  const std::size_t common = chunks * row_run_bytes_per_chunk + (chunks + 1) / 2 * 128 + p.runs.size() * 4;
  // Up to 8 warps a block, fewer where a block would pass 112 KiB (two blocks an SM).
  auto warps_for = [&](int values) {
    int warps = 8;
    while (warps > 1 && common + static_cast<std::size_t>(warps) * values * bytes > 112 * 1024) --warps;
    return warps;
  };
  // 1-D/2-D rings of rows: rounded up to a power of two where that costs no warps (H100:
  // 15 x 15 box 266 GStencil/s against 254 with 62 rows), as they are where it would
  // (Box-2D49P: 8 warps a block with 54 rows, 7 with 64; 488 against 470).
  l.ring = ring_for(l.ahead);
  if (D < 3) {
    int rounded = l.rows;
    while (rounded < l.ring) rounded *= 2;
    if (warps_for(warp_values(rounded)) == warps_for(warp_values(l.ring))) l.ring = rounded;
  }
  l.warp_values  = warp_values(l.ring);
  l.warps        = warps_for(l.warp_values);
  l.shared_bytes = common + static_cast<std::size_t>(l.warps) * l.warp_values * bytes;
  return l;
}

}  // namespace sparstencil::cuda_sptc
