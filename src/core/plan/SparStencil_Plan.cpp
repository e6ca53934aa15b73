#include "SparStencil_Plan.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "SparStencil_Parse.hpp"

namespace sparstencil {

namespace {

std::string shape_string(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}
std::string grid_string(const std::vector<long>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}
std::string time_string(double seconds) {
  char buffer[32];
  if (seconds >= 1e-3) std::snprintf(buffer, sizeof buffer, "%.3f ms", seconds * 1e3);
  else std::snprintf(buffer, sizeof buffer, "%.1f us", seconds * 1e6);
  return buffer;
}
std::string stencil_label(const AnyStencil& s) {
  return std::visit(
      [](const auto& st) {
        const std::string n = st.name().size() > 40 ? "custom" : (st.name().empty() ? "custom" : st.name());
        return n + " (" + std::to_string(st.size()) + " points, radius " + std::to_string(st.max_radius()) + ")";
      },
      s);
}

}  // namespace

long size_block_image(Plan& p) {
  const int D      = p.dims();
  const int vector = 16 / storage_bytes(p.precision);
  auto round_up    = [](int v, int m) { return (v + m - 1) / m * m; };
  p.shared_extent.resize(D);
  p.shared_lead        = p.radius;
  p.shared_lead[D - 1] = round_up(p.radius[D - 1], vector);
  for (int a = 0; a < D; ++a) p.shared_extent[a] = p.tiles_per_block[a] * p.tile[a] + p.shared_lead[a] + p.radius[a];
  p.shared_extent[D - 1] = round_up(p.shared_extent[D - 1], vector);
  p.shared_pitch         = p.shared_extent[D - 1];
  if (D > 1 && (p.shared_pitch / vector) % 2 == 0) p.shared_pitch += vector;
  long rows = 1;
  for (int a = 0; a + 1 < D; ++a) rows *= p.shared_extent[a];
  return D == 1 ? p.shared_pitch : rows * p.shared_pitch;
}

void fill_block_tables(Plan& p) {
  const int D                   = p.dims();
  const std::vector<int> stride = p.shared_strides();
  p.gather.clear();
  for (int c : p.order.columns) {
    if (c == zero_column) {
      p.gather.push_back(-1);
      continue;
    }
    int offset = 0;
    for (int rest = c, a = D - 1; a >= 0; --a) {
      offset += (rest % p.patch[a] + p.shared_lead[a] - p.radius[a]) * stride[a];
      rest /= p.patch[a];
    }
    p.gather.push_back(offset);
  }
  int tiles = 1;
  for (int t : p.tiles_per_block) tiles *= t;
  p.tile_offsets.clear();
  for (int j = 0; j < tiles; ++j) {
    int offset = 0;
    for (int rest = j, a = D - 1; a >= 0; --a) {
      offset += (rest % p.tiles_per_block[a]) * p.tile[a] * stride[a];
      rest /= p.tiles_per_block[a];
    }
    p.tile_offsets.push_back(offset);
  }
}

const char* to_string(Bid::Outcome o) {
  switch (o) {
    case Bid::Outcome::chosen: return "chosen";
    case Bid::Outcome::slower: return "slower";
    case Bid::Outcome::dropped: return "dropped";
    case Bid::Outcome::cannot_run: return "cannot run";
  }
  return "?";
}

Bid::Outcome bid_outcome_from_string(std::string_view text) {
  for (Bid::Outcome o : {Bid::Outcome::chosen, Bid::Outcome::slower, Bid::Outcome::dropped, Bid::Outcome::cannot_run}) {
    if (text == to_string(o)) return o;
  }
  impl::fail("plan_from_json", "unknown bid outcome '", text, "' (known: chosen, slower, dropped, cannot run)");
}

std::string explain(const Plan& p) {
  std::ostringstream out;
  char line[256];
  out << "SparStencil plan: " << stencil_label(p.original) << ", grid " << grid_string(p.grid) << ", "
      << to_string(p.precision) << (p.float_grids ? " operands on float grids" : "") << ", " << to_string(p.boundary)
      << ", device " << p.device;
  if (p.row_alignment < 16) out << ", rows on " << p.row_alignment << "-byte boundaries";
  out << "\n";
  const double per_step = p.predicted.seconds / p.fused_steps;
  std::snprintf(line, sizeof line, "  %-12s %s: %s per step, %.1f GStencil/s predicted, %s bound\n", "backend",
                p.backend.c_str(), time_string(per_step).c_str(), p.predicted.gstencils, p.predicted.bound.c_str());
  out << line;
  std::size_t able = 0, planned = 0;
  for (const Bid& b : p.bids) {
    able += b.outcome != Bid::Outcome::cannot_run;
    planned += b.outcome == Bid::Outcome::chosen || b.outcome == Bid::Outcome::slower;
  }
  const std::string why = able == 0      ? "no bids recorded"
                          : planned == 1 ? "the only plan among the bids (the others cannot run the request)"
                                         : "fastest predicted of " + std::to_string(planned) + " planned bids";
  out << "  " << std::left;
  std::snprintf(line, sizeof line, "%-12s %s\n", "why", why.c_str());
  out << line;
  for (const std::string& w : p.warnings) out << "  warning      " << w << "\n";
  if (p.fused_steps > 1 && !has_matrix_form(p)) {
    const char* how = p.predicted.temporal_blocking
                          ? "steps in one launch by temporal blocking (tile and halo in team scratch, exact everywhere)"
                          : "launches of one step (temporal blocking predicted slower or its halo does not fit "
                            "team scratch)";
    std::snprintf(line, sizeof line, "  %-12s %d %s\n", "fusion", p.fused_steps, how);
    out << line;
  } else if (p.fused_steps > 1) {
    std::snprintf(line, sizeof line,
                  "  %-12s %d steps in one launch (radius %d, %zu points, redundancy alpha %.2f)%s\n", "fusion",
                  p.fused_steps, std::visit([](const auto& s) { return s.max_radius(); }, p.stencil),
                  std::visit([](const auto& s) { return s.size(); }, p.stencil), p.redundancy,
                  p.fusion_exact_everywhere() ? ", exact everywhere"
                                              : ", exact only at points >= t*r from the rim (not periodic)");
    out << line;
  }
  if (has_matrix_form(p)) {
    int patch_points = 1;
    for (int v : p.patch) patch_points *= v;
    const int k = static_cast<int>(p.order.columns.size());
    std::snprintf(line, sizeof line, "  %-12s %s outputs = %d rows of A' (%d block%s of 16)\n", "tile",
                  shape_string(p.tile).c_str(), p.rows, p.a.m_blocks, p.a.m_blocks > 1 ? "s" : "");
    out << line;
    std::snprintf(line, sizeof line, "  %-12s %s = %d points, %d never read (dropped)\n", "patch",
                  shape_string(p.patch).c_str(), patch_points, p.order.dropped_columns);
    out << line;
    std::snprintf(line, sizeof line, "  %-12s %zu nonzeros in A' (%d x %d)\n", "nonzeros", p.nonzeros, p.rows,
                  patch_points);
    out << line;
    std::snprintf(line, sizeof line, "  %-12s K = %d: %d zero columns (%s, padding to a multiple of %d)\n", "padding",
                  k, p.order.zero_columns, p.pairing.c_str(), p.mma.k);
    out << line;
    if (!p.runs.empty()) {
      std::snprintf(line, sizeof line, "  %-12s %zu of %d values from the image\n", "runs", p.runs.size(),
                    16 / storage_bytes(p.precision));
      out << line;
    }
    std::snprintf(line, sizeof line, "  %-12s S = %.3f (nonzeros / (padded rows x K))%s\n", "sparsity", p.sparsity,
                  p.dense ? ", A' dense: every entry multiplied" : "");
    out << line;
    std::snprintf(line, sizeof line, "  %-12s %ld m%dn%dk%d %s per 8 tiles (%d outputs)\n", "MMAs",
                  p.mmas_per_tile_group, p.mma.m, p.mma.n, p.mma.k, p.dense ? "dense MMAs" : "MMAs", 8 * p.rows);
    out << line;
    std::snprintf(line, sizeof line, "  %-12s %s tiles, shared memory %s (row pitch %d)\n", "block",
                  shape_string(p.tiles_per_block).c_str(), shape_string(p.shared_extent).c_str(), p.shared_pitch);
    out << line;
  }
  std::snprintf(line, sizeof line, "  %-12s compute %s, device memory %s, shared memory %s\n", "predicted",
                time_string(p.predicted.compute_seconds).c_str(), time_string(p.predicted.memory_seconds).c_str(),
                time_string(p.predicted.shared_seconds).c_str());
  out << line;
  if (p.scenario.known) {
    const Scenario& sc            = p.scenario;
    static const char* names[]    = {"", "memory bound on the plain cores -> memory bound on tensor cores",
                                     "memory bound on the plain cores -> compute bound on tensor cores",
                                     "compute bound on the plain cores -> memory bound on tensor cores",
                                     "compute bound on the plain cores -> compute bound on tensor cores"};
    static const char* verdicts[] = {"", "no gain possible (eq. 14: ratio 1)", "tensor cores lose (eq. 16: ratio < 1)",
                                     "tensor cores win (eq. 17: ratio > 1)",
                                     "conditional: alpha < S P_TC / P_CU decides (eq. 18-19)"};
    std::snprintf(line, sizeof line, "  %-12s %d, %s: %s\n", "scenario", sc.number(), names[sc.number()],
                  verdicts[sc.number()]);
    out << line;
    std::snprintf(line, sizeof line,
                  "  %-12s plain cores I = %.2f flop/B (ridge %.1f, %s bound); tensor cores I = %.2f flop/B "
                  "(ridge %.1f, %s bound), S = %.3f, alpha = %.2f\n",
                  "roofline", sc.plain_intensity, sc.plain_ridge, sc.plain_compute_bound() ? "compute" : "memory",
                  sc.tensor_intensity, sc.tensor_ridge, sc.tensor_compute_bound() ? "compute" : "memory",
                  sc.useful_fraction, p.redundancy);
    out << line;
    std::snprintf(line, sizeof line,
                  "  %-12s sparse over generic: %.2fx on the ideal roofline, %.2fx by the calibrated model (which "
                  "decides)\n",
                  "speedup", sc.ideal_speedup, sc.predicted_speedup);
    out << line;
  }
  // Every bid a line; dropped candidates of one backend and reason share one (a 3-D
  // stencil has dozens of tiles whose lower bounds cannot win), at their fastest.
  if (!p.bids.empty()) out << "  bids\n";
  std::vector<bool> shown(p.bids.size(), false);
  for (std::size_t i = 0; i < p.bids.size(); ++i) {
    if (shown[i]) continue;
    const Bid& bid    = p.bids[i];
    std::size_t alike = 1;
    if (bid.outcome == Bid::Outcome::dropped) {
      for (std::size_t j = i + 1; j < p.bids.size(); ++j) {
        const Bid& other = p.bids[j];
        if (other.outcome == bid.outcome && other.backend == bid.backend && other.reason == bid.reason) {
          shown[j] = true;
          ++alike;
        }
      }
    }
    const std::string tile = alike > 1          ? std::to_string(alike) + " tiles"
                             : bid.tile.empty() ? ""
                                                : "tile " + shape_string(bid.tile);
    const std::string time = bid.outcome == Bid::Outcome::cannot_run || bid.seconds <= 0
                                 ? "-"
                                 : (alike > 1 ? "from " : "") + time_string(bid.seconds / p.fused_steps) + " per step";
    std::snprintf(line, sizeof line, "    %-10s %-12s %-10s %-21s %s\n", bid.backend.c_str(), tile.c_str(),
                  to_string(bid.outcome), time.c_str(), bid.reason.c_str());
    out << line;
  }
  return out.str();
}

}  // namespace sparstencil
