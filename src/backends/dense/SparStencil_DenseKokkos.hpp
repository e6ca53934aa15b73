#pragma once
/// The dense matrix-core executor's Kokkos trait (SparStencil_KokkosBackend.hpp): Views in
/// Kokkos::CudaSpace run on Kokkos::Cuda, on a device of compute capability 8.0+, holding
/// half_t (f16 operands) or double (f64 operands); float Views only where the backend is
/// named (Options::backend: tf32 operands) or Options::float_operands allows, as tf32, f16
/// or bf16 operands (docs/PRECISION.md): float keeps f32 accuracy otherwise. Compiled in where Kokkos has CUDA and
/// the library was built with the dense CUDA executor (SPARSTENCIL_ENABLE_DENSE_CUDA);
/// elsewhere `runs()` is false and nothing of it is instantiated. (The executor's HIP
/// build is compiled, not dispatched to: no Kokkos with HIP is at hand to test it.)
/// LayoutLeft Views are planned with their axes reversed; LayoutStride Views run with
/// their strides.
#include <Kokkos_Core.hpp>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "SparStencil_Config.hpp"
#include "SparStencil_KokkosBackend.hpp"
#include "SparStencil_StridedLauncher.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_DENSE_CUDA)
#include "SparStencil_DenseExecutor.hpp"
#endif

namespace sparstencil::dense {

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_DENSE_CUDA)

struct KokkosBackend : sparstencil::impl::RawExecutorTrait<DenseExecutor> {
  static constexpr std::string_view name = "dense";
  static constexpr std::string_view requirement =
      "it takes Views in Kokkos::CudaSpace run on Kokkos::Cuda holding half_t (f16), double (f64), or float (as "
      "tf32, f16 or bf16 operands) where asked";

  template <class ExecSpace, class InView, class OutView>
  static constexpr bool runs() {
    using T = typename OutView::non_const_value_type;
    return std::is_same_v<ExecSpace, Kokkos::Cuda> &&
           std::is_same_v<typename InView::memory_space, Kokkos::CudaSpace> &&
           std::is_same_v<typename OutView::memory_space, Kokkos::CudaSpace> &&
           (std::is_same_v<T, Kokkos::Experimental::half_t> || std::is_same_v<T, double> ||
            std::is_same_v<T, float>);
  }

  /// f16 for half_t, f64 for double; for float what the user asked (tf32, or f16/bf16
  /// read from the float grids): float keeps f32 accuracy otherwise.
  template <class T>
  static std::optional<Precision> precision(Precision floats) {
    if constexpr (std::is_same_v<T, Kokkos::Experimental::half_t>) return Precision::f16;
    else if constexpr (std::is_same_v<T, double>) return Precision::f64;
    else if constexpr (std::is_same_v<T, float>) return floats == Precision::f32 ? std::nullopt : std::optional(floats);
    else return std::nullopt;
  }

  template <class ExecSpace>
  static std::optional<std::string> cannot_run(const ExecSpace& space) {
    cudaDeviceProp props{};
    if (cudaGetDeviceProperties(&props, space.cuda_device()) != cudaSuccess) {
      return std::string("the CUDA device's properties could not be read");
    }
    if (props.major >= 8) return std::nullopt;
    return "device " + std::string(props.name) + " (compute capability " + std::to_string(props.major) + "." +
           std::to_string(props.minor) + ") has no mma.sync of the dense kernel: 8.0 or newer is needed";
  }
};

#else

/// Not built here (no Kokkos CUDA or no dense CUDA executor): runs nothing.
struct KokkosBackend {
  static constexpr std::string_view name = "dense";
  static constexpr std::string_view requirement =
      "the dense executor is not built here: it needs Kokkos with CUDA and SparStencil built with "
      "SparStencil_ENABLE_DENSE_CUDA";
  template <class ExecSpace, class InView, class OutView>
  static constexpr bool runs() {
    return false;
  }
};

#endif

}  // namespace sparstencil::dense
