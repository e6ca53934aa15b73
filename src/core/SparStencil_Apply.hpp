#pragma once
/// The front-end: sparstencil::apply (one step) and sparstencil::iterate (ping-pong time
/// stepping) on Kokkos Views. Every View is checked up front; mistakes that types reveal
/// are compile errors, the rest throw std::runtime_error naming the problem.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Generic.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_SparseDispatch.hpp"
#include "SparStencil_Stencil.hpp"

namespace sparstencil {

/// Which executor runs a step.
enum class ExecutorChoice {
  automatic,  ///< the planner's choice for the Views, stencil and device
  generic,    ///< force the portable Kokkos parallel_for executor
  sparse      ///< force the CUDA sparse tensor-core executor (throws where it cannot run)
};

struct Options {
  Boundary boundary       = Boundary::periodic;
  ExecutorChoice executor = ExecutorChoice::automatic;
  /// Generic executor only: a variant to run instead of the tuned or default one.
  std::optional<GenericConfig> generic_variant;
  GenericTuning tuning;
  /// iterate only: steps per launch. 0 (default): the planner's choice, from 1 to 8, where
  /// it has a model of the device (CUDA Views on compute capability 8.0+), else 1. t >= 1:
  /// t steps a launch (fewer for the last launch if the count does not divide). The
  /// generic executor fuses by temporal blocking (exact under every boundary mode); the
  /// sparse one with fused plans, only under a periodic boundary (elsewhere a fused plan
  /// is exact only away from the rim, docs/BOUNDARIES.md), so forcing both throws there.
  int fusion = 0;
};

/// What ran: executor name ("generic", ...), the Kokkos execution space, the step count,
/// and for the generic executor its variant and the shape its kernel is specialised for.
struct RunReport {
  std::string executor;
  std::string execution_space;
  int steps = 0;
  std::string variant;
  int steps_per_launch = 1;  ///< fusion depth of the launches (the last may run fewer)
};

namespace impl {

template <int D, class ExecSpace, class InView, class OutView>
void check_view_types() {
  static_assert(Kokkos::is_view<InView>::value && Kokkos::is_view<OutView>::value,
                "sparstencil: in and out must be Kokkos::Views");
  static_assert(static_cast<int>(InView::rank) == D && static_cast<int>(OutView::rank) == D,
                "sparstencil: the Views' rank must equal the stencil's dimension");
  static_assert(std::is_same_v<typename OutView::value_type, typename OutView::non_const_value_type>,
                "sparstencil: the output View must not have a const value type");
  static_assert(std::is_same_v<typename InView::non_const_value_type,
                               typename OutView::non_const_value_type>,
                "sparstencil: in and out must have the same value type");
  static_assert(is_supported_scalar<typename OutView::non_const_value_type>,
                "sparstencil: the value type must be Kokkos::Experimental::half_t, float or double");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename InView::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename OutView::memory_space>::accessible,
                "sparstencil: the execution space cannot access the Views' memory space");
}

template <class View>
std::string extents_string(const View& v) {
  std::vector<std::size_t> e;
  for (int a = 0; a < static_cast<int>(View::rank); ++a) e.push_back(v.extent(a));
  return tuple_string(e);
}

template <int D, class InView, class OutView>
void check_views(const char* function, const Stencil<D>& stencil, const InView& in,
                 const OutView& out) {
  for (int a = 0; a < D; ++a) {
    if (in.extent(a) != out.extent(a)) {
      fail(function, "in and out extents differ: ", extents_string(in), " vs ", extents_string(out));
    }
  }
  for (int a = 0; a < D; ++a) {
    const std::size_t needed = 2 * static_cast<std::size_t>(stencil.radius()[a]) + 1;
    if (in.extent(a) < needed) {
      fail(function, "extent ", in.extent(a), " along axis ", a, " of ", extents_string(in),
           " is too small for the stencil's radius ", stencil.radius()[a], " (needs at least ",
           needed, ")");
    }
    if (in.extent(a) > static_cast<std::size_t>(INT32_MAX)) {
      fail(function, "extent ", in.extent(a), " along axis ", a, " exceeds 2^31 - 1");
    }
  }
  using Element         = typename OutView::non_const_value_type;
  const auto in_begin   = reinterpret_cast<std::uintptr_t>(in.data());
  const auto out_begin  = reinterpret_cast<std::uintptr_t>(out.data());
  const auto in_end     = in_begin + in.span() * sizeof(Element);
  const auto out_end    = out_begin + out.span() * sizeof(Element);
  if (in_begin < out_end && out_begin < in_end) {
    fail(function, "in and out overlap in memory (View labels '", in.label(), "' and '",
         out.label(), "'): a step needs separate input and output buffers");
  }
}

template <class ExecSpace>
RunReport report(int steps, bool sparse = false) {
  return {sparse ? "cuda_sptc" : "generic", ExecSpace::name(), steps, ""};
}

/// Steps of each launch for `steps` steps at most `fusion` a launch: full launches, then
/// the rest. The launch count has the parity of `steps` (one launch split in two where it
/// would not), so iterate swaps the handles exactly when `steps` is odd, fused or not.
inline std::vector<int> launch_depths(int steps, int fusion) {
  std::vector<int> depths(steps / fusion, fusion);
  if (steps % fusion) depths.push_back(steps % fusion);
  if ((static_cast<int>(depths.size()) - steps) % 2 != 0) {
    for (auto it = depths.rbegin(); it != depths.rend(); ++it) {
      if (*it > 1) {
        --*it;
        depths.push_back(1);
        break;
      }
    }
  }
  return depths;
}

/// Runs `steps` generic steps from a into b, `fusion` steps a launch (temporal blocking
/// when above 1, as deep as team scratch allows); with `ping_pong` the handles are swapped
/// after each launch (iterate), so a holds the result.
template <int D, class ExecSpace, class InView, class OutView>
RunReport generic_steps(const char* region, const ExecSpace& space, const Stencil<D>& stencil, InView& a, OutView& b,
                        int steps, bool ping_pong, const Options& options, int fusion = 1) {
  using T = typename OutView::non_const_value_type;
  Kokkos::Profiling::pushRegion(region);
  const auto executor = cached_generic_executor<D, ExecSpace, T>(space, stencil);
  fusion              = fused_depth(*executor, a, b, fusion, options.generic_variant);
  // The variant of each launch depth, looked up (or tuned) once.
  std::map<int, GenericConfig> configs;
  auto config_for = [&](int depth) -> const GenericConfig& {
    auto it = configs.find(depth);
    if (it == configs.end()) {
      it = configs.emplace(depth, generic_config(space, *executor, stencil, a, b, options.boundary,
                                                 options.generic_variant, options.tuning, depth)).first;
    }
    return it->second;
  };
  const GenericConfig config = config_for(fusion);
  for (const int depth : launch_depths(steps, fusion)) {
    if (depth == 1) executor->apply(space, a, b, options.boundary, config_for(1));
    else executor->apply_fused(space, a, b, options.boundary, depth, config_for(depth));
    if constexpr (std::is_same_v<InView, OutView>) {
      if (ping_pong) std::swap(a, b);
    }
  }
  Kokkos::Profiling::popRegion();
  RunReport r        = report<ExecSpace>(steps);
  r.steps_per_launch = fusion;
  r.variant = fusion > 1 ? "temporal blocking, " + std::to_string(fusion) + " steps a launch, " +
                               to_string(GenericConfig{GenericCaching::scratch, config.threads_fast,
                                                       config.threads_second, config.outputs})
                         : to_string(executor->runnable(config, a, b));
  r.variant += ", " + executor->shape_name() + " kernel";
  return r;
}

/// The sparse executor's step (of `steps` steps a launch) where it applies
/// (SparStencil_SparseDispatch.hpp), else empty.
template <int D, class ExecSpace, class InView, class OutView>
std::function<void(const InView&, const OutView&)> sparse_step(const ExecSpace& space, const Stencil<D>& stencil,
                                                               const InView& in, const OutView& out,
                                                               const Options& options, int steps = 1) {
  if (options.executor == ExecutorChoice::generic) return {};
  // A fused plan equals its steps only away from the rim unless the boundary is periodic.
  if (steps > 1 && options.boundary != Boundary::periodic) return {};
  return sparse_stepper<D>(space, stencil, in, out, options.boundary, options.executor == ExecutorChoice::sparse,
                           steps);
}

/// Steps per launch for iterate (Options::fusion).
template <int D, class ExecSpace, class View>
int fusion_depth(const ExecSpace& space, const Stencil<D>& stencil, const View& a, int steps, const Options& options) {
  if (options.fusion < 0) fail("iterate", "fusion ", options.fusion, " must be 0 (automatic) or a step count >= 1");
  if (options.fusion > 1 && options.executor == ExecutorChoice::sparse && options.boundary != Boundary::periodic) {
    fail("iterate", "fusion ", options.fusion, " on the sparse executor needs a periodic boundary (",
         to_string(options.boundary), " given): a fused plan is exact only away from the rim");
  }
  if (steps <= 1) return 1;
  if (options.fusion >= 1) return std::min(options.fusion, steps);
  return fusion_depth_for<D>(space, stencil, a, steps, options.boundary, options.executor == ExecutorChoice::generic,
                             options.executor == ExecutorChoice::sparse);
}

}  // namespace impl

/// One step: out = stencil applied to in, under options.boundary. Runs on `space` and
/// returns without fencing, like a Kokkos kernel launch.
template <class ExecSpace, int D, class InView, class OutView>
RunReport apply(const ExecSpace& space, const Stencil<D>& stencil, const InView& in,
                const OutView& out, const Options& options = {}) {
  impl::check_view_types<D, ExecSpace, InView, OutView>();
  impl::check_views("apply", stencil, in, out);
  if (const auto step = impl::sparse_step<D>(space, stencil, in, out, options)) {
    step(in, out);
    return impl::report<ExecSpace>(1, true);
  }
  InView from = in;
  OutView to  = out;
  return impl::generic_steps<D>("sparstencil::apply[generic]", space, stencil, from, to, 1, false, options);
}

/// One step on the output View's default execution space.
template <int D, class InView, class OutView>
RunReport apply(const Stencil<D>& stencil, const InView& in, const OutView& out,
                const Options& options = {}) {
  return apply(typename OutView::execution_space(), stencil, in, out, options);
}

/// `steps` steps ping-ponging between a and b, Options::fusion steps a launch. On return
/// `a` holds the final field and `b` the one a launch before it (a step before when each
/// launch is one step): when `steps` is odd the two View handles are swapped. With
/// Boundary::interior the rim of each buffer keeps whatever it held, so give both the
/// same rim (for example b = copy of a). steps = 0 does nothing.
template <class ExecSpace, int D, class View>
RunReport iterate(const ExecSpace& space, const Stencil<D>& stencil, View& a, View& b, int steps,
                  const Options& options = {}) {
  impl::check_view_types<D, ExecSpace, View, View>();
  if (steps < 0) impl::fail("iterate", "step count ", steps, " is negative");
  impl::check_views("iterate", stencil, a, b);
  const int fusion = impl::fusion_depth<D>(space, stencil, a, steps, options);
  if (const auto step = steps > 0 ? impl::sparse_step<D>(space, stencil, a, b, options, fusion) : nullptr) {
    // Launches of other depths (the rest) get their own plans; one the planner gives to
    // the generic executor runs there.
    std::map<int, std::function<void(const View&, const View&)>> steppers{{fusion, step}};
    for (const int depth : impl::launch_depths(steps, fusion)) {
      if (!steppers.count(depth)) steppers[depth] = impl::sparse_step<D>(space, stencil, a, b, options, depth);
      if (const auto& launch = steppers[depth]) {
        launch(a, b);
        std::swap(a, b);
      } else {
        impl::generic_steps<D>("sparstencil::iterate[generic]", space, stencil, a, b, depth, true, options, depth);
      }
    }
    RunReport r        = impl::report<ExecSpace>(steps, true);
    r.steps_per_launch = fusion;
    return r;
  }
  if (steps == 0) return impl::report<ExecSpace>(0);
  return impl::generic_steps<D>("sparstencil::iterate[generic]", space, stencil, a, b, steps, true, options, fusion);
}

template <int D, class View>
RunReport iterate(const Stencil<D>& stencil, View& a, View& b, int steps, const Options& options = {}) {
  return iterate(typename View::execution_space(), stencil, a, b, steps, options);
}

/// Forms taking a stencil whose dimension is known at run time (parsed text, catalogue):
/// a dimension other than the Views' rank throws.
template <class ExecSpace, class InView, class OutView>
RunReport apply(const ExecSpace& space, const AnyStencil& stencil, const InView& in,
                const OutView& out, const Options& options = {}) {
  constexpr int rank = static_cast<int>(OutView::rank);
  static_assert(rank >= 1 && rank <= 3, "sparstencil: Views must have rank 1, 2 or 3");
  if (dimension(stencil) != rank) {
    impl::fail("apply", "stencil '", name(stencil), "' is ", dimension(stencil),
               "-D but the Views have rank ", rank);
  }
  return apply(space, std::get<rank - 1>(stencil), in, out, options);
}

template <class ExecSpace, class View>
RunReport iterate(const ExecSpace& space, const AnyStencil& stencil, View& a, View& b, int steps,
                  const Options& options = {}) {
  constexpr int rank = static_cast<int>(View::rank);
  static_assert(rank >= 1 && rank <= 3, "sparstencil: Views must have rank 1, 2 or 3");
  if (dimension(stencil) != rank) {
    impl::fail("iterate", "stencil '", name(stencil), "' is ", dimension(stencil),
               "-D but the Views have rank ", rank);
  }
  return iterate(space, std::get<rank - 1>(stencil), a, b, steps, options);
}

}  // namespace sparstencil
