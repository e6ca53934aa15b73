#pragma once
/// Small helpers for rank-generic code over grids: the View type of a D-dimensional grid
/// and its allocation from an extents array.
#include <Kokkos_Core.hpp>

#include <array>
#include <string>

namespace sparstencil {

namespace impl {
template <class T, int D>
struct grid_data;
template <class T>
struct grid_data<T, 1> {
  using type = T*;
};
template <class T>
struct grid_data<T, 2> {
  using type = T**;
};
template <class T>
struct grid_data<T, 3> {
  using type = T***;
};
}  // namespace impl

/// Kokkos::View of a D-dimensional grid of T.
template <class T, int D, class Layout = Kokkos::LayoutRight,
          class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
using GridView = Kokkos::View<typename impl::grid_data<T, D>::type, Layout, MemSpace>;

/// Allocates a View (contiguous layout) with the given extents.
template <class View, std::size_t D>
View make_view(const std::string& label, const std::array<int, D>& e) {
  static_assert(static_cast<std::size_t>(View::rank) == D, "make_view: extents must match the View's rank");
  if constexpr (D == 1) {
    return View(label, e[0]);
  } else if constexpr (D == 2) {
    return View(label, e[0], e[1]);
  } else {
    return View(label, e[0], e[1], e[2]);
  }
}

}  // namespace sparstencil
