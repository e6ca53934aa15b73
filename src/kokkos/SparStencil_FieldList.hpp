#pragma once
/// The fields a FieldUpdate reads and writes (docs/UPDATES.md): Views, or Views with ghost
/// layers around the grid (with_ghosts), gathered by fields() into a FieldList of their
/// data, strides and extents, and the test that outputs share no memory with other fields.
#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

#include "SparStencil_Error.hpp"
#include "SparStencil_Overlap.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_ViewChecks.hpp"

namespace sparstencil {

/// A View with `width` ghost layers on both sides of each axis: the grid is the inner box,
/// the halo around it is the application's (read where a face is FaceRule::ghost).
template <class View>
struct Ghosted {
  View view;
  std::array<int, View::rank> width{};
};

template <class View>
Ghosted<View> with_ghosts(const View& padded, const std::array<int, View::rank>& width) {
  static_assert(Kokkos::is_view<View>::value, "sparstencil: with_ghosts takes a Kokkos::View");
  for (std::size_t a = 0; a < View::rank; ++a) {
    if (width[a] < 0 || 2 * static_cast<std::size_t>(width[a]) >= padded.extent(a)) {
      impl::fail("with_ghosts", "ghost width ", width[a], " along axis ", a, " does not fit View '", padded.label(),
                 "' of extents ", impl::extents_string(padded), ": the grid inside needs at least one point");
    }
  }
  return {padded, width};
}
template <class View>
Ghosted<View> with_ghosts(const View& padded, int width) {
  std::array<int, View::rank> w{};
  w.fill(width);
  return with_ghosts(padded, w);
}

namespace impl {

/// A field as the kernel reads it: its data, strides and ghost widths.
template <class T, int D>
struct FieldRef {
  T* data = nullptr;
  Kokkos::Array<long, D> stride{};
  Kokkos::Array<int, D> ghost{};

  /// Offset of grid point x (x_a may lie in the halo: -ghost_a <= x_a < n_a + ghost_a).
  KOKKOS_INLINE_FUNCTION long at(const int* x) const {
    long i = 0;
    for (int a = 0; a < D; ++a) i += static_cast<long>(x[a] + ghost[a]) * stride[a];
    return i;
  }
};

template <class View>
struct view_traits_of {
  using view = View;
  static View get(const View& v) { return v; }
  static std::array<int, View::rank> ghost(const View&) { return {}; }
};
template <class View>
struct view_traits_of<Ghosted<View>> {
  using view = View;
  static View get(const Ghosted<View>& g) { return g.view; }
  static std::array<int, View::rank> ghost(const Ghosted<View>& g) { return g.width; }
};

template <class X>
struct array_size {
  static constexpr int value = -1;
};
template <class X, std::size_t N>
struct array_size<Kokkos::Array<X, N>> {
  static constexpr int value = static_cast<int>(N);
};

}  // namespace impl

/// N fields of one value type, rank and memory space (Views or Ghosted Views), in order.
template <class V, int D, int N, class MemSpace>
struct FieldList {
  using value_type           = V;
  using memory_space         = MemSpace;
  static constexpr int count = N;
  Kokkos::Array<impl::FieldRef<V, D>, N> refs;
  std::array<std::array<int, D>, N> extents{};  ///< the grid's (padding excluded)
  std::array<std::array<int, D>, N> padded{};   ///< the View's
  std::array<std::string, N> labels;
};

/// The fields of an update, in order: Views, or Ghosted Views (with_ghosts).
template <class... Fields>
auto fields(const Fields&... f) {
  using First     = typename impl::view_traits_of<std::tuple_element_t<0, std::tuple<Fields...>>>::view;
  constexpr int D = static_cast<int>(First::rank);
  using V         = typename First::value_type;
  using Mem       = typename First::memory_space;
  static_assert((Kokkos::is_view<typename impl::view_traits_of<Fields>::view>::value && ...),
                "sparstencil: fields() takes Kokkos::Views or with_ghosts(View, width)");
  static_assert(((static_cast<int>(impl::view_traits_of<Fields>::view::rank) == D) && ...),
                "sparstencil: the fields of an update must have one rank");
  static_assert((std::is_same_v<typename impl::view_traits_of<Fields>::view::value_type, V> && ...),
                "sparstencil: the fields of one list must have one value type (const or not alike)");
  static_assert((std::is_same_v<typename impl::view_traits_of<Fields>::view::memory_space, Mem> && ...),
                "sparstencil: the fields of an update must live in one memory space");
  static_assert(is_supported_scalar<std::remove_const_t<V>>,
                "sparstencil: the value type must be Kokkos::Experimental::half_t, float or double");
  FieldList<V, D, static_cast<int>(sizeof...(Fields)), Mem> list;
  int k    = 0;
  auto add = [&](const auto& field) {
    using Traits     = impl::view_traits_of<std::decay_t<decltype(field)>>;
    const auto view  = Traits::get(field);
    const auto ghost = Traits::ghost(field);
    // Checked before any is stored: with the throw inside the storing loop, g++ 12 at -O2
    // and above warns (-Warray-bounds) of subscripts past D on the paths it cannot rule out.
    for (int a = 0; a < D; ++a) {
      if (view.extent(a) > static_cast<std::size_t>(INT32_MAX)) {
        impl::fail("fields", "extent ", view.extent(a), " along axis ", a, " of View '", view.label(),
                   "' exceeds 2^31 - 1");
      }
    }
    list.refs[k].data = view.data();
    for (int a = 0; a < D; ++a) {
      list.refs[k].stride[a] = static_cast<long>(view.stride(a));
      list.refs[k].ghost[a]  = ghost[a];
      list.padded[k][a]      = static_cast<int>(view.extent(a));
      list.extents[k][a]     = static_cast<int>(view.extent(a)) - 2 * ghost[a];
    }
    list.labels[k] = view.label();
    ++k;
  };
  (add(f), ...);
  return list;
}

}  // namespace sparstencil
