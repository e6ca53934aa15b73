#pragma once
/// Stencil shapes the tuned generic executor knows at compile time (the tuning study's
/// "stencil point-wise unrolling"): stars and boxes of the presets' radii. Offsets are
/// template constants, so every loop over them unrolls and loads shared by several outputs
/// are issued once; weights stay run-time values. Any other stencil runs through
/// RuntimeShape, which loops over offsets and weights held in device Views.
///
/// Offsets are written in kernel-axis order: k = 0 is the blocking axis (the one a thread
/// walks to compute several outputs), k = D - 1 the fastest (contiguous) axis.
#include <Kokkos_Core.hpp>

#include "SparStencil_ShapeMatch.hpp"
#include "SparStencil_Stencil.hpp"
#include "SparStencil_Unroll.hpp"

namespace sparstencil::impl {

/// A star or box of radius R in D dimensions with its weights (dense (2R+1)^D table in
/// kernel-axis order, zero where the star has no point).
template <int D, int R, ShapeKind K, class Acc>
struct FixedShape {
  static constexpr int rank       = D;
  static constexpr int radius     = R;
  static constexpr ShapeKind kind = K;
  static constexpr int width      = 2 * R + 1;
  /// Offsets along the axes other than k = 0, enumerated as one index u.
  static constexpr int rest_count = D == 1 ? 1 : D == 2 ? width : width * width;
  static constexpr int dense      = width * rest_count;

  Kokkos::Array<Acc, dense> weights;

  /// Offset of rest index u along kernel axis k (1 <= k < D).
  KOKKOS_INLINE_FUNCTION static constexpr int rest_offset(int u, int k) {
    if (D == 2) return u - R;
    return k == 1 ? u / width - R : u % width - R;
  }
  /// Rest index u of the offsets o1 along k = 1 (3-D only) and of along the fastest axis.
  KOKKOS_INLINE_FUNCTION static constexpr int rest_index(int o1, int of) {
    return D == 3 ? (o1 + R) * width + of + R : D == 2 ? of + R : 0;
  }
  /// Whether the shape has the point (ob, rest u), ob being the offset along k = 0.
  KOKKOS_INLINE_FUNCTION static constexpr bool has(int ob, int u) {
    if (ob < -R || ob > R) return false;
    if (K == ShapeKind::box || D == 1) return true;
    const int centre = (rest_count - 1) / 2;
    if (ob != 0) return u == centre;
    if (D == 2) return true;
    return rest_offset(u, 1) == 0 || rest_offset(u, 2) == 0;
  }
};

/// Any stencil: offsets (view-axis order) and weights in device memory.
template <int D, class Acc, class MemorySpace>
struct RuntimeShape {
  static constexpr int rank = D;
  Kokkos::View<const int**, Kokkos::LayoutRight, MemorySpace> offsets;
  Kokkos::View<const Acc*, MemorySpace> weights;
};

/// The dense weight table of a FixedShape for `stencil` (which match_shape accepted),
/// `axis[k]` being the view axis of kernel axis k.
template <class Shape>
Shape fixed_shape(const Stencil<Shape::rank>& stencil, const Kokkos::Array<int, Shape::rank>& axis) {
  constexpr int D = Shape::rank;
  using Acc       = std::decay_t<decltype(Shape{}.weights[0])>;
  Shape shape{};
  for (int i = 0; i < Shape::dense; ++i) shape.weights[i] = Acc(0);
  for (const Term<D>& t : stencil.terms()) {
    int index = t.offset[axis[0]] + Shape::radius;
    for (int k = 1; k < D; ++k) index = index * Shape::width + t.offset[axis[k]] + Shape::radius;
    shape.weights[index] = static_cast<Acc>(t.weight);
  }
  return shape;
}

}  // namespace sparstencil::impl
