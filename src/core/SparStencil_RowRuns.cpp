/// Row-run plans: the K order of a 16-output row tile laid out as runs of V consecutive
/// image values (Plan::runs), its packed A', and the CUDA row-run kernel's layout
/// (row_run_layout).
///
/// Per patch row holding nonzero weights: the aligned runs covering the row's reach when
/// no output has more than two taps in a group of four (one in a pair for tf32) at those
/// positions; otherwise the row is split by tap parity, even taps and odd taps each on
/// runs of their own. Taps of one parity are two apart, so no output has more than two
/// in a group of four (or one in a pair) at any alignment: 2:4 holds for every stencil,
/// and B' is the image itself (no swapped copies to build), at the price of twice the
/// MMAs on split rows. Both parts read the same runs (the row's reach in whole chunks),
/// chunk after chunk, so the kernel loads that B' once for both.
#include <algorithm>
#include <map>

#include "SparStencil_Planner.hpp"
#include "SparStencil_Sparsity.hpp"

namespace sparstencil {

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

template <int D>
void build(Plan& p, const Stencil<D>& s, const KernelMatrix& a) {
  const int V     = 16 / storage_bytes(p.precision);
  const int group = p.precision == Precision::tf32 ? 2 : 4;  // 1:2 or 2:4
  const int r     = p.radius[D - 1];
  const int n     = p.patch[D - 1];
  const std::vector<bool> used = nonzero_columns(a);

  // Nonzero taps per patch row (offsets along the other axes), rows in patch order.
  std::map<std::vector<int>, std::vector<int>> taps;
  for (const Term<D>& t : s.terms()) {
    if (t.weight == 0.0) continue;
    taps[std::vector<int>(t.offset.begin(), t.offset.end() - 1)].push_back(t.offset[D - 1]);
  }
  p.order = ColumnOrder{};
  p.runs.clear();
  // Dense A' in K order: column k holds the weights K row k carries (a part's taps only).
  std::vector<std::vector<double>> dense;
  bool split_any = false;
  // Runs first_run .. last_run of a patch row for the taps in `part`.
  auto add_runs = [&](const std::vector<int>& row, int base, const std::vector<int>& part, int first_run,
                      int last_run) {
    std::vector<int> offset(row.begin(), row.end());
    offset.push_back(0);
    for (int u = first_run; u <= last_run; ++u) {
      offset.back() = u * V;
      p.runs.push_back({offset});
      for (int e = 0; e < V; ++e) {
        const int q = u * V + e;  // position from the tile origin
        std::vector<double> column(16, 0.0);
        bool any = false;
        for (int j = 0; j < 16; ++j) {
          if (std::find(part.begin(), part.end(), q - j) == part.end() || q + r < 0 || q + r >= n) continue;
          column[j] = a(j, base + q + r);
          any       = any || column[j] != 0.0;
        }
        p.order.columns.push_back(any ? base + q + r : zero_column);
        dense.push_back(std::move(column));
      }
    }
  };
  auto run_range = [&](const std::vector<int>& part) {
    const auto [lo, hi] = std::minmax_element(part.begin(), part.end());
    return std::make_pair(floor_div(*lo, V), floor_div(15 + *hi, V));
  };
  auto patch_base = [&](const std::vector<int>& row) {
    int base = 0;  // first patch column of this patch row
    for (int ax = 0; ax + 1 < D; ++ax) base = base * p.patch[ax] + row[ax] + p.radius[ax];
    return base * n;
  };
  // Split rows first, chunk by chunk: the even part's chunk, then the odd part's over the
  // same runs (both padded to whole chunks of the row's reach), so the kernel loads that
  // B' once for both (Plan::runs: a chunk whose runs equal the previous chunk's).
  std::vector<std::pair<std::vector<int>, std::vector<int>>> fitting;  // rows read as they are
  for (auto& [row, dx] : taps) {
    if (fits_groups(dx, group)) {
      fitting.emplace_back(row, dx);
      continue;
    }
    split_any = true;
    std::vector<int> even, odd;
    for (int d : dx) (((d % 2) + 2) % 2 == 0 ? even : odd).push_back(d);
    auto [first_run, last_run] = run_range(dx);
    last_run = first_run + (last_run - first_run + 4) / 4 * 4 - 1;
    for (int u = first_run; u <= last_run; u += 4) {
      add_runs(row, patch_base(row), even, u, u + 3);
      add_runs(row, patch_base(row), odd, u, u + 3);
    }
  }
  for (auto& [row, dx] : fitting) {
    const auto [first_run, last_run] = run_range(dx);
    add_runs(row, patch_base(row), dx, first_run, last_run);
  }
  // Whole MMA chunks: four runs each; padding runs read the tile origin (A' is zero there).
  while (p.runs.size() % 4 != 0) {
    p.runs.push_back({std::vector<int>(D, 0)});
    for (int e = 0; e < V; ++e) {
      p.order.columns.push_back(zero_column);
      dense.emplace_back(16, 0.0);
    }
  }
  p.order.zero_columns    = static_cast<int>(std::count(p.order.columns.begin(), p.order.columns.end(), zero_column));
  p.order.dropped_columns = static_cast<int>(std::count(used.begin(), used.end(), false));
  p.pairing               = split_any ? "row runs, parity split" : "row runs";

  // The parts must add up to A exactly: every weight carried once, nothing invented.
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

namespace impl {

bool is_row_run_tile(const std::vector<int>& tile) {
  return !tile.empty() && tile.back() == 16 && std::all_of(tile.begin(), tile.end() - 1, [](int e) { return e == 1; });
}

void build_row_runs(Plan& p, const KernelMatrix& a) {
  if (a.rows != 16) throw std::logic_error("build_row_runs: row tiles have 16 outputs");
  std::visit([&](const auto& s) { build(p, s, a); }, p.stencil);
}

void size_row_run_blocks(Plan& p) {
  // One warp step: `rows` rows of the strip (folded rows in 1-D, rows of a plane in 3-D).
  const int D            = p.dims();
  const RowRunLayout l   = row_run_layout(p);
  p.tiles_per_block.assign(D, 1);
  if (D == 1) {
    p.tiles_per_block[0] = l.rows * l.width / 16;
  } else {
    p.tiles_per_block[D - 2] = l.rows;
    p.tiles_per_block[D - 1] = l.width / 16;
  }
}

}  // namespace impl

RowRunLayout row_run_layout(const Plan& p) {
  if (p.runs.empty()) throw std::logic_error("row_run_layout: the plan has no runs");
  const int D     = p.dims();
  const int bytes = storage_bytes(p.precision);
  RowRunLayout l;
  l.vector        = 16 / bytes;
  l.rows          = p.precision == Precision::tf32 ? 8 : 16;  // tf32: 4-byte rows, fewer to keep warps resident
  const int V     = l.vector;
  l.row_halo      = D == 1 ? 0 : p.radius[D - 2];
  l.plane_halo    = D == 3 ? p.radius[0] : 0;
  int first = 0, end = 16;  // positions runs read from a tile origin: [first, end)
  for (const Run& run : p.runs) {
    first = std::min(first, run.offset[D - 1]);
    end   = std::max(end, run.offset[D - 1] + V);
  }
  l.lead       = -first;
  l.row_values = l.lead + l.width - 16 + end;
  l.pitch      = l.row_values;
  if ((l.pitch / V) % 2 == 0) l.pitch += V;
  l.stage_pitch = l.width + V;
  // Two steps in flight where the ring stays small, else one.
  auto ring_for = [&](int ahead) {
    if (D == 3) return 2 * l.plane_halo + 1 + ahead;
    int rows = l.rows;
    while (rows < l.rows * (ahead + 1) + 2 * l.row_halo) rows *= 2;
    return rows;
  };
  l.plane_values = (l.rows + 2 * l.row_halo) * l.pitch;
  auto warp_values = [&](int ring) {
    return (D == 3 ? ring * l.plane_values : ring * l.pitch) + l.rows * l.stage_pitch;
  };
  l.ahead = ring_for(2) == ring_for(1) || warp_values(ring_for(2)) * bytes <= 14 * 1024 ? 2 : 1;
  l.ring  = ring_for(l.ahead);
  l.warp_values = warp_values(l.ring);
  const std::size_t chunks = p.a.k_chunks;
  const std::size_t common = chunks * 512 + (chunks + 1) / 2 * 128 + p.runs.size() * 4;
  // Up to 8 warps a block, fewer where a block would pass 112 KiB (two blocks an SM).
  for (l.warps = 8; l.warps > 1; --l.warps) {
    if (common + static_cast<std::size_t>(l.warps) * l.warp_values * bytes <= 112 * 1024) break;
  }
  l.shared_bytes = common + static_cast<std::size_t>(l.warps) * l.warp_values * bytes;
  return l;
}

}  // namespace sparstencil
