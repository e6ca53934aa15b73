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
/// The runtime's name for `name` (Malloc: hipMalloc or cudaMalloc).
#define SPARSTENCIL_GPU_API(name) hip##name
namespace sparstencil::gpu {
using DeviceProperties = hipDeviceProp_t;
}
#else
#include <cuda_runtime.h>
#define SPARSTENCIL_GPU_API(name) cuda##name
namespace sparstencil::gpu {
using DeviceProperties = cudaDeviceProp;
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
using Error                    = SPARSTENCIL_GPU_API(Error_t);
using Stream                   = SPARSTENCIL_GPU_API(Stream_t);
inline constexpr Error success = SPARSTENCIL_GPU_API(Success);
inline Error malloc_bytes(void** p, std::size_t bytes) { return SPARSTENCIL_GPU_API(Malloc)(p, bytes); }
inline Error free_bytes(void* p) { return SPARSTENCIL_GPU_API(Free)(p); }
inline Error copy_to_device(void* to, const void* from, std::size_t bytes) {
  return SPARSTENCIL_GPU_API(Memcpy)(to, from, bytes, SPARSTENCIL_GPU_API(MemcpyHostToDevice));
}
inline Error current_device(int* device) { return SPARSTENCIL_GPU_API(GetDevice)(device); }
inline Error properties(DeviceProperties* p, int device) { return SPARSTENCIL_GPU_API(GetDeviceProperties)(p, device); }
inline Error last_error() { return SPARSTENCIL_GPU_API(GetLastError)(); }
inline const char* error_name(Error e) { return SPARSTENCIL_GPU_API(GetErrorName)(e); }
inline const char* error_string(Error e) { return SPARSTENCIL_GPU_API(GetErrorString)(e); }
}  // namespace sparstencil::gpu

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
