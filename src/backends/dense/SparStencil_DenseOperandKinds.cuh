#pragma once
/// The dense kernel's operand kinds (F16, BF16, TF32, F64): the bits its image holds, the
/// register a fragment's values travel in and the accumulator, the lane layout each kind
/// multiplies in on the vendor the code is compiled for (LayoutOf), and the roundings
/// between grid values, operand bits and stored sums. The image copies, the multiply and
/// the kernel are all written against these, so that one body serves every kind and both
/// vendors. Device code: included by SparStencil_DenseExecutor.cu only.
#include <type_traits>

#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_MatrixFragments.hpp"

#if !defined(SPARSTENCIL_GPU_AMD)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace sparstencil::dense::detail {

/// Operand kinds: the operand bits the image holds (tf32's: float, rounded to tf32 in
/// place; the grids hold these bits or, for f16/bf16, float: dense_kernel's Grid), the
/// register a fragment's values travel in (f16/bf16: two values a 32-bit register, the
/// low one first; tf32: one), and the accumulator.
struct F16 {
  using bits = unsigned short;
  using reg  = unsigned;
  using acc  = float;
};
struct BF16 {
  using bits = unsigned short;
  using reg  = unsigned;
  using acc  = float;
};
struct TF32 {
  using bits = float;
  using reg  = unsigned;
  using acc  = float;
};
struct F64 {
  using bits = double;
  using reg  = double;
  using acc  = double;
};

#if defined(SPARSTENCIL_GPU_AMD)
using Layout16 = AmdF16;
using Layout64 = AmdF64;
/// The register vectors the MFMA builtins take (SparStencil_DenseMultiply.cuh).
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4_ __attribute__((ext_vector_type(4)));
typedef float float4_ __attribute__((ext_vector_type(4)));
typedef double double4_ __attribute__((ext_vector_type(4)));

/// f32 to the storage bits, round to nearest even.
template <class Kind>
__device__ inline unsigned short to_bits(float x) {
  if constexpr (std::is_same_v<Kind, BF16>) {
    const unsigned u = __builtin_bit_cast(unsigned, x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);
    return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  } else {
    return __builtin_bit_cast(unsigned short, static_cast<_Float16>(x));
  }
}
#else
using Layout16 = NvidiaF16;
// The f64 layout of the code the device runs: sm_90's m16n8k4 at twice m8n8k4's rate
// (the executor reads which from the kernel's PTX version).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
using Layout64 = NvidiaF64Sm90;
#else
using Layout64 = NvidiaF64;
#endif

template <class Kind>
__device__ inline unsigned short to_bits(float x) {
  if constexpr (std::is_same_v<Kind, BF16>) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  else return __half_as_ushort(__float2half_rn(x));
}

#endif

/// The lane layout of each kind the vendor's matrix cores multiply (none: not built).
template <class Kind>
struct LayoutFor;
template <>
struct LayoutFor<F16> {
  using type = Layout16;
};
template <>
struct LayoutFor<BF16> {
  using type = Layout16;
};
template <>
struct LayoutFor<F64> {
  using type = Layout64;
};
#if !defined(SPARSTENCIL_GPU_AMD)
template <>
struct LayoutFor<TF32> {
  using type = NvidiaTF32;
};
#endif
template <class Kind>
using LayoutOf = typename LayoutFor<Kind>::type;

/// A float value as Kind's operand bits, round to nearest (tf32: ties away, as cvt.rna).
template <class Kind>
__device__ inline typename Kind::bits operand_bits(float x) {
#if !defined(SPARSTENCIL_GPU_AMD)
  if constexpr (std::is_same_v<Kind, TF32>) return __uint_as_float(gpu::tf32_bits(x));
  else
#endif
    return to_bits<Kind>(x);
}

/// A sum as the grid stores it: float and double as they are, 16-bit grids rounded.
template <class Kind, class Grid>
__device__ inline Grid stored(typename Kind::acc x) {
  if constexpr (std::is_same_v<Grid, float> || std::is_same_v<Grid, double>) return static_cast<Grid>(x);
  else return to_bits<Kind>(x);
}

}  // namespace sparstencil::dense::detail
