#pragma once
/// The generic executor's Kokkos trait (SparStencil_KokkosBackend.hpp): any execution
/// space, any layout, half_t, float and double Views.
#include <Kokkos_Core.hpp>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "SparStencil_Generic.hpp"
#include "SparStencil_KokkosBackend.hpp"

namespace sparstencil::generic {

namespace impl {

/// One launch of `depth` steps (one step, or `depth` by temporal blocking), prepared.
template <int D, class ExecSpace, class InView, class OutView>
class GenericLauncher final : public Launcher<ExecSpace, InView, OutView> {
 public:
  using T        = typename OutView::non_const_value_type;
  using Executor = sparstencil::impl::GenericExecutor<D, ExecSpace, T>;

  GenericLauncher(const ExecSpace& space, const Stencil<D>& stencil, const InView& in, const OutView& out,
                  Boundary boundary, int depth, const Options& options)
      : m_executor(std::make_unique<const Executor>(stencil)) {
    // Several steps of a 3-D radius-1 star or box on CUDA: the exchanging kernel, unless a
    // variant is forced.
    if (!options.generic_variant && depth > 1 && m_executor->exchange_runs(in, out, depth, boundary)) {
      m_step     = m_executor->prepare_exchange(space, in, out, boundary, depth);
      m_exchange = true;
      m_variant  = "temporal blocking, " + std::to_string(depth) + " steps a launch, tiles of 64x32 exchanging edges, " +
                  m_executor->shape_name(false) + " kernel";
      return;
    }
    const GenericConfig config = sparstencil::impl::generic_config(space, *m_executor, stencil, in, out, boundary,
                                                                   options.generic_variant, options.tuning, depth);
    m_step = m_executor->prepare(space, in, out, boundary, config, depth);
    bool streaming = false;
    if (depth > 1) {
      const GenericConfig ran = m_executor->temporal_runnable(config, in, out, depth);
      streaming               = ran.caching == GenericCaching::streaming;
      m_variant = "temporal blocking, " + std::to_string(depth) + " steps a launch, " + to_string(ran);
    } else {
      const GenericConfig ran = m_executor->runnable(config, in, out);
      streaming               = ran.caching == GenericCaching::streaming;
      m_variant               = to_string(ran);
    }
    m_variant += ", " + m_executor->shape_name(streaming) + " kernel";
  }

  void launch(const ExecSpace&, const InView& in, const OutView& out) const override { m_step(in, out); }
  void launch_rim_held(const ExecSpace&, const InView& in, const OutView& out) const override {
    m_step(in, out, /*rim_held*/ true);
  }
  std::string describe() const override { return m_variant; }
  /// Kokkos' light-weight CUDA launches (the kernel in its parameters, team scratch only)
  /// are recorded by stream capture as they are; the exchanging kernel's cooperative
  /// launch is not.
  bool capturable() const override {
#if defined(KOKKOS_ENABLE_CUDA)
    return std::is_same_v<ExecSpace, Kokkos::Cuda> && !m_exchange;
#else
    return false;
#endif
  }

 private:
  std::unique_ptr<const Executor> m_executor;
  typename Executor::template Prepared<InView, OutView> m_step;
  std::string m_variant;
  bool m_exchange = false;
};

}  // namespace impl

struct KokkosBackend {
  static constexpr std::string_view name        = "generic";
  static constexpr std::string_view requirement = "it takes Views of half_t, float or double on any space";

  template <class ExecSpace, class InView, class OutView>
  static constexpr bool runs() {
    return true;
  }

  /// Storage precision: sums in float for half_t and float, double for double.
  template <class T>
  static std::optional<Precision> precision(Precision /*floats*/) {
    if constexpr (std::is_same_v<T, double>) return Precision::f64;
    else if constexpr (std::is_same_v<T, float>) return Precision::f32;
    else return has_distinct_half ? Precision::f16 : Precision::f32;
  }

  template <class ExecSpace>
  static std::optional<std::string> cannot_run(const ExecSpace&) {
    return std::nullopt;
  }

  /// The steps a launch of a `depth`-step plan runs: temporal blocking where a variant's
  /// tile and halo fit team scratch, and, unless the user asked for that depth
  /// (`forced`), where the plan predicts it faster than single steps; else 1.
  template <int D, class ExecSpace, class InView, class OutView>
  static int steps_per_launch(const ExecSpace&, const Plan& plan, const Stencil<D>& stencil, const InView& in,
                              const OutView& out, const Options& options, bool forced) {
    if (plan.fused_steps == 1 || (!forced && !plan.predicted.temporal_blocking)) return 1;
    using T = typename OutView::non_const_value_type;
    const sparstencil::impl::GenericExecutor<D, ExecSpace, T> executor(stencil);
    return sparstencil::impl::fused_depth(executor, in, out, plan.fused_steps, options.generic_variant, plan.boundary);
  }

  template <class ExecSpace, class InView, class OutView, int D>
  static std::unique_ptr<Launcher<ExecSpace, InView, OutView>> launcher(const ExecSpace& space, const Plan& plan,
                                                                        const Stencil<D>& stencil, const InView& in,
                                                                        const OutView& out, const Options& options) {
    return std::make_unique<impl::GenericLauncher<D, ExecSpace, InView, OutView>>(space, stencil, in, out,
                                                                                  plan.boundary, plan.fused_steps,
                                                                                  options);
  }
};

}  // namespace sparstencil::generic
