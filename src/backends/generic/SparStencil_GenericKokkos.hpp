#pragma once
/// The generic executor's Kokkos trait (SparStencil_KokkosBackend.hpp): any execution
/// space, any layout, half_t, float and double Views.
#include <Kokkos_Core.hpp>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "SparStencil_GenericSteps.hpp"
#include "SparStencil_KokkosBackend.hpp"

namespace sparstencil::generic {

namespace impl {

/// One launch of `depth` steps (one step, or `depth` by temporal blocking), prepared: the
/// Views become strided grids, so the executor behind it (GenericSteps) is the library's
/// prebuilt instance whatever their layout and memory space.
template <int D, class ExecSpace, class InView, class OutView>
class GenericLauncher final : public Launcher<ExecSpace, InView, OutView> {
 public:
  using T     = typename OutView::non_const_value_type;
  using Steps = sparstencil::impl::GenericSteps<D, ExecSpace, T>;

  GenericLauncher(const ExecSpace& space, const Stencil<D>& stencil, const InView& in, const OutView& out,
                  Boundary boundary, int depth, const generic::Options& options)
      : m_steps(std::make_unique<const Steps>(stencil)),
        m_launch(m_steps->prepare(space, input(in), output(out), boundary, depth, options.variant, options.tuning)) {}

  void launch(const ExecSpace&, const InView& in, const OutView& out) const override {
    m_launch.run(input(in), output(out), false);
  }
  void launch_rim_held(const ExecSpace&, const InView& in, const OutView& out) const override {
    m_launch.run(input(in), output(out), /*rim_held*/ true);
  }
  std::string describe() const override { return m_launch.variant; }
  /// Kokkos' light-weight CUDA launches (the kernel in its parameters, team scratch only)
  /// are recorded by stream capture as they are; the exchanging kernel's cooperative
  /// launch is not.
  bool capturable() const override {
#if defined(KOKKOS_ENABLE_CUDA)
    return std::is_same_v<ExecSpace, Kokkos::Cuda> && !m_launch.exchange;
#else
    return false;
#endif
  }

  static typename Steps::InGrid input(const InView& in) {
    return sparstencil::impl::as_input(sparstencil::impl::strided_grid(in));
  }
  static typename Steps::OutGrid output(const OutView& out) { return sparstencil::impl::strided_grid(out); }

 private:
  std::unique_ptr<const Steps> m_steps;  ///< outlives m_launch, which uses it
  typename Steps::Launch m_launch;
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
  template <int D, class ExecSpace, class InView, class OutView, class UserOptions>
  static int steps_per_launch(const ExecSpace&, const Plan& plan, const Stencil<D>& stencil, const InView& in,
                              const OutView& out, const UserOptions& options, bool forced) {
    if (plan.fused_steps == 1 || (!forced && !plan.predicted.temporal_blocking)) return 1;
    using Launcher = impl::GenericLauncher<D, ExecSpace, InView, OutView>;
    const typename Launcher::Steps steps(stencil);
    return steps.fused_depth(Launcher::input(in), Launcher::output(out), plan.fused_steps, options.generic.variant,
                             plan.boundary);
  }

  template <class ExecSpace, class InView, class OutView, int D, class UserOptions>
  static std::unique_ptr<Launcher<ExecSpace, InView, OutView>> launcher(const ExecSpace& space, const Plan& plan,
                                                                        const Stencil<D>& stencil, const InView& in,
                                                                        const OutView& out,
                                                                        const UserOptions& options) {
    return std::make_unique<impl::GenericLauncher<D, ExecSpace, InView, OutView>>(
        space, stencil, in, out, plan.boundary, plan.fused_steps, options.generic);
  }
};

}  // namespace sparstencil::generic
