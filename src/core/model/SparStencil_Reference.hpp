#pragma once
/// The double-precision reference every executor is checked against: plain host loops,
/// written for obviousness rather than speed, and independent of the executors' code.
#include <array>
#include <cstddef>
#include <vector>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Stencil.hpp"

namespace sparstencil {

/// A dense host array of doubles, index 0 slowest (row-major).
template <int D>
struct HostGrid {
  using index_type = std::array<int, D>;
  std::array<int, D> extents{};
  std::vector<double> values;

  HostGrid() = default;
  explicit HostGrid(const std::array<int, D>& e, double fill = 0.0) : extents(e) {
    std::size_t n = 1;
    for (int a = 0; a < D; ++a) n *= static_cast<std::size_t>(e[a]);
    values.assign(n, fill);
  }
  std::size_t index(const std::array<int, D>& i) const {
    std::size_t flat = 0;
    for (int a = 0; a < D; ++a) flat = flat * extents[a] + i[a];
    return flat;
  }
  double& operator()(const std::array<int, D>& i) { return values[index(i)]; }
  double operator()(const std::array<int, D>& i) const { return values[index(i)]; }
  /// The multi-index of a flat position.
  std::array<int, D> point(std::size_t flat) const {
    std::array<int, D> i{};
    for (int a = D - 1; a >= 0; --a) {
      i[a] = static_cast<int>(flat % extents[a]);
      flat /= extents[a];
    }
    return i;
  }
};

/// True when every axis index of `i` is at least r_a from both ends.
template <int D>
bool in_interior(const Stencil<D>& stencil, const typename HostGrid<D>::index_type& extents,
                 const typename HostGrid<D>::index_type& i) {
  for (int a = 0; a < D; ++a) {
    if (i[a] < stencil.radius()[a] || i[a] >= extents[a] - stencil.radius()[a]) return false;
  }
  return true;
}

/// One step of `stencil` from `in` into `out` under the boundary contract
/// (SparStencil_Boundary.hpp). `out` must have the extents of `in`.
template <int D>
void reference_apply(const Stencil<D>& stencil, const HostGrid<D>& in, HostGrid<D>& out, Boundary boundary) {
  SPARSTENCIL_ASSERT(in.extents == out.extents);
  for (std::size_t flat = 0; flat < in.values.size(); ++flat) {
    const std::array<int, D> i = in.point(flat);
    if (boundary != Boundary::periodic && !in_interior(stencil, in.extents, i)) {
      if (boundary == Boundary::fixed_rim) out.values[flat] = in.values[flat];
      continue;
    }
    double sum = 0.0;
    for (const Term<D>& term : stencil.terms()) {
      std::array<int, D> j{};
      for (int a = 0; a < D; ++a) {
        const int n = in.extents[a];
        j[a]        = ((i[a] + term.offset[a]) % n + n) % n;
      }
      sum += term.weight * in(j);
    }
    out.values[flat] = sum;
  }
}

/// `steps` reference steps; returns the final field. Both buffers start as `in`, so the
/// rim left untouched by Boundary::interior keeps the initial values.
template <int D>
HostGrid<D> reference_iterate(const Stencil<D>& stencil, const HostGrid<D>& in, int steps, Boundary boundary) {
  HostGrid<D> a = in, b = in;
  for (int s = 0; s < steps; ++s) {
    reference_apply(stencil, a, b, boundary);
    std::swap(a, b);
  }
  return a;
}

}  // namespace sparstencil
