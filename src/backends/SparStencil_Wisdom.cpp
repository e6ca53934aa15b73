#include "SparStencil_Wisdom.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "SparStencil_BackendModels.hpp"  // generated: the registered models (GenericConfig)
#include "SparStencil_Backends.hpp"
#include "SparStencil_Config.hpp"
#include "SparStencil_JsonRead.hpp"
#include "SparStencil_Parse.hpp"
#include "SparStencil_PlanTree.hpp"

namespace sparstencil {

namespace {

using nlohmann::json;
constexpr const char* format_name     = "sparstencil wisdom";
constexpr const char* caching_names[] = {"hardware", "scratch", "streaming"};
constexpr int pairings                = static_cast<int>(Pairing::interleaved) + 1;

/// A double as exact text (C99 hexadecimal: "0x1p+0"), infinities included.
std::string exact(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

/// The request as the key its plan is held under: every field that changes the plan, in
/// the JSON library's canonical form (keys sorted, no spaces).
json request_json(const PlanRequest& r) {
  return {{"stencil", to_text(r.stencil)},
          {"name", name(r.stencil)},
          {"grid", r.grid},
          {"precision", to_string(r.precision)},
          {"float_grids", r.float_grids},
          {"row_alignment", r.row_alignment},
          {"device", r.device},
          {"steps", r.steps},
          {"boundary", to_string(r.boundary)},
          {"backends", r.backends},
          {"pairing", static_cast<int>(r.pairing)},
          {"input_magnitude", exact(r.input_magnitude)},
          {"allow_overflow", r.allow_overflow}};
}

json variant_json(const GenericConfig& c) {
  return {{"caching", caching_names[static_cast<int>(c.caching)]},
          {"threads_fast", c.threads_fast},
          {"threads_second", c.threads_second},
          {"outputs", c.outputs},
          {"columns", c.columns}};
}

/// Every variant the tuner may choose: those it times for any dimension, on GPUs and hosts.
bool tuner_variant(const GenericConfig& c) {
  for (bool gpu : {false, true}) {
    for (int dims = 1; dims <= 3; ++dims) {
      for (const auto& list : {generic::candidates(dims, gpu), generic::fused_candidates(dims, gpu)}) {
        if (std::find(list.begin(), list.end(), c) != list.end()) return true;
      }
    }
  }
  return false;
}

struct HeldPlan {
  std::shared_ptr<const Plan> plan;
  std::uint64_t made = 0;  ///< when it was taken, for dropping the oldest
};

struct Store {
  std::mutex mutex;
  std::map<std::string, HeldPlan> plans;
  std::map<std::string, GenericConfig> variants;
  std::uint64_t taken = 0;

  /// Holds `plan` under `key` (the caller holds the mutex), dropping the oldest past the cap.
  void hold(const std::string& key, std::shared_ptr<const Plan> plan) {
    plans[key] = {std::move(plan), ++taken};
    if (plans.size() <= wisdom_plans_kept) return;
    auto oldest = std::min_element(plans.begin(), plans.end(),
                                   [](const auto& a, const auto& b) { return a.second.made < b.second.made; });
    plans.erase(oldest);
  }
};

Store& store() {
  static Store s;
  return s;
}

/// Reads a wisdom text's fields (JsonFields), every error naming the source and the
/// field's path.
class Reader : public impl::JsonFields {
 public:
  explicit Reader(std::string_view source) : JsonFields("load_wisdom: " + std::string(source)) {}

  /// The object's keys are exactly `keys`.
  void only(const json& object, const std::string& path, std::initializer_list<const char*> keys) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      const std::string& key = it.key();  // (not a structured binding: C++17 lambdas cannot capture one)
      if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return key == k; })) {
        fail(path.empty() ? key : path + "." + key, "unknown field");
      }
    }
  }
  /// `field` of the request at `path` must be `expected` (the plan's own value).
  void agrees(const json& request, const std::string& path, const char* field, const json& expected) const {
    const json& value = member(request, path, field);
    if (value != expected) {
      fail(path + "." + field, "found " + impl::json_value_string(value) + " but the entry's plan has " +
                                   impl::json_value_string(expected));
    }
  }

  /// The request of entry `path` checked field by field against its plan (read and
  /// verified already): its key.
  std::string request_key(const json& r, const std::string& path, const Plan& plan) const {
    only(r, path,
         {"stencil", "name", "grid", "precision", "float_grids", "row_alignment", "device", "steps", "boundary",
          "backends", "pairing", "input_magnitude", "allow_overflow"});
    agrees(r, path, "stencil", to_text(plan.original));
    agrees(r, path, "name", name(plan.original));
    agrees(r, path, "grid", plan.grid);
    agrees(r, path, "precision", to_string(plan.precision));
    agrees(r, path, "float_grids", plan.float_grids);
    agrees(r, path, "row_alignment", plan.row_alignment);
    agrees(r, path, "device", plan.device);
    agrees(r, path, "steps", plan.fused_steps);
    agrees(r, path, "boundary", to_string(plan.boundary));
    const json& backends = array(member(r, path, "backends"), path + ".backends");
    bool named           = backends.empty();
    for (std::size_t i = 0; i < backends.size(); ++i) {
      named = text(backends[i], path + ".backends[" + std::to_string(i) + "]") == plan.backend || named;
    }
    if (!named) fail(path + ".backends", "does not name the entry's plan's backend '" + plan.backend + "'");
    integer(member(r, path, "pairing"), path + ".pairing", 0, pairings - 1);
    const std::string magnitude = text(member(r, path, "input_magnitude"), path + ".input_magnitude");
    char* end                   = nullptr;
    errno                       = 0;
    const double m              = std::strtod(magnitude.c_str(), &end);
    if (magnitude.empty() || *end != '\0' || errno != 0 || exact(m) != magnitude) {
      fail(path + ".input_magnitude", "found \"" + magnitude + "\" (expected a double as C99 hexadecimal text)");
    }
    boolean(member(r, path, "allow_overflow"), path + ".allow_overflow");
    return r.dump();
  }

  GenericConfig variant(const json& v, const std::string& path) const {
    only(v, path, {"caching", "threads_fast", "threads_second", "outputs", "columns"});
    GenericConfig c;
    const std::string caching = text(member(v, path, "caching"), path + ".caching");
    const auto* known         = std::find(std::begin(caching_names), std::end(caching_names), caching);
    if (known == std::end(caching_names)) fail(path + ".caching", "unknown caching '" + caching + "'");
    c.caching        = static_cast<GenericCaching>(known - std::begin(caching_names));
    c.threads_fast   = static_cast<int>(integer(member(v, path, "threads_fast"), path + ".threads_fast", 1, 1024));
    c.threads_second = static_cast<int>(integer(member(v, path, "threads_second"), path + ".threads_second", 1, 1024));
    c.outputs        = static_cast<int>(integer(member(v, path, "outputs"), path + ".outputs", 1, 4096));
    c.columns        = static_cast<int>(integer(member(v, path, "columns"), path + ".columns", 1, 4));
    if (!tuner_variant(c)) fail(path, "'" + to_string(c) + "' is none of the variants the autotuner times");
    return c;
  }

 private:
  std::string m_source;
};

}  // namespace

std::string wisdom_to_json() {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  json plans = json::array(), variants = json::array();
  for (const auto& [key, held] : s.plans) {
    plans.push_back(
        {{"request", json::parse(key)}, {"plan", impl::plan_tree(*held.plan, impl::FusedStencil::derived)}});
  }
  for (const auto& [key, variant] : s.variants) variants.push_back({{"key", key}, {"variant", variant_json(variant)}});
  const json all = {
      {"format", format_name}, {"version", SPARSTENCIL_VERSION_STRING}, {"plans", plans}, {"variants", variants}};
  // Names are labels taken as given: bytes that are not UTF-8 are written as U+FFFD, as
  // to_json writes them.
  return all.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

void wisdom_from_json(std::string_view text, std::string_view source) {
  json all;
  try {
    all = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    const impl::JsonFault fault = impl::json_fault(text);
    if (fault.path.empty()) impl::fail("load_wisdom", source, ": not valid JSON: ", e.what());
    impl::fail("load_wisdom", source, ": not valid JSON at field '", impl::json_path_string(fault.path),
               "': ", e.what());
  }
  const Reader read(source);
  if (!all.is_object()) read.fail("", "the top level must be an object, found " + impl::json_value_string(all));
  read.only(all, "", {"format", "version", "plans", "variants"});
  if (read.text(read.member(all, "", "format"), "format") != format_name) {
    read.fail("format", "expected \"" + std::string(format_name) + "\"");
  }
  const std::string version = read.text(read.member(all, "", "version"), "version");
  if (version != SPARSTENCIL_VERSION_STRING) {
    read.fail("version", "written by SparStencil " + version + ", this is " + SPARSTENCIL_VERSION_STRING +
                             ": its plans are not this version's (delete the file and plan again)");
  }
  std::vector<std::pair<std::string, std::shared_ptr<const Plan>>> plans;
  const json& plan_entries = read.array(read.member(all, "", "plans"), "plans");
  for (std::size_t i = 0; i < plan_entries.size(); ++i) {
    const std::string at = "plans[" + std::to_string(i) + "]";
    const json& entry    = plan_entries[i];
    read.only(entry, at, {"request", "plan"});
    auto plan = std::make_shared<const Plan>(impl::plan_from_tree(read.member(entry, at, "plan"), read.function(),
                                                                  at + ".plan.", impl::FusedStencil::derived));
    plans.emplace_back(read.request_key(read.member(entry, at, "request"), at + ".request", *plan), std::move(plan));
  }
  std::vector<std::pair<std::string, GenericConfig>> variants;
  const json& variant_entries = read.array(read.member(all, "", "variants"), "variants");
  for (std::size_t i = 0; i < variant_entries.size(); ++i) {
    const std::string at = "variants[" + std::to_string(i) + "]";
    read.only(variant_entries[i], at, {"key", "variant"});
    const std::string key = read.text(read.member(variant_entries[i], at, "key"), at + ".key");
    if (key.empty()) read.fail(at + ".key", "empty");
    variants.emplace_back(key, read.variant(read.member(variant_entries[i], at, "variant"), at + ".variant"));
  }
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  for (auto& [key, plan] : plans) s.hold(key, std::move(plan));
  for (auto& [key, variant] : variants) s.variants[key] = variant;
}

void save_wisdom(const std::string& path) {
  const std::string text = wisdom_to_json();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) impl::fail("save_wisdom", "cannot write '", path, "'");
}

void load_wisdom(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) impl::fail("load_wisdom", "cannot read '", path, "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) impl::fail("load_wisdom", "cannot read '", path, "'");
  wisdom_from_json(text.str(), path);
}

void forget_wisdom() {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.plans.clear();
  s.variants.clear();
}

WisdomSize wisdom_size() {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  return {s.plans.size(), s.variants.size()};
}

namespace impl {

Plan wise_plan(const PlanRequest& request) {
  // (Names' bytes that are not UTF-8 as U+FFFD, as the file holds them.)
  const std::string key = request_json(request).dump(-1, ' ', false, json::error_handler_t::replace);
  Store& s              = store();
  {
    const std::lock_guard<std::mutex> lock(s.mutex);
    if (auto it = s.plans.find(key); it != s.plans.end()) return *it->second.plan;
  }
  auto plan = std::make_shared<const Plan>(make_plan(request));  // unlocked: plans may take long
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.hold(key, plan);
  return *plan;
}

std::optional<GenericConfig> wise_variant(const std::string& key) {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (auto it = s.variants.find(key); it != s.variants.end()) return it->second;
  return std::nullopt;
}

void remember_variant(const std::string& key, const GenericConfig& variant) {
  Store& s = store();
  const std::lock_guard<std::mutex> lock(s.mutex);
  s.variants[key] = variant;
}

}  // namespace impl
}  // namespace sparstencil
