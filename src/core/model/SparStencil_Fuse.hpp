#pragma once
/// Temporal fusion of the model: t steps of a linear stencil are one step of the stencil
/// whose weight table is the t-fold convolution of the original one (radius t*r).
/// Exact for periodic boundaries; next to a fixed rim it is not (docs/BOUNDARIES.md).
#include <cmath>
#include <cstddef>
#include <map>

#include "SparStencil_Stencil.hpp"

namespace sparstencil {

namespace impl {

/// fuse's weight table after `t` steps, or false once it would hold more than `max_terms`
/// offsets (a support only grows from step to step, so the final one would too). A
/// one-term stencil at the origin keeps one offset whatever t: its weight is multiplied
/// t - 1 times in place, the same products the table would form, in a loop cheap enough
/// for any int t (the table's would build a map a step).
template <int D>
bool fused_table(const Stencil<D>& stencil, int t, std::size_t max_terms,
                 std::map<typename Stencil<D>::index_type, double>& table) {
  table.clear();
  for (const Term<D>& term : stencil.terms()) table[term.offset] = term.weight;
  if (table.size() > max_terms) return false;
  if (stencil.size() == 1 && stencil.max_radius() == 0) {
    double& weight       = table.begin()->second;
    const double factor  = weight;
    for (int step = 1; step < t && std::isfinite(weight); ++step) {
      const double next = 0.0 + weight * factor;  // as `next[sum] += ...` forms it
      if (next == weight && std::signbit(next) == std::signbit(weight)) break;  // a fixed point
      weight = next;
    }
    return true;
  }
  for (int step = 1; step < t; ++step) {
    std::map<Offset<D>, double> next;
    for (const auto& [offset, weight] : table) {
      for (const Term<D>& term : stencil.terms()) {
        Offset<D> sum;
        for (int a = 0; a < D; ++a) sum[a] = offset[a] + term.offset[a];
        next[sum] += weight * term.weight;
      }
    }
    if (next.size() > max_terms) return false;
    table.swap(next);
  }
  return true;
}

/// Throws as fuse does for a step count below 1 or a fused radius past the supported one.
inline void check_fusion(int t, int max_radius) {
  if (t < 1) fail("fuse", "step count ", t, " must be at least 1");
  if (static_cast<long>(t) * max_radius > max_supported_radius) {
    fail("fuse", "fusing ", t, " steps of a radius-", max_radius, " stencil gives radius ",
         static_cast<long>(t) * max_radius, ", beyond the supported radius ", max_supported_radius);
  }
}

}  // namespace impl

/// The exact t-step composition of `stencil`. Every offset reachable in t steps is kept,
/// even where its weights cancel to zero, so the support is the t-fold Minkowski sum.
/// Throws for t < 1 or when t times the radius exceeds max_supported_radius.
template <int D>
Stencil<D> fuse(const Stencil<D>& stencil, int t) {
  impl::check_fusion(t, stencil.max_radius());
  std::map<Offset<D>, double> table;
  impl::fused_table(stencil, t, static_cast<std::size_t>(-1), table);
  std::vector<Term<D>> terms;
  for (const auto& [offset, weight] : table) {
    if (!std::isfinite(weight)) {
      impl::fail("fuse", "fusing ", t, " steps of stencil '", stencil.name(), "' overflows: the fused weight at offset ",
                 impl::tuple_string(offset), " is not finite (a double holds up to 1.8e308); fuse fewer steps");
    }
    terms.push_back({offset, weight});
  }
  std::string name = stencil.name().empty() ? "" : stencil.name() + "^" + std::to_string(t);
  return Stencil<D>(std::move(terms), std::move(name));
}

/// Whether `fused` has the terms of fuse(original, t) (names aside), decided without
/// forming more offsets than `fused` holds: cheap for a mismatch however large t is.
template <int D>
bool is_fusion_of(const Stencil<D>& fused, const Stencil<D>& original, int t) {
  if (t < 1 || static_cast<long>(t) * original.max_radius() > max_supported_radius) return false;
  for (int a = 0; a < D; ++a) {
    if (fused.radius()[a] != t * original.radius()[a]) return false;  // a t-fold sum's reach
  }
  std::map<Offset<D>, double> table;
  if (!impl::fused_table(original, t, fused.size(), table) || table.size() != fused.size()) return false;
  for (const Term<D>& term : fused.terms()) {
    const auto it = table.find(term.offset);
    // A weight that is not finite would make fuse throw (Stencil refuses it).
    if (it == table.end() || !std::isfinite(it->second) || it->second != term.weight) return false;
  }
  return true;
}

inline AnyStencil fuse(const AnyStencil& stencil, int t) {
  return std::visit([t](const auto& s) { return AnyStencil(fuse(s, t)); }, stencil);
}

}  // namespace sparstencil
