#pragma once
/// The wall kernel: after the sparse kernel, under interior and fixed_rim, the points of
/// the wall band (SparStencil_WallBands.hpp: what a fused launch cannot give exactly, and
/// the runs at a wall the sparse kernel leaves), t single steps each; under fixed_rim also
/// the rim, the input's values. A thread block
/// takes a box of outputs: it loads the box's region (the box and t r_a around, inside
/// the grid) into shared memory as float, runs the t steps there (step s on the box widened
/// by (t - s) r_a; rim points keep their values, the others take the one-step stencil,
/// operands rounded as the sparse kernel rounds them, sums in f32, results rounded to
/// storage each step), and writes the box's points off the rim (and, fixed_rim, on it).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "SparStencil_SparseKernel.cuh"

namespace sparstencil::cuda_sptc::impl {

struct WallParams {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[3]{};  ///< padded 3-D
  long in_stride[3]{};
  long out_stride[3]{};
  int radius[3]{};  ///< one step's (the rim)
  int steps    = 1;
  int boundary = 2;  ///< 1 interior, 2 fixed_rim
  int terms    = 0;
  const int* offsets    = nullptr;  ///< 3 a term, one step's stencil
  const float* weights  = nullptr;  ///< rounded to the operand format
  const long* boxes     = nullptr;  ///< 6 a block: lo[3], hi[3]
};

template <Operand P>
__device__ __forceinline__ float stored_to_float(storage_t<P> v) {
  if constexpr (P == Operand::f16) return __half2float(__ushort_as_half(v));
  else if constexpr (P == Operand::bf16) return __bfloat162float(__ushort_as_bfloat16(v));
  else return v;
}

/// What the MMA multiplies: tf32 plans round their float inputs (cvt.rna), 16-bit values
/// are already operands.
template <Operand P>
__device__ __forceinline__ float operand_of(float v) {
  if constexpr (P == Operand::tf32) return __uint_as_float(gpu::tf32_bits(v));
  else return v;
}

template <Operand P>
__global__ void __launch_bounds__(256) wall_kernel(const WallParams p) {
  using T       = storage_t<P>;
  const long* b = p.boxes + 6 * static_cast<long>(blockIdx.x);
  const T* in   = static_cast<const T*>(p.in);
  T* out        = static_cast<T*>(p.out);
  // The region [from, from + e) (the box and t r_a around it, inside the grid) in local
  // int coordinates: the box is [lo, hi), the rim below rim_lo and from rim_hi on.
  long from[3];
  int e[3], lo[3], hi[3], rim_lo[3], rim_hi[3];
  for (int a = 0; a < 3; ++a) {
    const long halo = static_cast<long>(p.steps) * p.radius[a];
    from[a]         = max(b[a] - halo, 0L);
    e[a]            = static_cast<int>(min(b[3 + a] + halo, p.extent[a]) - from[a]);
    lo[a]           = static_cast<int>(b[a] - from[a]);
    hi[a]           = static_cast<int>(b[3 + a] - from[a]);
    rim_lo[a]       = static_cast<int>(p.radius[a] - from[a]);
    rim_hi[a]       = static_cast<int>(p.extent[a] - p.radius[a] - from[a]);
  }
  auto on_rim = [&](int z, int y, int x) {
    return z < rim_lo[0] || z >= rim_hi[0] || y < rim_lo[1] || y >= rim_hi[1] || x < rim_lo[2] || x >= rim_hi[2];
  };
  auto in_at  = [&](int z, int y, int x) {
    return in + (from[0] + z) * p.in_stride[0] + (from[1] + y) * p.in_stride[1] + (from[2] + x) * p.in_stride[2];
  };
  auto out_at = [&](int z, int y, int x) {
    return out + (from[0] + z) * p.out_stride[0] + (from[1] + y) * p.out_stride[1] + (from[2] + x) * p.out_stride[2];
  };
  // Calls f(z, y, x) for the points of [l, h) (local), the block's threads taking them in turn.
  auto for_each = [&](const int (&l)[3], const int (&h)[3], auto&& f) {
    const int ny = h[1] - l[1], nx = h[2] - l[2], count = (h[0] - l[0]) * ny * nx;
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
      const int row = i / nx;
      f(l[0] + row / ny, l[1] + row % ny, l[2] + i % nx);
    }
  };

  const int points = e[0] * e[1] * e[2];
  extern __shared__ float wall_shared[];
  float* src    = wall_shared;
  float* dst    = wall_shared + points;
  int* term_at  = reinterpret_cast<int*>(wall_shared + 2 * points);
  float* term_w = reinterpret_cast<float*>(term_at + p.terms);
  auto local    = [&](int z, int y, int x) { return (z * e[1] + y) * e[2] + x; };
  for (int k = threadIdx.x; k < p.terms; k += blockDim.x) {
    const int* o = p.offsets + 3 * k;
    term_at[k]   = local(o[0], o[1], o[2]);
    term_w[k]    = p.weights[k];
  }
  const int all_lo[3] = {0, 0, 0};
  for_each(all_lo, e, [&](int z, int y, int x) { src[local(z, y, x)] = stored_to_float<P>(*in_at(z, y, x)); });
  __syncthreads();
  for (int s = 1; s <= p.steps; ++s) {
    // Step s: the box widened by (t - s) r_a, inside the grid (each step reads inside the
    // range the step before wrote).
    int s_lo[3], s_hi[3];
    for (int a = 0; a < 3; ++a) {
      const int widen = (p.steps - s) * p.radius[a];
      s_lo[a]         = max(lo[a] - widen, 0);
      s_hi[a]         = min(hi[a] + widen, e[a]);
    }
    for_each(s_lo, s_hi, [&](int z, int y, int x) {
      const int at = local(z, y, x);
      if (on_rim(z, y, x)) {
        dst[at] = src[at];
        return;
      }
      float sum = 0.0f;
      for (int k = 0; k < p.terms; ++k) sum = fmaf(term_w[k], operand_of<P>(src[at + term_at[k]]), sum);
      dst[at] = stored_to_float<P>(to_storage<P>(sum));
    });
    __syncthreads();
    float* t = src;
    src = dst, dst = t;
  }
  for_each(lo, hi, [&](int z, int y, int x) {
    if (!on_rim(z, y, x)) *out_at(z, y, x) = to_storage<P>(src[local(z, y, x)]);
    else if (p.boundary == 2) *out_at(z, y, x) = *in_at(z, y, x);
  });
}

}  // namespace sparstencil::cuda_sptc::impl
