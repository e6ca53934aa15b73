#pragma once
/// A Launcher (SparStencil_KokkosBackend.hpp) for the raw-API GPU executors (cuda_sptc,
/// dense): the executor built once from the plan, each launch handing it the Views'
/// pointers and strides in the plan's axis order (LayoutLeft reversed) and the space's
/// CUDA or HIP stream. RawExecutorTrait: the members those executors' Kokkos traits share.
#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <type_traits>

#include "SparStencil_KokkosBackend.hpp"

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
namespace sparstencil::impl {

/// The runtime stream a device execution space enqueues on.
#if defined(KOKKOS_ENABLE_CUDA)
inline cudaStream_t native_stream(const Kokkos::Cuda& space) { return space.cuda_stream(); }
#else
inline hipStream_t native_stream(const Kokkos::HIP& space) { return space.hip_stream(); }
#endif

template <int D, class Executor, class ExecSpace, class InView, class OutView>
class StridedLauncher final : public Launcher<ExecSpace, InView, OutView> {
 public:
  explicit StridedLauncher(const Plan& plan) : m_executor(plan) {}

  void launch(const ExecSpace& space, const InView& in, const OutView& out) const override {
    constexpr bool reversed = std::is_same_v<typename OutView::array_layout, Kokkos::LayoutLeft>;
    long in_strides[D], out_strides[D];
    for (int a = 0; a < D; ++a) {
      const int axis = reversed ? D - 1 - a : a;
      in_strides[a]  = static_cast<long>(in.stride(axis));
      out_strides[a] = static_cast<long>(out.stride(axis));
    }
    m_executor.apply(in.data(), in_strides, out.data(), out_strides, native_stream(space));
  }
  std::string describe() const override { return m_executor.describe(); }
  bool capturable() const override { return true; }

 private:
  Executor m_executor;
};

/// What the Kokkos traits of the raw-API executors have in common: a plan runs its fused
/// steps in one launch, through a StridedLauncher of `Executor`.
template <class Executor>
struct RawExecutorTrait {
  template <int D, class ExecSpace, class InView, class OutView, class UserOptions>
  static int steps_per_launch(const ExecSpace&, const Plan& plan, const Stencil<D>&, const InView&, const OutView&,
                              const UserOptions&, bool) {
    return plan.fused_steps;
  }

  template <class ExecSpace, class InView, class OutView, int D, class UserOptions>
  static std::unique_ptr<Launcher<ExecSpace, InView, OutView>> launcher(const ExecSpace&, const Plan& plan,
                                                                        const Stencil<D>&, const InView&,
                                                                        const OutView&, const UserOptions&) {
    return std::make_unique<StridedLauncher<D, Executor, ExecSpace, InView, OutView>>(plan);
  }
};

}  // namespace sparstencil::impl
#endif
