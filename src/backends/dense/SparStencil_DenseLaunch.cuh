#pragma once
/// The dense kernel's launch from the host: the kernel instance of an operand kind, grid
/// format and dimension picked at run time for a plan's launch, its dynamic shared memory
/// allowed past the default limit first. Runtime calls go through SPARSTENCIL_GPU_CHECK
/// (SparStencil_GpuRuntime.hpp) for both vendors. Included by SparStencil_DenseExecutor.cu
/// only.
#include <algorithm>
#include <cstddef>

#include "SparStencil_DenseExecutor.hpp"
#include "SparStencil_DenseGpuKernel.cuh"
#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_GpuRuntime.hpp"

namespace sparstencil::dense::detail {

/// Lets `kernel` take `shared` bytes of dynamic shared memory where that passes the
/// default 48 KiB (the executor checked the device's limit). On CUDA the kernel's limit is
/// raised to the device's: it is the function's, not a launch's, and one set to this
/// plan's need would refuse another executor's larger launch of the same kernel.
template <class Kernel>
void allow_shared(Kernel kernel, std::size_t shared) {
  if (shared <= 48 * 1024) return;
#if defined(SPARSTENCIL_GPU_AMD)
  SPARSTENCIL_GPU_CHECK(hipFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                            hipFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
#else
  int device = 0, limit = 0;
  SPARSTENCIL_GPU_CHECK(cudaGetDevice(&device));
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  SPARSTENCIL_GPU_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             std::max(limit, static_cast<int>(shared))));
#endif
}

template <class Kind, class Grid = typename Kind::bits>
void launch_kind(int dims, const void* args, long blocks, std::size_t shared, Stream stream) {
  const dim3 grid(static_cast<unsigned>(blocks)), block(block_threads);
  if (dims == 1) allow_shared(dense_kernel<Kind, Grid, 1>, shared);
  else if (dims == 2) allow_shared(dense_kernel<Kind, Grid, 2>, shared);
  else allow_shared(dense_kernel<Kind, Grid, 3>, shared);
  switch (dims) {
    case 1:
      dense_kernel<Kind, Grid, 1><<<grid, block, shared, stream>>>(*static_cast<const DenseArgs<1>*>(args));
      break;
    case 2:
      dense_kernel<Kind, Grid, 2><<<grid, block, shared, stream>>>(*static_cast<const DenseArgs<2>*>(args));
      break;
    default:
      dense_kernel<Kind, Grid, 3><<<grid, block, shared, stream>>>(*static_cast<const DenseArgs<3>*>(args));
      break;
  }
  SPARSTENCIL_GPU_CHECK_LAUNCH();
}

}  // namespace sparstencil::dense::detail
