#pragma once
/// The stencil model: a linear, constant-coefficient stencil in 1, 2 or 3 dimensions.
/// out(x) = sum over terms of weight * in(x + offset). Offset component a pairs with the
/// View's index a, whatever the View's memory layout.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "SparStencil_Error.hpp"

namespace sparstencil {

/// Largest |offset| along any axis that a stencil may have, fused stencils included.
/// It bounds the halo every executor reads (and the tensor-core planner's patch tables);
/// 32 admits e.g. a radius-4 stencil fused over 8 steps.
inline constexpr int max_supported_radius = 32;

template <int D>
using Offset = std::array<int, D>;

template <int D>
struct Term {
  Offset<D> offset;
  double weight;
  friend bool operator==(const Term& a, const Term& b) { return a.offset == b.offset && a.weight == b.weight; }
};

/// A validated stencil. Terms are kept sorted by offset (lexicographic).
template <int D>
class Stencil {
  static_assert(D >= 1 && D <= 3, "sparstencil::Stencil: the dimension must be 1, 2 or 3");

 public:
  static constexpr int rank = D;
  /// A multi-index or per-axis extent (offsets, radii, tile shapes). Functions taking one
  /// beside a Stencil<D> use this name so that D is deduced from the stencil alone.
  using index_type = std::array<int, D>;

  /// Throws std::runtime_error for an empty stencil, a non-finite weight, a repeated
  /// offset, or an offset beyond max_supported_radius.
  explicit Stencil(std::vector<Term<D>> terms, std::string name = "")
      : m_terms(std::move(terms)), m_name(std::move(name)) {
    if (m_terms.empty()) impl::fail("Stencil", "empty stencil: at least one term is needed");
    for (std::size_t i = 0; i < m_terms.size(); ++i) {
      const Term<D>& term = m_terms[i];
      if (!std::isfinite(term.weight)) {
        impl::fail("Stencil", "term ", i, " at offset ", impl::tuple_string(term.offset), " has a non-finite weight (",
                   term.weight, ")");
      }
      for (int a = 0; a < D; ++a) {
        // (Not std::abs: it overflows for INT_MIN.)
        if (term.offset[a] < -max_supported_radius || term.offset[a] > max_supported_radius) {
          impl::fail("Stencil", "offset ", impl::tuple_string(term.offset), " is beyond the supported radius ",
                     max_supported_radius, " along axis ", a);
        }
      }
    }
    std::stable_sort(m_terms.begin(), m_terms.end(),
                     [](const Term<D>& a, const Term<D>& b) { return a.offset < b.offset; });
    for (std::size_t i = 1; i < m_terms.size(); ++i) {
      if (m_terms[i].offset == m_terms[i - 1].offset) {
        impl::fail("Stencil", "duplicate offset ", impl::tuple_string(m_terms[i].offset),
                   ": each offset may appear once");
      }
    }
    m_radius.fill(0);
    for (const Term<D>& term : m_terms) {
      for (int a = 0; a < D; ++a) m_radius[a] = std::max(m_radius[a], std::abs(term.offset[a]));
    }
  }

  const std::vector<Term<D>>& terms() const { return m_terms; }
  std::size_t size() const { return m_terms.size(); }
  const std::string& name() const { return m_name; }

  /// Largest |offset| along each axis: the width of the rim and of the halo.
  const Offset<D>& radius() const { return m_radius; }
  int max_radius() const { return *std::max_element(m_radius.begin(), m_radius.end()); }

  /// The weight at an offset, 0 where the stencil has no term.
  double weight(const Offset<D>& offset) const {
    auto it = std::lower_bound(m_terms.begin(), m_terms.end(), offset,
                               [](const Term<D>& t, const Offset<D>& o) { return t.offset < o; });
    return (it != m_terms.end() && it->offset == offset) ? it->weight : 0.0;
  }

  /// Equal terms; the name is a label and does not take part.
  friend bool operator==(const Stencil& a, const Stencil& b) { return a.m_terms == b.m_terms; }
  friend bool operator!=(const Stencil& a, const Stencil& b) { return !(a == b); }

 private:
  std::vector<Term<D>> m_terms;
  std::string m_name;
  Offset<D> m_radius{};
};

/// A stencil whose dimension is known only at run time (parsed text, catalogue entries).
using AnyStencil = std::variant<Stencil<1>, Stencil<2>, Stencil<3>>;

inline int dimension(const AnyStencil& s) { return static_cast<int>(s.index()) + 1; }
inline const std::string& name(const AnyStencil& s) {
  return std::visit([](const auto& st) -> const std::string& { return st.name(); }, s);
}

/// Radius per axis and number of terms of a run-time stencil.
inline std::vector<int> radius(const AnyStencil& s) {
  return std::visit([](const auto& st) { return std::vector<int>(st.radius().begin(), st.radius().end()); }, s);
}
inline std::size_t term_count(const AnyStencil& s) {
  return std::visit([](const auto& st) { return st.size(); }, s);
}
/// The largest |weight| of a run-time stencil.
inline double largest_weight(const AnyStencil& s) {
  return std::visit(
      [](const auto& st) {
        double most = 0;
        for (const auto& t : st.terms()) most = std::max(most, t.weight < 0 ? -t.weight : t.weight);
        return most;
      },
      s);
}
/// The sum of |weights| of a run-time stencil: an output's largest magnitude over the
/// inputs' largest.
inline double abs_weight_sum(const AnyStencil& s) {
  return std::visit(
      [](const auto& st) {
        double sum = 0;
        for (const auto& t : st.terms()) sum += t.weight < 0 ? -t.weight : t.weight;
        return sum;
      },
      s);
}

/// The D-dimensional stencil held by `s`; throws when it has another dimension.
template <int D>
const Stencil<D>& as(const AnyStencil& s) {
  if (dimension(s) != D) {
    impl::fail("as", "stencil '", name(s), "' is ", dimension(s), "-D, expected ", D, "-D");
  }
  return std::get<D - 1>(s);
}

/// Builds a stencil from offsets of run-time length; all offsets must have the same
/// number of coordinates (1, 2 or 3) and there must be one weight per offset.
AnyStencil make_stencil(const std::vector<std::vector<int>>& offsets, const std::vector<double>& weights,
                        std::string name = "");

/// Star of radius r: the centre and the 2*D*r points on the axes. Weights are uniform
/// (1 / number of points), so repeated application stays bounded.
template <int D>
Stencil<D> star(int r) {
  if (r < 1 || r > max_supported_radius) {
    impl::fail("star", "radius ", r, " is outside 1..", max_supported_radius);
  }
  std::vector<Term<D>> terms;
  const double w = 1.0 / (2 * D * r + 1);
  terms.push_back({Offset<D>{}, w});
  for (int a = 0; a < D; ++a) {
    for (int d = 1; d <= r; ++d) {
      Offset<D> plus{}, minus{};
      plus[a]  = d;
      minus[a] = -d;
      terms.push_back({plus, w});
      terms.push_back({minus, w});
    }
  }
  return Stencil<D>(std::move(terms), "star" + std::to_string(D) + "d:r=" + std::to_string(r));
}

/// Box of radius r: every point of the (2r+1)^D cube, uniform weights.
template <int D>
Stencil<D> box(int r) {
  if (r < 1 || r > max_supported_radius) {
    impl::fail("box", "radius ", r, " is outside 1..", max_supported_radius);
  }
  const int side = 2 * r + 1;
  int count      = 1;
  for (int a = 0; a < D; ++a) count *= side;
  std::vector<Term<D>> terms;
  for (int flat = 0; flat < count; ++flat) {
    Offset<D> o{};
    int rest = flat;
    for (int a = D - 1; a >= 0; --a) {
      o[a] = rest % side - r;
      rest /= side;
    }
    terms.push_back({o, 1.0 / count});
  }
  return Stencil<D>(std::move(terms), "box" + std::to_string(D) + "d:r=" + std::to_string(r));
}

/// Run-time dimension forms of star<D> and box<D>.
AnyStencil star(int dims, int r);
AnyStencil box(int dims, int r);

}  // namespace sparstencil
