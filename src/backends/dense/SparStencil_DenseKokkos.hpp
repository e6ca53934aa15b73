#pragma once
/// The dense matrix-core executor's Kokkos trait (SparStencil_KokkosBackend.hpp): Views in
/// the device memory of the vendor the executor was built for (Kokkos::CudaSpace run on
/// Kokkos::Cuda, a device of compute capability 8.0+; or Kokkos::HIPSpace run on
/// Kokkos::HIP, an AMD gfx90a), holding half_t (f16 operands) or double (f64
/// operands); float Views only where the backend is named (Options::backend: tf32
/// operands, NVIDIA only) or Options::float_operands allows, as tf32, f16 or bf16 operands
/// (docs/PRECISION.md): float keeps f32 accuracy otherwise. Compiled in where Kokkos has
/// CUDA and the library was built with the dense CUDA executor
/// (SPARSTENCIL_ENABLE_DENSE_CUDA), or Kokkos has HIP and it was built with HIP
/// (SPARSTENCIL_ENABLE_DENSE_HIP); elsewhere `runs()` is false and nothing of it is
/// instantiated. LayoutLeft Views are planned with their axes reversed; LayoutStride Views
/// run with their strides.
#include <Kokkos_Core.hpp>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "SparStencil_Config.hpp"
#include "SparStencil_Device.hpp"
#include "SparStencil_KokkosBackend.hpp"
#include "SparStencil_StridedLauncher.hpp"

#if (defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_DENSE_CUDA)) || \
    (defined(KOKKOS_ENABLE_HIP) && defined(SPARSTENCIL_ENABLE_DENSE_HIP))
#define SPARSTENCIL_DENSE_DISPATCH 1
#include "SparStencil_DenseExecutor.hpp"
#include "SparStencil_GpuRuntime.hpp"
#endif

namespace sparstencil::dense {

#if defined(SPARSTENCIL_DENSE_DISPATCH)

#if defined(KOKKOS_ENABLE_CUDA)
using DeviceSpace  = Kokkos::Cuda;
using DeviceMemory = Kokkos::CudaSpace;
#else
using DeviceSpace  = Kokkos::HIP;
using DeviceMemory = Kokkos::HIPSpace;
#endif

struct KokkosBackend : sparstencil::impl::RawExecutorTrait<DenseExecutor> {
  static constexpr std::string_view name = "dense";
#if defined(KOKKOS_ENABLE_CUDA)
  static constexpr std::string_view requirement =
      "it takes Views in Kokkos::CudaSpace run on Kokkos::Cuda holding half_t (f16), double (f64), or float (as "
      "tf32, f16 or bf16 operands) where asked";
#else
  static constexpr std::string_view requirement =
      "it takes Views in Kokkos::HIPSpace run on Kokkos::HIP holding half_t (f16), double (f64), or float (as f16 "
      "or bf16 operands) where asked";
#endif

  template <class ExecSpace, class InView, class OutView>
  static constexpr bool runs() {
    using T = typename OutView::non_const_value_type;
    return std::is_same_v<ExecSpace, DeviceSpace> && std::is_same_v<typename InView::memory_space, DeviceMemory> &&
           std::is_same_v<typename OutView::memory_space, DeviceMemory> &&
           (std::is_same_v<T, Kokkos::Experimental::half_t> || std::is_same_v<T, double> || std::is_same_v<T, float>);
  }

  /// f16 for half_t, f64 for double; for float what the user asked (tf32, or f16/bf16
  /// read from the float grids): float keeps f32 accuracy otherwise. (The planner refuses
  /// tf32 on a device without it, naming the device.)
  template <class T>
  static std::optional<Precision> precision(Precision floats) {
    if constexpr (std::is_same_v<T, Kokkos::Experimental::half_t>) return Precision::f16;
    else if constexpr (std::is_same_v<T, double>) return Precision::f64;
    else if constexpr (std::is_same_v<T, float>) return floats == Precision::f32 ? std::nullopt : std::optional(floats);
    else return std::nullopt;
  }

#if defined(KOKKOS_ENABLE_CUDA)
  /// Why the device cannot run the dense kernels, or nothing; a failed read of its
  /// properties is an error, not a reason (SPARSTENCIL_GPU_CHECK throws).
  static std::optional<std::string> cannot_run(const Kokkos::Cuda& space) {
    gpu::DeviceProperties props{};
    SPARSTENCIL_GPU_CHECK(gpu::properties(&props, space.cuda_device()));
    if (props.major >= 8) return std::nullopt;
    return "device " + std::string(props.name) + " (compute capability " + std::to_string(props.major) + "." +
           std::to_string(props.minor) + ") has no mma.sync of the dense kernel: 8.0 or newer is needed";
  }
#else
  /// As on CUDA: a failed read of the properties throws, an unsupported device is a reason.
  static std::optional<std::string> cannot_run(const Kokkos::HIP& space) {
    gpu::DeviceProperties props{};
    SPARSTENCIL_GPU_CHECK(gpu::properties(&props, space.hip_device()));
    // The raw executor also takes gfx94x; the planner has matrix cores described for
    // gfx90a only.
    const std::string device = amd_device_name(props.gcnArchName);
    if (device_description(device).has_dense_matrix_cores()) return std::nullopt;
    return "device " + std::string(props.name) + " (" + props.gcnArchName + ", described as " + device +
           ") has no matrix cores the dense backend is planned for: gfx90a (MI200) is";
  }
#endif
};

#else

/// Not built here (no Kokkos on a GPU of the executor's vendors, or the executor not built): runs nothing.
struct KokkosBackend {
  static constexpr std::string_view name = "dense";
  static constexpr std::string_view requirement =
      "the dense executor is not built here: it needs Kokkos with CUDA and SparStencil built with "
      "SparStencil_ENABLE_DENSE_CUDA, or Kokkos with HIP and SparStencil_ENABLE_DENSE_HIP";
  template <class ExecSpace, class InView, class OutView>
  static constexpr bool runs() {
    return false;
  }
};

#endif

}  // namespace sparstencil::dense
