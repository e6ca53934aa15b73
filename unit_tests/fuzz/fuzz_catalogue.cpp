// Fuzz target: the catalogue loader. Any text either loads or is refused with a
// std::runtime_error; every stencil loaded has a name and prints as text that parses
// back to it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "SparStencil_Catalogue.hpp"
#include "SparStencil_Parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sparstencil;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<CatalogueEntry> entries;
  try {
    entries = parse_catalogue(text, "fuzz input");
  } catch (const std::runtime_error&) {
    return 0;  // a clear refusal
  }
  for (const CatalogueEntry& e : entries) {
    if (e.name.empty() || parse_stencil(to_text(e.stencil)) != e.stencil) {
      std::fprintf(stderr, "catalogue entry '%s' loaded inconsistent\n", e.name.c_str());
      std::abort();
    }
  }
  return 0;
}
