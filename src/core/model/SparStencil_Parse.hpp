#pragma once
/// A compact text form of stencils, for command lines:
///   heat2d, box2d49p, ...         a preset (presets::names())
///   star3d:r=1, box2d:r=3         a builder: star<D>(r) or box<D>(r), uniform weights
///   "0,0:0.5 1,0:0.125 -1,0:0.125 0,1:0.125 0,-1:0.125"
///                                 explicit offset:weight terms, separated by blanks or ';'
///                                 (1, 2 or 3 comma-separated coordinates per offset)
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "SparStencil_Stencil.hpp"

namespace sparstencil {

/// A syntax error in the text form; what() shows the text with a caret under the fault.
class ParseError : public std::runtime_error {
 public:
  ParseError(const std::string& message, std::size_t column) : std::runtime_error(message), m_column(column) {}
  /// 0-based position of the fault in the text.
  std::size_t column() const { return m_column; }

 private:
  std::size_t m_column;
};

/// Parses the text form. Throws ParseError for syntax errors and std::runtime_error for
/// stencils that parse but are invalid (duplicate offsets, mixed dimensions, ...).
AnyStencil parse_stencil(std::string_view text);

/// The text form of a stencil (explicit terms, weights printed exactly): parses back to an
/// equal stencil.
std::string to_text(const AnyStencil& stencil);

/// Grid extents written as 10240x10240 (1 to 3 extents, each 1 to 2^31 - 1); throws
/// std::runtime_error naming the text otherwise.
std::vector<long> parse_extents(const std::string& text);

}  // namespace sparstencil
