#pragma once
/// The field update's pass over the grid, one point a work item (SparStencil_FieldUpdate.hpp
/// launches it): every read inside the grid direct, the face rules applied where a read
/// leaves it; and the tables and types the update's kernels share.
#include <Kokkos_Core.hpp>

#include <type_traits>

#include "SparStencil_FaceConditions.hpp"
#include "SparStencil_FieldList.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_Unroll.hpp"

namespace sparstencil::impl {

/// What the kernels of a FieldUpdate<D, NResults, T, ExecSpace> share.
template <int D, int NResults, class T, class ExecSpace>
struct FieldUpdateTypes {
  using value_type             = T;
  using execution_space        = ExecSpace;
  using memory_space           = typename ExecSpace::memory_space;
  using Acc                    = accumulator_t<T>;
  static constexpr int rank    = D;
  static constexpr int results = NResults;
  /// half_t outputs are checked for values half cannot hold (one flag the kernel sets):
  /// past 65504 or NaN where half_t is 16-bit, inf or NaN where it is float (host builds,
  /// where float outputs are half_t outputs too: the two are one type).
  static constexpr bool checks_range = std::is_same_v<T, Kokkos::Experimental::half_t>;
  /// Rows of the grid along its contiguous axis, in chunks of `chunk` points: a team a
  /// chunk, its threads on consecutive points (coalesced on GPUs, a contiguous loop on CPUs).
  static constexpr int chunk = 1024;
  /// Loads an input may have for the kernel to hold them in its parameters, its loop over
  /// them unrolled (more: tables in device memory).
  static constexpr int inline_loads = 16;

  struct Load {
    Kokkos::Array<int, D> offset{};
  };
  struct CoefficientTerm {
    int input = 0, result = 0, field = -1;
    Kokkos::Array<int, D> offset{}, axis_factor{};
    Acc weight = 0;
  };
  struct Tables {
    Kokkos::View<const Load*, memory_space> loads;
    Kokkos::View<const Acc*, memory_space> weights;  ///< [load][result]
    Kokkos::View<const CoefficientTerm*, memory_space> terms;
  };

  template <class Pointwise, class Results, class Centres, class Point, bool WithPoint>
  KOKKOS_INLINE_FUNCTION static auto call(const Pointwise& f, const Results& r, const Centres& c, const Point& x,
                                          std::bool_constant<WithPoint>) {
    if constexpr (WithPoint) {
      return f(r, c, x);
    } else {
      return f(r, c);
    }
  }
};

template <class Types, int NIn, int NOut, class Pointwise, bool WithPoint, bool Inline>
struct FieldPointKernel {
  using T                            = typename Types::value_type;
  static constexpr int D             = Types::rank;
  static constexpr int NResults      = Types::results;
  using Acc                          = typename Types::Acc;
  using memory_space                 = typename Types::memory_space;
  using ExecSpace                    = typename Types::execution_space;
  using Tables                       = typename Types::Tables;
  using CoefficientTerm              = typename Types::CoefficientTerm;
  static constexpr int inline_loads  = Types::inline_loads;
  static constexpr int chunk         = Types::chunk;
  static constexpr bool checks_range = Types::checks_range;
  static constexpr int slots         = Inline ? NIn * inline_loads : 1;
  Kokkos::Array<impl::FieldRef<const T, D>, NIn> in;
  Kokkos::Array<impl::FieldRef<T, D>, NOut> out;
  Kokkos::Array<int, NIn + 1> load_begin{};
  Tables tables;
  // Inline: input i's loads at slots i * inline_loads ..., their offsets from the point
  // in the input's memory and one weight per result (the face rules read the tables).
  Kokkos::Array<int, slots> delta{};
  Kokkos::Array<Acc, slots * NResults + 1> weight{};
  Kokkos::View<const impl::FieldRef<const T, D>*, memory_space> coefficient_fields;
  Kokkos::Array<Kokkos::View<const impl::FieldRef<const T, 1>*, memory_space>, D> axis_factors;
  Kokkos::Array<int, D> extent{}, radius{};
  Kokkos::Array<int, 2 * D> rule{};
  Kokkos::Array<Acc, 2 * D> dirichlet_value{};
  Kokkos::Array<impl::FieldRef<const T, D>, 2 * D> dirichlet_field{};  ///< data null: the constant
  Pointwise pointwise;
  Kokkos::View<int, memory_space> overflow;  ///< half_t: 1 + the output given a value half cannot hold

  explicit FieldPointKernel(const Pointwise& p) : pointwise(p) {}

  /// The value at j, a point outside the grid along some axis (face conditions).
  KOKKOS_INLINE_FUNCTION Acc outside(const impl::FieldRef<const T, D>& f, const int* j) const {
    int k[D];
    int dirichlet = -1;
    for (int a = 0; a < D; ++a) {
      k[a] = j[a];
      if (j[a] >= 0 && j[a] < extent[a]) continue;
      const int side = j[a] < 0 ? 0 : 1, n = extent[a];
      switch (static_cast<FaceRule>(rule[2 * a + side])) {
        case FaceRule::periodic: k[a] = side == 0 ? j[a] + n : j[a] - n; break;
        case FaceRule::neumann: k[a] = side == 0 ? -1 - j[a] : 2 * n - 1 - j[a]; break;
        case FaceRule::reflect: k[a] = side == 0 ? -j[a] : 2 * (n - 1) - j[a]; break;
        case FaceRule::ghost: break;
        case FaceRule::dirichlet:
          if (dirichlet < 0) dirichlet = 2 * a + side;
          break;
      }
    }
    if (dirichlet >= 0) {
      const impl::FieldRef<const T, D>& g = dirichlet_field[dirichlet];
      if (g.data == nullptr) return dirichlet_value[dirichlet];
      for (int a = 0; a < D; ++a)
        k[a] = a == dirichlet / 2 ? 0 : (k[a] < 0 ? 0 : (k[a] >= extent[a] ? extent[a] - 1 : k[a]));
      return static_cast<Acc>(g.data[g.at(k)]);
    }
    return static_cast<Acc>(f.data[f.at(k)]);
  }

  KOKKOS_INLINE_FUNCTION Acc read(const impl::FieldRef<const T, D>& f, long base, const int* x,
                                  const Kokkos::Array<int, D>& offset, bool inside) const {
    if (inside) {
      long delta = 0;
      for (int a = 0; a < D; ++a) delta += offset[a] * f.stride[a];
      return static_cast<Acc>(f.data[base + delta]);
    }
    int j[D];
    for (int a = 0; a < D; ++a) j[a] = x[a] + offset[a];
    for (int a = 0; a < D; ++a) {
      if (j[a] < 0 || j[a] >= extent[a]) return outside(f, j);
    }
    return static_cast<Acc>(f.data[f.at(j)]);
  }

  /// One point. Inside: at least the radius from every face (every read direct, no face
  /// rule compiled in); otherwise each read checks its place.
  template <int Count>
  KOKKOS_INLINE_FUNCTION void add_loads_of(int first, const T* at, Kokkos::Array<Acc, NResults>& results) const {
    SPARSTENCIL_UNROLL
    for (int l = 0; l < Count; ++l) {
      const Acc v = static_cast<Acc>(at[delta[first + l]]);
      SPARSTENCIL_UNROLL
      for (int r = 0; r < NResults; ++r) results[r] += weight[(first + l) * NResults + r] * v;
    }
  }
  /// The loop for `count` in [Lo, Hi], found by bisection (a few uniform branches a point).
  template <int Lo, int Hi>
  KOKKOS_INLINE_FUNCTION void add_loads(int count, int first, const T* at,
                                        Kokkos::Array<Acc, NResults>& results) const {
    if constexpr (Lo == Hi) {
      add_loads_of<Lo>(first, at, results);
    } else {
      constexpr int mid = (Lo + Hi) / 2;
      if (count <= mid) {
        add_loads<Lo, mid>(count, first, at, results);
      } else {
        add_loads<mid + 1, Hi>(count, first, at, results);
      }
    }
  }

  /// `at_in`, `at_out`: the fields' elements at x.
  template <bool Inside>
  KOKKOS_INLINE_FUNCTION void point(const int* x, const Kokkos::Array<const T*, NIn>& at_in,
                                    const Kokkos::Array<T*, NOut>& at_out) const {
    constexpr bool inside = Inside;
    Kokkos::Array<Acc, NResults> results;
    for (int r = 0; r < NResults; ++r) results[r] = Acc(0);
    Kokkos::Array<Acc, NIn> centres;
    SPARSTENCIL_UNROLL
    for (int i = 0; i < NIn; ++i) {
      const impl::FieldRef<const T, D>& f = in[i];
      centres[i]                          = static_cast<Acc>(*at_in[i]);
      if constexpr (Inline && Inside) {
        // The loop for the input's exact count, fully unrolled: constant indices keep
        // the tables in the parameter bank, and no slot past the count is issued.
        add_loads<0, inline_loads>(load_begin[i + 1] - load_begin[i], i * inline_loads, at_in[i], results);
      } else {
        const long base = at_in[i] - f.data;
        for (int l = load_begin[i]; l < load_begin[i + 1]; ++l) {
          const Acc v = read(f, base, x, tables.loads(l).offset, inside);
          for (int r = 0; r < NResults; ++r) results[r] += tables.weights(l * NResults + r) * v;
        }
      }
    }
    for (std::size_t t = 0; t < tables.terms.extent(0); ++t) {
      const CoefficientTerm& term = tables.terms(t);
      Acc w                       = term.weight;
      if (term.field >= 0) {
        const impl::FieldRef<const T, D>& c = coefficient_fields(term.field);
        w *= static_cast<Acc>(c.data[c.at(x)]);
      }
      for (int a = 0; a < D; ++a) {
        if (term.axis_factor[a] >= 0) {
          const impl::FieldRef<const T, 1>& c = axis_factors[a](term.axis_factor[a]);
          w *= static_cast<Acc>(c.data[c.at(x + a)]);
        }
      }
      Acc v = 0;
      for (int i = 0; i < NIn; ++i) {
        if (i == term.input) v = read(in[i], in[i].at(x), x, term.offset, inside);
      }
      for (int r = 0; r < NResults; ++r) {
        if (r == term.result) results[r] += w * v;
      }
    }
    finish(x, results, centres, at_out);
  }

  /// The pointwise function at x and the outputs' values stored.
  KOKKOS_FORCEINLINE_FUNCTION void finish(const int* x, const Kokkos::Array<Acc, NResults>& results,
                                          const Kokkos::Array<Acc, NIn>& centres,
                                          const Kokkos::Array<T*, NOut>& at_out) const {
    Kokkos::Array<int, D> where;
    for (int a = 0; a < D; ++a) where[a] = x[a];
    const auto values = Types::call(pointwise, results, centres, where, std::bool_constant<WithPoint>{});
    for (int o = 0; o < NOut; ++o) {
      const T stored = static_cast<T>(values[o]);
      *at_out[o]     = stored;
      if constexpr (checks_range) {
        const float v = static_cast<float>(stored);
        if (!(v - v == 0.0f)) overflow() = o + 1;
      }
    }
  }

  int fast = D - 1, chunks = 1;  ///< the contiguous axis; chunks of a row (launch)

  KOKKOS_INLINE_FUNCTION void operator()(const typename Kokkos::TeamPolicy<ExecSpace>::member_type& team) const {
    int row         = team.league_rank() / chunks;
    const int begin = (team.league_rank() - row * chunks) * chunk;
    const int end   = begin + chunk < extent[fast] ? begin + chunk : extent[fast];
    int x[D];
    for (int k = 0; k < D; ++k) {  // the other axes, the one nearest the contiguous axis fastest
      const int a = fast == 0 ? k : D - 1 - k;
      if (a == fast) continue;
      x[a] = row % extent[a];
      row /= extent[a];
    }
    // Points of an inside row between radius and extent - radius along the contiguous
    // axis take the direct path; the rest apply the face rules.
    bool inside_row = true;
    for (int a = 0; a < D; ++a)
      inside_row = inside_row && (a == fast || (x[a] >= radius[a] && x[a] < extent[a] - radius[a]));
    int lo = begin, hi = begin;
    if (inside_row) {
      lo = begin > radius[fast] ? begin : radius[fast];
      hi = end < extent[fast] - radius[fast] ? end : extent[fast] - radius[fast];
      if (hi < lo) lo = hi = begin;
    }
    // Each field's element at column 0 of the row, and its stride along the row.
    x[fast] = 0;
    Kokkos::Array<const T*, NIn> row_in;
    Kokkos::Array<T*, NOut> row_out;
    for (int i = 0; i < NIn; ++i) row_in[i] = in[i].data + in[i].at(x);
    for (int o = 0; o < NOut; ++o) row_out[o] = out[o].data + out[o].at(x);
    const auto run = [&](int from, int to, auto inside) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, from, to), [&](int c) {
        int y[D];
        for (int a = 0; a < D; ++a) y[a] = a == fast ? c : x[a];
        Kokkos::Array<const T*, NIn> at_in;
        Kokkos::Array<T*, NOut> at_out;
        for (int i = 0; i < NIn; ++i) at_in[i] = row_in[i] + static_cast<long>(c) * in[i].stride[fast];
        for (int o = 0; o < NOut; ++o) at_out[o] = row_out[o] + static_cast<long>(c) * out[o].stride[fast];
        this->template point<decltype(inside)::value>(y, at_in, at_out);
      });
    };
    run(begin, lo, std::false_type{});
    run(lo, hi, std::true_type{});
    run(hi, end, std::false_type{});
  }
};

}  // namespace sparstencil::impl
