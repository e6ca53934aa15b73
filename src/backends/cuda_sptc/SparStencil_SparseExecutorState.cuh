#pragma once
/// What a SparseExecutor holds once set up (its kernel, launch shape and device tables),
/// shared by the executor's sources: its entry points (SparStencil_SparseExecutor.cu) and
/// the set-up of each kernel family (SparStencil_GatherSetUp.cu, SparStencil_RowRunSetUp.cu,
/// SparStencil_WallSetUp.cu), each of which instantiates only its own kernels.
#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_RowRunParams.cuh"
#include "SparStencil_SparseExecutor.hpp"
#include "SparStencil_SparseKernel.cuh"
#include "SparStencil_WallKernel.cuh"

namespace sparstencil::cuda_sptc {

namespace impl {

using Kernel     = void (*)(KernelParams);
using RunKernel  = void (*)(RowRunParams);
using WallKernel = void (*)(WallParams);

/// A D-vector as the kernel's 3-D form: leading axes of extent `fill`.
template <class T>
std::array<T, 3> padded(const T* v, std::size_t n, T fill) {
  std::array<T, 3> out{fill, fill, fill};
  std::copy(v, v + n, out.begin() + (3 - n));
  return out;
}
template <class T>
std::array<T, 3> padded(const std::vector<T>& v, T fill) {
  return padded(v.data(), v.size(), fill);
}

template <class T>
T* upload(const std::vector<T>& host) {
  T* device = nullptr;
  SPARSTENCIL_GPU_CHECK(cudaMalloc(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
  SPARSTENCIL_GPU_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

inline long round_up(long v, long m) { return (v + m - 1) / m * m; }

}  // namespace impl

struct SparseExecutor::State {
  Plan plan;
  impl::KernelParams params;
  impl::Kernel kernel = nullptr;
  impl::RowRunParams run_params;  ///< row-run plans
  impl::RunKernel run_kernel = nullptr;
  const char* run_loop       = "";  ///< the row-run kernel's loop over k chunks, for describe()
  int held_chunks            = 0;
  int block_threads          = impl::threads_per_block;
  int device                 = 0;
  int element_bytes          = 0;
  std::size_t shared_bytes   = 0;
  long grid_blocks           = 0;
  std::vector<long> contiguous;  ///< row-major strides of the plan's grid
  impl::WallParams wall_params;  ///< the wall kernel (interior, fixed_rim), where it has work
  impl::WallKernel wall_kernel  = nullptr;
  long wall_blocks              = 0;
  std::size_t wall_shared_bytes = 0;
  int wall_threads              = 0;
  /// The walls variant of the row-run kernel (2-D, 3-D) stores no point of the band where
  /// the output is aligned: the wall kernel then runs beside it, on its own stream between
  /// two events (its blocks take the SMs the sparse launch's last warps leave).
  bool walls_variant       = false;
  cudaStream_t wall_stream = nullptr;
  cudaEvent_t wall_fork = nullptr, wall_join = nullptr;
  std::vector<void*> allocations;

  ~State() {
    for (void* p : allocations) cudaFree(p);  // no throw from a destructor
    if (wall_stream != nullptr) cudaStreamDestroy(wall_stream);
    if (wall_fork != nullptr) cudaEventDestroy(wall_fork);
    if (wall_join != nullptr) cudaEventDestroy(wall_join);
  }
  /// Launch shape and tables of a gather plan (`plan` set: tile, gather and A' tables).
  void set_up_gather(const DeviceInfo& info, impl::Operand op);
  /// Launch shape and tables of a row-run plan (`plan` set).
  void set_up_row_runs(const DeviceInfo& info, impl::Operand op);
  /// The wall kernel's boxes and one step's terms, where the plan has wall work.
  void set_up_walls(impl::Operand op);
  /// Enqueues the wall kernel (none where it has no work) on `stream`, or `beside` the
  /// sparse launch enqueued by `sparse()` on the wall stream.
  template <class Sparse>
  void launch_with_walls(const void* in, const long* in_strides, void* out, const long* out_strides,
                         cudaStream_t stream, bool beside, Sparse&& sparse) const;
  /// Fails where `bytes` of dynamic shared memory a block (`blocks_need`: "a block needs ")
  /// pass the device's limit, and lets `kernel` take up to that limit: the device's, not
  /// this plan's need, as the attribute is the function's and a smaller one set by a later
  /// executor would refuse this one's launches.
  template <class Kernel>
  void allow_shared(Kernel kernel, std::size_t bytes, const char* blocks_need) const {
    int limit = 0;
    SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (bytes > static_cast<std::size_t>(limit)) {
      sparstencil::impl::fail("SparseExecutor", blocks_need, bytes, " bytes of shared memory, the device allows ",
                              limit);
    }
    SPARSTENCIL_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit));
  }
  template <class T>
  const T* keep(T* p) {
    allocations.push_back(p);
    return p;
  }
};

}  // namespace sparstencil::cuda_sptc
