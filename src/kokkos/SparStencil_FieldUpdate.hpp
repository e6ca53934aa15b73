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
#include "SparStencil_FieldList.hpp"
#include "SparStencil_FieldUpdateChecks.hpp"
#include "SparStencil_FieldUpdateKernel.hpp"
#include "SparStencil_FieldUpdateStreamed.hpp"
#include "SparStencil_UpdateModel.hpp"

namespace sparstencil {

/// An update of `NResults` stencil results: see the file's comment. T is the fields' value
/// type (coefficient fields, axis factors and dirichlet values have it too).
template <int D, int NResults, class T, class ExecSpace = Kokkos::DefaultExecutionSpace>
class FieldUpdate {
  static_assert(NResults >= 0, "sparstencil: the number of stencil results must not be negative");
  static_assert(is_supported_scalar<T>,
                "sparstencil: the value type must be Kokkos::Experimental::half_t, float or double");

 public:
  using Acc          = accumulator_t<T>;
  using memory_space = typename ExecSpace::memory_space;
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
    using Returned = std::decay_t<decltype(Types::call(pointwise, std::declval<Results>(), std::declval<Centres>(),
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

 private:
  using Types                        = impl::FieldUpdateTypes<D, NResults, T, ExecSpace>;
  using Load                         = typename Types::Load;
  using CoefficientTerm              = typename Types::CoefficientTerm;
  using Tables                       = typename Types::Tables;
  static constexpr bool checks_range = Types::checks_range;
  static constexpr int chunk         = Types::chunk;
  static constexpr int inline_loads  = Types::inline_loads;
  template <int NIn, int NOut, class Pointwise, bool WithPoint, bool Inline>
  using Kernel = impl::FieldPointKernel<Types, NIn, NOut, Pointwise, WithPoint, Inline>;
  template <int K, int R, bool Star = false>
  using Window = impl::FieldWindow<K, R, Star>;
  template <int NIn, int NOut, class Pointwise, bool WithPoint, class Win>
  using Streamed = impl::FieldStreamedPass<Types, NIn, NOut, Pointwise, WithPoint, Win>;
  /// Light-weight launches: the kernel (its tables inline, under 4 KiB) goes in the launch's
  /// parameters, not through Kokkos' constant-memory copy and its event per launch.
  using LightWeight = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;

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
    impl::check_update_fields<D, T>("FieldUpdate::run", m_shape, m_faces, m_radius, m_fields, m_factors, m_dirichlet,
                                    inputs, outputs);
  }

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