#pragma once
/// Kokkos dispatch to the CUDA sparse tensor-core executor: Views in Kokkos::CudaSpace on a
/// device of compute capability 8.0+, when the planner chooses the sparse plan (or the
/// user forces it). Compiled only where Kokkos has CUDA and the library was built with
/// the executor (SPARSTENCIL_HAS_CUDA_SPTC); elsewhere sparse_stepper finds nothing.
///
/// half_t Views are planned with f16 operands (storage precision: nothing is lost beyond
/// the documented bound). float Views go to tensor cores only when forced
/// (ExecutorChoice::sparse), as tf32 operands (docs/PRECISION.md). LayoutLeft Views are
/// planned with their axes reversed, so the contiguous axis is the plan's fastest;
/// LayoutStride Views run with their strides (the fast copies need a contiguous last axis).
/// Executors are cached per (stencil, extents, precision, boundary, layout, device, steps
/// per launch). fusion_depth_for asks the planner how many steps iterate should fuse.
#include <Kokkos_Core.hpp>

#include <functional>
#include <string>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Stencil.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_HAS_CUDA_SPTC)
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_Planner.hpp"
#include "SparStencil_SparseExecutor.hpp"
#endif

namespace sparstencil::impl {

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_HAS_CUDA_SPTC)

inline constexpr bool sparse_dispatch_built = true;

/// The stencil with its axes in the plan's order: the View's, reversed for LayoutLeft
/// (the contiguous axis last).
template <int D, class Layout>
Stencil<D> in_plan_order(const Stencil<D>& stencil) {
  if constexpr (!std::is_same_v<Layout, Kokkos::LayoutLeft>) {
    return stencil;
  } else {
    std::vector<Term<D>> terms;
    for (const Term<D>& t : stencil.terms()) {
      Term<D> r = t;
      for (int a = 0; a < D; ++a) r.offset[a] = t.offset[D - 1 - a];
      terms.push_back(r);
    }
    return Stencil<D>(terms, stencil.name());
  }
}

/// The executor for a request, planned and uploaded once per process: `key` names the
/// request completely (forcing included); a null entry remembers that the planner chose
/// the generic executor.
inline std::shared_ptr<const cuda::SparseExecutor> cached_sparse_executor(const PlanRequest& request,
                                                                          const std::string& key) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const cuda::SparseExecutor>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Plan plan = make_plan(request);
  std::shared_ptr<const cuda::SparseExecutor> executor;
  if (plan.executor == ExecutorKind::cuda_sptc) executor = std::make_shared<const cuda::SparseExecutor>(plan);
  cache.emplace(key, executor);
  return executor;
}

/// The sparse step for Views of these types and extents (one lookup, then any number of
/// steps), or an empty function where the generic executor should run (not a CUDA View,
/// no sparse tensor cores, a scalar without a sparse form, or the planner prefers
/// generic). Forced (`force`), every "cannot" throws instead, naming the reason.
template <int D, class ExecSpace, class InView, class OutView>
std::function<void(const InView&, const OutView&)> sparse_stepper(const ExecSpace& space, const Stencil<D>& stencil,
                                                                  const InView& in, const OutView& out,
                                                                  Boundary boundary, bool force, int steps = 1) {
  using T      = typename OutView::non_const_value_type;
  using Layout = typename OutView::array_layout;
  constexpr bool cuda_views = std::is_same_v<ExecSpace, Kokkos::Cuda> &&
                              std::is_same_v<typename InView::memory_space, Kokkos::CudaSpace> &&
                              std::is_same_v<typename OutView::memory_space, Kokkos::CudaSpace>;
  constexpr bool half = std::is_same_v<T, Kokkos::Experimental::half_t>;
  constexpr bool single = std::is_same_v<T, float>;
  if constexpr (!cuda_views || !(half || single)) {
    if (force) {
      fail("apply", "the sparse executor needs Views in Kokkos::CudaSpace run on Kokkos::Cuda holding half_t ",
           "(f16) or float (tf32); these Views live in ", InView::memory_space::name(), " and hold ",
           std::is_same_v<T, double> ? "double" : "another scalar type");
    }
    return {};
  } else {
    if (single && !force) return {};  // float keeps f32 accuracy unless tensor cores are asked for
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) fail("apply", "no current CUDA device");
    const cuda::DeviceInfo info = cuda::device_info(device);
    if (!cuda::has_sparse_tensor_cores(info)) {
      if (force) {
        fail("apply", "device ", info.name, " (compute capability ", info.major, ".", info.minor,
             ") has no sparse tensor cores: 8.0 or newer is needed");
      }
      return {};
    }
    constexpr bool reversed = std::is_same_v<Layout, Kokkos::LayoutLeft>;
    auto axis               = [](int a) { return reversed ? D - 1 - a : a; };
    const Stencil<D> planned = in_plan_order<D, Layout>(stencil);
    const std::vector<Term<D>>& terms = planned.terms();
    PlanRequest request;
    request.stencil   = planned;
    request.precision = half ? Precision::f16 : Precision::tf32;
    request.device    = info.major >= 9 ? "h100" : "a100";
    request.boundary  = boundary;
    request.steps     = steps;
    if (force) request.executor = ExecutorKind::cuda_sptc;
    for (int a = 0; a < D; ++a) request.grid.push_back(static_cast<long>(out.extent(axis(a))));
    std::ostringstream key;
    key << device << '|' << force << '|' << D << '|' << to_string(request.precision) << '|'
        << to_string(boundary) << '|' << reversed << '|' << tuple_string(request.grid) << '|' << steps;
    for (const Term<D>& t : terms) key << '|' << tuple_string(t.offset) << ':' << std::hexfloat << t.weight;
    std::shared_ptr<const cuda::SparseExecutor> executor = cached_sparse_executor(request, key.str());
    if (!executor) return {};
    return [executor, space, axis](const InView& from, const OutView& to) {
      std::vector<long> from_strides(D), to_strides(D);
      for (int a = 0; a < D; ++a) {
        from_strides[a] = static_cast<long>(from.stride(axis(a)));
        to_strides[a]   = static_cast<long>(to.stride(axis(a)));
      }
      executor->apply(from.data(), from_strides, to.data(), to_strides, space.cuda_stream());
    };
  }
}

/// Steps per launch for `iterate` of `steps` steps on CUDA Views: the depth t (1 to 8)
/// whose plan the planner predicts fastest per step, each t planned as make_plan would for
/// that launch (sparse fused plans only under a periodic boundary, where one launch equals
/// t steps everywhere; the generic executor by temporal blocking). 1 where the planner has
/// no model of the device. Remembered per problem.
template <int D, class ExecSpace, class View>
int fusion_depth_for(const ExecSpace&, const Stencil<D>& stencil, const View& a, int steps, Boundary boundary,
                     bool force_generic, bool force_sparse) {
  using T = typename View::non_const_value_type;
  if constexpr (!std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    return 1;
  } else {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) fail("iterate", "no current CUDA device");
    const cuda::DeviceInfo info = cuda::device_info(device);
    if (info.major < 8) return 1;
    constexpr bool half = std::is_same_v<T, Kokkos::Experimental::half_t>;
    constexpr bool single = std::is_same_v<T, float>;
    PlanRequest request;
    constexpr bool reversed = std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>;
    request.stencil   = in_plan_order<D, typename View::array_layout>(stencil);
    request.precision = half ? Precision::f16 : single ? (force_sparse ? Precision::tf32 : Precision::f32) : Precision::f64;
    request.device    = info.major >= 9 ? "h100" : "a100";
    request.boundary  = boundary;
    for (int k = 0; k < D; ++k) request.grid.push_back(static_cast<long>(a.extent(reversed ? D - 1 - k : k)));
    std::ostringstream key;
    key << device << '|' << reversed << force_generic << force_sparse << '|' << to_string(request.precision) << '|'
        << to_string(boundary) << '|' << tuple_string(request.grid) << '|' << std::min(steps, 8);
    for (const Term<D>& t : stencil.terms()) key << '|' << tuple_string(t.offset) << ':' << std::hexfloat << t.weight;
    static std::mutex mutex;
    static std::map<std::string, int> chosen;
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = chosen.find(key.str()); it != chosen.end()) return it->second;
    int best = 1;
    double best_seconds = INFINITY;
    for (int t = 1; t <= std::min(steps, 8); ++t) {
      request.steps    = t;
      const bool fused_sparse_exact = t == 1 || boundary == Boundary::periodic;
      request.executor = force_generic || !fused_sparse_exact ? std::optional(ExecutorKind::generic)
                         : force_sparse                       ? std::optional(ExecutorKind::cuda_sptc)
                                                              : std::nullopt;
      if (force_sparse && !fused_sparse_exact) continue;
      double seconds = INFINITY;
      try {
        seconds = make_plan(request).predicted.seconds / t;
      } catch (const std::runtime_error&) {
        continue;  // t x radius too wide for the grid
      }
      if (seconds < 0.98 * best_seconds) {  // a deeper fusion must gain more than noise
        best_seconds = seconds;
        best         = t;
      }
    }
    chosen.emplace(key.str(), best);
    return best;
  }
}

#else

inline constexpr bool sparse_dispatch_built = false;

template <int D, class ExecSpace, class View>
int fusion_depth_for(const ExecSpace&, const Stencil<D>&, const View&, int, Boundary, bool, bool) {
  return 1;
}

template <int D, class ExecSpace, class InView, class OutView>
std::function<void(const InView&, const OutView&)> sparse_stepper(const ExecSpace&, const Stencil<D>&,
                                                                  const InView&, const OutView&, Boundary,
                                                                  bool force, int = 1) {
  if (force) {
    fail("apply", "the sparse executor is not built here: it needs Kokkos with CUDA and SparStencil built with ",
         "SparStencil_ENABLE_CUDA_SPTC");
  }
  return {};
}

#endif

}  // namespace sparstencil::impl
