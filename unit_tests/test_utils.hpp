#pragma once
// Helpers shared by the executor tests: random Views (never zeros), copies to the
// double-precision HostGrid of the reference, and the precision-derived comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "SparStencil.hpp"

namespace sparstencil::test {

template <int D, class F>
void for_each_point(const std::array<int, D>& extents, F&& f) {
  const HostGrid<D> shape(extents);
  for (std::size_t flat = 0; flat < shape.values.size(); ++flat) f(shape.point(flat));
}

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
using ContiguousOf = GridView<typename View::non_const_value_type, D, Kokkos::LayoutRight,
                              typename View::memory_space>;

/// Fills a View with values of magnitude in [0.25, 1] and random sign: never zero.
template <int D, class View>
void fill_random(const View& v, std::uint64_t seed) {
  using T = typename View::non_const_value_type;
  auto staging = make_view<ContiguousOf<D, View>>("staging", extents_of<D>(v));
  auto host    = Kokkos::create_mirror_view(staging);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(0.25, 1.0);
  std::bernoulli_distribution negative(0.5);
  for_each_point<D>(extents_of<D>(v), [&](const std::array<int, D>& i) {
    const double m = magnitude(rng);
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

template <int D>
HostGrid<D> abs(HostGrid<D> g) {
  for (double& v : g.values) v = std::fabs(v);
  return g;
}

/// The stencil with |w| for every weight: applied to |in| it bounds the terms' magnitude.
template <int D>
Stencil<D> abs_weights(const Stencil<D>& s) {
  std::vector<Term<D>> terms = s.terms();
  for (Term<D>& t : terms) t.weight = std::fabs(t.weight);
  return Stencil<D>(terms, s.name());
}

/// Points to compare: all of them, or those at least `margin[a]` from both ends.
template <int D>
bool inside(const std::array<int, D>& extents, const std::array<int, D>& margin,
            const std::array<int, D>& i) {
  for (int a = 0; a < D; ++a) {
    if (i[a] < margin[a] || i[a] >= extents[a] - margin[a]) return false;
  }
  return true;
}

/// |got - expected| <= factor * magnitude at every point inside `margin` (docs/PRECISION.md).
template <int D>
::testing::AssertionResult within_bound(const HostGrid<D>& got, const HostGrid<D>& expected,
                                        const HostGrid<D>& magnitude, double factor,
                                        typename HostGrid<D>::index_type margin = {}) {
  std::size_t failures = 0, compared = 0;
  std::ostringstream detail;
  for (std::size_t flat = 0; flat < got.values.size(); ++flat) {
    if (!inside<D>(got.extents, margin, got.point(flat))) continue;
    ++compared;
    const double error = std::fabs(got.values[flat] - expected.values[flat]);
    const double bound = factor * magnitude.values[flat];
    if (!(error <= bound)) {
      if (failures < 5) {
        detail << "\n  at " << impl::tuple_string(got.point(flat)) << ": got " << got.values[flat]
               << ", expected " << expected.values[flat] << ", error " << error << " > bound "
               << bound;
      }
      ++failures;
    }
  }
  if (compared == 0) return ::testing::AssertionFailure() << "no point was compared";
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " of " << compared
                                       << " points outside the bound" << detail.str();
}

/// A random stencil: 1 to 12 distinct offsets (at most as many as exist) within `radius` on every axis (always
/// reaching it on axis 0), weights uniform in [-1, 1] scaled so that sum |w| = 1.
template <int D>
Stencil<D> random_stencil(std::mt19937_64& rng, int radius) {
  std::uniform_int_distribution<int> coordinate(-radius, radius);
  std::uniform_int_distribution<int> count(1, 12);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  std::map<Offset<D>, double> terms;
  Offset<D> reach{};
  reach[0] = std::bernoulli_distribution(0.5)(rng) ? radius : -radius;
  terms[reach] = weight(rng);
  int possible = 1;  // distinct offsets within the radius
  for (int a = 0; a < D; ++a) possible *= 2 * radius + 1;
  const int n = std::min(count(rng), possible);
  while (static_cast<int>(terms.size()) < n) {
    Offset<D> o;
    for (int a = 0; a < D; ++a) o[a] = coordinate(rng);
    terms[o] = weight(rng);
  }
  double total = 0;
  for (auto& [o, w] : terms) total += std::fabs(w);
  std::vector<Term<D>> list;
  for (auto& [o, w] : terms) list.push_back({o, w / total});
  return Stencil<D>(list, "random");
}

}  // namespace sparstencil::test

/// Expects `statement` to throw std::runtime_error whose message contains every string given.
#define EXPECT_ERROR_MENTIONS(statement, ...)                                                   \
  do {                                                                                          \
    try {                                                                                       \
      statement;                                                                                \
      ADD_FAILURE() << "no exception from: " #statement;                                        \
    } catch (const std::runtime_error& error_) {                                                \
      for (const std::string& part_ : std::initializer_list<std::string>{__VA_ARGS__}) {                                           \
        EXPECT_NE(std::string(error_.what()).find(part_), std::string::npos)                    \
            << "message \"" << error_.what() << "\" does not mention \"" << part_ << "\"";      \
      }                                                                                         \
    }                                                                                           \
  } while (0)
