#pragma once
/// Temporal fusion of the model: t steps of a linear stencil are one step of the stencil
/// whose weight table is the t-fold convolution of the original one (radius t*r).
/// Exact for periodic boundaries; next to a fixed rim it is not (docs/BOUNDARIES.md).
#include <cmath>
#include <cstddef>
#include <vector>

#include "SparStencil_Stencil.hpp"

namespace sparstencil {

namespace impl {

/// A weight table over the box of offsets [-reach, reach], held densely in lexicographic
/// order of the offsets (axis 0 slowest), with which offsets a t-fold sum reaches. Dense,
/// because a fused table fills most of its box (a radius-4 box fused over 8 steps: 274,625
/// of 274,625 offsets), where a map of offsets took minutes to build.
template <int D>
struct FusedTable {
  Offset<D> reach{};
  std::vector<double> weights;
  std::vector<unsigned char> reached;
  std::size_t count = 0;  ///< offsets reached

  std::size_t extent(int a) const { return 2 * static_cast<std::size_t>(reach[a]) + 1; }
  std::size_t index(const Offset<D>& offset) const {
    std::size_t i = 0;
    for (int a = 0; a < D; ++a) i = i * extent(a) + static_cast<std::size_t>(offset[a] + reach[a]);
    return i;
  }
  bool holds(const Offset<D>& offset) const {
    for (int a = 0; a < D; ++a) {
      if (offset[a] < -reach[a] || offset[a] > reach[a]) return false;
    }
    return reached[index(offset)] != 0;
  }
  /// Each reached offset and its weight, in lexicographic order.
  template <class Visit>
  void for_each(Visit&& visit) const {
    Offset<D> offset;
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (!reached[i]) continue;
      std::size_t rest = i;
      for (int a = D - 1; a >= 0; --a) {
        offset[a] = static_cast<int>(rest % extent(a)) - reach[a];
        rest /= extent(a);
      }
      visit(offset, weights[i]);
    }
  }
};

/// The table of `stencil` itself.
template <int D>
FusedTable<D> stencil_table(const Stencil<D>& stencil) {
  FusedTable<D> table;
  table.reach       = stencil.radius();
  std::size_t cells = 1;
  for (int a = 0; a < D; ++a) cells *= table.extent(a);
  table.weights.assign(cells, 0.0);
  table.reached.assign(cells, 0);
  for (const Term<D>& term : stencil.terms()) {
    table.weights[table.index(term.offset)] = term.weight;
    table.reached[table.index(term.offset)] = 1;
  }
  table.count = stencil.size();
  return table;
}

/// The table one step further: every offset of `table` plus every term's. Each sum adds
/// its products in the order of the table's offsets (the terms run in descending order,
/// each over the whole table), as a map filled offset by offset would.
template <int D>
FusedTable<D> next_table(const FusedTable<D>& table, const Stencil<D>& stencil) {
  FusedTable<D> next;
  for (int a = 0; a < D; ++a) next.reach[a] = table.reach[a] + stencil.radius()[a];
  std::size_t cells = 1, row = table.extent(D - 1), rows = 1;
  for (int a = 0; a < D; ++a) cells *= next.extent(a);
  for (int a = 0; a + 1 < D; ++a) rows *= table.extent(a);
  next.weights.assign(cells, 0.0);
  next.reached.assign(cells, 0);
  const std::vector<Term<D>>& terms = stencil.terms();  // ascending offsets
  for (auto term = terms.rbegin(); term != terms.rend(); ++term) {
    const double w = term->weight;
    for (std::size_t r = 0; r < rows; ++r) {
      Offset<D> first;  // the row's first offset, shifted by the term's
      std::size_t rest = r;
      for (int a = D - 2; a >= 0; --a) {
        first[a] = static_cast<int>(rest % table.extent(a)) - table.reach[a] + term->offset[a];
        rest /= table.extent(a);
      }
      first[D - 1]                    = -table.reach[D - 1] + term->offset[D - 1];
      const double* from              = table.weights.data() + r * row;
      const unsigned char* from_reach = table.reached.data() + r * row;
      double* to                      = next.weights.data() + next.index(first);
      unsigned char* to_reach         = next.reached.data() + next.index(first);
      // Offsets the table does not reach hold +0: adding their +-0 products leaves every
      // sum as the map's (a sum that starts at +0 never becomes -0).
      for (std::size_t i = 0; i < row; ++i) to[i] += from[i] * w;
      for (std::size_t i = 0; i < row; ++i) to_reach[i] |= from_reach[i];
    }
  }
  for (unsigned char r : next.reached) next.count += r;
  return next;
}

/// fuse's weight table after `t` steps, or false once it would hold more than `max_terms`
/// offsets (a support only grows from step to step, so the final one would too). A
/// one-term stencil at the origin keeps one offset whatever t: its weight is multiplied
/// t - 1 times in place, the same products a table would form, in a loop cheap enough for
/// any int t. Other stencils reach at most max_supported_radius, so t is small.
template <int D>
bool fused_table(const Stencil<D>& stencil, int t, std::size_t max_terms, FusedTable<D>& table) {
  table = stencil_table(stencil);
  if (table.count > max_terms) return false;
  if (stencil.size() == 1 && stencil.max_radius() == 0) {
    double& weight      = table.weights.front();
    const double factor = weight;
    for (int step = 1; step < t && std::isfinite(weight); ++step) {
      const double next = 0.0 + weight * factor;                                // as the table's sums form it
      if (next == weight && std::signbit(next) == std::signbit(weight)) break;  // a fixed point
      weight = next;
    }
    return true;
  }
  for (int step = 1; step < t; ++step) {
    FusedTable<D> next = next_table(table, stencil);
    if (next.count > max_terms) return false;
    table = std::move(next);
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
  impl::FusedTable<D> table;
  impl::fused_table(stencil, t, static_cast<std::size_t>(-1), table);
  std::vector<Term<D>> terms;
  terms.reserve(table.count);
  table.for_each([&](const Offset<D>& offset, double weight) {
    if (!std::isfinite(weight)) {
      impl::fail("fuse", "fusing ", t, " steps of stencil '", stencil.name(),
                 "' overflows: the fused weight at offset ", impl::tuple_string(offset),
                 " is not finite (a double holds up to 1.8e308); fuse fewer steps");
    }
    terms.push_back({offset, weight});
  });
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
  impl::FusedTable<D> table;
  if (!impl::fused_table(original, t, fused.size(), table) || table.count != fused.size()) return false;
  for (const Term<D>& term : fused.terms()) {
    if (!table.holds(term.offset)) return false;
    // A weight that is not finite would make fuse throw (Stencil refuses it).
    const double weight = table.weights[table.index(term.offset)];
    if (!std::isfinite(weight) || weight != term.weight) return false;
  }
  return true;
}

inline AnyStencil fuse(const AnyStencil& stencil, int t) {
  return std::visit([t](const auto& s) { return AnyStencil(fuse(s, t)); }, stencil);
}

}  // namespace sparstencil
