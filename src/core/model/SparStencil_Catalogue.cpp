#include "SparStencil_Catalogue.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "SparStencil_JsonRead.hpp"
#include "SparStencil_Presets.hpp"

namespace sparstencil {
namespace {

using impl::json_value_string;
using nlohmann::json;

[[noreturn]] void entry_error(std::string_view origin, std::size_t index, const std::string& name,
                              const std::string& what) {
  impl::fail("load_catalogue", origin, ": entry ", index, name.empty() ? "" : " ('" + name + "')", ": ", what);
}

/// An integer that fits an int (json's get<int>() would truncate 4294967297 to 1).
bool is_int(const json& j) {
  if (!j.is_number_integer()) return false;
  if (j.is_number_unsigned()) return j.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX);
  const std::int64_t v = j.get<std::int64_t>();
  return v >= INT_MIN && v <= INT_MAX;
}

CatalogueEntry parse_entry(const json& item, std::size_t index, std::string_view origin) {
  if (!item.is_object()) entry_error(origin, index, "", "is not a JSON object");
  const auto name_it     = item.find("name");
  const std::string name = name_it != item.end() && name_it->is_string() ? name_it->get<std::string>() : "";
  auto error             = [&](const std::string& what) { entry_error(origin, index, name, what); };
  auto field             = [&](const char* key) -> const json& {
    if (!item.contains(key)) error(std::string("missing field '") + key + "'");
    return item.at(key);
  };
  if (name_it == item.end()) error("missing field 'name'");
  if (!name_it->is_string()) error("field 'name' must be a string, found " + json_value_string(*name_it));
  if (name.empty()) error("field 'name' is empty");
  // Optional text fields: strings where present.
  auto optional_text = [&](const char* key) {
    const auto it = item.find(key);
    if (it == item.end()) return std::string();
    if (!it->is_string()) error(std::string("field '") + key + "' must be a string, found " + json_value_string(*it));
    return it->get<std::string>();
  };
  const std::string shape  = optional_text("shape");
  const std::string source = optional_text("source");
  const json& dims_json    = field("dims");
  if (!is_int(dims_json) || dims_json.get<int>() < 1 || dims_json.get<int>() > 3) {
    error("field 'dims' must be 1, 2 or 3, found " + json_value_string(dims_json));
  }
  const int dims           = dims_json.get<int>();
  const json& offsets_json = field("offsets");
  const json& weights_json = field("coefficients");
  if (!offsets_json.is_array()) error("field 'offsets' must be an array, found " + json_value_string(offsets_json));
  if (!weights_json.is_array()) {
    error("field 'coefficients' must be an array, found " + json_value_string(weights_json));
  }
  if (offsets_json.size() != weights_json.size()) {
    error(std::to_string(offsets_json.size()) + " offsets but " + std::to_string(weights_json.size()) +
          " coefficients");
  }
  std::vector<std::vector<int>> offsets;
  std::vector<double> weights;
  for (std::size_t t = 0; t < offsets_json.size(); ++t) {
    const json& o           = offsets_json[t];
    const std::string which = "offset " + std::to_string(t) + " " + json_value_string(o);
    if (!o.is_array() || o.size() < static_cast<std::size_t>(dims)) {
      error(which + " needs at least " + std::to_string(dims) + " integers");
    }
    std::vector<int> offset;
    for (std::size_t a = 0; a < o.size(); ++a) {
      if (!o[a].is_number_integer()) error(which + " is not all integers");
      if (!is_int(o[a])) error(which + ": component " + std::to_string(a) + " is beyond the range of an int");
      const int c = o[a].get<int>();
      if (a < static_cast<std::size_t>(dims)) {
        offset.push_back(c);
      } else if (c != 0) {
        error(which + " has a nonzero component beyond dims " + std::to_string(dims));
      }
    }
    if (!weights_json[t].is_number()) {
      error("coefficient " + std::to_string(t) + " (" + json_value_string(weights_json[t]) + ") is not a number");
    }
    offsets.push_back(offset);
    weights.push_back(weights_json[t].get<double>());
  }
  // Optional summary fields: where present they must agree with the offsets.
  long widest = 0;  // in long: an offset component may be INT_MIN, whose negation an int cannot hold
  for (const std::vector<int>& offset : offsets) {
    for (int c : offset) widest = std::max(widest, c < 0 ? -static_cast<long>(c) : static_cast<long>(c));
  }
  for (const auto& [key, actual, meaning] :
       {std::tuple{"radius", static_cast<long>(widest), "the largest |offset component|"},
        std::tuple{"points", static_cast<long>(offsets.size()), "the offsets listed"}}) {
    const auto it = item.find(key);
    if (it == item.end()) continue;
    if (!is_int(*it)) error(std::string("field '") + key + "' must be an integer, found " + json_value_string(*it));
    if (it->get<long>() != actual) {
      error(std::string("field '") + key + "' is " + json_value_string(*it) + " but " + meaning + " give " +
            std::to_string(actual));
    }
  }
  try {
    return {name, shape, source, make_stencil(offsets, weights, name)};
  } catch (const std::runtime_error& e) {
    entry_error(origin, index, name, e.what());
  }
}

}  // namespace

std::vector<CatalogueEntry> parse_catalogue(std::string_view json_text, std::string_view origin) {
  json document;
  try {
    document = json::parse(json_text.begin(), json_text.end());
  } catch (const json::exception& e) {  // a syntax error, or a number beyond a double's range
    const impl::JsonFault fault = impl::json_fault(json_text);
    if (fault.entry < 0) impl::fail("load_catalogue", origin, ": not valid JSON: ", e.what());
    const std::string where = fault.path.size() < 2 ? "" : " in field '" + impl::json_path_string(fault.path, 1) + "'";
    entry_error(origin, static_cast<std::size_t>(fault.entry), fault.entry_name,
                "not valid JSON" + where + ": " + e.what());
  }
  if (!document.is_array()) impl::fail("load_catalogue", origin, ": the top level must be a JSON array");
  std::vector<CatalogueEntry> entries;
  for (std::size_t i = 0; i < document.size(); ++i) {
    entries.push_back(parse_entry(document[i], i, origin));
    for (std::size_t j = 0; j < i; ++j) {  // names are compared as lookups compare them: one entry a name
      if (presets::canonical(entries[j].name) == presets::canonical(entries[i].name)) {
        entry_error(origin, i, entries[i].name,
                    "its name is entry " + std::to_string(j) + "'s ('" + entries[j].name +
                        "') again: names must differ beyond case, '-' and '_'");
      }
    }
  }
  return entries;
}

std::vector<CatalogueEntry> load_catalogue(const std::string& path) {
  std::ifstream file(path);
  if (!file) impl::fail("load_catalogue", "cannot open '", path, "'");
  std::ostringstream text;
  text << file.rdbuf();
  return parse_catalogue(text.str(), path);
}

std::string reference_catalogue_path(const std::string& installed) {
  namespace fs = std::filesystem;
  if (const char* path = std::getenv("SPARSTENCIL_CATALOGUE")) {
    if (!fs::is_regular_file(path)) {
      impl::fail("reference_catalogue_path", "SPARSTENCIL_CATALOGUE names '", path, "', which is not a file");
    }
    return path;
  }
  std::error_code error;
  const fs::path program = fs::read_symlink("/proc/self/exe", error);  // Linux; elsewhere the variable
  std::string looked;
  if (!error) {
    fs::path folder = program.parent_path();
    for (int up = 0; up < 3 && !folder.empty(); ++up, folder = folder.parent_path()) {
      const fs::path candidate = folder / "share" / "sparstencil" / "stencils.json";
      if (fs::is_regular_file(candidate)) return candidate.string();
      looked += (looked.empty() ? "" : ", ") + candidate.string();
    }
  }
  if (!installed.empty()) {
    if (fs::is_regular_file(installed)) return installed;
    looked += (looked.empty() ? "" : ", ") + installed;
  }
  impl::fail("reference_catalogue_path", "no stencils.json found", looked.empty() ? "" : " (looked in " + looked + ")",
             "; set SPARSTENCIL_CATALOGUE to the catalogue's path");
}

}  // namespace sparstencil
