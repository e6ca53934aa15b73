#pragma once
/// Temporal fusion of the model: t steps of a linear stencil are one step of the stencil
/// whose weight table is the t-fold convolution of the original one (radius t*r).
/// Exact for periodic boundaries; next to a fixed rim it is not (docs/BOUNDARIES.md).
#include <map>

#include "SparStencil_Stencil.hpp"

namespace sparstencil {

/// The exact t-step composition of `stencil`. Every offset reachable in t steps is kept,
/// even where its weights cancel to zero, so the support is the t-fold Minkowski sum.
/// Throws for t < 1 or when t times the radius exceeds max_supported_radius.
template <int D>
Stencil<D> fuse(const Stencil<D>& stencil, int t) {
  if (t < 1) impl::fail("fuse", "step count ", t, " must be at least 1");
  if (static_cast<long>(t) * stencil.max_radius() > max_supported_radius) {
    impl::fail("fuse", "fusing ", t, " steps of a radius-", stencil.max_radius(),
               " stencil gives radius ", static_cast<long>(t) * stencil.max_radius(),
               ", beyond the supported radius ", max_supported_radius);
  }
  std::map<Offset<D>, double> table;
  for (const Term<D>& term : stencil.terms()) table[term.offset] = term.weight;
  for (int step = 1; step < t; ++step) {
    std::map<Offset<D>, double> next;
    for (const auto& [offset, weight] : table) {
      for (const Term<D>& term : stencil.terms()) {
        Offset<D> sum;
        for (int a = 0; a < D; ++a) sum[a] = offset[a] + term.offset[a];
        next[sum] += weight * term.weight;
      }
    }
    table.swap(next);
  }
  std::vector<Term<D>> terms;
  for (const auto& [offset, weight] : table) terms.push_back({offset, weight});
  std::string name = stencil.name().empty() ? "" : stencil.name() + "^" + std::to_string(t);
  return Stencil<D>(std::move(terms), std::move(name));
}

inline AnyStencil fuse(const AnyStencil& stencil, int t) {
  return std::visit([t](const auto& s) { return AnyStencil(fuse(s, t)); }, stencil);
}

}  // namespace sparstencil
