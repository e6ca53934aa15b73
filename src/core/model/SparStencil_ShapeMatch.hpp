#pragma once
/// Whether a stencil is a star or a box (same radius on every axis): backends compile
/// kernels for such shapes (the generic executor's compiled_shapes).
#include <optional>
#include <set>

#include "SparStencil_Stencil.hpp"

namespace sparstencil::impl {

enum class ShapeKind { star, box };

inline const char* to_string(ShapeKind k) { return k == ShapeKind::star ? "star" : "box"; }

/// The star or box a stencil is, if it is one: the same radius R along every axis and
/// exactly the offsets of star(R) or box(R) (in 1-D the two coincide; star is reported).
struct ShapeMatch {
  ShapeKind kind;
  int radius;
};

template <int D>
std::optional<ShapeMatch> match_shape(const Stencil<D>& stencil) {
  const int r = stencil.max_radius();
  for (int a = 0; a < D; ++a) {
    if (stencil.radius()[a] != r) return std::nullopt;
  }
  if (r < 1) return std::nullopt;
  std::set<Offset<D>> offsets;
  for (const Term<D>& t : stencil.terms()) offsets.insert(t.offset);
  if (offsets.size() != stencil.size()) return std::nullopt;
  bool on_axes = true;
  for (const Offset<D>& o : offsets) {
    int nonzero = 0;
    for (int a = 0; a < D; ++a) nonzero += o[a] != 0;
    on_axes = on_axes && nonzero <= 1;
  }
  long box_points = 1;
  for (int a = 0; a < D; ++a) box_points *= 2 * r + 1;
  if (on_axes && offsets.size() == static_cast<std::size_t>(2 * D * r + 1)) return ShapeMatch{ShapeKind::star, r};
  if (static_cast<long>(offsets.size()) == box_points) return ShapeMatch{ShapeKind::box, r};
  return std::nullopt;
}

}  // namespace sparstencil::impl
