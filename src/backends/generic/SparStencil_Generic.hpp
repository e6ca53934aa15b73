#pragma once
/// The generic executor: one Kokkos parallel_for over the grid, on any execution space
/// (Serial, OpenMP, Threads, CUDA, HIP), any layout (Left, Right, Stride), and value types
/// half_t, float, double (sums in accumulator_t, SparStencil_Precision.hpp). Views are
/// checked by the front-end (SparStencil_Apply.hpp) before they get here.
#include <Kokkos_Core.hpp>

#include <type_traits>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_Stencil.hpp"

namespace sparstencil::impl {

/// Element of a rank-D View at a multi-index.
template <int D, class View>
KOKKOS_INLINE_FUNCTION auto& element(const View& v, const Kokkos::Array<int, D>& i) {
  if constexpr (D == 1) {
    return v(i[0]);
  } else if constexpr (D == 2) {
    return v(i[0], i[1]);
  } else {
    return v(i[0], i[1], i[2]);
  }
}

/// A stencil's offsets and weights copied once into the execution space's memory, so that
/// repeated steps (iterate) pay the upload once.
template <int D, class ExecSpace, class Acc>
struct DeviceStencil {
  using memory_space = typename ExecSpace::memory_space;
  Kokkos::View<int**, Kokkos::LayoutRight, memory_space> offsets;
  Kokkos::View<Acc*, memory_space> weights;
  Kokkos::Array<int, D> radius;

  DeviceStencil(const ExecSpace& space, const Stencil<D>& stencil)
      : offsets("sparstencil::offsets", stencil.size(), D),
        weights("sparstencil::weights", stencil.size()) {
    auto host_offsets = Kokkos::create_mirror_view(offsets);
    auto host_weights = Kokkos::create_mirror_view(weights);
    for (std::size_t t = 0; t < stencil.size(); ++t) {
      for (int a = 0; a < D; ++a) host_offsets(t, a) = stencil.terms()[t].offset[a];
      host_weights(t) = static_cast<Acc>(stencil.terms()[t].weight);
    }
    for (int a = 0; a < D; ++a) radius[a] = stencil.radius()[a];
    Kokkos::deep_copy(space, offsets, host_offsets);
    Kokkos::deep_copy(space, weights, host_weights);
  }
};

template <int D, class InView, class OutView, class ExecSpace>
struct GenericStencilKernel {
  using value_type = typename OutView::non_const_value_type;
  using acc_type   = accumulator_t<value_type>;

  InView m_in;
  OutView m_out;
  Kokkos::View<const int**, Kokkos::LayoutRight, typename ExecSpace::memory_space> m_offsets;
  Kokkos::View<const acc_type*, typename ExecSpace::memory_space> m_weights;
  Kokkos::Array<int, D> m_extent;
  Kokkos::Array<int, D> m_radius;
  Boundary m_boundary;

  KOKKOS_INLINE_FUNCTION void operator()(int i0) const { point({i0}); }
  KOKKOS_INLINE_FUNCTION void operator()(int i0, int i1) const { point({i0, i1}); }
  KOKKOS_INLINE_FUNCTION void operator()(int i0, int i1, int i2) const { point({i0, i1, i2}); }

  KOKKOS_INLINE_FUNCTION void point(const Kokkos::Array<int, D>& i) const {
    bool interior = true;
    for (int a = 0; a < D; ++a) {
      interior = interior && i[a] >= m_radius[a] && i[a] < m_extent[a] - m_radius[a];
    }
    if (!interior && m_boundary != Boundary::periodic) {
      if (m_boundary == Boundary::fixed_rim) element<D>(m_out, i) = element<D>(m_in, i);
      return;
    }
    acc_type sum  = 0;
    const int nterms = static_cast<int>(m_weights.extent(0));
    for (int t = 0; t < nterms; ++t) {
      Kokkos::Array<int, D> j;
      for (int a = 0; a < D; ++a) {
        // |offset| <= radius < extent / 2, so one wrap is enough (periodic reads only).
        int k = i[a] + m_offsets(t, a);
        k += (k < 0) ? m_extent[a] : 0;
        k -= (k >= m_extent[a]) ? m_extent[a] : 0;
        j[a] = k;
      }
      sum += m_weights(t) * static_cast<acc_type>(element<D>(m_in, j));
    }
    element<D>(m_out, i) = static_cast<value_type>(sum);
  }
};

/// Iteration order that walks the View's fastest index innermost.
template <class Layout>
constexpr Kokkos::Iterate iteration_order() {
  if constexpr (std::is_same_v<Layout, Kokkos::LayoutLeft>) {
    return Kokkos::Iterate::Left;
  } else if constexpr (std::is_same_v<Layout, Kokkos::LayoutRight>) {
    return Kokkos::Iterate::Right;
  } else {
    return Kokkos::Iterate::Default;
  }
}

/// One step on `space`; asynchronous like any Kokkos kernel launch.
template <int D, class ExecSpace, class InView, class OutView>
void generic_apply(const ExecSpace& space,
                   const DeviceStencil<D, ExecSpace, accumulator_t<typename OutView::non_const_value_type>>& stencil,
                   const InView& in, const OutView& out, Boundary boundary) {
  using Kernel = GenericStencilKernel<D, InView, OutView, ExecSpace>;
  Kokkos::Array<int, D> extent;
  for (int a = 0; a < D; ++a) extent[a] = static_cast<int>(out.extent(a));
  const Kernel kernel{in, out, stencil.offsets, stencil.weights, extent, stencil.radius, boundary};
  if constexpr (D == 1) {
    Kokkos::parallel_for("sparstencil::generic", Kokkos::RangePolicy<ExecSpace>(space, 0, extent[0]),
                         kernel);
  } else {
    constexpr Kokkos::Iterate order = iteration_order<typename OutView::array_layout>();
    using Policy = Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<D, order, order>>;
    typename Policy::point_type lower, upper;
    for (int a = 0; a < D; ++a) {
      lower[a] = 0;
      upper[a] = extent[a];
    }
    Kokkos::parallel_for("sparstencil::generic", Policy(space, lower, upper), kernel);
  }
}

}  // namespace sparstencil::impl
