#pragma once
/// The generic executor behind the small interface its Kokkos trait uses
/// (SparStencil_GenericKokkos.hpp): made for a stencil, it says how many steps a launch can
/// fuse and prepares launches (tuned, checked, uploaded) on strided grids, whatever the
/// Views' layout and memory space.
///
/// Its members are defined below, outside the class, so that an instance the library
/// prebuilt (SparStencil_ENABLE_ETI: ranks 1-3, float, double and, where Kokkos has a
/// 16-bit half_t, half_t, on each of the Kokkos build's Serial, OpenMP, Threads, CUDA and
/// HIP spaces, or those SparStencil_ETI_SPACES names) is declared `extern template`
/// here: a user's translation unit then instantiates none of the executor's kernels and
/// links the library's. Other combinations (another execution space) are instantiated
/// where they are used.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "SparStencil_Config.hpp"
#include "SparStencil_Generic.hpp"
#include "SparStencil_GenericTuner.hpp"
#if defined(SPARSTENCIL_ENABLE_ETI)
#include "SparStencil_GenericPrebuilt.hpp"  // generated: the spaces prebuilt
#endif
#include "SparStencil_StridedGrid.hpp"

namespace sparstencil::impl {

template <int D, class ExecSpace, class T>
class GenericSteps {
 public:
  using InGrid  = StridedGrid<D, const T>;
  using OutGrid = StridedGrid<D, T>;

  /// A prepared launch: run(in, out, rim_held) launches it asynchronously on the space it
  /// was prepared for (rim_held: out's fixed rim already holds in's, Launcher::launch_rim_held).
  struct Launch {
    std::function<void(const InGrid&, const OutGrid&, bool)> run;
    std::string variant;    ///< what runs (RunReport::variant)
    bool exchange = false;  ///< the exchanging temporal kernel (a cooperative launch)
  };

  explicit GenericSteps(const Stencil<D>& stencil);
  ~GenericSteps();
  GenericSteps(const GenericSteps&)            = delete;
  GenericSteps& operator=(const GenericSteps&) = delete;

  /// The deepest fusion, at most `wanted` steps a launch, that some temporal variant runs
  /// on grids like these (1: none; a forced variant is taken as it is).
  int fused_depth(const InGrid& in, const OutGrid& out, int wanted, const std::optional<GenericConfig>& forced,
                  Boundary boundary) const;

  /// A launch of `depth` steps (1, or temporal blocking) from grids like `in` to grids like
  /// `out`: the forced variant, else the tuned one (tuning launches write `out`), else the
  /// default. The object must outlive the launch.
  Launch prepare(const ExecSpace& space, const InGrid& in, const OutGrid& out, Boundary boundary, int depth,
                 const std::optional<GenericConfig>& forced, const GenericTuning& tuning) const;

 private:
  Stencil<D> m_stencil;
  std::unique_ptr<const GenericExecutor<D, ExecSpace, T>> m_executor;
};

template <int D, class ExecSpace, class T>
GenericSteps<D, ExecSpace, T>::GenericSteps(const Stencil<D>& stencil)
    : m_stencil(stencil), m_executor(std::make_unique<const GenericExecutor<D, ExecSpace, T>>(stencil)) {}

template <int D, class ExecSpace, class T>
GenericSteps<D, ExecSpace, T>::~GenericSteps() = default;

template <int D, class ExecSpace, class T>
int GenericSteps<D, ExecSpace, T>::fused_depth(const InGrid& in, const OutGrid& out, int wanted,
                                               const std::optional<GenericConfig>& forced, Boundary boundary) const {
  return impl::fused_depth(*m_executor, in, out, wanted, forced, boundary);
}

template <int D, class ExecSpace, class T>
typename GenericSteps<D, ExecSpace, T>::Launch GenericSteps<D, ExecSpace, T>::prepare(
    const ExecSpace& space, const InGrid& in, const OutGrid& out, Boundary boundary, int depth,
    const std::optional<GenericConfig>& forced, const GenericTuning& tuning) const {
  const GenericExecutor<D, ExecSpace, T>& executor = *m_executor;
  // Without relocatable device code each translation unit has its own copy of Kokkos'
  // atomic lock arrays, copied to the device on its first launch. This one's launches may
  // first run inside a CUDA graph capture (StencilPlan::apply records them), where that copy
  // would fail the capture: copied here, before any capture.
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) desul::ensure_cuda_lock_arrays_on_device();
#endif
#if defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) desul::ensure_hip_lock_arrays_on_device();
#endif
  auto as_launch = [](auto prepared) {
    return [prepared = std::move(prepared)](const InGrid& from, const OutGrid& to, bool rim_held) {
      prepared(from, to, rim_held);
    };
  };
  Launch launch;
  // Several steps of a 3-D radius-1 star or box on CUDA: the exchanging kernel, unless a
  // variant is forced.
  if (!forced && depth > 1 && executor.exchange_runs(in, out, depth, boundary)) {
    launch.run      = as_launch(executor.prepare_exchange(space, in, out, boundary, depth));
    launch.exchange = true;
    launch.variant  = "temporal blocking, " + std::to_string(depth) + " steps a launch, tiles of 64x32 exchanging " +
                     "edges, " + executor.shape_name(false) + " kernel";
    return launch;
  }
  const GenericConfig config = generic_config(space, executor, m_stencil, in, out, boundary, forced, tuning, depth);
  launch.run                 = as_launch(executor.prepare(space, in, out, boundary, config, depth));
  bool streaming             = false;
  if (depth > 1) {
    const GenericConfig ran = executor.temporal_runnable(config, in, out, depth);
    streaming               = ran.caching == GenericCaching::streaming;
    launch.variant          = "temporal blocking, " + std::to_string(depth) + " steps a launch, " + to_string(ran);
  } else {
    const GenericConfig ran = executor.runnable(config, in, out);
    streaming               = ran.caching == GenericCaching::streaming;
    launch.variant          = to_string(ran);
  }
  launch.variant += ", " + executor.shape_name(streaming) + " kernel";
  return launch;
}

// The instances the library prebuilt (src/backends/generic/eti): X(D, space, type) each.
#if KOKKOS_HALF_T_IS_FLOAT
#define SPARSTENCIL_GENERIC_TYPES(X, SPACE) \
  X(1, SPACE, float) X(2, SPACE, float) X(3, SPACE, float) X(1, SPACE, double) X(2, SPACE, double) X(3, SPACE, double)
#else
// One instance group a line (clang-format wraps a macro's list unevenly).
// clang-format off
#define SPARSTENCIL_GENERIC_TYPES(X, SPACE)                                    \
  X(1, SPACE, float) X(2, SPACE, float) X(3, SPACE, float)                     \
  X(1, SPACE, double) X(2, SPACE, double) X(3, SPACE, double)                  \
  X(1, SPACE, Kokkos::Experimental::half_t)                                    \
  X(2, SPACE, Kokkos::Experimental::half_t)                                    \
  X(3, SPACE, Kokkos::Experimental::half_t)
// clang-format on
#endif

#if defined(SPARSTENCIL_ENABLE_ETI)
#define SPARSTENCIL_EXTERN_GENERIC_STEPS(D, SPACE, T) extern template class GenericSteps<D, SPACE, T>;
#define SPARSTENCIL_EXTERN_GENERIC_SPACE(SPACE) SPARSTENCIL_GENERIC_TYPES(SPARSTENCIL_EXTERN_GENERIC_STEPS, SPACE)
SPARSTENCIL_GENERIC_PREBUILT_SPACES(SPARSTENCIL_EXTERN_GENERIC_SPACE)
#undef SPARSTENCIL_EXTERN_GENERIC_SPACE
#undef SPARSTENCIL_EXTERN_GENERIC_STEPS
#endif

}  // namespace sparstencil::impl
