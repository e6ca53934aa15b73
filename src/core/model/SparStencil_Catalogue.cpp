#include "SparStencil_Catalogue.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace sparstencil {
namespace {

using nlohmann::json;

[[noreturn]] void entry_error(std::string_view origin, std::size_t index, const std::string& name,
                              const std::string& what) {
  impl::fail("load_catalogue", origin, ": entry ", index, name.empty() ? "" : " ('" + name + "')",
             ": ", what);
}

CatalogueEntry parse_entry(const json& item, std::size_t index, std::string_view origin) {
  if (!item.is_object()) entry_error(origin, index, "", "is not a JSON object");
  const std::string name = item.value("name", std::string());
  auto field             = [&](const char* key) -> const json& {
    if (!item.contains(key)) entry_error(origin, index, name, std::string("missing field '") + key + "'");
    return item.at(key);
  };
  if (name.empty()) entry_error(origin, index, name, "missing or empty field 'name'");
  const json& dims_json = field("dims");
  if (!dims_json.is_number_integer() || dims_json.get<int>() < 1 || dims_json.get<int>() > 3) {
    entry_error(origin, index, name, "'dims' must be 1, 2 or 3, found " + dims_json.dump());
  }
  const int dims           = dims_json.get<int>();
  const json& offsets_json = field("offsets");
  const json& weights_json = field("coefficients");
  if (!offsets_json.is_array() || !weights_json.is_array()) {
    entry_error(origin, index, name, "'offsets' and 'coefficients' must be arrays");
  }
  if (offsets_json.size() != weights_json.size()) {
    entry_error(origin, index, name,
                std::to_string(offsets_json.size()) + " offsets but " +
                    std::to_string(weights_json.size()) + " coefficients");
  }
  std::vector<std::vector<int>> offsets;
  std::vector<double> weights;
  for (std::size_t t = 0; t < offsets_json.size(); ++t) {
    const json& o = offsets_json[t];
    if (!o.is_array() || o.size() < static_cast<std::size_t>(dims)) {
      entry_error(origin, index, name, "offset " + std::to_string(t) + " " + o.dump() +
                                           " needs at least " + std::to_string(dims) + " integers");
    }
    std::vector<int> offset;
    for (std::size_t a = 0; a < o.size(); ++a) {
      if (!o[a].is_number_integer()) {
        entry_error(origin, index, name, "offset " + std::to_string(t) + " " + o.dump() + " is not all integers");
      }
      const int c = o[a].get<int>();
      if (a < static_cast<std::size_t>(dims)) {
        offset.push_back(c);
      } else if (c != 0) {
        entry_error(origin, index, name, "offset " + std::to_string(t) + " " + o.dump() +
                                             " has a nonzero component beyond dims " + std::to_string(dims));
      }
    }
    if (!weights_json[t].is_number()) {
      entry_error(origin, index, name, "coefficient " + std::to_string(t) + " is not a number");
    }
    offsets.push_back(offset);
    weights.push_back(weights_json[t].get<double>());
  }
  try {
    return {name, item.value("shape", std::string()), item.value("source", std::string()),
            make_stencil(offsets, weights, name)};
  } catch (const std::runtime_error& e) {
    entry_error(origin, index, name, e.what());
  }
}

}  // namespace

std::vector<CatalogueEntry> parse_catalogue(std::string_view json_text, std::string_view origin) {
  json document;
  try {
    document = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    impl::fail("load_catalogue", origin, ": not valid JSON: ", e.what());
  }
  if (!document.is_array()) impl::fail("load_catalogue", origin, ": the top level must be a JSON array");
  std::vector<CatalogueEntry> entries;
  for (std::size_t i = 0; i < document.size(); ++i) entries.push_back(parse_entry(document[i], i, origin));
  return entries;
}

std::vector<CatalogueEntry> load_catalogue(const std::string& path) {
  std::ifstream file(path);
  if (!file) impl::fail("load_catalogue", "cannot open '", path, "'");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_catalogue(text.str(), path);
}

}  // namespace sparstencil
