#pragma once
/// The dense kernel's image copies: a block's grid values (its tiles plus halo, wrapped
/// under periodic, zero outside the grid) brought into shared memory as Kind's operands,
/// 16 bytes at a time where a row allows (cp.async on NVIDIA), value by value elsewhere,
/// and rounded to the operands where the grids hold other values (tf32 in place; float
/// grids of 16-bit operands beside the image or on the way: copies_beside). What the
/// copies may assume of the image's rows is SparStencil_DenseKernel.hpp's geometry, which
/// the host emulator reads the same way. Device code: included by
/// SparStencil_DenseExecutor.cu only.
#include <cstdint>
#include <type_traits>

#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseOperandKinds.cuh"
#include "SparStencil_GpuRuntime.hpp"

#if !defined(SPARSTENCIL_GPU_AMD)
#include "SparStencil_GpuCopies.cuh"
#endif

namespace sparstencil::dense::detail {

/// A grid value as an image value of type To: as it is, or a float rounded to Kind's bits.
template <class Kind, class To, class Grid>
__device__ inline To image_value(Grid x) {
  if constexpr (std::is_same_v<To, Grid>) return x;
  else return operand_bits<Kind>(x);
}

/// Where V values from `x` of image row `r` lie inside the grid and contiguous: their
/// first; else nullptr.
template <int V, class Grid, int D>
__device__ inline const Grid* inside_chunk(const DenseArgs<D>& g, const long (&origin)[D], const Grid* in,
                                           const ImageRow& r, int x) {
  const long first = origin[D - 1] + x - g.shared_lead[D - 1];
  if (!r.inside || g.in_stride[D - 1] != 1 || first < 0 || first + V > g.extent[D - 1]) return nullptr;
  return in + r.in_index + first;
}
/// The same where they are also aligned to 16 bytes (one load).
template <int V, class Grid, int D>
__device__ inline const Grid* whole_chunk(const DenseArgs<D>& g, const long (&origin)[D], const Grid* in,
                                          const ImageRow& r, int x) {
  const Grid* from = inside_chunk<V>(g, origin, in, r, x);
  return reinterpret_cast<std::uintptr_t>(from) % 16 == 0 ? from : nullptr;
}

/// Chunk `x` / V of image row `r`, V = 16 / sizeof(To) values as To: whole (16-byte loads)
/// where it lies inside the grid, contiguous and aligned, else value by value (wrapped or
/// zero); grid values rounded where To differs (float grids, 16-bit operands).
template <class Kind, class To, class Grid, int D>
__device__ inline uint4 image_chunk(const DenseArgs<D>& g, const long (&origin)[D], const Grid* in, const ImageRow& r,
                                    int x) {
  constexpr int V = 16 / sizeof(To);
  static_assert(std::is_same_v<To, Grid> || (std::is_same_v<Grid, float> && V == 8), "float grids, 16-bit values");
  To v[V];
  if (const Grid* from = whole_chunk<V>(g, origin, in, r, x)) {
    if constexpr (std::is_same_v<To, Grid>) {
      return *reinterpret_cast<const uint4*>(from);
    } else {
      const float4 lo = reinterpret_cast<const float4*>(from)[0], hi = reinterpret_cast<const float4*>(from)[1];
      const float f[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = image_value<Kind, To>(f[e]);
    }
  } else {
    for (int e = 0; e < V; ++e) {
      const long at = r.inside ? image_coordinate(g, origin, D - 1, x + e) : -1;
      v[e]          = at >= 0 ? image_value<Kind, To>(in[r.in_index + at * g.in_stride[D - 1]]) : To(0);
    }
  }
  uint4 chunk;
  __builtin_memcpy(&chunk, v, sizeof chunk);
  return chunk;
}

/// 16-byte chunks a thread loads before it stores them, where a copy is not asynchronous.
constexpr int fill_batch = 4;

/// The block's image, 16-byte chunks of To values (image_chunk): a thread takes one chunk
/// position of every row_step-th row (row_step = block_threads / the chunks of a row,
/// rounded up to a power of two). NVIDIA, grid values copied as they are: cp.async
/// (gpu::copy_16_bytes, whatever the rows' alignment), every chunk in flight, complete on
/// return; else fill_batch chunks loaded (and rounded) in flight.
template <class Kind, class To, class Grid, int D>
__device__ inline void copy_image(const DenseArgs<D>& g, const long (&origin)[D], const Grid* in, To* image) {
  constexpr int V      = 16 / sizeof(To);
  const int row_chunks = g.shared_extent[D - 1] / V, rows = image_rows(g);
  const int width = 1 << g.chunk_shift, row_step = blockDim.x >> g.chunk_shift;
#if defined(SPARSTENCIL_GPU_AMD)
  constexpr bool asynchronous = false;
#else
  constexpr bool asynchronous = std::is_same_v<To, Grid>;
#endif
  for (int xc = threadIdx.x & (width - 1); xc < row_chunks; xc += width) {
    if constexpr (asynchronous) {
#if !defined(SPARSTENCIL_GPU_AMD)
      for (int row = threadIdx.x >> g.chunk_shift; row < rows; row += row_step) {
        const ImageRow r = image_row(g, origin, row);
        To* to           = image + r.offset + xc * V;
        if (const Grid* from = inside_chunk<V>(g, origin, in, r, xc * V)) {
          gpu::copy_16_bytes(static_cast<unsigned>(__cvta_generic_to_shared(to)), from);
        } else {
          *reinterpret_cast<uint4*>(to) = image_chunk<Kind, To>(g, origin, in, r, xc * V);
        }
      }
#endif
    } else {
      for (int first = threadIdx.x >> g.chunk_shift; first < rows; first += fill_batch * row_step) {
        uint4 v[fill_batch];
#pragma unroll
        for (int f = 0; f < fill_batch; ++f) {
          const int row = first + f * row_step;
          if (row < rows) v[f] = image_chunk<Kind, To>(g, origin, in, image_row(g, origin, row), xc * V);
        }
#pragma unroll
        for (int f = 0; f < fill_batch; ++f) {
          const int row = first + f * row_step;
          if (row < rows) *reinterpret_cast<uint4*>(image + image_row(g, origin, row).offset + xc * V) = v[f];
        }
      }
    }
  }
#if !defined(SPARSTENCIL_GPU_AMD)
  if constexpr (asynchronous) asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/// The block's image of Kind's operands: the grid values copied (copy_image), and where
/// they are not yet the operands, rounded: tf32 in place; float grids of 16-bit operands
/// either copied as they are beside the image (g.copy_beside: every chunk in flight) and
/// rounded into it, or rounded on the way (a fill_batch of chunks in flight), whichever
/// the plan's shared memory holds (copies_beside).
template <class Kind, class Grid, int D>
__device__ inline void fill_image(const DenseArgs<D>& g, const long (&origin)[D], const Grid* in,
                                  typename Kind::bits* image) {
  using Bits            = typename Kind::bits;
  auto round_into_image = [&](const float* copied) {
    for (int i = threadIdx.x * 4; i < g.image_values; i += blockDim.x * 4) {
      const float4 v  = *reinterpret_cast<const float4*>(copied + i);
      const Bits b[4] = {operand_bits<Kind>(v.x), operand_bits<Kind>(v.y), operand_bits<Kind>(v.z),
                         operand_bits<Kind>(v.w)};
      __builtin_memcpy(image + i, b, sizeof b);
    }
  };
  if constexpr (std::is_same_v<Grid, Bits>) {
    copy_image<Kind>(g, origin, in, image);
    if constexpr (std::is_same_v<Kind, TF32>) {
      __syncthreads();
      round_into_image(image);
    }
  } else if (g.copy_beside) {
    Grid* copied = reinterpret_cast<Grid*>(image + g.image_values);
    copy_image<Kind>(g, origin, in, copied);
    __syncthreads();
    round_into_image(copied);
  } else {
    copy_image<Kind>(g, origin, in, image);
  }
}

}  // namespace sparstencil::dense::detail
