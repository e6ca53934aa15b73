#pragma once
/// What the readers of JSON (catalogues, plans) share, inside the library only (the JSON
/// library is a build-only dependency: this header is not installed): where a text stops
/// parsing, so that messages name the entry and field even where the JSON library refuses
/// the whole text (a syntax error, or a number such as 1e400 beyond a double's range), and
/// values as messages show them.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sparstencil::impl {

struct JsonFault {
  bool found = false;  ///< the text does not parse
  /// From the top down to the value at fault: object keys, and array indices as "[i]".
  std::vector<std::string> path;
  /// With an array at the top (catalogues): the index of the entry at fault (-1: none),
  /// and its "name" where that was read before the fault.
  long entry = -1;
  std::string entry_name;
  std::string what;  ///< the JSON library's message
};

/// Parses `text` and says where it fails; `found` is false where it parses.
JsonFault json_fault(std::string_view text);

/// A path as a field name: keys joined by '.', indices appended ("a.values[3]"); the
/// components from `first` on.
std::string json_path_string(const std::vector<std::string>& path, std::size_t first = 0);

/// A value as a message shows it: scalars and short flat arrays as they are (long text
/// cut), other containers by their kind and size, never by a dump of a deeply nested one
/// (which would recurse once per level).
std::string json_value_string(const nlohmann::json& value);

/// Typed reads of JSON fields, each value checked for its type and its C++ type's range
/// before it is converted (a JSON-library conversion would throw its own exception or, for
/// integers, truncate); every error is "sparstencil::<function>: field '<prefix><path>':
/// what", the path naming the field from the reader's top ("a.values[3]") and the prefix
/// where that top lies in a larger document ("plans[2].plan."); the top itself (an empty
/// path) is named by the prefix alone, or not at all.
class JsonFields {
 public:
  explicit JsonFields(std::string function, std::string prefix = "")
      : m_function(std::move(function)), m_prefix(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const;
  /// object[key] at `path`, failing where `object` is no object or has no `key`.
  const nlohmann::json& member(const nlohmann::json& object, const std::string& path, const char* key) const;
  long integer(const nlohmann::json& j, const std::string& path, long lo, long hi) const;
  int int_value(const nlohmann::json& j, const std::string& path) const;
  double number(const nlohmann::json& j, const std::string& path) const;
  std::string text(const nlohmann::json& j, const std::string& path) const;
  bool boolean(const nlohmann::json& j, const std::string& path) const;
  const nlohmann::json& array(const nlohmann::json& j, const std::string& path) const;
  const std::string& function() const { return m_function; }
  const std::string& prefix() const { return m_prefix; }

 private:
  std::string m_function, m_prefix;
};

}  // namespace sparstencil::impl
