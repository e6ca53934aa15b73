// Fuzz target: the stencil text parser. Any text either parses or is refused with a
// std::runtime_error (ParseError for syntax); a stencil that parses prints (to_text) as
// text that parses back to the same terms.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "SparStencil_Parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sparstencil;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  AnyStencil stencil = Stencil<1>({{{0}, 1.0}});
  try {
    stencil = parse_stencil(text);
  } catch (const std::runtime_error&) {
    return 0;  // a clear refusal
  }
  const std::string printed = to_text(stencil);
  const AnyStencil back     = parse_stencil(printed);  // must not throw
  if (back != stencil) {
    std::fprintf(stderr, "parse_stencil(to_text(s)) != s for the text form '%s'\n", printed.c_str());
    std::abort();
  }
  return 0;
}
