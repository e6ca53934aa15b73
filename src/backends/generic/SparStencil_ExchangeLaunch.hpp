#pragma once
/// The cooperative launch of an ExchangeTemporalKernel (SparStencil_ExchangeTemporalKernel.hpp):
/// its tiles all run at once, exchanging their edges through tagged words in device memory.
#include "SparStencil_ExchangeTemporalKernel.hpp"

#if defined(SPARSTENCIL_BLOCK_LAUNCH)
#include <cstddef>
#include <cstdint>

namespace sparstencil::impl {

/// Compiled for one block of the kernel's threads an SM: the rings of sums of every level
/// want up to 255 registers a thread (a star's 256 threads; a box's 512 have 128).
template <class Kernel>
__global__ void __launch_bounds__(Kernel::threads, 1) exchange_kernel(const Kernel kernel) {
  extern __shared__ uint4 exchange_shared[];
  kernel(reinterpret_cast<typename Kernel::value_type*>(exchange_shared));
}

/// Launches of an ExchangeTemporalKernel on `space`'s stream, made ready once: the shared
/// memory asked for, its tiles' words in device memory, the blocks the device holds at once
/// counted. Each launch zeroes the words first (no word carries a tag the launch waits
/// for, also where a graph replays it) and is cooperative, so its blocks all run at once or
/// the launch fails.
template <class Kernel>
class ExchangeLaunch {
  static_assert(sizeof(Kernel) <= 4096, "a kernel launched as a CUDA block must fit the launch parameters");

 public:
  explicit ExchangeLaunch(const Kokkos::Cuda& space) : m_stream(space.cuda_stream()) {
    const long most = block_shared_max(space.cuda_device());
    if (Kernel::scratch_bytes() > most) {
      fail("iterate", "generic variant: ", Kernel::label, " needs ", Kernel::scratch_bytes(),
           " bytes of shared memory a block, the device offers ", most);
    }
    SPARSTENCIL_GPU_CHECK(cudaFuncSetAttribute(exchange_kernel<Kernel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(Kernel::scratch_bytes())));
    int blocks = 0, multiprocessors = 0, cooperative = 0;
    SPARSTENCIL_GPU_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, exchange_kernel<Kernel>, Kernel::threads, static_cast<std::size_t>(Kernel::scratch_bytes())));
    SPARSTENCIL_GPU_CHECK(
        cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, space.cuda_device()));
    SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, space.cuda_device()));
    m_resident = cooperative ? static_cast<long>(blocks) * multiprocessors : 0;
  }
  ExchangeLaunch(const ExchangeLaunch&)            = delete;
  ExchangeLaunch& operator=(const ExchangeLaunch&) = delete;
  ~ExchangeLaunch() {
    if (m_words) (void)cudaFree(m_words);  // (a destructor throws nothing)
  }
  /// Blocks the device runs at once (0: no cooperative launches).
  long resident() const { return m_resident; }
  /// Words for `tiles` tiles.
  void reserve(long tiles) {
    m_bytes = static_cast<std::size_t>(tiles * Kernel::tile_words) * sizeof(typename Kernel::Word);
    SPARSTENCIL_GPU_CHECK(cudaMalloc(reinterpret_cast<void**>(&m_words), m_bytes));
    m_tiles = tiles;
  }
  /// Launches `kernel` over the tiles.
  void operator()(Kernel kernel) const {
    kernel.words = m_words;
    SPARSTENCIL_GPU_CHECK(cudaMemsetAsync(m_words, 0, m_bytes, m_stream));
    void* arguments[] = {&kernel};
    gpu::check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(exchange_kernel<Kernel>),
                                           dim3(static_cast<unsigned>(m_tiles)), dim3(Kernel::threads), arguments,
                                           static_cast<std::size_t>(Kernel::scratch_bytes()), m_stream),
               Kernel::label, __FILE__, __LINE__);
  }

 private:
  cudaStream_t m_stream;
  long m_resident                = 0;
  long m_tiles                   = 0;
  std::size_t m_bytes            = 0;
  typename Kernel::Word* m_words = nullptr;
};

}  // namespace sparstencil::impl
#endif
