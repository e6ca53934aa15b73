#pragma once
/// How halos travel between GPUs (docs/DISTRIBUTED.md): whether MPI takes device pointers,
/// the page-locked host memory for halos staged through the host, a high-priority stream
/// for the exchange's small kernels, and device memory mapped between the processes of
/// one host (CUDA IPC). Where Kokkos has no CUDA, only the host staging.

#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_Query_cuda_support
#endif
#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_CUDA)
#include "SparStencil_GpuRuntime.hpp"
#endif

#include <algorithm>
#include <cstddef>

namespace sparstencil {
namespace impl {

/// Whether this MPI takes CUDA device pointers (OpenMPI's query; others are taken not to).
inline bool mpi_takes_cuda_pointers() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// Host memory for halos staged through the host: page-locked where Kokkos has CUDA (copies
/// from pageable memory go through the driver's own staging, several times slower).
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

/// A CUDA stream of the device's highest priority for the exchange's small kernels, so
/// their blocks are placed ahead of the interior's waiting ones (also across the ranks
/// that share a GPU through MPS); destroyed with its owner, after every use of it.
class PriorityStream {
 public:
  PriorityStream()                                 = default;
  PriorityStream(const PriorityStream&)            = delete;
  PriorityStream& operator=(const PriorityStream&) = delete;
#if defined(KOKKOS_ENABLE_CUDA)
  ~PriorityStream() {
    if (m_stream) cudaStreamDestroy(m_stream);
  }
  /// The stream, made on `device` at the first call.
  cudaStream_t get(int device) {
    if (!m_stream) {
      int current = 0;
      SPARSTENCIL_GPU_CHECK(cudaGetDevice(&current));
      SPARSTENCIL_GPU_CHECK(cudaSetDevice(device));
      int least = 0, greatest = 0;
      SPARSTENCIL_GPU_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      SPARSTENCIL_GPU_CHECK(cudaStreamCreateWithPriority(&m_stream, cudaStreamNonBlocking, greatest));
      SPARSTENCIL_GPU_CHECK(cudaSetDevice(current));
    }
    return m_stream;
  }

 private:
  cudaStream_t m_stream = nullptr;
#endif
};

#if defined(KOKKOS_ENABLE_CUDA)
/// Device memory that processes on the same host can map (CUDA IPC): the buffer that
/// ranks on other GPUs of the host copy their halos into.
class IpcBuffer {
 public:
  IpcBuffer(std::size_t bytes, int device) {
    int current = 0;
    SPARSTENCIL_GPU_CHECK(cudaGetDevice(&current));
    SPARSTENCIL_GPU_CHECK(cudaSetDevice(device));
    const cudaError_t status = cudaMalloc(&m_data, std::max<std::size_t>(bytes, 1));
    // The caller's device comes back before a failed allocation throws; the check names
    // the call, not the variable that holds its status.
    SPARSTENCIL_GPU_CHECK(cudaSetDevice(current));
    ::sparstencil::gpu::check(status, "cudaMalloc", __FILE__, __LINE__);
  }
  IpcBuffer(const IpcBuffer&)            = delete;
  IpcBuffer& operator=(const IpcBuffer&) = delete;
  ~IpcBuffer() { cudaFree(m_data); }
  void* data() const { return m_data; }
  /// The handle another process opens, or the error that stops it.
  bool handle(cudaIpcMemHandle_t& h) const { return cudaIpcGetMemHandle(&h, m_data) == cudaSuccess; }

 private:
  void* m_data = nullptr;
};

/// A peer's IpcBuffer mapped into this process (peer access enabled as it is opened).
class IpcMapping {
 public:
  explicit IpcMapping(const cudaIpcMemHandle_t& h) {
    if (cudaIpcOpenMemHandle(&m_base, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      m_base = nullptr;
      cudaGetLastError();  // the failure is reported by base() being null, not left pending
    }
  }
  IpcMapping(const IpcMapping&)            = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  ~IpcMapping() {
    if (m_base) cudaIpcCloseMemHandle(m_base);
  }
  char* base() const { return static_cast<char*>(m_base); }

 private:
  void* m_base = nullptr;
};
#endif

}  // namespace impl

}  // namespace sparstencil
