#pragma once
/// Field updates (docs/UPDATES.md): several stencil results over several input fields,
/// coefficient fields, face conditions and ghost layers, and a pointwise function giving
/// each output, all in one pass over the grid.
///
///   auto lap = sparstencil::presets::heat2d_laplacian();          // any Stencil<2>
///   sparstencil::FieldUpdate<2, 2, float> gray_scott(
///       {sparstencil::StencilOn<2>(lap, 0), sparstencil::StencilOn<2>(lap, 1)},
///       sparstencil::FaceConditions<2>(sparstencil::FaceCondition::neumann()));
///   gray_scott.run(space, sparstencil::fields(u, v), sparstencil::fields(u_next, v_next),
///       KOKKOS_LAMBDA(const Kokkos::Array<float, 2>& lap, const Kokkos::Array<float, 2>& c) {
///         const float uvv = c[0] * c[1] * c[1];
///         return Kokkos::Array<float, 2>{c[0] + dt * (du * lap[0] - uvv + f * (1 - c[0])),
///                                        c[1] + dt * (dv * lap[1] + uvv - (f + k) * c[1])};
///       });
///
/// Results that read the same input share its loads: each neighbour value is loaded once
/// and enters every result's sum. Sums are accumulated in accumulator_t<T> (float for
/// half_t and float, double for double) and the pointwise function receives and returns
/// that type.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "SparStencil_FaceConditions.hpp"
#include "SparStencil_GenericShapes.hpp"  // SPARSTENCIL_UNROLL
#include "SparStencil_Precision.hpp"
#include "SparStencil_UpdateModel.hpp"
#include "SparStencil_ViewChecks.hpp"
#include "SparStencil_Views.hpp"

namespace sparstencil {

/// A View with `width` ghost layers on both sides of each axis: the grid is the inner box,
/// the halo around it is the application's (read where a face is FaceRule::ghost).
template <class View>
struct Ghosted {
  View view;
  std::array<int, View::rank> width{};
};

template <class View>
Ghosted<View> with_ghosts(const View& padded, const std::array<int, View::rank>& width) {
  static_assert(Kokkos::is_view<View>::value, "sparstencil: with_ghosts takes a Kokkos::View");
  for (std::size_t a = 0; a < View::rank; ++a) {
    if (width[a] < 0 || 2 * static_cast<std::size_t>(width[a]) >= padded.extent(a)) {
      impl::fail("with_ghosts", "ghost width ", width[a], " along axis ", a, " does not fit View '", padded.label(),
                 "' of extents ", impl::extents_string(padded), ": the grid inside needs at least one point");
    }
  }
  return {padded, width};
}
template <class View>
Ghosted<View> with_ghosts(const View& padded, int width) {
  std::array<int, View::rank> w{};
  w.fill(width);
  return with_ghosts(padded, w);
}

namespace impl {

/// A field as the kernel reads it: its data, strides and ghost widths.
template <class T, int D>
struct FieldRef {
  T* data = nullptr;
  Kokkos::Array<long, D> stride{};
  Kokkos::Array<int, D> ghost{};

  /// Offset of grid point x (x_a may lie in the halo: -ghost_a <= x_a < n_a + ghost_a).
  KOKKOS_INLINE_FUNCTION long at(const int* x) const {
    long i = 0;
    for (int a = 0; a < D; ++a) i += static_cast<long>(x[a] + ghost[a]) * stride[a];
    return i;
  }
};

template <class View>
struct view_traits_of {
  using view = View;
  static View get(const View& v) { return v; }
  static std::array<int, View::rank> ghost(const View&) { return {}; }
};
template <class View>
struct view_traits_of<Ghosted<View>> {
  using view = View;
  static View get(const Ghosted<View>& g) { return g.view; }
  static std::array<int, View::rank> ghost(const Ghosted<View>& g) { return g.width; }
};

/// Asks for *p's line in L2 (CUDA; nothing elsewhere): the rows a walk reaches later than
/// its registers can hold.
KOKKOS_FORCEINLINE_FUNCTION void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

template <class X>
struct array_size {
  static constexpr int value = -1;
};
template <class X, std::size_t N>
struct array_size<Kokkos::Array<X, N>> {
  static constexpr int value = static_cast<int>(N);
};

}  // namespace impl

/// N fields of one value type, rank and memory space (Views or Ghosted Views), in order.
template <class V, int D, int N, class MemSpace>
struct FieldList {
  using value_type           = V;
  using memory_space         = MemSpace;
  static constexpr int count = N;
  Kokkos::Array<impl::FieldRef<V, D>, N> refs;
  std::array<std::array<int, D>, N> extents{};  ///< the grid's (padding excluded)
  std::array<std::array<int, D>, N> padded{};   ///< the View's
  std::array<std::string, N> labels;
};

/// The fields of an update, in order: Views, or Ghosted Views (with_ghosts).
template <class... Fields>
auto fields(const Fields&... f) {
  using First     = typename impl::view_traits_of<std::tuple_element_t<0, std::tuple<Fields...>>>::view;
  constexpr int D = static_cast<int>(First::rank);
  using V         = typename First::value_type;
  using Mem       = typename First::memory_space;
  static_assert((Kokkos::is_view<typename impl::view_traits_of<Fields>::view>::value && ...),
                "sparstencil: fields() takes Kokkos::Views or with_ghosts(View, width)");
  static_assert(((static_cast<int>(impl::view_traits_of<Fields>::view::rank) == D) && ...),
                "sparstencil: the fields of an update must have one rank");
  static_assert((std::is_same_v<typename impl::view_traits_of<Fields>::view::value_type, V> && ...),
                "sparstencil: the fields of one list must have one value type (const or not alike)");
  static_assert((std::is_same_v<typename impl::view_traits_of<Fields>::view::memory_space, Mem> && ...),
                "sparstencil: the fields of an update must live in one memory space");
  static_assert(is_supported_scalar<std::remove_const_t<V>>,
                "sparstencil: the value type must be Kokkos::Experimental::half_t, float or double");
  FieldList<V, D, static_cast<int>(sizeof...(Fields)), Mem> list;
  int k    = 0;
  auto add = [&](const auto& field) {
    using Traits     = impl::view_traits_of<std::decay_t<decltype(field)>>;
    const auto view  = Traits::get(field);
    const auto ghost = Traits::ghost(field);
    // Checked before any is stored: with the throw inside the storing loop, g++ 12 at -O2
    // and above warns (-Warray-bounds) of subscripts past D on the paths it cannot rule out.
    for (int a = 0; a < D; ++a) {
      if (view.extent(a) > static_cast<std::size_t>(INT32_MAX)) {
        impl::fail("fields", "extent ", view.extent(a), " along axis ", a, " of View '", view.label(),
                   "' exceeds 2^31 - 1");
      }
    }
    list.refs[k].data = view.data();
    for (int a = 0; a < D; ++a) {
      list.refs[k].stride[a] = static_cast<long>(view.stride(a));
      list.refs[k].ghost[a]  = ghost[a];
      list.padded[k][a]      = static_cast<int>(view.extent(a));
      list.extents[k][a]     = static_cast<int>(view.extent(a)) - 2 * ghost[a];
    }
    list.labels[k] = view.label();
    ++k;
  };
  (add(f), ...);
  return list;
}

/// An update of `NResults` stencil results: see the file's comment. T is the fields' value
/// type (coefficient fields, axis factors and dirichlet values have it too).
template <int D, int NResults, class T, class ExecSpace = Kokkos::DefaultExecutionSpace>
class FieldUpdate {
  static_assert(NResults >= 0, "sparstencil: the number of stencil results must not be negative");
  static_assert(is_supported_scalar<T>,
                "sparstencil: the value type must be Kokkos::Experimental::half_t, float or double");

 public:
  using Acc = accumulator_t<T>;
  /// half_t outputs are checked for values half cannot hold (one flag the kernel sets):
  /// past 65504 or NaN where half_t is 16-bit, inf or NaN where it is float (host builds,
  /// where float outputs are half_t outputs too: the two are one type).
  static constexpr bool checks_range = std::is_same_v<T, Kokkos::Experimental::half_t>;
  using memory_space                 = typename ExecSpace::memory_space;
  /// Coefficient fields (the grid's extents), axis factors (1-D, their axis' extent) and
  /// dirichlet value Views (the grid's extents, 1 along the face's axis).
  using CoefficientView = Kokkos::View<const T*, Kokkos::LayoutStride, memory_space>;
  using FieldView       = Kokkos::View<typename impl::grid_data<const T, D>::type, Kokkos::LayoutStride, memory_space>;

  FieldUpdate(const std::array<StencilOn<D>, NResults>& results, const FaceConditions<D>& faces = {}) : m_faces(faces) {
    m_faces.validate("FieldUpdate");
    m_shape.results.assign(results.begin(), results.end());
    m_radius = m_shape.radius();
    build_tables();
    if constexpr (checks_range) m_overflow = Kokkos::View<int, memory_space>("sparstencil::FieldUpdate::overflow");
  }

  /// The coefficient fields the results' terms name by index (StencilOn::times_field).
  FieldUpdate& coefficient_fields(const std::vector<FieldView>& views) {
    m_fields                   = views;
    m_shape.coefficient_fields = static_cast<int>(m_fields.size());
    m_field_refs               = refs_of<D>("sparstencil::FieldUpdate::coefficient_fields", m_fields);
    return *this;
  }
  template <class... Views>
  FieldUpdate& coefficient_fields(const Views&... views) {
    return coefficient_fields(std::vector<FieldView>{FieldView(views)...});
  }
  /// The factors along `axis` the results' terms name by index (times_axis_factor).
  FieldUpdate& axis_factors(int axis, const std::vector<CoefficientView>& views) {
    if (axis < 0 || axis >= D) impl::fail("FieldUpdate::axis_factors", "axis ", axis, " does not exist in ", D, "-D");
    m_factors[axis]            = views;
    m_shape.axis_factors[axis] = static_cast<int>(views.size());
    m_factor_refs[axis]        = refs_of<1>("sparstencil::FieldUpdate::axis_factors", m_factors[axis]);
    return *this;
  }
  template <class... Views>
  FieldUpdate& axis_factors(int axis, const Views&... views) {
    return axis_factors(axis, std::vector<CoefficientView>{CoefficientView(views)...});
  }
  /// Values for a dirichlet face, one per face point: a View with the grid's extents but
  /// 1 along `axis`.
  template <class View>
  FieldUpdate& dirichlet_values(int axis, int side, const View& values) {
    if (m_faces.face(axis, side).rule != FaceRule::dirichlet) {
      impl::fail("FieldUpdate::dirichlet_values", "face (axis ", axis, ", side ", side, ") is ",
                 to_string(m_faces.face(axis, side).rule), ", not dirichlet");
    }
    if (values.extent(axis) != 1) {
      impl::fail("FieldUpdate::dirichlet_values", "the values of face (axis ", axis, ", side ", side, ") have extents ",
                 impl::extents_string(values), ": expected 1 along axis ", axis);
    }
    m_dirichlet[axis][side] = FieldView(values);
    return *this;
  }

  /// Points a work item walks along the slowest axis in the streaming pass (default 16);
  /// 0: no streaming pass, every point a work item.
  FieldUpdate& stream_rows(int rows) {
    if (rows < 0)
      impl::fail("FieldUpdate::stream_rows", "rows ", rows, " is negative (0 turns the streaming pass off)");
    m_stream_rows = rows;
    return *this;
  }

  const FaceConditions<D>& faces() const { return m_faces; }
  const UpdateShape<D>& shape() const { return m_shape; }

  /// One update of every grid point of `outputs` from `inputs`, asynchronous on `space`.
  /// `pointwise(results, centres)` or `pointwise(results, centres, x)` (Kokkos::Array<Acc,
  /// NResults>, Kokkos::Array<Acc, inputs>, Kokkos::Array<int, D>) returns
  /// Kokkos::Array<Acc, outputs>. Throws naming the problem for fields of other extents,
  /// ghost layers thinner than the radius at a ghost face, coefficient or dirichlet Views
  /// of the wrong extents, an output that shares memory with another field, and (half_t
  /// outputs) a value beyond half's range.
  template <class VIn, int NIn, class VOut, int NOut, class Pointwise>
  void run(const ExecSpace& space, const FieldList<VIn, D, NIn, typename ExecSpace::memory_space>& inputs,
           const FieldList<VOut, D, NOut, typename ExecSpace::memory_space>& outputs,
           const Pointwise& pointwise) const {
    static_assert(std::is_same_v<std::remove_const_t<VIn>, T> && std::is_same_v<VOut, T>,
                  "sparstencil: the fields' value type must be the update's T (outputs not const)");
    using Results             = Kokkos::Array<Acc, NResults>;
    using Centres             = Kokkos::Array<Acc, NIn>;
    using Point               = Kokkos::Array<int, D>;
    constexpr bool with_point = std::is_invocable_v<const Pointwise&, const Results&, const Centres&, const Point&>;
    static_assert(with_point || std::is_invocable_v<const Pointwise&, const Results&, const Centres&>,
                  "sparstencil: the pointwise function must be callable as f(results, centres) or f(results, "
                  "centres, x) with Kokkos::Array<Acc, stencil results>, Kokkos::Array<Acc, inputs> and "
                  "Kokkos::Array<int, D> (Acc: accumulator_t of the fields' type)");
    using Returned = std::decay_t<decltype(call(pointwise, std::declval<Results>(), std::declval<Centres>(),
                                                std::declval<Point>(), std::bool_constant<with_point>{}))>;
    static_assert(impl::array_size<Returned>::value == NOut,
                  "sparstencil: the pointwise function must return Kokkos::Array<Acc, N> with one value per "
                  "output field");
    check(inputs, outputs);
    Kokkos::Profiling::pushRegion("sparstencil::FieldUpdate::run");
    if (!run_streamed<with_point>(space, inputs, outputs, pointwise)) {
      // Inline tables: at most inline_loads an input, memory distances in 32 bits.
      bool fits = true;
      for (std::size_t i = 0; i + 1 < m_load_begin.size(); ++i)
        fits = fits && m_load_begin[i + 1] - m_load_begin[i] <= inline_loads;
      for (int i = 0; fits && i < NIn && i + 1 < static_cast<int>(m_load_begin.size()); ++i) {
        for (int l = m_load_begin[i]; l < m_load_begin[i + 1]; ++l) {
          fits = fits && fits_int(distance(m_host_loads[l].offset, inputs.refs[i].stride));
        }
      }
      if (fits) {
        launch(space, outputs, kernel_for<true, with_point>(inputs, outputs, pointwise));
      } else {
        launch(space, outputs, kernel_for<false, with_point>(inputs, outputs, pointwise));
      }
    }
    Kokkos::Profiling::popRegion();
    check_overflow(space, outputs);
  }

  // The parts below are public only because nvcc's kernel registration names their types.
  /// Light-weight launches: the kernel (its tables inline, under 4 KiB) goes in the launch's
  /// parameters, not through Kokkos' constant-memory copy and its event per launch.
  using LightWeight = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;

  /// Rows of the grid along its contiguous axis, in chunks of `chunk` points: a team a
  /// chunk, its threads on consecutive points (coalesced on GPUs, a contiguous loop on CPUs).
  static constexpr int chunk = 1024;

  /// The streaming pass where the shape fits one of its windows (and 32-bit distances);
  /// false, nothing launched, otherwise.
  template <bool WithPoint, class VIn, int NIn, class VOut, int NOut, class Pointwise>
  bool run_streamed(const ExecSpace& space, const FieldList<VIn, D, NIn, memory_space>& inputs,
                    const FieldList<VOut, D, NOut, memory_space>& outputs, const Pointwise& pointwise) const {
    if constexpr (D < 2 || NResults == 0) {
      return false;
    } else {
      if (m_stream_rows == 0 || m_tables.terms.extent(0) != 0) return false;
      const int fast = fast_axis(outputs), stream = fast == 0 ? D - 1 : 0;
      if (outputs.extents[0][stream] > INT32_MAX / 2) return false;  // a walk's rows stay within int
      // Each result's cross-sections (its offsets with the streaming axis' part dropped);
      // star shapes (reach along the streaming axis only at the zero cross-section) list
      // the zero one first.
      auto cross_of = [&](Offset<D> offset) {
        offset[stream] = 0;
        return offset;
      };
      bool star = true;
      for (int r = 0; r < NResults; ++r) {
        for (const Term<D>& term : m_shape.results[r].stencil().terms()) {
          star = star && (term.offset[stream] == 0 || cross_of(term.offset) == Offset<D>{});
        }
      }
      std::array<std::vector<Offset<D>>, NResults> cross;
      for (int r = 0; star && r < NResults; ++r) cross[r].push_back(Offset<D>{});
      int k_max = 0, r_max = 0;
      for (int r = 0; r < NResults; ++r) {
        for (const Term<D>& term : m_shape.results[r].stencil().terms()) {
          if (std::find(cross[r].begin(), cross[r].end(), cross_of(term.offset)) == cross[r].end()) {
            cross[r].push_back(cross_of(term.offset));
          }
          r_max = std::max(r_max, std::abs(term.offset[stream]));
        }
        k_max = std::max(k_max, static_cast<int>(cross[r].size()));
      }
      auto launch_window = [&](auto window) {
        using Win       = decltype(window);
        using Pass      = Streamed<NIn, NOut, Pointwise, WithPoint, Win>;
        constexpr int K = Pass::K, R = Pass::R, W = Pass::W, C = Pass::C;
        Pass s(kernel_for<false, WithPoint>(inputs, outputs, pointwise));
        for (int r = 0; r < NResults; ++r) {
          const int i = m_shape.results[r].input();
          s.source[r] = s.kernel.in[i];
          for (std::size_t k = 0; k < cross[r].size(); ++k) {
            const long delta = distance(cross[r][k], inputs.refs[i].stride);
            if (!fits_int(delta)) return false;
            s.cross_delta[r * K + k] = static_cast<int>(delta);
          }
          for (const Term<D>& term : m_shape.results[r].stencil().terms()) {
            const auto k = std::find(cross[r].begin(), cross[r].end(), cross_of(term.offset)) - cross[r].begin();
            const auto at =
                Win::star ? (k == 0 ? term.offset[stream] + R : W + k - 1) : k * W + term.offset[stream] + R;
            s.cross_weight[r * C + at] += static_cast<Acc>(term.weight);
          }
        }
        const std::array<int, D> n = outputs.extents[0];
        s.stream = stream, s.rows = std::min(m_stream_rows, n[stream]);  // (rows + a row within int)
        for (int a = 0, p = 1; a < D; ++a) s.order[a == fast ? 0 : (a == stream ? D - 1 : p++)] = a;
        // The box the walks cover: every read inside the grid, the window's included (its
        // radius along the streaming axis may pass the stencils').
        std::array<int, D> reach = m_radius;
        reach[stream]            = R;
        bool box                 = true;
        for (int a = 0; a < D; ++a) box = box && n[a] > 2 * reach[a];
        for (int a = 0; box && a < D; ++a) s.lo[a] = reach[a], s.count[a] = n[a] - 2 * reach[a];
        s.walks = box ? (static_cast<long>(s.count[stream]) + s.rows - 1) / s.rows : 0;
        for (int a = 0; a < D; ++a) s.walks *= a == stream ? 1 : s.count[a];
        for (int p = 0; p < D; ++p) {
          s.slab[p] = 1;
          for (int q = 0; q < D; ++q) {
            const int a = s.order[q];
            s.slab[p] *= q < p ? s.count[a] : (q == p ? n[a] - s.count[a] : n[a]);
          }
          s.frame += s.slab[p];
        }
        using Policy = Kokkos::RangePolicy<ExecSpace, LightWeight, Kokkos::IndexType<long>>;
        Kokkos::parallel_for("sparstencil::field_update_streamed", Policy(space, 0, s.frame + s.walks), s);
        return true;
      };
      if (star && k_max <= 3 && r_max <= 1) return launch_window(Window<3, 1, true>{});
      if (star && k_max <= 5 && r_max <= 1) return launch_window(Window<5, 1, true>{});
      if (star && k_max <= 5 && r_max <= 2) return launch_window(Window<5, 2, true>{});
      if (k_max <= 3 && r_max <= 1) return launch_window(Window<3, 1>{});
      if (k_max <= 5 && r_max <= 1) return launch_window(Window<5, 1>{});
      if (k_max <= 5 && r_max <= 2) return launch_window(Window<5, 2>{});
      if (k_max <= 9 && r_max <= 1) return launch_window(Window<9, 1>{});
      return false;
    }
  }

  /// The memory distance (elements) of a grid offset in a field of these strides.
  template <class Offsets>
  static long distance(const Offsets& offset, const Kokkos::Array<long, D>& stride) {
    long d = 0;
    for (int a = 0; a < D; ++a) d += offset[a] * stride[a];
    return d;
  }
  static bool fits_int(long d) { return d >= INT32_MIN && d <= INT32_MAX; }

  /// The axis along which the outputs' elements are contiguous (first or last).
  template <class VOut, int NOut>
  static int fast_axis(const FieldList<VOut, D, NOut, memory_space>& outputs) {
    return D > 1 && outputs.refs[0].stride[0] < outputs.refs[0].stride[D - 1] ? 0 : D - 1;
  }

  template <class VOut, int NOut, class Kernel>
  static void launch(const ExecSpace& space, const FieldList<VOut, D, NOut, memory_space>& outputs, Kernel kernel) {
    const std::array<int, D> n = outputs.extents[0];
    kernel.fast                = fast_axis(outputs);
    kernel.chunks              = (n[kernel.fast] + chunk - 1) / chunk;
    long teams                 = kernel.chunks;
    for (int a = 0; a < D; ++a) teams *= a == kernel.fast ? 1 : n[a];
    if (teams > INT32_MAX) impl::fail("FieldUpdate::run", "the grid ", impl::tuple_string(n), " has too many rows");
    using Policy        = Kokkos::TeamPolicy<ExecSpace, LightWeight>;
    const int team_size = std::min(256, Policy(space, 1, Kokkos::AUTO).team_size_max(kernel, Kokkos::ParallelForTag()));
    Kokkos::parallel_for("sparstencil::field_update", Policy(space, static_cast<int>(teams), team_size), kernel);
  }

  /// half_t outputs: the overflow flag the kernel set, an error naming the output.
  template <class VOut, int NOut>
  void check_overflow(const ExecSpace& space, const FieldList<VOut, D, NOut, memory_space>& outputs) const {
    if constexpr (checks_range) {
      int overflowed = 0;
      Kokkos::deep_copy(space, overflowed, m_overflow);
      space.fence();
      if (overflowed) {
        Kokkos::deep_copy(space, m_overflow, 0);
        impl::fail("FieldUpdate::run", "half_t output ", overflowed - 1, " ('", outputs.labels[overflowed - 1],
                   "') received a value that is not finite: the pointwise function's result ",
                   has_distinct_half ? "exceeds half's range (65504) or is NaN"
                                     : "is inf or NaN (half_t is float in this Kokkos build)");
      }
    }
  }

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

  /// Every neighbour value each input is read at by a constant-weight term, once, with
  /// one weight per result (0 where a result does not read it); the coefficient terms on
  /// their own.
  void build_tables() {
    std::vector<std::pair<int, Offset<D>>> keys;
    for (const StencilOn<D>& s : m_shape.results) {
      for (std::size_t t = 0; t < s.stencil().size(); ++t) {
        if (s.coefficients()[t].constant()) keys.push_back({s.input(), s.stencil().terms()[t].offset});
      }
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    const int max_input =
        m_shape.results.empty()
            ? 0
            : std::max_element(m_shape.results.begin(), m_shape.results.end(), [](const auto& a, const auto& b) {
                return a.input() < b.input();
              })->input();
    m_load_begin.assign(max_input + 2, 0);
    std::vector<Load> loads(keys.size());
    std::vector<Acc> weights(keys.size() * NResults, Acc(0));
    std::vector<CoefficientTerm> terms;
    for (std::size_t l = 0; l < keys.size(); ++l) {
      for (int a = 0; a < D; ++a) loads[l].offset[a] = keys[l].second[a];
      ++m_load_begin[keys[l].first + 1];
    }
    for (std::size_t i = 1; i < m_load_begin.size(); ++i) m_load_begin[i] += m_load_begin[i - 1];
    for (int k = 0; k < NResults; ++k) {
      const StencilOn<D>& s = m_shape.results[k];
      for (std::size_t t = 0; t < s.stencil().size(); ++t) {
        const Term<D>& term     = s.stencil().terms()[t];
        const Coefficient<D>& c = s.coefficients()[t];
        if (c.constant()) {
          const auto l = std::lower_bound(keys.begin(), keys.end(), std::pair{s.input(), term.offset}) - keys.begin();
          weights[l * NResults + k] = static_cast<Acc>(term.weight);
        } else {
          CoefficientTerm ct;
          ct.input = s.input(), ct.result = k, ct.field = c.field, ct.weight = static_cast<Acc>(term.weight);
          for (int a = 0; a < D; ++a) ct.offset[a] = term.offset[a], ct.axis_factor[a] = c.axis_factor[a];
          terms.push_back(ct);
        }
      }
    }
    m_host_loads     = loads;
    m_host_weights   = weights;
    m_tables.loads   = upload("sparstencil::FieldUpdate::loads", loads);
    m_tables.weights = upload("sparstencil::FieldUpdate::weights", weights);
    m_tables.terms   = upload("sparstencil::FieldUpdate::coefficient_terms", terms);
  }

  template <class X>
  static Kokkos::View<const X*, memory_space> upload(const std::string& label, const std::vector<X>& host) {
    Kokkos::View<X*, memory_space> device(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), host.size());
    Kokkos::View<const X*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> source(host.data(), host.size());
    Kokkos::deep_copy(device, source);
    return device;
  }

  template <class Pointwise, class Results, class Centres, class Point, bool WithPoint>
  KOKKOS_INLINE_FUNCTION static auto call(const Pointwise& f, const Results& r, const Centres& c, const Point& x,
                                          std::bool_constant<WithPoint>) {
    if constexpr (WithPoint) {
      return f(r, c, x);
    } else {
      return f(r, c);
    }
  }

  /// The pass over the grid: one point a work item.
  /// Loads an input may have for the kernel to hold them in its parameters, its loop over
  /// them unrolled (more: tables in device memory).
  static constexpr int inline_loads = 16;

  template <int NIn, int NOut, class Pointwise, bool WithPoint, bool Inline>
  struct Kernel {
    static constexpr int slots = Inline ? NIn * inline_loads : 1;
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

    explicit Kernel(const Pointwise& p) : pointwise(p) {}

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
      const auto values = call(pointwise, results, centres, where, std::bool_constant<WithPoint>{});
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

  /// The streaming pass, for shapes whose constant-weight stencils fit a window of K
  /// cross-sections (offsets along every axis but the slowest) by 2R + 1 rows along the
  /// slowest axis, with no coefficient terms. A work item walks `rows` points of the box
  /// inside the radius along the slowest axis; each result keeps its input's values at its
  /// cross-sections over the last 2R + 1 rows in registers, so a point costs K loads a
  /// result, not one a term, and every distance is fixed for the walk. Points outside the
  /// box (the frame) follow, one a work item, with the face rules.
  /// Star: cross-section 0 is the zero offset and the others are read on the walk's row
  /// only (star stencils): they are loaded for the row being computed, not kept.
  template <int K, int R, bool Star = false>
  struct Window {
    static constexpr int cross = K, radius = R;
    static constexpr bool star = Star;
  };

  template <int NIn, int NOut, class Pointwise, bool WithPoint, class Win>
  struct Streamed {
    static constexpr int K = Win::cross, R = Win::radius, W = 2 * Win::radius + 1;
    static constexpr bool Star = Win::star;
    static constexpr int Q     = Star ? W : K * W;          ///< values a result keeps
    static constexpr int C     = Star ? W + K - 1 : K * W;  ///< weights a result has
    /// Rows between the row a step loads and the one it asks L2 for: two walks of the
    /// default length ahead (perf_tests/RESULTS.md, 2026-11-24, 282c474).
    static constexpr int ahead = 32;
    Kernel<NIn, NOut, Pointwise, WithPoint, false> kernel;       ///< the fields, the face rules, the pointwise function
    Kokkos::Array<impl::FieldRef<const T, D>, NResults> source;  ///< each result's input
    Kokkos::Array<int, NResults * K> cross_delta{};              ///< [result][k]: memory distance in its input
    /// [result][k][row offset + R]; Star: [result][row offset + R] of cross-section 0,
    /// then [result][W + k - 1] of cross-section k's row
    Kokkos::Array<Acc, NResults * C> cross_weight{};
    int stream = 0, rows = 1;                      ///< the slowest axis; points a walk covers
    Kokkos::Array<int, D> order{}, lo{}, count{};  ///< axes fastest first (stream last); the box inside
    long walks = 0, frame = 0;                     ///< work items walking the box; points outside it
    Kokkos::Array<long, D> slab{};  ///< frame points with axis order[p] outside the box, order[q < p] inside

    explicit Streamed(const Kernel<NIn, NOut, Pointwise, WithPoint, false>& k) : kernel(k) {}

    /// A walk's state (indexed by constants only, so that it lives in registers).
    struct Walk {
      Kokkos::Array<Acc, NResults * Q> queue;  ///< [result][k][row slot]
      Kokkos::Array<const T*, NResults> lead;  ///< each result's input at the next row to load
      Kokkos::Array<const T*, NIn> centre;
      Kokkos::Array<T*, NOut> out;
      Kokkos::Array<int, D>
          x{};  ///< the point; x[stream] advances (every axis set: value-initialised so the compiler need not prove it)
    };

    /// x with its streaming coordinate set to `row`.
    KOKKOS_FORCEINLINE_FUNCTION Kokkos::Array<int, D> at_row(const Kokkos::Array<int, D>& x, int row) const {
      Kokkos::Array<int, D> y;
      SPARSTENCIL_UNROLL
      for (int a = 0; a < D; ++a) y[a] = a == stream ? row : x[a];
      return y;
    }

    /// Loads each result's cross-sections of the row `lead` points at into `slot`.
    KOKKOS_FORCEINLINE_FUNCTION void load_row(Walk& w, int slot) const {
      SPARSTENCIL_UNROLL
      for (int r = 0; r < NResults; ++r) {
        SPARSTENCIL_UNROLL
        for (int k = 0; k < (Star ? 1 : K); ++k) {
          w.queue[r * Q + k * W + slot] = static_cast<Acc>(w.lead[r][cross_delta[r * K + k]]);
        }
        w.lead[r] += source[r].stride[stream];
      }
    }

    /// One point of a walk; Phase: its row's place in the queue's cycle.
    template <int Phase>
    KOKKOS_FORCEINLINE_FUNCTION void step(Walk& w, int row) const {
      if (row + ahead < lo[stream] + count[stream]) {
        SPARSTENCIL_UNROLL
        for (int r = 0; r < NResults; ++r) impl::prefetch_l2(w.lead[r] + ahead * source[r].stride[stream]);
      }
      load_row(w, (Phase + 2 * R) % W);
      Kokkos::Array<Acc, NResults> results;
      SPARSTENCIL_UNROLL
      for (int r = 0; r < NResults; ++r) {
        Acc sum = 0;
        if constexpr (Star) {
          SPARSTENCIL_UNROLL
          for (int d = 0; d < W; ++d) sum += cross_weight[r * C + d] * w.queue[r * Q + (Phase + d) % W];
          const T* on_row = w.lead[r] - (R + 1) * source[r].stride[stream];  // (lead has passed row + R)
          SPARSTENCIL_UNROLL
          for (int k = 1; k < K; ++k)
            sum += cross_weight[r * C + W + k - 1] * static_cast<Acc>(on_row[cross_delta[r * K + k]]);
        } else {
          SPARSTENCIL_UNROLL
          for (int k = 0; k < K; ++k) {
            SPARSTENCIL_UNROLL
            for (int d = 0; d < W; ++d)
              sum += cross_weight[(r * K + k) * W + d] * w.queue[(r * K + k) * W + (Phase + d) % W];
          }
        }
        results[r] = sum;
      }
      Kokkos::Array<Acc, NIn> centres;
      SPARSTENCIL_UNROLL
      for (int i = 0; i < NIn; ++i) {
        centres[i] = static_cast<Acc>(*w.centre[i]);
        w.centre[i] += kernel.in[i].stride[stream];
      }
      kernel.finish(at_row(w.x, row).data(), results, centres, w.out);
      SPARSTENCIL_UNROLL
      for (int o = 0; o < NOut; ++o) w.out[o] += kernel.out[o].stride[stream];
    }

    /// Rows [row, end) of the walk, the queue's cycle unrolled.
    template <std::size_t... Phase>
    KOKKOS_FORCEINLINE_FUNCTION void walk(Walk& w, int row, int end, std::index_sequence<Phase...>) const {
      while (((row < end && (step<static_cast<int>(Phase)>(w, row++), true)) && ...)) {
      }
    }

    /// Items [0, walks) walk the box, the rest are the frame's points.
    KOKKOS_INLINE_FUNCTION void operator()(long item) const {
      if (item >= walks) {
        frame_point(item - walks);
        return;
      }
      Walk w;
      int place[D];  // the walk's first point along order[p]
      SPARSTENCIL_UNROLL
      for (int p = 0; p + 1 < D; ++p) {
        place[p] = static_cast<int>(item % count[order[p]]);
        item /= count[order[p]];
      }
      place[D - 1] = static_cast<int>(item) * rows;
      SPARSTENCIL_UNROLL
      for (int a = 0; a < D; ++a) {
        SPARSTENCIL_UNROLL
        for (int p = 0; p < D; ++p) {
          if (order[p] == a) w.x[a] = lo[a] + place[p];
        }
      }
      const int row = lo[stream] + place[D - 1];
      const int end = row + rows < lo[stream] + count[stream] ? row + rows : lo[stream] + count[stream];
      const Kokkos::Array<int, D> first = at_row(w.x, row - R);
      SPARSTENCIL_UNROLL
      for (int r = 0; r < NResults; ++r) w.lead[r] = source[r].data + source[r].at(first.data());
      SPARSTENCIL_UNROLL
      for (int i = 0; i < NIn; ++i) w.centre[i] = kernel.in[i].data + kernel.in[i].at(w.x.data());
      SPARSTENCIL_UNROLL
      for (int o = 0; o < NOut; ++o) w.out[o] = kernel.out[o].data + kernel.out[o].at(w.x.data());
      SPARSTENCIL_UNROLL
      for (int slot = 0; slot < 2 * R; ++slot) load_row(w, slot);
      walk(w, row, end, std::make_index_sequence<W>{});
    }

    /// Frame point t: slab p (axis order[p] outside the box, order[q < p] inside, the rest
    /// anywhere), decoded fastest axis first.
    KOKKOS_INLINE_FUNCTION void frame_point(long t) const {
      int p = 0;
      while (p + 1 < D && t >= slab[p]) t -= slab[p++];
      int x[D];
      for (int q = 0; q < D; ++q) {
        const int a = order[q];
        const int n = kernel.extent[a];
        const int e = q < p ? count[a] : (q == p ? n - count[a] : n);
        const int c = static_cast<int>(t % e);
        t /= e;
        x[a] = q < p ? lo[a] + c : (q == p && c >= lo[a] ? c + count[a] : c);
      }
      Kokkos::Array<const T*, NIn> at_in;
      Kokkos::Array<T*, NOut> at_out;
      for (int i = 0; i < NIn; ++i) at_in[i] = kernel.in[i].data + kernel.in[i].at(x);
      for (int o = 0; o < NOut; ++o) at_out[o] = kernel.out[o].data + kernel.out[o].at(x);
      kernel.template point<false>(x, at_in, at_out);
    }
  };

  template <bool Inline, bool WithPoint, class VIn, int NIn, class VOut, int NOut, class Pointwise>
  Kernel<NIn, NOut, Pointwise, WithPoint, Inline> kernel_for(const FieldList<VIn, D, NIn, memory_space>& inputs,
                                                             const FieldList<VOut, D, NOut, memory_space>& outputs,
                                                             const Pointwise& pointwise) const {
    Kernel<NIn, NOut, Pointwise, WithPoint, Inline> k(pointwise);
    for (int i = 0; i < NIn; ++i) {
      k.in[i].data        = inputs.refs[i].data;
      k.in[i].stride      = inputs.refs[i].stride;
      k.in[i].ghost       = inputs.refs[i].ghost;
      k.load_begin[i + 1] = m_load_begin[std::min<std::size_t>(i + 1, m_load_begin.size() - 1)];
      for (int l = k.load_begin[i]; Inline && l < k.load_begin[i + 1]; ++l) {
        const int slot = i * inline_loads + (l - k.load_begin[i]);
        k.delta[slot] =
            static_cast<int>(distance(m_host_loads[l].offset, inputs.refs[i].stride));  // (range checked by run)
        for (int r = 0; r < NResults; ++r) k.weight[slot * NResults + r] = m_host_weights[l * NResults + r];
      }
    }
    k.out                = outputs.refs;
    k.tables             = m_tables;
    k.overflow           = m_overflow;
    k.coefficient_fields = m_field_refs;
    k.axis_factors       = m_factor_refs;
    for (int a = 0; a < D; ++a) {
      k.extent[a] = outputs.extents[0][a];
      k.radius[a] = m_radius[a];
      for (int s = 0; s < 2; ++s) {
        k.rule[2 * a + s]            = static_cast<int>(m_faces.face(a, s).rule);
        k.dirichlet_value[2 * a + s] = static_cast<Acc>(m_faces.face(a, s).value);
        if (m_dirichlet[a][s].data()) k.dirichlet_field[2 * a + s] = ref_of<D>(m_dirichlet[a][s]);
      }
    }
    return k;
  }

  template <int R, class View>
  static impl::FieldRef<const T, R> ref_of(const View& v) {
    impl::FieldRef<const T, R> r;
    r.data = v.data();
    for (int a = 0; a < R; ++a) r.stride[a] = static_cast<long>(v.stride(a));
    return r;
  }
  template <int R, class View>
  Kokkos::View<const impl::FieldRef<const T, R>*, memory_space> refs_of(const std::string& label,
                                                                        const std::vector<View>& views) const {
    std::vector<impl::FieldRef<const T, R>> refs;
    for (const View& v : views) refs.push_back(ref_of<R>(v));
    return upload(label, refs);
  }

  template <class VIn, int NIn, class VOut, int NOut>
  void check(const FieldList<VIn, D, NIn, memory_space>& inputs,
             const FieldList<VOut, D, NOut, memory_space>& outputs) const {
    const char* fn       = "FieldUpdate::run";
    UpdateShape<D> shape = m_shape;
    shape.inputs = NIn, shape.outputs = NOut;
    shape.validate(fn);
    for (int i = 0; i < NIn; ++i) {  // before the extents: a null View has extents 0
      if (!inputs.refs[i].data)
        impl::fail(fn, "input ", i, " ('", inputs.labels[i], "') holds no data (a null pointer)");
    }
    for (int o = 0; o < NOut; ++o) {
      if (!outputs.refs[o].data)
        impl::fail(fn, "output ", o, " ('", outputs.labels[o], "') holds no data (a null pointer)");
    }
    const std::array<int, D> n = outputs.extents[0];
    auto field_name            = [](const char* kind, int i, const std::string& label) {
      return std::string(kind) + " " + std::to_string(i) + (label.empty() ? "" : " ('" + label + "')");
    };
    auto same_extents = [&](const char* kind, int i, const std::string& label, const std::array<int, D>& e) {
      if (e != n) {
        impl::fail(fn, field_name(kind, i, label), " has grid extents ", impl::tuple_string(e), " but output 0 has ",
                   impl::tuple_string(n), ": every field of an update covers one grid");
      }
    };
    for (int i = 0; i < NIn; ++i) same_extents("input", i, inputs.labels[i], inputs.extents[i]);
    for (int o = 0; o < NOut; ++o) same_extents("output", o, outputs.labels[o], outputs.extents[o]);
    for (int a = 0; a < D; ++a) {
      // A read r past a face maps inside where the axis has r points (a wrap, or a mirror
      // about the face half a cell out: a one-cell slab under radius-1 neumann faces), r + 1
      // for a mirror about the end point (reflect).
      bool ghost = false;
      int needs  = 0;
      for (int s = 0; s < 2; ++s) {
        const FaceRule rule = m_faces.face(a, s).rule;
        ghost               = ghost || rule == FaceRule::ghost;
        if (rule == FaceRule::periodic || rule == FaceRule::neumann) needs = std::max(needs, m_radius[a]);
        if (rule == FaceRule::reflect) needs = std::max(needs, m_radius[a] + 1);
      }
      if (n[a] < needs) {
        impl::fail(fn, "extent ", n[a], " along axis ", a, " is too small for the stencils' radius ", m_radius[a],
                   " under ", m_faces.describe(), " (a mirrored or wrapped read needs at least ", needs, ")");
      }
      for (int i = 0; ghost && i < NIn; ++i) {
        if (inputs.refs[i].ghost[a] < m_radius[a]) {
          impl::fail(
              fn, field_name("input", i, inputs.labels[i]), " has ", inputs.refs[i].ghost[a],
              " ghost layer(s) along axis ", a, ", fewer than the stencils' radius ", m_radius[a],
              " there: a ghost face reads the halo the application filled, at least the radius wide (with_ghosts)");
        }
      }
    }
    for (std::size_t c = 0; c < m_fields.size(); ++c) {
      for (int a = 0; a < D; ++a) {
        if (static_cast<int>(m_fields[c].extent(a)) != n[a]) {
          impl::fail(fn, "coefficient field ", c, " ('", m_fields[c].label(), "') has extents ",
                     impl::extents_string(m_fields[c]), " but the grid is ", impl::tuple_string(n));
        }
      }
    }
    for (int a = 0; a < D; ++a) {
      for (std::size_t c = 0; c < m_factors[a].size(); ++c) {
        if (static_cast<int>(m_factors[a][c].extent(0)) != n[a]) {
          impl::fail(fn, "axis factor ", c, " of axis ", a, " ('", m_factors[a][c].label(), "') has ",
                     m_factors[a][c].extent(0), " values but the grid has ", n[a], " points along axis ", a);
        }
      }
      for (int s = 0; s < 2; ++s) {
        const FieldView& v = m_dirichlet[a][s];
        for (int b = 0; v.data() && b < D; ++b) {
          if (static_cast<int>(v.extent(b)) != (b == a ? 1 : n[b])) {
            impl::fail(fn, "the dirichlet values of face (axis ", a, ", side ", s, ") have extents ",
                       impl::extents_string(v), " but the grid is ", impl::tuple_string(n), " (expected 1 along axis ",
                       a, ")");
          }
        }
      }
    }
    check_distinct(fn, inputs, outputs);
  }

  /// Outputs (holding data: check) share no element with an input or another output (the library's
  /// overlap test: element by element for equal strides, e.g. fields interleaved in one
  /// allocation; by memory spans otherwise).
  template <class VIn, int NIn, class VOut, int NOut>
  static void check_distinct(const char* fn, const FieldList<VIn, D, NIn, memory_space>& inputs,
                             const FieldList<VOut, D, NOut, memory_space>& outputs) {
    auto shared = [](const auto& x, int i, const auto& y, int j) {  // each field's own padded shape
      long x_extent[D], y_extent[D];
      for (int a = 0; a < D; ++a) x_extent[a] = x.padded[i][a], y_extent[a] = y.padded[j][a];
      return impl::grid_overlap(reinterpret_cast<std::uintptr_t>(x.refs[i].data), x.refs[i].stride.data(), x_extent,
                                reinterpret_cast<std::uintptr_t>(y.refs[j].data), y.refs[j].stride.data(), y_extent, D,
                                sizeof(T)) != impl::Overlap::none;
    };
    for (int o = 0; o < NOut; ++o) {
      for (int i = 0; i < NIn; ++i) {
        if (shared(outputs, o, inputs, i)) {
          impl::fail(fn, "output ", o, " ('", outputs.labels[o], "') and input ", i, " ('", inputs.labels[i],
                     "') share memory: an update reads neighbours of every point, so it needs separate output buffers");
        }
      }
      for (int p = 0; p < o; ++p) {
        if (shared(outputs, p, outputs, o)) {
          impl::fail(fn, "outputs ", p, " ('", outputs.labels[p], "') and ", o, " ('", outputs.labels[o],
                     "') share memory");
        }
      }
    }
  }

 private:
  FaceConditions<D> m_faces;
  UpdateShape<D> m_shape;
  std::array<int, D> m_radius{};
  int m_stream_rows = 16;
  std::vector<int> m_load_begin;
  std::vector<Load> m_host_loads;
  std::vector<Acc> m_host_weights;
  Kokkos::View<const impl::FieldRef<const T, D>*, memory_space> m_field_refs;
  Kokkos::Array<Kokkos::View<const impl::FieldRef<const T, 1>*, memory_space>, D> m_factor_refs;
  Tables m_tables;
  std::vector<FieldView> m_fields;
  std::array<std::vector<CoefficientView>, D> m_factors;
  std::array<std::array<FieldView, 2>, D> m_dirichlet;
  Kokkos::View<int, memory_space> m_overflow;
};

/// One step of `stencil` from `in` into `out` under face conditions: every point written,
/// reads outside the grid as the faces say. (in and out may be Ghosted.)
template <class ExecSpace, class In, class Out, int D>
void apply(const ExecSpace& space, const In& in, const Out& out, const Stencil<D>& stencil,
           const FaceConditions<D>& faces) {
  using T = typename impl::view_traits_of<Out>::view::non_const_value_type;
  FieldUpdate<D, 1, T, ExecSpace> update({StencilOn<D>(stencil, 0)}, faces);
  update.run(
      space, fields(in), fields(out),
      KOKKOS_LAMBDA(const Kokkos::Array<accumulator_t<T>, 1>& s, const Kokkos::Array<accumulator_t<T>, 1>&) {
        return s;
      });
}

}  // namespace sparstencil
