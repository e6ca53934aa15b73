#pragma once
/// The duration of work launched on an execution space, for a distributed plan's
/// timelines (docs/DISTRIBUTED.md).

#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_CUDA)
#include "SparStencil_GpuRuntime.hpp"
#endif

#include <chrono>
#include <type_traits>

namespace sparstencil {
namespace impl {

/// The duration of work launched on an execution space, for timelines: CUDA events on
/// CUDA (launches return at once), the host's clock elsewhere (they return when done).
template <class ExecSpace>
class LaunchTimer {
 public:
  LaunchTimer()                              = default;
  LaunchTimer(const LaunchTimer&)            = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;
  ~LaunchTimer() {
#if defined(KOKKOS_ENABLE_CUDA)
    if (m_begin) cudaEventDestroy(m_begin);
    if (m_end) cudaEventDestroy(m_end);
#endif
  }
  template <class Launch>
  void time(const ExecSpace& space, Launch&& launch) {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      if (!m_begin) {
        SPARSTENCIL_GPU_CHECK(cudaEventCreate(&m_begin));
        SPARSTENCIL_GPU_CHECK(cudaEventCreate(&m_end));
      }
      SPARSTENCIL_GPU_CHECK(cudaEventRecord(m_begin, space.cuda_stream()));
      launch();
      SPARSTENCIL_GPU_CHECK(cudaEventRecord(m_end, space.cuda_stream()));
      return;
    }
#endif
    (void)space;
    const auto start = std::chrono::steady_clock::now();
    launch();
    m_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  /// The seconds the timed launch took; the space must have been fenced since.
  double seconds() const {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      float ms = 0;
      SPARSTENCIL_GPU_CHECK(cudaEventElapsedTime(&ms, m_begin, m_end));
      return ms * 1e-3;
    }
#endif
    return m_seconds;
  }

 private:
#if defined(KOKKOS_ENABLE_CUDA)
  cudaEvent_t m_begin = nullptr, m_end = nullptr;
#endif
  double m_seconds = 0;
};

}  // namespace impl

}  // namespace sparstencil
