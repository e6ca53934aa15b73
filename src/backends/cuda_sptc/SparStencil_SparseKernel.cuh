#pragma once
/// The sparse tensor-core stencil kernel: the plan emulator (src/backends/cuda_sptc/SparStencil_Emulator.hpp)
/// on the GPU. A thread block streams blocks of tiles along axis 0; per block it
///   1. brings the block plus halo into shared memory: 16-byte cp.async copies where a
///      row chunk lies inside the grid and is aligned, element copies where it wraps
///      (periodic), leaves the grid (zero) or is unaligned; the next block's copies are in
///      flight while the current one computes (two image buffers);
///   2. per warp and group of 8 tiles, gathers B fragments through the plan's gather
///      table and issues mma.sp with A' (compressed values and metadata, loaded into
///      registers once per thread block);
///   3. stages the results in shared memory and stores them row by row (coalesced),
///      applying the boundary contract.
/// Grids are handled as 3-D: a 2-D grid is 1 x n0 x n1, a 1-D grid 1 x 1 x n0 ("padded"
/// axes have extent 1 and radius 0).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GpuCopies.cuh"
#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_SparseKernelFacts.hpp"

namespace sparstencil::cuda_sptc::impl {

enum class Operand : int { f16 = 0, bf16 = 1, tf32 = 2 };

/// Storage element of a grid (raw bits for the 16-bit formats).
template <Operand P>
using storage_t = std::conditional_t<P == Operand::tf32, float, std::uint16_t>;

constexpr int threads_per_block = gather_threads_per_block;
constexpr int warps_per_block   = threads_per_block / 32;

struct KernelParams {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[3]{};     ///< grid, padded to 3-D
  long in_stride[3]{};  ///< elements
  long out_stride[3]{};
  int span[3]{};  ///< outputs of a block per axis
  int lead[3]{};  ///< image points before the block origin
  int image_extent[3]{};
  int image_stride[3]{};
  int image_elements = 0;               ///< one image buffer
  int radius[3]{};                      ///< of the (fused) stencil: the rim of the boundary contract
  int blocks[3]{};                      ///< blocks of tiles per axis
  int stream_axis                 = 0;  ///< the padded index of the grid's axis 0
  int blocks_per_cta              = 1;  ///< consecutive blocks along stream_axis
  int cross_ctas                  = 1;  ///< product of blocks over the axes after stream_axis
  Boundary boundary               = Boundary::periodic;
  int groups                      = 0;  ///< groups of 8 tiles in a block
  int k_chunks                    = 0;
  int metadata_pairs              = 0;        ///< (k_chunks + 1) / 2
  const std::uint32_t* a_values   = nullptr;  ///< [mb][kc][lane][4]
  const std::uint32_t* a_metadata = nullptr;  ///< [mb][kc/2][lane]
  /// Per k chunk and t = lane % 4, the lane's B offsets from the tile origin, two 16-bit
  /// offsets a word: f16/bf16 4 words (rows 2t+8i, 2t+8i+1), tf32 2 words (rows t+4i).
  const std::uint32_t* b_offsets = nullptr;
  const int* tile_offsets        = nullptr;  ///< image offset of each tile of a block
  const int* stage_tile_offsets  = nullptr;  ///< staging offset of each tile
  const int* stage_row_offsets   = nullptr;  ///< staging offset of each row of A' (-1: padding)
};

// ---- tensor-core instructions ----

template <Operand P, int Selector>
__device__ __forceinline__ void mma_sp(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[4],
                                       std::uint32_t e) {
  if constexpr (P == Operand::f16) {
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, %13;\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e),
          "n"(Selector));
  } else if constexpr (P == Operand::bf16) {
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, %13;\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e),
          "n"(Selector));
  } else {
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, %13;\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e),
          "n"(Selector));
  }
}

/// Shared-memory loads by 32-bit shared address: the B gathers must not become generic
/// loads with 64-bit address arithmetic (they do when the image pointer is picked at run
/// time).
__device__ __forceinline__ std::uint32_t ld_shared_u16(unsigned address) {
  unsigned short v;
  asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(address));
  return v;
}
__device__ __forceinline__ float ld_shared_f32(unsigned address) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(address));
  return v;
}

/// Asynchronous copies to shared memory (SparStencil_GpuCopies.cuh), by 32-bit shared
/// address or by pointer.
using gpu::cp_async_16;
using gpu::cp_async_4;
using gpu::cp_async_commit;
using gpu::cp_async_wait;
__device__ __forceinline__ void cp_async_16(void* shared, const void* global) {
  cp_async_16(static_cast<unsigned>(__cvta_generic_to_shared(shared)), global);
}

template <Operand P>
__device__ __forceinline__ storage_t<P> to_storage(float v) {
  if constexpr (P == Operand::f16) {
    return __half_as_ushort(__float2half_rn(v));
  } else if constexpr (P == Operand::bf16) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  } else {
    return v;
  }
}

// ---- the three phases ----

/// A grid coordinate `g` along an axis of extent `n`: wrapped (periodic) or
/// -1 outside the grid (interior, fixed_rim).
__device__ __forceinline__ long wrap_coordinate(Boundary boundary, long g, long n) {
  if (g >= 0 && g < n) return g;
  return boundary == Boundary::periodic ? ((g % n) + n) % n : -1;
}

/// A copy's first coordinate `x` along an axis of extent `n`, wrapped by one period under
/// periodic boundaries (a halo never reaches further); as it is elsewhere. The copy may
/// still straddle an end: callers check the whole copy lies in [0, n).
template <class Int>
__device__ __forceinline__ Int wrap_once(Boundary boundary, Int x, Int n) {
  if (boundary != Boundary::periodic || (x >= 0 && x < n)) return x;
  return x < 0 ? x + n : x - n;
}
/// Grid coordinate along `axis` of image coordinate `local` for a block at `origin`.
__device__ __forceinline__ long grid_coordinate(const KernelParams& p, int axis, long origin, int local) {
  return wrap_coordinate(p.boundary, origin + local - p.lead[axis], p.extent[axis]);
}

/// One 16-byte chunk of an image row: `row` the grid row's first value (nullptr: the row
/// lies outside the grid, zeros), `x` the chunk's first coordinate along axis 2. A
/// cp.async copy where the chunk lies inside and aligned, or (periodic) wraps whole to
/// such a place; element copies where it straddles an end, is unaligned (rows that are not
/// whole 16-byte units: the planner gives such grids to the generic executor, docs/
/// COST_MODEL.md) or the grid is strided.
/// Both kernels' parameters name in, extent, in_stride and boundary alike.
template <Operand P, class Params>
__device__ __forceinline__ void fill_chunk(const Params& p, storage_t<P>* dst, const storage_t<P>* row, long x) {
  using T         = storage_t<P>;
  constexpr int V = 16 / sizeof(T);
  const long n    = p.extent[2];
  if (row == nullptr) {
    *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
    return;
  }
  const long w = wrap_once(p.boundary, x, n);
  if (p.in_stride[2] == 1 && w >= 0 && w + V <= n && (reinterpret_cast<std::uintptr_t>(row + w) & 15u) == 0) {
    cp_async_16(dst, row + w);
    return;
  }
  // Every load before the first store: they need not wait on each other. Values wrap from
  // w: one by one only where the chunk straddles an end (each wrap a 64-bit remainder, a
  // software routine, which a partial strip's chunks past the grid's end took for each).
  T v[V];
#pragma unroll
  for (int i = 0; i < V; ++i) {
    const long g = wrap_coordinate(p.boundary, w + i, n);
    v[i]         = g < 0 ? T(0) : row[g * p.in_stride[2]];
  }
#pragma unroll
  for (int i = 0; i < V; ++i) dst[i] = v[i];
}

/// The first value of grid row (g0, g1) (-1: outside the grid), nullptr outside.
template <Operand P, class Params>
__device__ __forceinline__ const storage_t<P>* grid_row(const Params& p, long g0, long g1) {
  if (g0 < 0 || g1 < 0) return nullptr;
  return static_cast<const storage_t<P>*>(p.in) + g0 * p.in_stride[0] + g1 * p.in_stride[1];
}

/// One image row of `chunks` 16-byte chunks from grid row (g0, g1) (-1: outside the grid,
/// zeros), its values from axis-2 coordinate `first` on. Lanes take chunks.
template <Operand P, class Params>
__device__ void fill_row(const Params& p, storage_t<P>* dst_row, long g0, long g1, long first, int chunks) {
  constexpr int V         = 16 / sizeof(storage_t<P>);
  const storage_t<P>* row = grid_row<P>(p, g0, g1);
  for (int c = threadIdx.x & 31; c < chunks; c += 32) fill_chunk<P>(p, dst_row + c * V, row, first + c * V);
}

/// One staged run of up to V outputs (`count`) to grid row (x0, x1) from axis-2
/// coordinate `x2` on, under the boundary contract: one 16-byte store where every value
/// is inside the grid, written and contiguous; the rest value by value (interior: the rim
/// keeps its values; fixed_rim: the rim gets the input's).
template <Operand P, class Params>
__device__ __forceinline__ void store_run(const Params& p, const storage_t<P>* staged, long x0, long x1, long x2,
                                          int count) {
  using T         = storage_t<P>;
  constexpr int V = 16 / sizeof(T);
  if (x0 >= p.extent[0] || x1 >= p.extent[1] || x2 >= p.extent[2]) return;
  const bool row_interior =
      x0 >= p.radius[0] && x0 < p.extent[0] - p.radius[0] && x1 >= p.radius[1] && x1 < p.extent[1] - p.radius[1];
  if (p.boundary == Boundary::interior && !row_interior) return;
  T* target       = static_cast<T*>(p.out) + x0 * p.out_stride[0] + x1 * p.out_stride[1] + x2 * p.out_stride[2];
  const T* in_row = static_cast<const T*>(p.in) + x0 * p.in_stride[0] + x1 * p.in_stride[1];
  const long lo   = p.boundary == Boundary::periodic ? 0 : p.radius[2];  // written range along the fastest axis
  const long hi   = p.boundary == Boundary::periodic ? p.extent[2] : p.extent[2] - p.radius[2];
  if (p.out_stride[2] == 1 && (row_interior || p.boundary == Boundary::periodic) && count == V && x2 >= lo &&
      x2 + V <= hi &&
      ((reinterpret_cast<std::uintptr_t>(target) | reinterpret_cast<std::uintptr_t>(staged)) & 15u) == 0) {
    *reinterpret_cast<uint4*>(target) = *reinterpret_cast<const uint4*>(staged);
    return;
  }
  for (int v = 0; v < count && x2 + v < p.extent[2]; ++v) {
    const long xv = x2 + v;
    T* at         = target + v * p.out_stride[2];
    if (p.boundary == Boundary::periodic || (row_interior && xv >= lo && xv < hi)) {
      *at = staged[v];
    } else if (p.boundary == Boundary::fixed_rim) {
      *at = in_row[xv * p.in_stride[2]];
    }
  }
}

/// One staged row of `count` outputs to grid row (x0, x1) from axis-2 coordinate `x2` on,
/// under the boundary contract; lanes take 16-byte runs (store_run).
template <Operand P, class Params>
__device__ void store_row(const Params& p, const storage_t<P>* staged_row, long x0, long x1, long x2, int count) {
  constexpr int V = 16 / sizeof(storage_t<P>);
  for (int c = threadIdx.x & 31; c * V < count; c += 32) {
    store_run<P>(p, staged_row + c * V, x0, x1, x2 + c * V, min(V, count - c * V));
  }
}

/// Phase 1: issues the copies of the image of the block at `origin` into `image`. A warp
/// takes image rows (the row's grid coordinates are worked out once, uniformly), its lanes
/// the row's 16-byte chunks: no division per element.
template <Operand P>
__device__ void fill_image(const KernelParams& p, const long (&origin)[3], storage_t<P>* image) {
  constexpr int V = 16 / sizeof(storage_t<P>);  // elements of one 16-byte copy
  const int warp  = threadIdx.x >> 5;
  const int rows  = p.image_extent[0] * p.image_extent[1];
  for (int row = warp; row < rows; row += warps_per_block) {
    const int l0 = row / p.image_extent[1];
    const int l1 = row - l0 * p.image_extent[1];
    fill_row<P>(p, image + l0 * p.image_stride[0] + l1 * p.image_stride[1], grid_coordinate(p, 0, origin[0], l0),
                grid_coordinate(p, 1, origin[1], l1), origin[2] - p.lead[2], p.image_extent[2] / V);
  }
}

/// Phase 2 for one group of 8 tiles: B gathered from the image, MMAs over the k chunks,
/// results into the staging buffer. A is in registers (KC = chunks held, a multiple of 2).
template <Operand P, int MB, int KC>
__device__ __forceinline__ void multiply_group(const KernelParams& p, const storage_t<P>* image, storage_t<P>* stage,
                                               int group, const std::uint32_t (&a)[MB][KC][4],
                                               const std::uint32_t (&e)[MB][KC / 2]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  constexpr unsigned bytes = sizeof(storage_t<P>);
  const unsigned tile_image =
      static_cast<unsigned>(__cvta_generic_to_shared(image)) + bytes * __ldg(p.tile_offsets + group * 8 + g);
  float acc[MB][4];
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) acc[mb][0] = acc[mb][1] = acc[mb][2] = acc[mb][3] = 0.0f;
#pragma unroll
  for (int kc = 0; kc < KC; ++kc) {
    if (kc < p.k_chunks) {
      std::uint32_t b[4];
      if constexpr (P == Operand::tf32) {
        const uint2 off = __ldg(reinterpret_cast<const uint2*>(p.b_offsets) + kc * 4 + t);
        b[0]            = gpu::tf32_bits(ld_shared_f32(tile_image + bytes * (off.x & 0xFFFFu)));
        b[1]            = gpu::tf32_bits(ld_shared_f32(tile_image + bytes * (off.x >> 16)));
        b[2]            = gpu::tf32_bits(ld_shared_f32(tile_image + bytes * (off.y & 0xFFFFu)));
        b[3]            = gpu::tf32_bits(ld_shared_f32(tile_image + bytes * (off.y >> 16)));
      } else {
        const uint4 off          = __ldg(reinterpret_cast<const uint4*>(p.b_offsets) + kc * 4 + t);
        const std::uint32_t w[4] = {off.x, off.y, off.z, off.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          b[i] = ld_shared_u16(tile_image + bytes * (w[i] & 0xFFFFu)) |
                 (ld_shared_u16(tile_image + bytes * (w[i] >> 16)) << 16);
        }
      }
#pragma unroll
      for (int mb = 0; mb < MB; ++mb) {
        // The selector is an immediate; the unrolled loop folds this branch away.
        if (kc % 2 == 0) {
          mma_sp<P, 0>(acc[mb], a[mb][kc], b, e[mb][kc / 2]);
        } else {
          mma_sp<P, 1>(acc[mb], a[mb][kc], b, e[mb][kc / 2]);
        }
      }
    }
  }
  // c0, c1: row g, tiles 2t and 2t+1; c2, c3: row g+8.
  const int s0 = __ldg(p.stage_tile_offsets + group * 8 + 2 * t);
  const int s1 = __ldg(p.stage_tile_offsets + group * 8 + 2 * t + 1);
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
    const int r0 = __ldg(p.stage_row_offsets + mb * 16 + g);
    const int r1 = __ldg(p.stage_row_offsets + mb * 16 + g + 8);
    if (r0 >= 0) {
      stage[s0 + r0] = to_storage<P>(acc[mb][0]);
      stage[s1 + r0] = to_storage<P>(acc[mb][1]);
    }
    if (r1 >= 0) {
      stage[s0 + r1] = to_storage<P>(acc[mb][2]);
      stage[s1 + r1] = to_storage<P>(acc[mb][3]);
    }
  }
}

/// Phase 3: the staged block into the output grid, a warp per output row.
template <Operand P>
__device__ void store_block(const KernelParams& p, const long (&origin)[3], const storage_t<P>* stage) {
  const int warp = threadIdx.x >> 5;
  const int rows = p.span[0] * p.span[1];
  for (int row = warp; row < rows; row += warps_per_block) {
    const int q0 = row / p.span[1];
    store_row<P>(p, stage + row * p.span[2], origin[0] + q0, origin[1] + (row - q0 * p.span[1]), origin[2], p.span[2]);
  }
}

template <Operand P, int MB, int KC>
__global__ void __launch_bounds__(threads_per_block) sparse_stencil_kernel(const KernelParams p) {
  using T = storage_t<P>;
  extern __shared__ uint4 shared_words[];
  // Image i & 1 by arithmetic on the shared base (an array of two pointers would live in
  // local memory and turn shared accesses generic).
  T* const image_base = reinterpret_cast<T*>(shared_words);
  auto image          = [&](long i) { return image_base + (i & 1) * p.image_elements; };
  T* stage            = image_base + 2 * p.image_elements;

  // A' for this thread block's whole run, in registers.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  std::uint32_t a[MB][KC][4];
  std::uint32_t e[MB][KC / 2];
#pragma unroll
  for (int mb = 0; mb < MB; ++mb) {
#pragma unroll
    for (int kc = 0; kc < KC; ++kc) {
      const uint4 v = kc < p.k_chunks
                          ? __ldg(reinterpret_cast<const uint4*>(p.a_values) + (mb * p.k_chunks + kc) * 32 + lane)
                          : make_uint4(0, 0, 0, 0);
      a[mb][kc][0] = v.x, a[mb][kc][1] = v.y, a[mb][kc][2] = v.z, a[mb][kc][3] = v.w;
    }
#pragma unroll
    for (int q = 0; q < KC / 2; ++q) {
      e[mb][q] = q < p.metadata_pairs ? __ldg(p.a_metadata + (mb * p.metadata_pairs + q) * 32 + lane) : 0u;
    }
  }

  // This thread block's column of blocks: the axes after stream_axis, fastest first.
  const int s   = p.stream_axis;
  long block[3] = {0, 0, 0};
  long rest     = blockIdx.x % p.cross_ctas;
  for (int axis = 2; axis > s; --axis) {
    block[axis] = rest % p.blocks[axis];
    rest /= p.blocks[axis];
  }
  const long first = static_cast<long>(blockIdx.x / p.cross_ctas) * p.blocks_per_cta;
  const long count = min(static_cast<long>(p.blocks_per_cta), p.blocks[s] - first);
  auto origin_of   = [&](long i, long(&origin)[3]) {
    for (int axis = 0; axis < 3; ++axis) origin[axis] = block[axis] * p.span[axis];
    origin[s] = (first + i) * p.span[s];
  };

  long origin[3];
  origin_of(0, origin);
  fill_image<P>(p, origin, image(0));
  cp_async_commit();
  for (long i = 0; i < count; ++i) {
    if (i + 1 < count) {
      long next[3];
      origin_of(i + 1, next);
      fill_image<P>(p, next, image(i + 1));
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    origin_of(i, origin);
    for (int group = warp; group < p.groups; group += warps_per_block) {
      multiply_group<P, MB, KC>(p, image(i), stage, group, a, e);
    }
    __syncthreads();
    // The next iteration's copies go to the image just read and its MMAs write the
    // staging buffer only after its first barrier, which follows these stores.
    store_block<P>(p, origin, stage);
  }
}

}  // namespace sparstencil::cuda_sptc::impl
