#pragma once
/// What a field update computes (docs/UPDATES.md): stencil results, each a stencil over one
/// input field whose terms may be scaled by coefficient fields at the output point, then a
/// pointwise function of the results and the inputs' centre values giving each output.
///   result_k(x) = sum over terms t of stencil_k: w_t * C_t(x) * input_{i_k}(x + o_t)
///   C_t(x)      = field_t(x) * prod over axes a of factor_{a,t}(x_a)   (each part optional)
/// Coefficient fields are D-dimensional with the grid's extents; axis factors are 1-D with
/// the extent of their axis (a separable coefficient: D n values instead of n^D).
#include <algorithm>
#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include "SparStencil_Error.hpp"
#include "SparStencil_Stencil.hpp"

namespace sparstencil {

/// The coefficient of one term: a coefficient field and one factor per axis, by index
/// into the update's lists; -1 where there is none.
template <int D>
struct Coefficient {
  int field                      = -1;
  std::array<int, D> axis_factor = filled(-1);

  bool constant() const {
    for (int f : axis_factor) {
      if (f >= 0) return false;
    }
    return field < 0;
  }
  friend bool operator==(const Coefficient& a, const Coefficient& b) {
    return a.field == b.field && a.axis_factor == b.axis_factor;
  }

 private:
  static std::array<int, D> filled(int v) {
    std::array<int, D> a{};
    a.fill(v);
    return a;
  }
};

/// A stencil over one input field, its terms optionally scaled by coefficients.
template <int D>
class StencilOn {
 public:
  StencilOn(Stencil<D> stencil, int input)
      : m_stencil(std::move(stencil)), m_input(input), m_coefficients(m_stencil.size()) {
    if (input < 0) impl::fail("StencilOn", "input index ", input, " is negative");
  }

  /// Every term times coefficient field `field`.
  StencilOn& times_field(int field) {
    for (std::size_t t = 0; t < m_coefficients.size(); ++t) set_field(t, field);
    return *this;
  }
  /// The term at `offset` times coefficient field `field`.
  StencilOn& term_times_field(const Offset<D>& offset, int field) {
    set_field(term_index(offset), field);
    return *this;
  }
  /// Every term times axis factor `factor` of axis `axis` (a 1-D View along that axis).
  StencilOn& times_axis_factor(int axis, int factor) {
    for (std::size_t t = 0; t < m_coefficients.size(); ++t) set_axis_factor(t, axis, factor);
    return *this;
  }
  StencilOn& term_times_axis_factor(const Offset<D>& offset, int axis, int factor) {
    set_axis_factor(term_index(offset), axis, factor);
    return *this;
  }

  const Stencil<D>& stencil() const { return m_stencil; }
  int input() const { return m_input; }
  /// One per term, in the stencil's term order.
  const std::vector<Coefficient<D>>& coefficients() const { return m_coefficients; }

 private:
  std::size_t term_index(const Offset<D>& offset) const {
    const auto& terms = m_stencil.terms();
    for (std::size_t t = 0; t < terms.size(); ++t) {
      if (terms[t].offset == offset) return t;
    }
    impl::fail("StencilOn", "stencil '", m_stencil.name(), "' has no term at offset ", impl::tuple_string(offset));
  }
  void set_field(std::size_t t, int field) {
    if (field < 0) impl::fail("StencilOn", "coefficient field index ", field, " is negative");
    if (m_coefficients[t].field >= 0 && m_coefficients[t].field != field) {
      impl::fail("StencilOn", "the term at offset ", impl::tuple_string(m_stencil.terms()[t].offset),
                 " already has coefficient field ", m_coefficients[t].field,
                 ": a term takes one field (give the "
                 "product as a field of its own)");
    }
    m_coefficients[t].field = field;
  }
  void set_axis_factor(std::size_t t, int axis, int factor) {
    if (axis < 0 || axis >= D) impl::fail("StencilOn", "axis ", axis, " does not exist in ", D, "-D");
    if (factor < 0) impl::fail("StencilOn", "axis factor index ", factor, " is negative");
    int& slot = m_coefficients[t].axis_factor[axis];
    if (slot >= 0 && slot != factor) {
      impl::fail("StencilOn", "the term at offset ", impl::tuple_string(m_stencil.terms()[t].offset),
                 " already has factor ", slot, " along axis ", axis, ": a term takes one factor per axis");
    }
    slot = factor;
  }

  Stencil<D> m_stencil;
  int m_input;
  std::vector<Coefficient<D>> m_coefficients;
};

/// The shape of an update: counts of fields, its stencil results, their largest radius.
template <int D>
struct UpdateShape {
  int inputs = 0, outputs = 0, coefficient_fields = 0;
  std::array<int, D> axis_factors{};  ///< per axis
  std::vector<StencilOn<D>> results;

  /// Largest radius along each axis over every result's stencil.
  std::array<int, D> radius() const {
    std::array<int, D> r{};
    for (const auto& s : results) {
      for (int a = 0; a < D; ++a) r[a] = std::max(r[a], s.stencil().radius()[a]);
    }
    return r;
  }

  /// Throws naming a result whose input, coefficient field or axis factor is not among
  /// the update's.
  void validate(std::string_view function) const {
    for (std::size_t k = 0; k < results.size(); ++k) {
      const StencilOn<D>& s = results[k];
      if (s.input() >= inputs) {
        impl::fail(function, "stencil result ", k, " ('", s.stencil().name(), "') reads input ", s.input(),
                   " but the update has ", inputs, " input field", inputs == 1 ? "" : "s");
      }
      for (const Coefficient<D>& c : s.coefficients()) {
        if (c.field >= coefficient_fields) {
          impl::fail(function, "stencil result ", k, " uses coefficient field ", c.field, " but the update has ",
                     coefficient_fields, " coefficient field", coefficient_fields == 1 ? "" : "s");
        }
        for (int a = 0; a < D; ++a) {
          if (c.axis_factor[a] >= axis_factors[a]) {
            impl::fail(function, "stencil result ", k, " uses factor ", c.axis_factor[a], " along axis ", a,
                       " but the update has ", axis_factors[a], " factor", axis_factors[a] == 1 ? "" : "s",
                       " along that axis");
          }
        }
      }
    }
  }
};

}  // namespace sparstencil
