#pragma once
/// Every CUDA runtime call and kernel launch goes through these: a failure throws
/// std::runtime_error naming the call, the CUDA error and the source line.
#include <cuda_runtime.h>

#include <sstream>
#include <stdexcept>

namespace sparstencil::cuda_sptc::impl {

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    std::ostringstream message;
    message << "sparstencil::cuda: " << call << " failed: " << cudaGetErrorName(status) << " ("
            << cudaGetErrorString(status) << ") at " << file << ":" << line;
    throw std::runtime_error(message.str());
  }
}

}  // namespace sparstencil::cuda_sptc::impl

#define SPARSTENCIL_CUDA_CHECK(call) ::sparstencil::cuda_sptc::impl::check((call), #call, __FILE__, __LINE__)
/// After a <<<...>>> launch: catches bad launch configurations at once.
#define SPARSTENCIL_CUDA_CHECK_LAUNCH() SPARSTENCIL_CUDA_CHECK(cudaGetLastError())
