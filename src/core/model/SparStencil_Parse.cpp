#include "SparStencil_Parse.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "SparStencil_Presets.hpp"

namespace sparstencil {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : m_text(text) {}

  AnyStencil parse() {
    skip_separators();
    if (m_pos == m_text.size()) error("empty stencil text");
    std::size_t end = m_text.size();
    while (end > m_pos && (m_text[end - 1] == ';' || std::isspace(static_cast<unsigned char>(m_text[end - 1])))) --end;
    if (auto preset = presets::lookup(m_text.substr(m_pos, end - m_pos))) return *preset;
    if (std::isalpha(static_cast<unsigned char>(m_text[m_pos]))) return parse_named();
    return parse_terms();
  }

 private:
  [[noreturn]] void error(const std::string& what) const { error_at(m_pos, what); }
  [[noreturn]] void error_at(std::size_t column, const std::string& what) const {
    std::ostringstream message;
    message << "sparstencil::parse_stencil: " << what << " at column " << column + 1 << "\n  " << m_text << "\n  "
            << std::string(column, ' ') << "^";
    throw ParseError(message.str(), column);
  }

  bool at_separator() const {
    const char c = m_text[m_pos];
    return c == ';' || std::isspace(static_cast<unsigned char>(c));
  }
  void skip_separators() {
    while (m_pos < m_text.size() && at_separator()) ++m_pos;
  }
  bool consume(char c) {
    if (m_pos < m_text.size() && m_text[m_pos] == c) {
      ++m_pos;
      return true;
    }
    return false;
  }

  long parse_integer(const char* what) {
    const std::size_t start = m_pos;
    if (m_pos < m_text.size() && (m_text[m_pos] == '-' || m_text[m_pos] == '+')) ++m_pos;
    while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
    const std::string token(m_text.substr(start, m_pos - start));
    if (token.empty() || token == "-" || token == "+") {
      m_pos = start;
      error(std::string("expected ") + what);
    }
    errno        = 0;
    const long v = std::strtol(token.c_str(), nullptr, 10);
    if (errno == ERANGE || v > 1000000 || v < -1000000) error_at(start, std::string(what) + " out of range");
    return v;
  }

  double parse_weight() {
    const std::size_t start = m_pos;
    while (m_pos < m_text.size() && !at_separator()) ++m_pos;
    const std::string token(m_text.substr(start, m_pos - start));
    char* end      = nullptr;
    errno          = 0;
    const double w = token.empty() ? 0.0 : std::strtod(token.c_str(), &end);
    if (token.empty() || end != token.c_str() + token.size()) {
      error_at(start, "expected a number for the weight, found '" + token + "'");
    }
    if (errno == ERANGE && std::abs(w) > 1.0) error_at(start, "weight '" + token + "' overflows a double");
    if (errno == ERANGE && w == 0.0) error_at(start, "weight '" + token + "' underflows a double: it would be 0");
    return w;
  }

  AnyStencil parse_terms() {
    std::vector<std::vector<int>> offsets;
    std::vector<double> weights;
    std::vector<std::size_t> starts;
    while (m_pos < m_text.size()) {
      starts.push_back(m_pos);
      std::vector<int> offset{static_cast<int>(parse_integer("an integer offset coordinate"))};
      while (consume(',')) {
        if (offset.size() == 3) error("too many coordinates: an offset has at most 3");
        offset.push_back(static_cast<int>(parse_integer("an integer offset coordinate")));
      }
      if (!consume(':')) error("expected ':' and a weight after the offset");
      weights.push_back(parse_weight());
      if (!offsets.empty() && offset.size() != offsets.front().size()) {
        error_at(starts.back(), "mixed dimensions: this offset has " + std::to_string(offset.size()) +
                                    " coordinates, the first has " + std::to_string(offsets.front().size()));
      }
      offsets.push_back(offset);
      skip_separators();
    }
    return make_stencil(offsets, weights, std::string(m_text));
  }

  AnyStencil parse_named() {
    const std::size_t start = m_pos;
    while (m_pos < m_text.size() &&
           (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '-' || m_text[m_pos] == '_')) {
      ++m_pos;
    }
    const std::string word(m_text.substr(start, m_pos - start));
    if (!consume(':')) {
      skip_separators();
      if (m_pos != m_text.size()) error("unexpected text after the preset name");
      std::string known;
      for (auto n : presets::names()) known += std::string(n) + ", ";
      error_at(start, "unknown stencil name '" + word + "' (presets: " + known +
                          "or a builder such as star2d:r=2, box3d:r=1)");
    }
    // builder: star<D>d:r=<int> or box<D>d:r=<int>
    const bool is_star = word.size() == 6 && word.compare(0, 4, "star") == 0;
    const bool is_box  = word.size() == 5 && word.compare(0, 3, "box") == 0;
    const char dim     = word.size() < 2 ? '\0' : word[word.size() - 2];  // a one-letter word ("f:") has none
    if (!(is_star || is_box) || word.back() != 'd' || dim < '1' || dim > '3') {
      error_at(start, "unknown builder '" + word + "' (known: star1d, star2d, star3d, box1d, box2d, box3d)");
    }
    if (!consume('r') || !consume('=')) error("expected 'r=' and a radius");
    const std::size_t radius_at = m_pos;
    const long r                = parse_integer("an integer radius");
    skip_separators();
    if (m_pos != m_text.size()) error("unexpected text after the radius");
    if (r < 1 || r > max_supported_radius) {
      error_at(radius_at, "radius " + std::to_string(r) + " is outside 1.." + std::to_string(max_supported_radius));
    }
    return is_star ? star(dim - '0', static_cast<int>(r)) : box(dim - '0', static_cast<int>(r));
  }

  std::string_view m_text;
  std::size_t m_pos = 0;
};

}  // namespace

AnyStencil parse_stencil(std::string_view text) { return Parser(text).parse(); }

std::string to_text(const AnyStencil& stencil) {
  std::ostringstream out;
  out.precision(17);
  std::visit(
      [&out](const auto& s) {
        bool first = true;
        for (const auto& term : s.terms()) {
          out << (first ? "" : " ");
          first = false;
          for (std::size_t a = 0; a < term.offset.size(); ++a) out << (a ? "," : "") << term.offset[a];
          out << ':' << term.weight;
        }
      },
      stencil);
  return out.str();
}

std::vector<long> parse_extents(const std::string& text) {
  std::vector<long> extents;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, 'x')) {
    char* end    = nullptr;
    const long v = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 1 || v > (1L << 31) - 1) {
      throw std::runtime_error("'" + text + "' is not extents like 10240x10240 (each 1 to 2^31-1)");
    }
    extents.push_back(v);
  }
  const auto separators = static_cast<std::size_t>(std::count(text.begin(), text.end(), 'x'));
  if (separators + 1 != extents.size()) throw std::runtime_error("'" + text + "' is not extents like 10240x10240");
  if (extents.empty() || extents.size() > 3) throw std::runtime_error("'" + text + "' must have 1 to 3 extents");
  return extents;
}

}  // namespace sparstencil
