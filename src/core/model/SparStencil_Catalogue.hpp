#pragma once
/// Stencil catalogues in the JSON form of the project's reference catalogue
/// (src/core/model/stencils.json, installed to share/sparstencil/): a list of objects with
/// "name", "dims" (1-3), "offsets" (each [dx, dy, dz], x first), "coefficients", and
/// optionally "shape", "source", "notes". Offset component a maps to View index a;
/// components past "dims" must be 0.
#include <string>
#include <string_view>
#include <vector>

#include "SparStencil_Stencil.hpp"

namespace sparstencil {

struct CatalogueEntry {
  std::string name;
  std::string shape;   // "star", "box" or "other", as the catalogue says
  std::string source;  // where the weights come from
  AnyStencil stencil;
};

/// Parses catalogue JSON text; `origin` names it in error messages. Throws
/// std::runtime_error naming the entry and field at fault.
std::vector<CatalogueEntry> parse_catalogue(std::string_view json_text, std::string_view origin = "catalogue");

/// Reads and parses a catalogue file.
std::vector<CatalogueEntry> load_catalogue(const std::string& path);

/// The installed catalogue's path, where the program is built against an installed package
/// (its CMake config defines SPARSTENCIL_INSTALLED_CATALOGUE_PATH on SparStencil::core).
#ifdef SPARSTENCIL_INSTALLED_CATALOGUE_PATH
#define SPARSTENCIL_CATALOGUE_OF_THE_PACKAGE SPARSTENCIL_INSTALLED_CATALOGUE_PATH
#else
#define SPARSTENCIL_CATALOGUE_OF_THE_PACKAGE ""
#endif

/// Where the project's reference catalogue is: $SPARSTENCIL_CATALOGUE where set, else
/// share/sparstencil/stencils.json in the running program's folder or one of its two
/// parents (an installed bin/ or a build folder: the build copies it there), else
/// `installed` (by default the catalogue of the package the program was built against).
/// Throws std::runtime_error naming the places looked in when none has it.
std::string reference_catalogue_path(const std::string& installed = SPARSTENCIL_CATALOGUE_OF_THE_PACKAGE);

}  // namespace sparstencil
