#include "SparStencil_JsonRead.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "SparStencil_Error.hpp"

namespace sparstencil::impl {
namespace {

using nlohmann::json;

/// A SAX handler that keeps the path to the value being parsed: a frame per open object
/// or array, with the current key or the index of the next element.
class PathTracker final : public nlohmann::json_sax<json> {
 public:
  JsonFault fault;

  bool null() override { return value_done(); }
  bool boolean(bool) override { return value_done(); }
  bool number_integer(number_integer_t) override { return value_done(); }
  bool number_unsigned(number_unsigned_t) override { return value_done(); }
  bool number_float(number_float_t, const string_t&) override { return value_done(); }
  bool string(string_t& value) override {
    // A catalogue entry's name, for messages about the rest of the entry.
    if (m_frames.size() == 2 && m_frames[0].array && !m_frames[1].array && m_frames[1].key == "name") {
      fault.entry_name = value;
    }
    return value_done();
  }
  bool binary(binary_t&) override { return value_done(); }
  bool start_object(std::size_t) override {
    if (m_frames.size() == 1 && m_frames[0].array) fault.entry_name.clear();  // a new entry
    m_frames.push_back({false, 0, {}});
    return true;
  }
  bool key(string_t& key) override {
    m_frames.back().key = key;
    return true;
  }
  bool end_object() override {
    m_frames.pop_back();
    return value_done();
  }
  bool start_array(std::size_t) override {
    m_frames.push_back({true, 0, {}});
    return true;
  }
  bool end_array() override {
    m_frames.pop_back();
    return value_done();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    fault.found = true;
    fault.what  = error.what();
    for (const Frame& f : m_frames) {
      if (!f.array && f.key.empty()) break;  // at a key: the fault is in the object itself
      fault.path.push_back(f.array ? "[" + std::to_string(f.index) + "]" : f.key);
    }
    if (!m_frames.empty() && m_frames[0].array) fault.entry = static_cast<long>(m_frames[0].index);
    return false;
  }

 private:
  struct Frame {
    bool array;
    std::size_t index;  ///< arrays: the element being parsed
    std::string key;    ///< objects: the member being parsed
  };
  bool value_done() {
    if (m_frames.empty()) return true;
    Frame& f = m_frames.back();
    if (f.array) {
      ++f.index;
    } else {
      f.key.clear();  // between members: no member at fault yet
    }
    return true;
  }
  std::vector<Frame> m_frames;
};

}  // namespace

JsonFault json_fault(std::string_view text) {
  PathTracker tracker;
  json::sax_parse(text.begin(), text.end(), &tracker);
  return tracker.fault;
}

std::string json_path_string(const std::vector<std::string>& path, std::size_t first) {
  std::string s;
  for (std::size_t i = first; i < path.size(); ++i) {
    if (!s.empty() && (path[i].empty() || path[i][0] != '[')) s += '.';
    s += path[i];
  }
  return s;
}

std::string json_value_string(const json& value) {
  const bool flat = value.is_array() && value.size() <= 8 &&
                    std::none_of(value.begin(), value.end(), [](const json& e) { return e.is_structured(); });
  if (value.is_object()) return "an object";
  if (value.is_array() && !flat) return "an array of " + std::to_string(value.size());
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

void JsonFields::fail(const std::string& path, const std::string& what) const {
  std::string field = m_prefix + path;
  if (!field.empty() && field.back() == '.') field.pop_back();  // the prefix's own top
  if (field.empty()) impl::fail(m_function, what);
  impl::fail(m_function, "field '", field, "': ", what);
}

const json& JsonFields::member(const json& object, const std::string& path, const char* key) const {
  const std::string at = path.empty() ? key : path + "." + key;
  if (!object.is_object()) fail(path, "expected an object, found " + json_value_string(object));
  const auto it = object.find(key);
  if (it == object.end()) fail(at, "missing");
  return *it;
}

long JsonFields::integer(const json& j, const std::string& path, long lo, long hi) const {
  const auto range = [&] { return " (expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ")"; };
  if (!j.is_number_integer()) fail(path, "found " + json_value_string(j) + range());
  if (j.is_number_unsigned()) {
    const std::uint64_t u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) fail(path, "found " + json_value_string(j) + range());
    return static_cast<long>(u);
  }
  const std::int64_t v = j.get<std::int64_t>();
  if (v < lo || v > hi) fail(path, "found " + json_value_string(j) + range());
  return static_cast<long>(v);
}

int JsonFields::int_value(const json& j, const std::string& path) const {
  return static_cast<int>(integer(j, path, INT_MIN, INT_MAX));
}

double JsonFields::number(const json& j, const std::string& path) const {
  if (!j.is_number()) fail(path, "found " + json_value_string(j) + " (expected a number)");
  return j.get<double>();
}

std::string JsonFields::text(const json& j, const std::string& path) const {
  if (!j.is_string()) fail(path, "found " + json_value_string(j) + " (expected a string)");
  return j.get<std::string>();
}

bool JsonFields::boolean(const json& j, const std::string& path) const {
  if (!j.is_boolean()) fail(path, "found " + json_value_string(j) + " (expected true or false)");
  return j.get<bool>();
}

const json& JsonFields::array(const json& j, const std::string& path) const {
  if (!j.is_array()) fail(path, "found " + json_value_string(j) + " (expected an array)");
  return j;
}

}  // namespace sparstencil::impl
