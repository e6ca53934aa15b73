#pragma once
/// The rim kernel (docs/GENERIC.md): the points within the radius of an end of the grid,
/// which the interior kernels leave alone, under the boundary mode (periodic sums wrap
/// their reads, fixed_rim copies the input), point by point over the rim cut into disjoint
/// boxes. It takes the Views themselves, so it is instantiated per layout.
#include <Kokkos_Core.hpp>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GenericShapes.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_ViewElement.hpp"

namespace sparstencil::impl {

/// The rim as disjoint boxes ("slabs"): along each axis its two ends, the axes before it
/// restricted to their interior so no point is visited twice. Boxes are listed with the
/// view axes in kernel order (fastest last), so consecutive indices walk memory.
template <int D>
struct RimSlabs {
  int count = 0;
  Kokkos::Array<long, 2 * D + 1> begin;                       ///< first flat index of each slab; begin[count] = total
  Kokkos::Array<Kokkos::Array<int, D>, 2 * D> lower, extent;  ///< per slab, per kernel axis
  Kokkos::Array<int, D> axis;                                 ///< view axis of kernel axis k
};

/// The rim's slabs: for each view axis a with a radius, its two ends (r_a planes each),
/// with the view axes before a restricted to their interior so that no rim point is in
/// two slabs; each slab's lower corner and extents listed along the kernel axes `axis`.
template <int D, class Radius>
RimSlabs<D> rim_slabs(const Radius& radius, const Kokkos::Array<int, D>& axis, const Kokkos::Array<int, D>& extent) {
  RimSlabs<D> slabs;
  slabs.axis     = axis;
  slabs.begin[0] = 0;
  for (int a = 0; a < D; ++a) {
    const int r = radius[a];
    if (r == 0) continue;
    for (int end = 0; end < 2; ++end) {
      long points = 1;
      for (int k = 0; k < D; ++k) {
        const int b  = axis[k];
        const int rb = radius[b];
        int lower = b < a ? rb : 0, upper = b < a ? extent[b] - rb : extent[b];
        if (b == a) {
          lower = end == 0 ? 0 : extent[a] - r;
          upper = end == 0 ? r : extent[a];
        }
        slabs.lower[slabs.count][k]  = lower;
        slabs.extent[slabs.count][k] = upper - lower;
        points *= upper - lower;
      }
      slabs.begin[slabs.count + 1] = slabs.begin[slabs.count] + points;
      ++slabs.count;
    }
  }
  return slabs;
}

/// Rim points under the boundary mode: periodic sums wrap their reads, fixed_rim copies
/// `in`; interior mode leaves the rim alone and never launches this kernel.
template <int D, class InView, class OutView, class MemorySpace>
struct RimKernel {
  using value_type = typename OutView::non_const_value_type;
  using acc_type   = accumulator_t<value_type>;

  InView m_in;
  OutView m_out;
  RuntimeShape<D, acc_type, MemorySpace> m_shape;
  Kokkos::Array<int, D> m_extent;
  Boundary m_boundary;
  RimSlabs<D> m_slabs;

  KOKKOS_INLINE_FUNCTION void operator()(long flat) const {
    int s = 0;
    while (flat >= m_slabs.begin[s + 1]) ++s;
    long rest = flat - m_slabs.begin[s];
    Kokkos::Array<int, D> i;
    for (int k = D - 1; k >= 0; --k) {
      const int e        = m_slabs.extent[s][k];
      i[m_slabs.axis[k]] = m_slabs.lower[s][k] + static_cast<int>(rest % e);
      rest /= e;
    }
    point(i);
  }

  KOKKOS_INLINE_FUNCTION void point(const Kokkos::Array<int, D>& i) const {
    if (m_boundary == Boundary::fixed_rim) {
      element<D>(m_out, i) = element<D>(m_in, i);
      return;
    }
    acc_type sum     = 0;
    const int nterms = static_cast<int>(m_shape.weights.extent(0));
    for (int t = 0; t < nterms; ++t) {
      Kokkos::Array<int, D> j;
      for (int a = 0; a < D; ++a) {
        // |offset| <= radius < extent / 2, so one wrap is enough.
        int k = i[a] + m_shape.offsets(t, a);
        k += (k < 0) ? m_extent[a] : 0;
        k -= (k >= m_extent[a]) ? m_extent[a] : 0;
        j[a] = k;
      }
      sum += m_shape.weights(t) * static_cast<acc_type>(element<D>(m_in, j));
    }
    element<D>(m_out, i) = static_cast<value_type>(sum);
  }
};

}  // namespace sparstencil::impl
