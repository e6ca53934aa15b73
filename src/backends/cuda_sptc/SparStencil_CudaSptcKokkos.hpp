#pragma once
/// The CUDA sparse tensor-core executor's Kokkos trait (SparStencil_KokkosBackend.hpp):
/// Views in Kokkos::CudaSpace run on Kokkos::Cuda, on a device of compute capability 8.0+.
/// Compiled in where Kokkos has CUDA and the library was built with the executor
/// (SPARSTENCIL_ENABLE_CUDA_SPTC); elsewhere `runs()` is false and nothing of it is
/// instantiated.
///
/// half_t Views are planned with f16 operands (storage precision: nothing is lost beyond
/// the documented bound). float Views go to tensor cores only when the backend is named
/// (Options::backend) or tf32 is allowed (Options::float_operands), as tf32 operands
/// (docs/PRECISION.md). LayoutLeft Views are planned
/// with their axes reversed, so the contiguous axis is the plan's fastest; LayoutStride
/// Views run with their strides (the fast copies need a contiguous last axis).
#include <Kokkos_Core.hpp>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "SparStencil_Config.hpp"
#include "SparStencil_KokkosBackend.hpp"
#include "SparStencil_StridedLauncher.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_CUDA_SPTC)
#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_SparseExecutor.hpp"
#endif

namespace sparstencil::cuda_sptc {

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_CUDA_SPTC)

struct KokkosBackend : sparstencil::impl::RawExecutorTrait<SparseExecutor> {
  static constexpr std::string_view name = "cuda_sptc";
  static constexpr std::string_view requirement =
      "it takes Views in Kokkos::CudaSpace run on Kokkos::Cuda holding half_t (f16), or float (tf32) where asked";

  template <class ExecSpace, class InView, class OutView>
  static constexpr bool runs() {
    using T = typename OutView::non_const_value_type;
    return std::is_same_v<ExecSpace, Kokkos::Cuda> &&
           std::is_same_v<typename InView::memory_space, Kokkos::CudaSpace> &&
           std::is_same_v<typename OutView::memory_space, Kokkos::CudaSpace> &&
           (std::is_same_v<T, Kokkos::Experimental::half_t> || std::is_same_v<T, float>);
  }

  /// f16 for half_t; tf32 for float only where the user asked (named this backend or
  /// allowed tf32): float keeps f32 accuracy otherwise (f16/bf16 operands of float Views:
  /// the dense backend's).
  template <class T>
  static std::optional<Precision> precision(Precision floats) {
    if constexpr (std::is_same_v<T, Kokkos::Experimental::half_t>) return Precision::f16;
    else if constexpr (std::is_same_v<T, float>)
      return floats == Precision::tf32 ? std::optional(Precision::tf32) : std::nullopt;
    else return std::nullopt;
  }

  template <class ExecSpace>
  static std::optional<std::string> cannot_run(const ExecSpace& space) {
    const DeviceInfo info = device_info(space.cuda_device());
    if (has_sparse_tensor_cores(info)) return std::nullopt;
    return "device " + info.name + " (compute capability " + std::to_string(info.major) + "." +
           std::to_string(info.minor) + ") has no sparse tensor cores: 8.0 or newer is needed";
  }
};

#else

/// Not built here (no Kokkos CUDA or no CUDA executor): runs nothing, so the front-end
/// asks nothing else of it.
struct KokkosBackend {
  static constexpr std::string_view name = "cuda_sptc";
  static constexpr std::string_view requirement =
      "the sparse executor is not built here: it needs Kokkos with CUDA and SparStencil built with "
      "SparStencil_ENABLE_CUDA_SPTC";
  template <class ExecSpace, class InView, class OutView>
  static constexpr bool runs() {
    return false;
  }
};

#endif

}  // namespace sparstencil::cuda_sptc
