// Plans as JSON: to_json and plan_from_json (SparStencil_Plan.hpp), an exact round trip,
// through the trees of SparStencil_PlanTree.hpp.
#include "SparStencil_PlanTree.hpp"

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "SparStencil_Fuse.hpp"
#include "SparStencil_JsonRead.hpp"
#include "SparStencil_Parse.hpp"

namespace sparstencil {

namespace {

using impl::json_value_string;
using nlohmann::json;

json stencil_json(const AnyStencil& s) { return {{"dims", dimension(s)}, {"name", name(s)}, {"text", to_text(s)}}; }

json scenario_json(const Scenario& sc) {
  if (!sc.known) return nullptr;
  return {{"plain_intensity", sc.plain_intensity},    {"plain_ridge", sc.plain_ridge},
          {"tensor_intensity", sc.tensor_intensity},  {"tensor_ridge", sc.tensor_ridge},
          {"useful_fraction", sc.useful_fraction},    {"ideal_speedup", sc.ideal_speedup},
          {"predicted_speedup", sc.predicted_speedup}};
}

/// Reads the plan's fields (JsonFields: typed, range-checked, errors naming the field by
/// its path).
class Reader : public impl::JsonFields {
 public:
  using JsonFields::JsonFields;

  template <class T>
  std::vector<T> integers(const json& j, const std::string& path, long lo, long hi) const {
    std::vector<T> values;
    values.reserve(array(j, path).size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      values.push_back(static_cast<T>(integer(j[i], path + "[" + std::to_string(i) + "]", lo, hi)));
    }
    return values;
  }
  std::vector<int> ints(const json& j, const std::string& path) const {
    return integers<int>(j, path, INT_MIN, INT_MAX);
  }
  /// An array of exactly `n` ints.
  std::vector<int> tuple(const json& j, const std::string& path, std::size_t n) const {
    std::vector<int> values = ints(j, path);
    if (values.size() != n) {
      fail(path, std::to_string(values.size()) + " entries (expected " + std::to_string(n) + ")");
    }
    return values;
  }

  AnyStencil stencil(const json& j, const std::string& path) const {
    const std::string source = text(member(j, path, "text"), path + ".text");
    AnyStencil s             = Stencil<1>({{{0}, 1.0}});
    try {
      s = parse_stencil(source);
    } catch (const std::runtime_error& e) {
      fail(path + ".text", e.what());
    }
    const long dims = integer(member(j, path, "dims"), path + ".dims", 1, 3);
    if (dims != dimension(s)) {
      fail(path + ".dims", std::to_string(dims) + ", but the text is " + std::to_string(dimension(s)) + "-D");
    }
    const std::string label = text(member(j, path, "name"), path + ".name");
    return std::visit(
        [&](const auto& st) {
          using S = std::decay_t<decltype(st)>;
          return AnyStencil(S(st.terms(), label));
        },
        s);
  }

  Scenario scenario(const json& j) const {
    Scenario sc;
    if (j.is_null()) return sc;
    auto field = [&](const char* key) { return number(member(j, "scenario", key), std::string("scenario.") + key); };
    sc.known   = true;
    sc.plain_intensity   = field("plain_intensity");
    sc.plain_ridge       = field("plain_ridge");
    sc.tensor_intensity  = field("tensor_intensity");
    sc.tensor_ridge      = field("tensor_ridge");
    sc.useful_fraction   = field("useful_fraction");
    sc.ideal_speedup     = field("ideal_speedup");
    sc.predicted_speedup = field("predicted_speedup");
    return sc;
  }

  /// The plan, and whether its fused stencil was derived (left out, as `fused` allows).
  std::pair<Plan, bool> plan(const json& j, impl::FusedStencil fused) const {
    if (!j.is_object()) {
      fail("", "the top level must be a JSON object, found " + json_value_string(j));
    }
    auto at      = [&](const char* key) -> const json& { return member(j, "", key); };
    auto name_of = [&](const char* key, auto from_string) {
      const std::string value = text(at(key), key);
      try {
        return from_string(value);
      } catch (const std::runtime_error& e) {
        fail(key, e.what());
      }
    };
    Plan p;
    p.original         = stencil(at("original"), "original");
    p.fused_steps      = int_value(at("fused_steps"), "fused_steps");
    const bool derived = fused == impl::FusedStencil::derived && !j.contains("stencil");
    if (derived) {
      impl::check_fusion_depth(p.original, p.fused_steps, function(), prefix());
      try {
        p.stencil = fuse(p.original, p.fused_steps);
      } catch (const std::runtime_error& e) {  // fused weights beyond a double's range
        fail("original", "cannot be fused over " + std::to_string(p.fused_steps) + " steps: " + e.what());
      }
    } else {
      p.stencil = stencil(at("stencil"), "stencil");
    }
    p.boundary  = name_of("boundary", [](const std::string& v) { return boundary_from_string(v); });
    p.precision = name_of("precision", [](const std::string& v) { return precision_from_string(v); });
    // Plans written before float grids were planned read grids of their operand format.
    p.float_grids = j.contains("float_grids") && boolean(j.at("float_grids"), "float_grids");
    // Plans written before row alignment was planned: rows of whole 16-byte units.
    p.row_alignment            = j.contains("row_alignment") ? int_value(j.at("row_alignment"), "row_alignment") : 16;
    p.device                   = text(at("device"), "device");
    p.grid                     = integers<long>(at("grid"), "grid", LONG_MIN, LONG_MAX);
    p.backend                  = text(at("backend"), "backend");
    p.tile                     = ints(at("tile"), "tile");
    p.radius                   = ints(at("radius"), "radius");
    p.patch                    = ints(at("patch"), "patch");
    p.rows                     = int_value(at("rows"), "rows");
    const std::vector<int> mma = tuple(at("mma"), "mma", 3);
    p.mma                      = {mma[0], mma[1], mma[2]};
    p.nonzeros                 = static_cast<std::size_t>(integer(at("nonzeros"), "nonzeros", 0, LONG_MAX));
    const json& order          = at("order");
    p.order.columns            = ints(member(order, "order", "columns"), "order.columns");
    p.order.zero_columns       = int_value(member(order, "order", "zero_columns"), "order.zero_columns");
    p.order.dropped_columns    = int_value(member(order, "order", "dropped_columns"), "order.dropped_columns");
    p.pairing                  = text(at("pairing"), "pairing");
    p.gather                   = ints(at("gather"), "gather");
    const json& runs           = array(at("runs"), "runs");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string path = "runs[" + std::to_string(i) + "]";
      p.runs.push_back({ints(member(runs[i], path, "offset"), path + ".offset")});
    }
    const std::vector<int> interleave = tuple(at("interleave"), "interleave", 2);
    p.interleave                      = interleave[0];
    p.interleave_origin               = interleave[1];
    p.tiles_per_block                 = ints(at("tiles_per_block"), "tiles_per_block");
    p.shared_extent                   = ints(at("shared_extent"), "shared_extent");
    p.shared_pitch                    = int_value(at("shared_pitch"), "shared_pitch");
    p.shared_lead                     = ints(at("shared_lead"), "shared_lead");
    p.tile_offsets                    = ints(at("tile_offsets"), "tile_offsets");
    const json& a                     = at("a");
    p.a.m_blocks                      = int_value(member(a, "a", "m_blocks"), "a.m_blocks");
    p.a.k_chunks                      = int_value(member(a, "a", "k_chunks"), "a.k_chunks");
    p.a.values                        = integers<std::uint32_t>(member(a, "a", "values"), "a.values", 0, UINT32_MAX);
    p.a.metadata                  = integers<std::uint32_t>(member(a, "a", "metadata"), "a.metadata", 0, UINT32_MAX);
    p.dense                       = boolean(at("dense"), "dense");
    p.sparsity                    = number(at("sparsity"), "sparsity");
    p.redundancy                  = number(at("redundancy"), "redundancy");
    p.mmas_per_tile_group         = integer(at("mmas_per_tile_group"), "mmas_per_tile_group", LONG_MIN, LONG_MAX);
    const json& pr                = at("predicted");
    auto predicted                = [&](const char* key) -> const json& { return member(pr, "predicted", key); };
    p.predicted.seconds           = number(predicted("seconds"), "predicted.seconds");
    p.predicted.compute_seconds   = number(predicted("compute_seconds"), "predicted.compute_seconds");
    p.predicted.memory_seconds    = number(predicted("memory_seconds"), "predicted.memory_seconds");
    p.predicted.shared_seconds    = number(predicted("shared_seconds"), "predicted.shared_seconds");
    p.predicted.gstencils         = number(predicted("gstencils"), "predicted.gstencils");
    p.predicted.bound             = text(predicted("bound"), "predicted.bound");
    p.predicted.temporal_blocking = boolean(predicted("temporal_blocking"), "predicted.temporal_blocking");
    p.scenario                    = scenario(at("scenario"));
    const json& bids              = array(at("bids"), "bids");
    for (std::size_t i = 0; i < bids.size(); ++i) {
      const std::string path = "bids[" + std::to_string(i) + "]";
      auto field             = [&](const char* key) -> const json& { return member(bids[i], path, key); };
      Bid b;
      b.backend                 = text(field("backend"), path + ".backend");
      b.tile                    = ints(field("tile"), path + ".tile");
      b.seconds                 = number(field("seconds"), path + ".seconds");
      const std::string outcome = text(field("outcome"), path + ".outcome");
      try {
        b.outcome = bid_outcome_from_string(outcome);
      } catch (const std::runtime_error& e) {
        fail(path + ".outcome", e.what());
      }
      b.reason = text(field("reason"), path + ".reason");
      p.bids.push_back(std::move(b));
    }
    // Plans written before warnings were recorded have none.
    if (j.contains("warnings")) {
      const json& warnings = array(j.at("warnings"), "warnings");
      for (std::size_t i = 0; i < warnings.size(); ++i) {
        p.warnings.push_back(text(warnings[i], "warnings[" + std::to_string(i) + "]"));
      }
    }
    return {std::move(p), derived};
  }
};

}  // namespace

namespace impl {

json plan_tree(const Plan& p, FusedStencil fused) {
  json bids = json::array();
  for (const Bid& b : p.bids) {
    bids.push_back({{"backend", b.backend},
                    {"tile", b.tile},
                    {"seconds", b.seconds},
                    {"outcome", to_string(b.outcome)},
                    {"reason", b.reason}});
  }
  json runs = json::array();
  for (const Run& r : p.runs) runs.push_back({{"offset", r.offset}});
  json j = {
      {"original", stencil_json(p.original)},
      {"stencil", stencil_json(p.stencil)},
      {"fused_steps", p.fused_steps},
      {"boundary", to_string(p.boundary)},
      {"precision", to_string(p.precision)},
      {"float_grids", p.float_grids},
      {"row_alignment", p.row_alignment},
      {"device", p.device},
      {"grid", p.grid},
      {"backend", p.backend},
      {"tile", p.tile},
      {"radius", p.radius},
      {"patch", p.patch},
      {"rows", p.rows},
      {"mma", {p.mma.m, p.mma.n, p.mma.k}},
      {"nonzeros", p.nonzeros},
      {"order",
       {{"columns", p.order.columns},
        {"zero_columns", p.order.zero_columns},
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
      {"a",
       {{"m_blocks", p.a.m_blocks}, {"k_chunks", p.a.k_chunks}, {"values", p.a.values}, {"metadata", p.a.metadata}}},
      {"dense", p.dense},
      {"sparsity", p.sparsity},
      {"redundancy", p.redundancy},
      {"mmas_per_tile_group", p.mmas_per_tile_group},
      {"predicted",
       {{"seconds", p.predicted.seconds},
        {"compute_seconds", p.predicted.compute_seconds},
        {"memory_seconds", p.predicted.memory_seconds},
        {"shared_seconds", p.predicted.shared_seconds},
        {"gstencils", p.predicted.gstencils},
        {"bound", p.predicted.bound},
        {"temporal_blocking", p.predicted.temporal_blocking}}},
      {"scenario", scenario_json(p.scenario)},
      {"bids", bids},
      {"warnings", p.warnings}};
  if (fused == FusedStencil::derived) j.erase("stencil");
  return j;
}

Plan plan_from_tree(const json& tree, std::string_view function, std::string_view field_prefix, FusedStencil fused) {
  const auto [plan, derived] = Reader(std::string(function), std::string(field_prefix)).plan(tree, fused);
  verify_plan(plan, function, field_prefix, derived ? StencilCheck::derived : StencilCheck::compare);
  return plan;
}

}  // namespace impl

std::string to_json(const Plan& p) {
  // Names are labels taken as given (a stencil parsed from text is named by the text):
  // bytes that are not UTF-8 are written as U+FFFD rather than refused.
  return impl::plan_tree(p).dump(1, ' ', false, json::error_handler_t::replace);
}

Plan plan_from_json(std::string_view text) { return impl::read_plan(text, "plan_from_json", ""); }

namespace impl {

Plan read_plan(std::string_view text, std::string_view function, std::string_view field_prefix) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // a syntax error, or a number beyond a double's range
    const JsonFault fault = json_fault(text);
    if (fault.path.empty()) fail(function, "not valid JSON: ", e.what());
    fail(function, "not valid JSON at field '", field_prefix, json_path_string(fault.path), "': ", e.what());
  }
  return plan_from_tree(j, function, field_prefix);
}

}  // namespace impl

bool operator==(const Plan& a, const Plan& b) { return to_json(a) == to_json(b); }

}  // namespace sparstencil
