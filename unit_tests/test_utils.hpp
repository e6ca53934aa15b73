#pragma once
// Helpers shared by the executor tests: random Views (never zeros), copies to the
// double-precision HostGrid of the reference, and the precision-derived comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <sstream>

#include "SparStencil.hpp"
#include "test_grid_utils.hpp"

namespace sparstencil::test {

template <int D>
Kokkos::Array<int, D> to_kokkos(const std::array<int, D>& i) {
  Kokkos::Array<int, D> k;
  for (int a = 0; a < D; ++a) k[a] = i[a];
  return k;
}

template <int D, class View>
std::array<int, D> extents_of(const View& v) {
  std::array<int, D> e{};
  for (int a = 0; a < D; ++a) e[a] = static_cast<int>(v.extent(a));
  return e;
}

/// A contiguous copy's type in the View's own memory space: host <-> device copies of
/// strided device Views must go through one (Kokkos copies across spaces only when
/// contiguous).
template <int D, class View>
using ContiguousOf = GridView<typename View::non_const_value_type, D, Kokkos::LayoutRight, typename View::memory_space>;

/// Fills a View with values of magnitude in [0.25, 1] and random sign: never zero.
template <int D, class View>
void fill_random(const View& v, std::uint64_t seed) {
  using T      = typename View::non_const_value_type;
  auto staging = make_view<ContiguousOf<D, View>>("staging", extents_of<D>(v));
  auto host    = Kokkos::create_mirror_view(staging);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(0.25, 1.0);
  std::bernoulli_distribution negative(0.5);
  for_each_point<D>(extents_of<D>(v), [&](const std::array<int, D>& i) {
    const double m                          = magnitude(rng);
    impl::element<D>(host, to_kokkos<D>(i)) = static_cast<T>(negative(rng) ? -m : m);
  });
  Kokkos::deep_copy(staging, host);
  Kokkos::deep_copy(v, staging);
}

/// The View's values, as doubles, in a HostGrid.
template <int D, class View>
HostGrid<D> to_grid(const View& v) {
  auto staging = make_view<ContiguousOf<D, View>>("staging", extents_of<D>(v));
  Kokkos::deep_copy(staging, v);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), staging);
  HostGrid<D> grid(extents_of<D>(v));
  for_each_point<D>(grid.extents, [&](const std::array<int, D>& i) {
    grid(i) = static_cast<double>(impl::element<D>(host, to_kokkos<D>(i)));
  });
  return grid;
}

}  // namespace sparstencil::test
