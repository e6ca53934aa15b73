#pragma once
/// Physical boundaries, one condition per face: what a stencil reads at the points outside
/// the grid (docs/BOUNDARIES.md, "Face conditions"). Every grid point is then written.
///   periodic : the opposite end of the axis (both faces of the axis must say so)
///   neumann  : zero gradient, cell-centred: mirrored about the face half a cell out,
///              outside(-1 - k) = inside(k), so diffusion conserves the sum
///   reflect  : mirrored about the end point, outside(-k) = inside(k): a reflecting wall
///              through the last grid point (zero normal derivative there)
///   dirichlet: a value, a constant or one per face point from a View
///   ghost    : the halo the application filled, read as it is (ghost-layer Views)
/// A point outside along several axes maps each mapped axis (periodic, neumann, reflect)
/// on its own; where any of its outside axes is a dirichlet face, the lowest such axis
/// gives the value (a dirichlet View read at the point clamped into the grid).
#include <array>
#include <string>
#include <string_view>

#include "SparStencil_Error.hpp"

namespace sparstencil {

enum class FaceRule { periodic, neumann, reflect, dirichlet, ghost };

inline const char* to_string(FaceRule rule) {
  switch (rule) {
    case FaceRule::periodic: return "periodic";
    case FaceRule::neumann: return "neumann";
    case FaceRule::reflect: return "reflect";
    case FaceRule::dirichlet: return "dirichlet";
    case FaceRule::ghost: return "ghost";
  }
  return "?";
}

/// One face's condition. A dirichlet face holds `value` unless the update is given a View
/// for it (FieldUpdate::dirichlet_values).
struct FaceCondition {
  FaceRule rule = FaceRule::periodic;
  double value  = 0.0;

  static FaceCondition periodic() { return {FaceRule::periodic, 0.0}; }
  static FaceCondition neumann() { return {FaceRule::neumann, 0.0}; }
  static FaceCondition reflect() { return {FaceRule::reflect, 0.0}; }
  static FaceCondition dirichlet(double v = 0.0) { return {FaceRule::dirichlet, v}; }
  static FaceCondition ghost() { return {FaceRule::ghost, 0.0}; }
};

/// The conditions of the 2 D faces: face(axis, 0) at index -1, face(axis, 1) past the end.
template <int D>
class FaceConditions {
 public:
  /// Every face periodic.
  FaceConditions() = default;
  /// Every face `c`.
  explicit FaceConditions(const FaceCondition& c) {
    for (auto& axis : m_faces) axis = {c, c};
  }

  /// Sets both faces of `axis`, or one (side 0: low end, 1: high end); returns *this.
  FaceConditions& set(int axis, const FaceCondition& c) { return set(axis, 0, c).set(axis, 1, c); }
  FaceConditions& set(int axis, int side, const FaceCondition& c) {
    check_face("FaceConditions::set", axis, side);
    m_faces[axis][side] = c;
    return *this;
  }
  const FaceCondition& face(int axis, int side) const {
    check_face("FaceConditions::face", axis, side);
    return m_faces[axis][side];
  }

  /// Throws naming the axis where one face is periodic and the other is not, or a
  /// dirichlet value that is not finite.
  void validate(std::string_view function) const {
    for (int a = 0; a < D; ++a) {
      if ((m_faces[a][0].rule == FaceRule::periodic) != (m_faces[a][1].rule == FaceRule::periodic)) {
        impl::fail(function, "axis ", a, " has a periodic face and a ",
                   to_string(m_faces[a][0].rule == FaceRule::periodic ? m_faces[a][1].rule : m_faces[a][0].rule),
                   " face: periodic joins the two ends, so both faces of the axis must be periodic");
      }
      for (int s = 0; s < 2; ++s) {
        if (!(m_faces[a][s].value - m_faces[a][s].value == 0.0)) {
          impl::fail(function, "the dirichlet value of face (axis ", a, ", side ", s, ") is not finite (",
                     m_faces[a][s].value, ")");
        }
      }
    }
  }

  /// Whether a face of any axis has this rule.
  bool any(FaceRule rule) const {
    for (const auto& axis : m_faces) {
      if (axis[0].rule == rule || axis[1].rule == rule) return true;
    }
    return false;
  }

  /// "x-: neumann, x+: dirichlet(1), y: periodic"
  std::string describe() const {
    static const char* axis_names[] = {"x", "y", "z"};
    std::string text;
    auto one = [](const FaceCondition& c) {
      std::string s = to_string(c.rule);
      if (c.rule == FaceRule::dirichlet) {
        std::ostringstream v;
        v << c.value;
        s += "(" + v.str() + ")";
      }
      return s;
    };
    for (int a = 0; a < D; ++a) {
      if (!text.empty()) text += ", ";
      const std::string lo = one(m_faces[a][0]), hi = one(m_faces[a][1]);
      text += lo == hi ? std::string(axis_names[a]) + ": " + lo
                       : std::string(axis_names[a]) + "-: " + lo + ", " + axis_names[a] + "+: " + hi;
    }
    return text;
  }

 private:
  static void check_face(std::string_view function, int axis, int side) {
    if (axis < 0 || axis >= D || side < 0 || side > 1) {
      impl::fail(function, "face (axis ", axis, ", side ", side, ") does not exist in ", D, "-D (axes 0..", D - 1,
                 ", sides 0 and 1)");
    }
  }
  std::array<std::array<FaceCondition, 2>, D> m_faces{};
};

}  // namespace sparstencil
