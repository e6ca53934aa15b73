#pragma once
/// Errors: user mistakes throw std::runtime_error whose message starts with the function
/// at fault and names the values involved; broken internal invariants use SPARSTENCIL_ASSERT.
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sparstencil::impl {

template <class... Parts>
[[noreturn]] void fail(std::string_view function, const Parts&... parts) {
  std::ostringstream message;
  message << "sparstencil::" << function << ": ";
  (message << ... << parts);
  throw std::runtime_error(message.str());
}

[[noreturn]] inline void assertion_failed(const char* condition, const char* file, int line) {
  std::ostringstream message;
  message << "sparstencil internal error: " << condition << " (" << file << ":" << line << ")";
  throw std::logic_error(message.str());
}

/// Formats a sequence as "(a,b,c)", the way every message prints offsets and extents.
template <class Sequence>
std::string tuple_string(const Sequence& values) {
  std::ostringstream out;
  out << '(';
  bool first = true;
  for (const auto& v : values) {
    out << (first ? "" : ",") << v;
    first = false;
  }
  out << ')';
  return out.str();
}

}  // namespace sparstencil::impl

#define SPARSTENCIL_ASSERT(condition) \
  ((condition) ? void(0) : ::sparstencil::impl::assertion_failed(#condition, __FILE__, __LINE__))
