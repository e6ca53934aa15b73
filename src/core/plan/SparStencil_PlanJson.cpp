// Plans as JSON: to_json and plan_from_json (SparStencil_Plan.hpp), an exact round trip.
#include "SparStencil_Plan.hpp"

#include <nlohmann/json.hpp>

#include "SparStencil_Parse.hpp"

namespace sparstencil {

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
      {"device", p.device},
      {"grid", p.grid},
      {"backend", p.backend},
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
      {"bids", bids}};
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
    p.backend  = at("backend").get<std::string>();
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
    for (const json& b : at("bids")) {
      p.bids.push_back({b.at("backend").get<std::string>(), b.at("tile").get<std::vector<int>>(),
                        b.at("seconds").get<double>(), bid_outcome_from_string(b.at("outcome").get<std::string>()),
                        b.at("reason").get<std::string>()});
    }
    return p;
  } catch (const json::exception& e) {
    impl::fail("plan_from_json", "field '", field, "': ", e.what());
  }
}

bool operator==(const Plan& a, const Plan& b) { return to_json(a) == to_json(b); }

}  // namespace sparstencil
