#pragma once
/// The GPU runtime names the backends' device code uses, mapped to CUDA or HIP (as hipify
/// maps them; the dense executor's one source builds for both vendors), and the check
/// every runtime call and launch of every backend goes through: a failure clears the
/// runtime's last error and throws std::runtime_error naming the call, the error and the
/// source line.
#include <sstream>
#include <stdexcept>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define SPARSTENCIL_GPU_AMD 1
namespace sparstencil::gpu {
using Error                    = hipError_t;
using Stream                   = hipStream_t;
using DeviceProperties         = hipDeviceProp_t;
inline constexpr Error success = hipSuccess;
inline Error malloc_bytes(void** p, std::size_t bytes) { return hipMalloc(p, bytes); }
inline Error free_bytes(void* p) { return hipFree(p); }
inline Error copy_to_device(void* to, const void* from, std::size_t bytes) {
  return hipMemcpy(to, from, bytes, hipMemcpyHostToDevice);
}
inline Error current_device(int* device) { return hipGetDevice(device); }
inline Error properties(DeviceProperties* p, int device) { return hipGetDeviceProperties(p, device); }
inline Error last_error() { return hipGetLastError(); }
inline const char* error_name(Error e) { return hipGetErrorName(e); }
inline const char* error_string(Error e) { return hipGetErrorString(e); }
}  // namespace sparstencil::gpu
#else
#include <cuda_runtime.h>
namespace sparstencil::gpu {
using Error                    = cudaError_t;
using Stream                   = cudaStream_t;
using DeviceProperties         = cudaDeviceProp;
inline constexpr Error success = cudaSuccess;
inline Error malloc_bytes(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
inline Error free_bytes(void* p) { return cudaFree(p); }
inline Error copy_to_device(void* to, const void* from, std::size_t bytes) {
  return cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice);
}
inline Error current_device(int* device) { return cudaGetDevice(device); }
inline Error properties(DeviceProperties* p, int device) { return cudaGetDeviceProperties(p, device); }
inline Error last_error() { return cudaGetLastError(); }
inline const char* error_name(Error e) { return cudaGetErrorName(e); }
inline const char* error_string(Error e) { return cudaGetErrorString(e); }
#if defined(__CUDACC__)
/// x rounded to tf32 (cvt.rna: ties away from zero, as the host's impl::tf32_bits): the
/// bits of a float whose low 13 mantissa bits are zero, what tf32 matrix instructions take.
__device__ __forceinline__ unsigned tf32_bits(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}
#endif
}  // namespace sparstencil::gpu
#endif

namespace sparstencil::gpu {

inline void check(Error status, const char* call, const char* file, int line) {
  if (status != success) {
    (void)last_error();  // a later check reports its own failure, not this one
    std::ostringstream message;
    message << "sparstencil::gpu: " << call << " failed: " << error_name(status) << " (" << error_string(status)
            << ") at " << file << ":" << line;
    throw std::runtime_error(message.str());
  }
}

}  // namespace sparstencil::gpu

#define SPARSTENCIL_GPU_CHECK(call) ::sparstencil::gpu::check((call), #call, __FILE__, __LINE__)
/// After a <<<...>>> launch: catches bad launch configurations at once.
#define SPARSTENCIL_GPU_CHECK_LAUNCH() SPARSTENCIL_GPU_CHECK(::sparstencil::gpu::last_error())
