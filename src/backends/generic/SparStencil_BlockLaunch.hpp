#pragma once
/// A team kernel launched as a plain CUDA kernel, one block a team (docs/GENERIC.md), for
/// the streaming temporal kernel: its deep tiles need more shared memory than Kokkos lets a
/// team take on CUDA (48 KiB; a block may ask for up to the device's opt-in limit, 227 KiB
/// on the H100), and its chunks are cut to the blocks the device holds at once, which the
/// occupancy calculator knows for a kernel of our own. Only where Kokkos has CUDA and the
/// compiler is nvcc (SPARSTENCIL_BLOCK_LAUNCH); elsewhere the Kokkos team launch runs.
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
#define SPARSTENCIL_BLOCK_LAUNCH 1
#include "SparStencil_Error.hpp"
#include "SparStencil_GenericKernels.hpp"
#include "SparStencil_GpuRuntime.hpp"

namespace sparstencil::impl {

/// A one-dimensional CUDA block seen as a team.
struct CudaBlockTeam {
  __device__ int league_rank() const { return static_cast<int>(blockIdx.x); }
  __device__ int team_rank() const { return static_cast<int>(threadIdx.x); }
  __device__ void team_barrier() const { __syncthreads(); }
};

/// Compiled for teams of up to max_team_threads threads, `Kernel::blocks_per_sm` blocks an
/// SM at least (2: the register budget of the Kokkos launches, InteriorLaunchBounds).
template <class Kernel>
__global__ void __launch_bounds__(max_team_threads, Kernel::blocks_per_sm) block_team_kernel(const Kernel kernel) {
  extern __shared__ uint4 block_team_shared[];
  kernel.walk(CudaBlockTeam{}, reinterpret_cast<typename Kernel::value_type*>(block_team_shared));
}

/// The most shared memory a block may ask for on `device` (its opt-in limit).
inline long block_shared_max(int device) {
  int bytes = 0;
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return bytes;
}

/// Launches of `Kernel` (its `walk(team, scratch)` and `value_type`) on `space`'s stream,
/// `threads` threads and `bytes` of shared memory a block, made ready once: the shared
/// memory asked for, the blocks the device holds at once counted.
template <class Kernel>
class BlockLaunch {
  static_assert(sizeof(Kernel) <= 4096, "a kernel launched as a CUDA block must fit the launch parameters");

 public:
  BlockLaunch(const Kokkos::Cuda& space, int threads, long bytes, const char* label)
      : m_stream(space.cuda_stream()), m_threads(threads), m_bytes(bytes), m_label(label) {
    const long most = block_shared_max(space.cuda_device());
    if (threads < 1 || threads > max_team_threads) {
      fail("iterate", "generic variant: ", label, " takes 1 to ", max_team_threads, " threads a team, not ", threads);
    }
    if (bytes > most) {
      fail("iterate", "generic variant: ", label, " needs ", bytes, " bytes of shared memory a block for a tile ",
           "with its halo, the device offers ", most);
    }
    // The attribute is the kernel's, shared by every launch of it: the device's limit, so
    // that no launch prepared later lowers it under one prepared before.
    SPARSTENCIL_GPU_CHECK(cudaFuncSetAttribute(block_team_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(most)));
    int blocks = 0, multiprocessors = 0;
    SPARSTENCIL_GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, block_team_kernel<Kernel>, threads,
                                                                        static_cast<std::size_t>(bytes)));
    SPARSTENCIL_GPU_CHECK(
        cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, space.cuda_device()));
    if (blocks < 1) {
      fail("iterate", "generic variant: ", label, " with ", threads, " threads and ", bytes,
           " bytes of shared memory a block cannot run on this device");
    }
    m_resident = static_cast<long>(blocks) * multiprocessors;
  }
  /// Blocks the device runs at once.
  long resident() const { return m_resident; }
  void operator()(const Kernel& kernel, long blocks) const {
    block_team_kernel<Kernel>
        <<<static_cast<unsigned>(blocks), m_threads, static_cast<std::size_t>(m_bytes), m_stream>>>(kernel);
    gpu::check(gpu::last_error(), m_label, __FILE__, __LINE__);  // the launch, named by its variant
  }

 private:
  cudaStream_t m_stream;
  int m_threads;
  long m_bytes;
  const char* m_label;
  long m_resident = 0;
};

}  // namespace sparstencil::impl
#endif
