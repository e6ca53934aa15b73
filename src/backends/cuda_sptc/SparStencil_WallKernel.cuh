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
#include "SparStencil_WallBands.hpp"

namespace sparstencil::cuda_sptc::impl {

struct WallParams {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[3]{};  ///< padded 3-D
  long in_stride[3]{};
  long out_stride[3]{};
  int radius[3]{};  ///< one step's (the rim)
  int steps            = 1;
  Boundary boundary    = Boundary::fixed_rim;  ///< interior or fixed_rim
  int terms            = 0;
  const int* offsets   = nullptr;  ///< 3 a term, one step's stencil
  const float* weights = nullptr;  ///< rounded to the operand format
  const long* boxes    = nullptr;  ///< 6 a block: lo[3], hi[3]
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

/// a / b for 0 <= a < 2^22 and b >= 1: by the approximate reciprocal (within an ulp, so
/// off by at most one), corrected (a fraction of an integer division's instructions).
__device__ __forceinline__ int small_quotient(int a, int b) {
  float reciprocal;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(reciprocal) : "f"(__int2float_rn(b)));
  int q       = __float2int_rz(__int2float_rn(a) * reciprocal);
  const int r = a - q * b;
  q += r >= b ? 1 : r < 0 ? -1 : 0;
  return q;
}

/// A term of the one-step stencil in shared memory: its offset in the region (bytes) and
/// weight, loaded together.
struct WallTerm {
  int at;
  float weight;
};

// Bound by its instructions: points are walked without a division a point, terms read as
// one 8-byte load each, blocks of as many threads as their regions keep busy
// (wall_block_threads), registers capped at 40 (tf32, whose rounding takes more: 64).
template <Operand P>
__global__ void __launch_bounds__(wall_max_block_threads, P == Operand::tf32 ? 4 : 6) wall_kernel(const WallParams p) {
  using T       = storage_t<P>;
  const long* b = p.boxes + 6 * static_cast<long>(blockIdx.x);
  const T* in   = static_cast<const T*>(p.in);
  T* out        = static_cast<T*>(p.out);
  // The region [from, from + e) (the box and t r_a around it, inside the grid) in local
  // int coordinates: the box is [lo, hi), the rim below rim_lo and from rim_lo + rim_n on.
  long from[3];
  int e[3], lo[3], hi[3], rim_lo[3];
  unsigned rim_n[3];  // points off the rim along each axis, from rim_lo on
  for (int a = 0; a < 3; ++a) {
    const long halo = static_cast<long>(p.steps) * p.radius[a];
    from[a]         = max(b[a] - halo, 0L);
    e[a]            = static_cast<int>(min(b[3 + a] + halo, p.extent[a]) - from[a]);
    lo[a]           = static_cast<int>(b[a] - from[a]);
    hi[a]           = static_cast<int>(b[3 + a] - from[a]);
    rim_lo[a]       = static_cast<int>(p.radius[a] - from[a]);
    rim_n[a]        = static_cast<unsigned>(max(p.extent[a] - 2L * p.radius[a], 0L));
  }
  auto on_rim = [&](int z, int y, int x) {
    return static_cast<unsigned>(z - rim_lo[0]) >= rim_n[0] || static_cast<unsigned>(y - rim_lo[1]) >= rim_n[1] ||
           static_cast<unsigned>(x - rim_lo[2]) >= rim_n[2];
  };
  auto in_at = [&](int z, int y, int x) {
    return in + (from[0] + z) * p.in_stride[0] + (from[1] + y) * p.in_stride[1] + (from[2] + x) * p.in_stride[2];
  };
  auto out_at = [&](int z, int y, int x) {
    return out + (from[0] + z) * p.out_stride[0] + (from[1] + y) * p.out_stride[1] + (from[2] + x) * p.out_stride[2];
  };
  const int points = e[0] * e[1] * e[2];
  auto local       = [&](int z, int y, int x) { return (z * e[1] + y) * e[2] + x; };
  // Calls f(z, y, x, at) for the points of [l, h) (local; at = local(z, y, x)), the
  // block's threads taking them in turn: a thread's point steps on by the block's size,
  // carried along the axes (no division a point; small_quotient a box).
  auto for_each = [&](const int(&l)[3], const int(&h)[3], auto&& f) {
    const int nz = h[0] - l[0], ny = h[1] - l[1], nx = h[2] - l[2];
    if (nz <= 0 || ny <= 0 || nx <= 0) return;
    const int size = blockDim.x, rows = small_quotient(size, nx), row = small_quotient(threadIdx.x, nx);
    const int step_x = size - rows * nx, step_z = small_quotient(rows, ny), step_y = rows - step_z * ny;
    int z = small_quotient(row, ny), y = row - z * ny, x = threadIdx.x - row * nx;
    int at            = local(l[0] + z, l[1] + y, l[2] + x);
    const int step_at = (step_z * e[1] + step_y) * e[2] + step_x;
    const int carry_x = e[2] - nx, carry_y = (e[1] - ny) * e[2];  // at's change where x, y wrap
    while (z < nz) {
      f(l[0] + z, l[1] + y, l[2] + x, at);
      x += step_x, y += step_y, z += step_z, at += step_at;
      if (x >= nx) x -= nx, ++y, at += carry_x;
      if (y >= ny) y -= ny, ++z, at += carry_y;
    }
  };

  extern __shared__ __align__(16) float wall_shared[];
  float* src                      = wall_shared;
  float* dst                      = wall_shared + points;
  WallTerm* terms                 = reinterpret_cast<WallTerm*>(wall_shared + 2 * points);
  const WallTerm* const terms_end = terms + p.terms;
  for (int k = threadIdx.x; k < p.terms; k += blockDim.x) {
    const int* o = p.offsets + 3 * k;
    terms[k]     = {static_cast<int>(sizeof(float)) * local(o[0], o[1], o[2]), p.weights[k]};
  }
  const int all_lo[3] = {0, 0, 0};
  for_each(all_lo, e, [&](int z, int y, int x, int at) { src[at] = stored_to_float<P>(*in_at(z, y, x)); });
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
    for_each(s_lo, s_hi, [&](int z, int y, int x, int at) {
      if (on_rim(z, y, x)) {
        dst[at] = src[at];
        return;
      }
      const char* point = reinterpret_cast<const char*>(src + at);
      auto add          = [&](float sum, const WallTerm& term) {
        return fmaf(term.weight, operand_of<P>(*reinterpret_cast<const float*>(point + term.at)), sum);
      };
      // Terms in order, two an iteration and the odd one last (no remainder loop).
      float sum         = 0.0f;
      const WallTerm* t = terms;
      for (; t + 1 < terms_end; t += 2) sum = add(add(sum, t[0]), t[1]);
      if (t < terms_end) sum = add(sum, t[0]);
      dst[at] = stored_to_float<P>(to_storage<P>(sum));
    });
    __syncthreads();
    float* t = src;
    src = dst, dst = t;
  }
  for_each(lo, hi, [&](int z, int y, int x, int at) {
    if (!on_rim(z, y, x)) *out_at(z, y, x) = to_storage<P>(src[at]);
    else if (p.boundary == Boundary::fixed_rim) *out_at(z, y, x) = *in_at(z, y, x);
  });
}

}  // namespace sparstencil::cuda_sptc::impl
