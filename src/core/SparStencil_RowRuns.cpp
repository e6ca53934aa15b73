/// Row-run plans: the K order of a 16-output row tile laid out as runs of V consecutive
/// values of one buffer row (Plan::runs), and the CUDA row-run kernel's shared-memory
/// layout (row_run_layout).
///
/// Per patch row holding nonzero weights, one of two layouts, the one with fewer runs:
///  - the image itself: the aligned runs covering the row's reach, when no output has
///    more than two weights in a group of four (one in a pair for tf32) at those
///    positions (single taps, taps two apart...);
///  - strided swapping: the forward swapped image over positions [-r, h - r) and the
///    backward one over [h - r, 2h - r), each part padded to whole runs; pairs are then
///    h +- 1 apart, beyond any row's reach, so 1:2 (and 2:4) holds for every stencil.
#include <algorithm>
#include <map>

#include "SparStencil_Planner.hpp"
#include "SparStencil_Sparsity.hpp"

namespace sparstencil {

const char* to_string(RunSource s) {
  switch (s) {
    case RunSource::image: return "image";
    case RunSource::forward: return "forward";
    case RunSource::backward: return "backward";
  }
  return "?";
}

namespace {

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int ceil_div(int a, int b) { return (a + b - 1) / b; }
int positive_mod(int a, int b) { return ((a % b) + b) % b; }

template <int D>
void build(Plan& p, const Stencil<D>& s, const KernelMatrix& a) {
  const int V      = 16 / storage_bytes(p.precision);
  const int group  = p.precision == Precision::tf32 ? 2 : 4;  // 1:2 or 2:4
  const int r      = p.radius[D - 1];
  const int n      = p.patch[D - 1];
  const int h      = strided_swap_distance(n, r);
  const int part   = ceil_div(h, V);  // runs per swapped half
  const std::vector<bool> used = nonzero_columns(a);

  // Nonzero taps per patch row (offsets along the other axes), rows in patch order.
  std::map<std::vector<int>, std::vector<int>> taps;
  for (const Term<D>& t : s.terms()) {
    if (t.weight == 0.0) continue;
    taps[std::vector<int>(t.offset.begin(), t.offset.end() - 1)].push_back(t.offset[D - 1]);
  }
  p.order = ColumnOrder{};
  p.runs.clear();
  p.swap_distance = 0;
  bool any_swapped = false;
  for (auto& [row, dx] : taps) {
    int base = 0;  // first patch column of this patch row
    for (int ax = 0; ax + 1 < D; ++ax) base = base * p.patch[ax] + row[ax] + p.radius[ax];
    base *= n;
    auto column = [&](int c) { return c >= 0 && c < n && used[base + c] ? base + c : zero_column; };
    std::vector<int> offset(row.begin(), row.end());
    offset.push_back(0);

    const auto [lo, hi]  = std::minmax_element(dx.begin(), dx.end());
    const int first_run = floor_div(*lo, V), last_run = floor_div(15 + *hi, V);
    bool image_fits     = true;  // at most group/2 taps of one output in a group
    for (int j = 0; j < 16 && image_fits; ++j) {
      std::map<int, int> per_group;
      for (int d : dx) image_fits = image_fits && ++per_group[floor_div(j + d, group)] <= group / 2;
    }
    if (image_fits && last_run - first_run + 1 <= 2 * part) {
      for (int u = first_run; u <= last_run; ++u) {
        offset.back() = u * V;
        p.runs.push_back({RunSource::image, offset});
        for (int e = 0; e < V; ++e) p.order.columns.push_back(column(u * V + e + r));
      }
      continue;
    }
    any_swapped = true;
    for (int half = 0; half < 2; ++half) {
      for (int i = 0; i < part; ++i) {
        offset.back() = half * h + i * V - r;
        p.runs.push_back({half == 0 ? RunSource::forward : RunSource::backward, offset});
        for (int e = 0; e < V; ++e) {
          const int q = i * V + e;  // position within the half
          if (q >= h) {
            p.order.columns.push_back(zero_column);
            continue;
          }
          const int position = half * h + q;  // SPIDER's position in the patch row
          const int c        = position % 2 == 0 ? position : (half == 0 ? position + h : position - h);
          p.order.columns.push_back(column(c));
        }
      }
    }
  }
  if (any_swapped) p.swap_distance = h;
  // Whole MMA chunks: four runs each; padding runs read the tile origin (A' is zero there).
  while (p.runs.size() % 4 != 0) {
    p.runs.push_back({RunSource::image, std::vector<int>(D, 0)});
    for (int e = 0; e < V; ++e) p.order.columns.push_back(zero_column);
  }
  p.order.zero_columns    = static_cast<int>(std::count(p.order.columns.begin(), p.order.columns.end(), zero_column));
  p.order.dropped_columns = static_cast<int>(std::count(used.begin(), used.end(), false));
  p.pairing               = any_swapped ? "row runs, strided swapping" : "row runs";
}

}  // namespace

namespace impl {

bool is_row_run_tile(const std::vector<int>& tile) {
  return !tile.empty() && tile.back() == 16 && std::all_of(tile.begin(), tile.end() - 1, [](int e) { return e == 1; });
}

void build_row_runs(Plan& p, const KernelMatrix& a) {
  std::visit([&](const auto& s) { build(p, s, a); }, p.stencil);
  check_column_order(a, p.order);
}

void size_row_run_blocks(Plan& p) {
  const int D     = p.dims();
  const int V     = 16 / storage_bytes(p.precision);
  // Widest block row (8 KiB of outputs: 256 16-bit or 128 32-bit values) whose shared
  // memory leaves room for three thread blocks per SM; narrower ones down to 32 after.
  constexpr std::size_t comfortable = 72 * 1024;
  for (int width = 4096 / V / 2; width >= 32; width /= 2) {
    p.tiles_per_block.assign(D, 1);
    if (D == 1) {
      p.tiles_per_block[0] = width;  // 16 folded rows of `width`
    } else {
      p.tiles_per_block[D - 2] = 16;
      p.tiles_per_block[D - 1] = width / 16;
    }
    if (row_run_layout(p).shared_bytes <= comfortable) return;
  }
}

}  // namespace impl

RowRunLayout row_run_layout(const Plan& p) {
  if (p.runs.empty()) throw std::logic_error("row_run_layout: the plan has no runs");
  const int D = p.dims();
  RowRunLayout l;
  const int bytes = storage_bytes(p.precision);
  l.vector        = 16 / bytes;
  const int V     = l.vector;
  l.width         = D == 1 ? p.tiles_per_block[0] : p.tiles_per_block[D - 1] * 16;
  l.row_lead      = D == 1 ? 0 : p.radius[D - 2];
  l.image_rows    = 16 + 2 * l.row_lead;
  l.lead          = static_cast<int>((p.radius[D - 1] + V - 1) / V * V);
  l.pitch         = l.width + 2 * l.lead;
  if ((l.pitch / V) % 2 == 0) l.pitch += V;
  l.ring_lead = D == 3 ? p.radius[0] : 0;
  l.ring      = 2 * l.ring_lead + 2;
  const int r = p.radius[D - 1], h = p.swap_distance;
  l.shift[0]  = 0;
  l.shift[1]  = positive_mod(r, V);
  l.shift[2]  = positive_mod(r - h, V);
  int reach   = 0;  // furthest value a run reads past the tile origin, along the fastest axis
  int z_lo = 1 << 20, z_hi = -(1 << 20), y_lo = 1 << 20, y_hi = -(1 << 20);
  for (const Run& run : p.runs) {
    const int source = static_cast<int>(run.source);
    reach = std::max(reach, run.offset[D - 1] + V + l.shift[source]);
    if (run.source == RunSource::image) continue;
    const int z = D == 3 ? run.offset[0] : 0, y = D >= 2 ? run.offset[D - 2] : 0;
    z_lo = std::min(z_lo, z), z_hi = std::max(z_hi, z), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
  }
  // Runs of the last tile of the last row may read past the row's end: slack, kept finite.
  l.plane_values = l.image_rows * l.pitch + static_cast<int>((reach + 2 * V + V - 1) / V * V);
  if (h > 0) {
    l.swapped_ring    = z_hi - z_lo + 1;
    l.swapped_low     = z_lo;
    l.swapped_rows[0] = l.row_lead + y_lo;
    l.swapped_rows[1] = l.row_lead + 15 + y_hi;
  }
  l.stage_pitch = l.width + V;
  const std::size_t chunks = p.a.k_chunks;
  l.shared_bytes = static_cast<std::size_t>(l.ring + 2 * l.swapped_ring) * l.plane_values * bytes +
                   static_cast<std::size_t>(16) * l.stage_pitch * bytes + chunks * 512 + (chunks + 1) / 2 * 128 +
                   p.runs.size() * 4;
  return l;
}

}  // namespace sparstencil
