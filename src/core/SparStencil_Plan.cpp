#include "SparStencil_Plan.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "SparStencil_Parse.hpp"
#include "SparStencil_Rounding.hpp"

namespace sparstencil {

// Packed operand layout (PTX ISA, mma.sp with ::ordered_metadata; checked on the H100,
// see the project's PTX notes). lane = 4 g + t, g = lane / 4, t = lane % 4.
//
// f16/bf16, m16n8k32: a 16 x 32 block of A' has 8 groups of 4 columns per row; each group
// keeps 2 values and their positions i0 < i1. Registers of a lane:
//   reg0 row g, group t; reg1 row g+8, group t; reg2 row g, group t+4; reg3 row g+8, group t+4
// each holding the value at i0 in its low half and the value at i1 in its high half.
// tf32, m16n8k16: 8 pairs of columns per row, one value each; the same four registers
// with "pair" for "group", one tf32 word each.
//
// Metadata: one 32-bit word per lane. For the MMA of chunk kc the selector is f = kc % 2
// and lanes 4g + 2f (groups 0-3) and 4g + 2f + 1 (groups 4-7) supply it: nibble c of the
// low half is row g's group, of the high half row g+8's; a nibble is i0 | i1 << 2
// (tf32: 0b0100 for element 0, 0b1110 for element 1). So one word per lane serves the
// chunk pair (2q, 2q+1), and values and metadata are contiguous per lane.
// Groups with fewer than two nonzeros store zeros at legal, increasing positions.
namespace {

constexpr int lanes = 32;

std::uint16_t half_bits(Precision p, double v) {
  return p == Precision::bf16 ? impl::bf16_bits(static_cast<float>(v)) : impl::f16_bits(static_cast<float>(v));
}
double half_value(Precision p, std::uint16_t bits) {
  return p == Precision::bf16 ? impl::bf16_value(bits) : impl::f16_value(bits);
}

/// Positions (i0, i1) for a group whose nonzeros are at `found` (at most 2 of 0..3).
std::pair<int, int> group_positions(const std::vector<int>& found) {
  if (found.size() == 2) return {found[0], found[1]};
  if (found.empty()) return {0, 1};
  switch (found[0]) {
    case 0: return {0, 1};
    case 1: return {0, 1};
    case 2: return {0, 2};
    default: return {2, 3};
  }
}

std::size_t value_index(const PackedA& p, int mb, int kc, int lane, int reg) {
  return ((static_cast<std::size_t>(mb) * p.k_chunks + kc) * lanes + lane) * 4 + reg;
}
std::size_t metadata_index(const PackedA& p, int mb, int kc, int lane) {
  const int pairs = (p.k_chunks + 1) / 2;
  return (static_cast<std::size_t>(mb) * pairs + kc / 2) * lanes + lane;
}

/// Where the fragments of (row r of a 16-row block, group c) live: the value register's
/// lane and index, the metadata lane, and the nibble's bit shift.
struct FragmentSlot {
  int value_lane, reg, metadata_lane, shift;
};
FragmentSlot slot(int r, int c, int kc) {
  const int g = r % 8, upper = r >= 8 ? 1 : 0, f = kc % 2;
  return {4 * g + c % 4, (c >= 4 ? 2 : 0) + upper, 4 * g + 2 * f + (c >= 4 ? 1 : 0), 16 * upper + 4 * (c % 4)};
}

}  // namespace

const char* to_string(ExecutorKind e) { return e == ExecutorKind::cuda_sptc ? "cuda_sptc" : "generic"; }

PackedA pack_operand(const KernelMatrix& a, const ColumnOrder& order, Precision precision) {
  if (!has_sparse_operands(precision)) {
    impl::fail("pack_operand", "precision ", to_string(precision), " has no sparse tensor-core form");
  }
  const MmaShape mma = MmaShape::for_precision(precision);
  const int k_total  = static_cast<int>(order.columns.size());
  if (k_total % mma.k != 0) {
    throw std::logic_error("pack_operand: K = " + std::to_string(k_total) + " is not a multiple of " +
                           std::to_string(mma.k));
  }
  const bool tf32  = precision == Precision::tf32;
  const int group  = tf32 ? 2 : 4;  // columns per metadata nibble
  PackedA p;
  p.m_blocks = (a.rows + 15) / 16;
  p.k_chunks = k_total / mma.k;
  p.values.assign(static_cast<std::size_t>(p.m_blocks) * p.k_chunks * lanes * 4, 0u);
  p.metadata.assign(static_cast<std::size_t>(p.m_blocks) * ((p.k_chunks + 1) / 2) * lanes, 0u);
  auto value_at = [&](int row, int k) {
    const int c = order.columns[k];
    return (row < a.rows && c != zero_column) ? a(row, c) : 0.0;
  };
  for (int mb = 0; mb < p.m_blocks; ++mb) {
    for (int kc = 0; kc < p.k_chunks; ++kc) {
      for (int r = 0; r < 16; ++r) {
        const int row = mb * 16 + r;
        for (int c = 0; c < 8; ++c) {
          const int k0 = kc * mma.k + c * group;
          std::vector<int> found;
          for (int i = 0; i < group; ++i)
            if (value_at(row, k0 + i) != 0.0) found.push_back(i);
          const FragmentSlot s = slot(r, c, kc);
          std::uint32_t nibble = 0, word = 0;
          if (tf32) {
            if (found.size() > 1) throw std::logic_error("pack_operand: a column pair is not 1:2");
            const int i = found.empty() ? 0 : found[0];
            nibble      = i == 0 ? 0x4u : 0xEu;
            word        = impl::tf32_bits(static_cast<float>(value_at(row, k0 + i)));
          } else {
            if (found.size() > 2) throw std::logic_error("pack_operand: a group of four is not 2:4");
            const auto [i0, i1] = group_positions(found);
            nibble              = static_cast<std::uint32_t>(i0 | (i1 << 2));
            word = half_bits(precision, value_at(row, k0 + i0)) |
                   (static_cast<std::uint32_t>(half_bits(precision, value_at(row, k0 + i1))) << 16);
          }
          p.values[value_index(p, mb, kc, s.value_lane, s.reg)] = word;
          p.metadata[metadata_index(p, mb, kc, s.metadata_lane)] |= nibble << s.shift;
        }
      }
    }
  }
  return p;
}

double unpack_operand(const PackedA& p, Precision precision, int row, int k) {
  const MmaShape mma = MmaShape::for_precision(precision);
  const bool tf32    = precision == Precision::tf32;
  const int group    = tf32 ? 2 : 4;
  const int mb = row / 16, r = row % 16, kc = k / mma.k, c = (k % mma.k) / group, pos = k % group;
  const FragmentSlot s       = slot(r, c, kc);
  const std::uint32_t word   = p.values[value_index(p, mb, kc, s.value_lane, s.reg)];
  const std::uint32_t nibble = (p.metadata[metadata_index(p, mb, kc, s.metadata_lane)] >> s.shift) & 0xFu;
  if (tf32) {
    const int element = nibble == 0x4u ? 0 : 1;  // 0b0100: element 0, 0b1110: element 1
    return pos == element ? impl::tf32_value(word) : 0.0;
  }
  const int i0 = static_cast<int>(nibble & 3u), i1 = static_cast<int>(nibble >> 2);
  if (pos == i0) return half_value(precision, static_cast<std::uint16_t>(word & 0xffffu));
  if (pos == i1) return half_value(precision, static_cast<std::uint16_t>(word >> 16));
  return 0.0;
}

// ---------------------------------------------------------------- explain

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
  return std::visit([](const auto& st) {
    const std::string n = st.name().size() > 40 ? "custom" : (st.name().empty() ? "custom" : st.name());
    return n + " (" + std::to_string(st.size()) + " points, radius " + std::to_string(st.max_radius()) + ")";
  }, s);
}

}  // namespace

std::string explain(const Plan& p) {
  std::ostringstream out;
  char line[256];
  out << "SparStencil plan: " << stencil_label(p.original) << ", grid " << grid_string(p.grid) << ", "
      << to_string(p.precision) << ", " << to_string(p.boundary) << ", device " << p.device << "\n";
  const double per_step = p.predicted.seconds / p.fused_steps;
  std::snprintf(line, sizeof line, "  %-12s %s: %s per step, %.1f GStencil/s predicted, %s bound\n", "executor",
                to_string(p.executor), time_string(per_step).c_str(), p.predicted.gstencils,
                p.predicted.bound.c_str());
  out << line;
  std::string why = p.executor == ExecutorKind::cuda_sptc ? "fastest predicted candidate" : "";
  if (p.executor == ExecutorKind::generic) {
    const DeviceDescription& d = device_description(p.device);
    why = !d.has_sparse_tensor_cores()        ? "the device has no sparse tensor cores"
          : !has_sparse_operands(p.precision) ? std::string("precision ") + to_string(p.precision) +
                                                    " has no sparse tensor-core form"
                                              : "fastest predicted candidate";
  }
  out << "  " << std::left;
  std::snprintf(line, sizeof line, "%-12s %s\n", "why", why.c_str());
  out << line;
  if (p.fused_steps > 1 && p.executor == ExecutorKind::generic) {
    const char* how = p.predicted.temporal_blocking
                          ? "steps in one launch by temporal blocking (tile and halo in team scratch, exact everywhere)"
                          : "launches of one step (temporal blocking predicted slower or its halo does not fit "
                            "team scratch)";
    std::snprintf(line, sizeof line, "  %-12s %d %s\n", "fusion", p.fused_steps, how);
    out << line;
  } else if (p.fused_steps > 1) {
    std::snprintf(line, sizeof line, "  %-12s %d steps in one launch (radius %d, %zu points, redundancy alpha %.2f)%s\n",
                  "fusion", p.fused_steps, std::visit([](const auto& s) { return s.max_radius(); }, p.stencil),
                  std::visit([](const auto& s) { return s.size(); }, p.stencil), p.redundancy,
                  p.fusion_exact_everywhere() ? ", exact everywhere"
                                              : ", exact only at points >= t*r from the rim (not periodic)");
    out << line;
  }
  if (p.executor == ExecutorKind::cuda_sptc) {
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
    std::snprintf(line, sizeof line, "  %-12s K = %d: %d zero columns (%s, padding to a multiple of %d)\n",
                  "padding", k, p.order.zero_columns, p.pairing.c_str(), p.mma.k);
    out << line;
    if (!p.runs.empty()) {
      std::snprintf(line, sizeof line, "  %-12s %zu of %d values from the image\n", "runs", p.runs.size(),
                    16 / storage_bytes(p.precision));
      out << line;
    }
    std::snprintf(line, sizeof line, "  %-12s S = %.3f (nonzeros / (padded rows x K))\n", "sparsity", p.sparsity);
    out << line;
    std::snprintf(line, sizeof line, "  %-12s %ld mma.sp.m16n8k%d per 8 tiles (%d outputs)\n", "MMAs",
                  p.mmas_per_tile_group, p.mma.k, 8 * p.rows);
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
    const Scenario& sc = p.scenario;
    static const char* names[] = {"", "memory bound on the plain cores -> memory bound on tensor cores",
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
  if (!p.rejected.empty()) out << "  rejected\n";
  for (const Alternative& alt : p.rejected) {
    std::snprintf(line, sizeof line, "    %-10s %-12s %s per step: %s\n", to_string(alt.executor),
                  alt.tile.empty() ? "" : ("tile " + shape_string(alt.tile)).c_str(),
                  time_string(alt.seconds / p.fused_steps).c_str(), alt.reason.c_str());
    out << line;
  }
  return out.str();
}

// ---------------------------------------------------------------- JSON

namespace {

using nlohmann::json;

json stencil_json(const AnyStencil& s) {
  return {{"dims", dimension(s)}, {"name", name(s)}, {"text", to_text(s)}};
}
AnyStencil stencil_from(const json& j) {
  AnyStencil s = parse_stencil(j.at("text").get<std::string>());
  return std::visit([&](const auto& st) {
    using S = std::decay_t<decltype(st)>;
    return AnyStencil(S(st.terms(), j.at("name").get<std::string>()));
  }, s);
}

json scenario_json(const Scenario& sc) {
  if (!sc.known) return nullptr;
  return {{"plain_intensity", sc.plain_intensity},
          {"plain_ridge", sc.plain_ridge},
          {"tensor_intensity", sc.tensor_intensity},
          {"tensor_ridge", sc.tensor_ridge},
          {"useful_fraction", sc.useful_fraction},
          {"ideal_speedup", sc.ideal_speedup},
          {"predicted_speedup", sc.predicted_speedup}};
}
Scenario scenario_from(const json& j) {
  Scenario sc;
  if (j.is_null()) return sc;
  sc.known             = true;
  sc.plain_intensity   = j.at("plain_intensity").get<double>();
  sc.plain_ridge       = j.at("plain_ridge").get<double>();
  sc.tensor_intensity  = j.at("tensor_intensity").get<double>();
  sc.tensor_ridge      = j.at("tensor_ridge").get<double>();
  sc.useful_fraction   = j.at("useful_fraction").get<double>();
  sc.ideal_speedup     = j.at("ideal_speedup").get<double>();
  sc.predicted_speedup = j.at("predicted_speedup").get<double>();
  return sc;
}

}  // namespace

std::string to_json(const Plan& p) {
  json alternatives = json::array();
  for (const Alternative& a : p.rejected) {
    alternatives.push_back({{"executor", to_string(a.executor)}, {"tile", a.tile}, {"seconds", a.seconds},
                            {"reason", a.reason}});
  }
  json runs = json::array();
  for (const Run& r : p.runs) runs.push_back({{"offset", r.offset}});
  json j = {
      {"original", stencil_json(p.original)},
      {"stencil", stencil_json(p.stencil)},
      {"fused_steps", p.fused_steps},
      {"boundary", to_string(p.boundary)},
      {"precision", to_string(p.precision)},
      {"device", p.device},
      {"grid", p.grid},
      {"executor", to_string(p.executor)},
      {"tile", p.tile},
      {"radius", p.radius},
      {"patch", p.patch},
      {"rows", p.rows},
      {"mma", {p.mma.m, p.mma.n, p.mma.k}},
      {"nonzeros", p.nonzeros},
      {"order", {{"columns", p.order.columns}, {"zero_columns", p.order.zero_columns},
                 {"dropped_columns", p.order.dropped_columns}}},
      {"pairing", p.pairing},
      {"gather", p.gather},
      {"runs", runs},
      {"interleave", {p.interleave, p.interleave_origin}},
      {"tiles_per_block", p.tiles_per_block},
      {"shared_extent", p.shared_extent},
      {"shared_pitch", p.shared_pitch},
      {"shared_lead", p.shared_lead},
      {"tile_offsets", p.tile_offsets},
      {"a", {{"m_blocks", p.a.m_blocks}, {"k_chunks", p.a.k_chunks}, {"values", p.a.values},
             {"metadata", p.a.metadata}}},
      {"sparsity", p.sparsity},
      {"redundancy", p.redundancy},
      {"mmas_per_tile_group", p.mmas_per_tile_group},
      {"predicted", {{"seconds", p.predicted.seconds}, {"compute_seconds", p.predicted.compute_seconds},
                     {"memory_seconds", p.predicted.memory_seconds},
                     {"shared_seconds", p.predicted.shared_seconds}, {"gstencils", p.predicted.gstencils},
                     {"bound", p.predicted.bound}, {"temporal_blocking", p.predicted.temporal_blocking}}},
      {"scenario", scenario_json(p.scenario)},
      {"rejected", alternatives}};
  return j.dump(1);
}

Plan plan_from_json(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    impl::fail("plan_from_json", "not valid JSON: ", e.what());
  }
  std::string field;
  try {
    auto at = [&](const char* key) -> const json& {
      field = key;
      return j.at(key);
    };
    Plan p;
    p.original    = stencil_from(at("original"));
    p.stencil     = stencil_from(at("stencil"));
    p.fused_steps = at("fused_steps").get<int>();
    p.boundary    = boundary_from_string(at("boundary").get<std::string>());
    p.precision   = precision_from_string(at("precision").get<std::string>());
    p.device      = at("device").get<std::string>();
    p.grid        = at("grid").get<std::vector<long>>();
    p.executor = at("executor").get<std::string>() == "cuda_sptc" ? ExecutorKind::cuda_sptc : ExecutorKind::generic;
    p.tile     = at("tile").get<std::vector<int>>();
    p.radius   = at("radius").get<std::vector<int>>();
    p.patch    = at("patch").get<std::vector<int>>();
    p.rows     = at("rows").get<int>();
    const auto mma = at("mma").get<std::vector<int>>();
    p.mma          = {mma.at(0), mma.at(1), mma.at(2)};
    p.nonzeros     = at("nonzeros").get<std::size_t>();
    const json& order         = at("order");
    p.order.columns           = order.at("columns").get<std::vector<int>>();
    p.order.zero_columns      = order.at("zero_columns").get<int>();
    p.order.dropped_columns   = order.at("dropped_columns").get<int>();
    p.pairing                 = at("pairing").get<std::string>();
    p.gather                  = at("gather").get<std::vector<int>>();
    for (const json& r : at("runs")) p.runs.push_back({r.at("offset").get<std::vector<int>>()});
    const auto interleave     = at("interleave").get<std::vector<int>>();
    p.interleave              = interleave.at(0);
    p.interleave_origin       = interleave.at(1);
    p.tiles_per_block         = at("tiles_per_block").get<std::vector<int>>();
    p.shared_extent           = at("shared_extent").get<std::vector<int>>();
    p.shared_pitch            = at("shared_pitch").get<int>();
    p.shared_lead             = at("shared_lead").get<std::vector<int>>();
    p.tile_offsets            = at("tile_offsets").get<std::vector<int>>();
    const json& a             = at("a");
    p.a.m_blocks              = a.at("m_blocks").get<int>();
    p.a.k_chunks              = a.at("k_chunks").get<int>();
    p.a.values                = a.at("values").get<std::vector<std::uint32_t>>();
    p.a.metadata              = a.at("metadata").get<std::vector<std::uint32_t>>();
    p.sparsity                = at("sparsity").get<double>();
    p.redundancy              = at("redundancy").get<double>();
    p.mmas_per_tile_group     = at("mmas_per_tile_group").get<long>();
    const json& pr            = at("predicted");
    p.predicted.seconds       = pr.at("seconds").get<double>();
    p.predicted.compute_seconds = pr.at("compute_seconds").get<double>();
    p.predicted.memory_seconds  = pr.at("memory_seconds").get<double>();
    p.predicted.shared_seconds  = pr.at("shared_seconds").get<double>();
    p.predicted.gstencils       = pr.at("gstencils").get<double>();
    p.predicted.bound           = pr.at("bound").get<std::string>();
    p.predicted.temporal_blocking = pr.at("temporal_blocking").get<bool>();
    p.scenario                  = scenario_from(at("scenario"));
    for (const json& alt : at("rejected")) {
      p.rejected.push_back({alt.at("executor").get<std::string>() == "cuda_sptc" ? ExecutorKind::cuda_sptc
                                                                                 : ExecutorKind::generic,
                            alt.at("tile").get<std::vector<int>>(), alt.at("seconds").get<double>(),
                            alt.at("reason").get<std::string>()});
    }
    return p;
  } catch (const json::exception& e) {
    impl::fail("plan_from_json", "field '", field, "': ", e.what());
  }
}

bool operator==(const Plan& a, const Plan& b) { return to_json(a) == to_json(b); }

}  // namespace sparstencil
