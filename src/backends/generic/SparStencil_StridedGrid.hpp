#pragma once
/// A grid as the generic executor sees it: a pointer, extents and strides (in elements, the
/// View's axis order). Any Kokkos View of any layout becomes one (strided_grid), so the
/// executor is instantiated once per rank, space and value type, whatever the layout and
/// memory space of the Views: the unit the library prebuilds (SparStencil_GenericSteps.hpp).
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace sparstencil::impl {

/// V is the value type as the grid is accessed: `const T` for inputs, `T` for outputs.
template <int D, class V>
struct StridedGrid {
  static_assert(D >= 1 && D <= 3, "sparstencil: grids have rank 1, 2 or 3");
  using value_type           = V;
  using non_const_value_type = std::remove_const_t<V>;
  static constexpr int rank  = D;

  V* pointer = nullptr;
  Kokkos::Array<std::size_t, D> extents{}, strides{};

  KOKKOS_INLINE_FUNCTION V* data() const { return pointer; }
  KOKKOS_INLINE_FUNCTION std::size_t extent(int a) const { return extents[a]; }
  KOKKOS_INLINE_FUNCTION std::size_t stride(int a) const { return strides[a]; }
  template <class... I>
  KOKKOS_INLINE_FUNCTION V& operator()(I... i) const {
    static_assert(sizeof...(I) == D, "sparstencil: a grid is indexed by one index an axis");
    const int index[D] = {static_cast<int>(i)...};
    long flat          = 0;
    for (int a = 0; a < D; ++a) flat += static_cast<long>(index[a]) * static_cast<long>(strides[a]);
    return pointer[flat];
  }
};

/// The grid of a rank-D View: its data, extents and strides.
template <class View>
StridedGrid<static_cast<int>(View::rank), typename View::value_type> strided_grid(const View& v) {
  StridedGrid<static_cast<int>(View::rank), typename View::value_type> g;
  g.pointer = v.data();
  for (int a = 0; a < static_cast<int>(View::rank); ++a) {
    g.extents[a] = v.extent(a);
    g.strides[a] = v.stride(a);
  }
  return g;
}

/// A grid read as an input (const values).
template <int D, class V>
StridedGrid<D, const std::remove_const_t<V>> as_input(const StridedGrid<D, V>& g) {
  return {g.pointer, g.extents, g.strides};
}

}  // namespace sparstencil::impl
