#pragma once
/// The choice of the generic executor's variant (docs/GENERIC.md, "Choosing the variant"):
/// the variant forced by the caller, one timed once per process and problem by a short
/// autotuning pass and then remembered, or a default for grids too small to be worth
/// tuning; and how many steps a temporal-blocking launch can fuse. Kept apart from the
/// executor (SparStencil_Generic.hpp), which launches whatever variant it is given.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_Generic.hpp"
#include "SparStencil_GenericModel.hpp"
#include "SparStencil_Stencil.hpp"
#include "SparStencil_Wisdom.hpp"

namespace sparstencil {

namespace impl {

/// The deepest fusion, at most `wanted` steps a launch, whose tile and halo fit team scratch
/// in some temporal variant (1: none does, the steps run unfused). A forced variant is
/// taken as it is (a launch that does not fit throws, naming the sizes).
template <int D, class ExecSpace, class T, class InView, class OutView>
int fused_depth(const GenericExecutor<D, ExecSpace, T>& executor, const InView& in, const OutView& out, int wanted,
                const std::optional<GenericConfig>& forced, Boundary boundary) {
  if (forced || wanted <= 1) return wanted;
  for (int depth = wanted; depth > 1; --depth) {
    for (const GenericConfig& c : generic::fused_candidates(D, !runs_on_host<ExecSpace>())) {
      if (executor.fused_fits(in, out, depth, c, boundary)) return depth;
    }
  }
  return 1;
}

/// Key of a tuning result: everything that changes the timing but the boundary (which
/// the caller appends), nothing that does not (weights).
template <int D, class ExecSpace, class T, class InView, class OutView>
std::string tuning_key(const ExecSpace& space, const GenericExecutor<D, ExecSpace, T>& executor,
                       const Stencil<D>& stencil, const InView& in, const OutView& out) {
  std::ostringstream key;
  key << ExecSpace::name() << '|' << sizeof(T) << '|' << D << '|' << executor.shape_name(true) << '|'
      << executor.shape_name(false);
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) key << "|device " << space.cuda_device();
#endif
  (void)space;
  if (executor.shape_name(false) == "any") {
    for (const Term<D>& t : stencil.terms()) key << '|' << tuple_string(t.offset);
  }
  for (int a = 0; a < D; ++a) key << '|' << out.extent(a) << ':' << in.stride(a) << ':' << out.stride(a);
  return key.str();
}

/// The variant for this problem: forced, tuned (timed once per problem, then remembered
/// as wisdom: plans made again for the same problem, other weights included, reuse it, and
/// a wisdom file carries it to later runs), or the default.
/// `steps` > 1 picks among the temporal-blocking variants for launches of that many steps
/// (fused_depth() says how deep they fit).
template <int D, class ExecSpace, class T, class InView, class OutView>
GenericConfig generic_config(const ExecSpace& space, const GenericExecutor<D, ExecSpace, T>& executor,
                             const Stencil<D>& stencil, const InView& in, const OutView& out, Boundary boundary,
                             const std::optional<GenericConfig>& forced, const GenericTuning& tuning, int steps = 1) {
  if (forced) {
    GenericExecutor<D, ExecSpace, T>::check(*forced);
    return *forced;
  }
  const bool gpu                        = !runs_on_host<ExecSpace>();
  std::vector<GenericConfig> candidates = steps > 1 ? generic::fused_candidates(D, gpu) : generic::candidates(D, gpu);
  if (steps > 1) {  // the temporal variants whose tile and halo fit team scratch (the caller checked one does)
    candidates.erase(
        std::remove_if(candidates.begin(), candidates.end(),
                       [&](const GenericConfig& c) { return !executor.fused_fits(in, out, steps, c, boundary); }),
        candidates.end());
    if (candidates.empty()) fail("iterate", "no temporal-blocking variant fits team scratch for ", steps, " steps");
  }
  long points = 1;
  for (int a = 0; a < D; ++a) points *= static_cast<long>(out.extent(a));
  if (!tuning.autotune || points < tuning.min_points || candidates.size() == 1) {
    // A shape compiled for the streaming variant alone (the compute-bound boxes) runs as
    // run-time terms in the others, several times slower: untimed, it streams.
    if (steps == 1 && executor.shape_name(true) != executor.shape_name(false)) {
      for (const GenericConfig& c : candidates) {
        if (c.caching == GenericCaching::streaming) return c;
      }
    }
    return candidates.front();
  }

  static std::mutex mutex;  // one timing pass at a time
  const std::lock_guard<std::mutex> lock(mutex);
  const std::string key =
      tuning_key(space, executor, stencil, in, out) + '|' + to_string(boundary) + "|steps " + std::to_string(steps);
  // Remembered by this process or loaded from a wisdom file (SparStencil_Wisdom.hpp).
  if (const std::optional<GenericConfig> known = wise_variant(key)) {
    if (std::find(candidates.begin(), candidates.end(), *known) != candidates.end()) return *known;
  }
  // Each candidate: one warm-up launch, then the median of three timed launches under the
  // caller's boundary (some variants cover the rim themselves). The launches write `out`,
  // which the caller's own launch overwrites next. Two more are not taken where the first
  // timed launch cannot win (half again the best median: launch noise is a few percent) or
  // is long enough to be timed within a percent: on large compute-bound problems (a 3-D
  // box of radius 4 on 512^3) the tuner's launches are most of a first iterate's cost.
  constexpr double clearly_slower = 1.5, timed_once_seconds = 0.01;
  auto launch         = [&](const GenericConfig& c) { executor.apply(space, in, out, boundary, c, steps); };
  GenericConfig best  = candidates.front();
  double best_seconds = -1;
  for (const GenericConfig& c : candidates) {
    std::vector<double> seconds;
    try {
      launch(c);
      space.fence();
      for (int run = 0; run < 3; ++run) {
        Kokkos::Timer timer;
        launch(c);
        space.fence();
        seconds.push_back(timer.seconds());
        const bool cannot_win = best_seconds >= 0 && seconds[0] > clearly_slower * best_seconds;
        if (run == 0 && (cannot_win || seconds[0] >= timed_once_seconds)) break;
      }
    } catch (const std::runtime_error&) {
      continue;  // a variant this device cannot launch (too many threads or too much scratch)
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    if (best_seconds < 0 || median < best_seconds) {
      best_seconds = median;
      best         = c;
    }
  }
  remember_variant(key, best);
  return best;
}

}  // namespace impl
}  // namespace sparstencil
