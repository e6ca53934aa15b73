#pragma once
/// The shared-memory and matrix-fragment instructions the row-run kernel's stages issue
/// (PTX inline: ldmatrix, stmatrix, 16-byte shared loads and stores), and the packing of
/// two results into one word of 16-bit values.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "SparStencil_SparseKernel.cuh"

namespace sparstencil::cuda_sptc::impl {

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&b)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(address));
}
/// sm_90 and newer.
__device__ __forceinline__ void stmatrix_x4_trans(unsigned address, std::uint32_t r0, std::uint32_t r1,
                                                  std::uint32_t r2, std::uint32_t r3) {
#if __CUDA_ARCH__ >= 900
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(address), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3));
#endif
}
__device__ __forceinline__ uint4 ld_shared_v4(unsigned address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(address));
  return v;
}
using gpu::st_global_v4;
__device__ __forceinline__ void st_shared_v4(unsigned address, std::uint32_t x, std::uint32_t y, std::uint32_t z,
                                             std::uint32_t w) {
  asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"r"(address), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}
__device__ __forceinline__ unsigned ld_shared_u32(unsigned address) {
  unsigned v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(address));
  return v;
}

/// Two results as one 32-bit word of 16-bit values (`lo` in the low half).
template <Operand P>
__device__ __forceinline__ std::uint32_t pack_pair(float lo, float hi) {
  if constexpr (P == Operand::f16) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
}

}  // namespace sparstencil::cuda_sptc::impl
