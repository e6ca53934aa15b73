// The dense executor: one source for NVIDIA (nvcc) and AMD (hipcc -x hip), the vendor's
// instructions and lane layouts taken from SparStencil_MatrixFragments.hpp and the kernel
// body from SparStencil_DenseKernel.hpp.
#include "SparStencil_DenseExecutor.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_Overlap.hpp"

#if !defined(SPARSTENCIL_GPU_AMD)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "SparStencil_GpuCopies.cuh"
#endif

namespace sparstencil::dense {
namespace {

using sparstencil::impl::fail;

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
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4_ __attribute__((ext_vector_type(4)));
typedef float float4_ __attribute__((ext_vector_type(4)));
typedef double double4_ __attribute__((ext_vector_type(4)));

template <class Kind>
__device__ inline void mma(float (&c)[4], const unsigned (&a)[2], const unsigned (&b)[2]) {
  float4_ acc = {c[0], c[1], c[2], c[3]};
  if constexpr (std::is_same_v<Kind, BF16>) {
    acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(short4_, a), __builtin_bit_cast(short4_, b), acc,
                                                    0, 0, 0);
  } else {
    acc =
        __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(half4, a), __builtin_bit_cast(half4, b), acc, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) c[i] = acc[i];
}
template <class Kind>
__device__ inline void mma(double (&c)[4], const double (&a)[1], const double (&b)[1]) {
  double4_ acc = {c[0], c[1], c[2], c[3]};
  acc          = __builtin_amdgcn_mfma_f64_16x16x4f64(a[0], b[0], acc, 0, 0, 0);
  for (int i = 0; i < 4; ++i) c[i] = acc[i];
}

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
__device__ inline void mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (std::is_same_v<Kind, TF32>) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (std::is_same_v<Kind, BF16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}
template <class Kind>
__device__ inline void mma(double (&c)[2], const double (&a)[1], const double (&b)[1]) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(c[0]), "+d"(c[1])
               : "d"(a[0]), "d"(b[0]));
}

template <class Kind>
__device__ inline void mma(double (&c)[4], const double (&a)[2], const double (&b)[1]) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
               : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
               : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}

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

/// `count` registers of consecutive values in one aligned load (a lane's A values, a run
/// of B values).
template <int count, class Reg>
__device__ inline void load_regs(const void* from, Reg* to) {
  constexpr int bytes = count * sizeof(Reg);
  using Word          = std::conditional_t<bytes == 4, unsigned, std::conditional_t<bytes == 8, uint2, uint4>>;
  static_assert(sizeof(Word) == bytes, "a load is 4, 8 or 16 bytes");
  const Word w = *static_cast<const Word*>(from);
  __builtin_memcpy(to, &w, sizeof w);
}

/// A float value as Kind's operand bits, round to nearest (tf32: ties away, as cvt.rna).
template <class Kind>
__device__ inline typename Kind::bits operand_bits(float x) {
#if !defined(SPARSTENCIL_GPU_AMD)
  if constexpr (std::is_same_v<Kind, TF32>) return __uint_as_float(gpu::tf32_bits(x));
  else
#endif
    return to_bits<Kind>(x);
}
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

/// A sum as the grid stores it: float and double as they are, 16-bit grids rounded.
template <class Kind, class Grid>
__device__ inline Grid stored(typename Kind::acc x) {
  if constexpr (std::is_same_v<Grid, float> || std::is_same_v<Grid, double>) return static_cast<Grid>(x);
  else return to_bits<Kind>(x);
}

/// Blocks an SM holds at least: 3 (registers capped at 85 a thread; more blocks would
/// spill the accumulators).
constexpr int min_blocks = 3;

/// Groups of a wave's unit at most (the accumulators' registers).
template <class Kind>
inline constexpr int most_groups = std::is_same_v<Kind, F64> ? max_unit_groups_64 : max_unit_groups_16;

/// Parts of the tile's outputs a unit holds sums of: all (A' by the image), or the one it
/// multiplies (image_as_a).
template <class L>
inline constexpr int unit_parts = image_as_a<L> ? 1 : part_count<L>();
template <class Kind>
using Sums = typename Kind::acc[most_groups<Kind>][unit_parts<LayoutOf<Kind>>][LayoutOf<Kind>::c_values];

/// A wave's unit: `active` groups of L::n tiles from `first_group` (consecutive groups
/// group_step values apart), all 16 rows of A' (parts of L::m), over every k chunk, into c.
/// `groups` > 0: exactly that many, known at compile time (a test a group would be
/// if-converted into matrix instructions issued with their predicate off, which hold the
/// tensor pipe all the same); 0: `active` of most_groups, tested a group.
template <class Kind, int D, int groups>
__device__ inline void multiply_unit(const DenseArgs<D>& g, const typename Kind::bits* image,
                                     const typename Kind::reg* a, const int* run_offsets, const int* tile_offset,
                                     int first_group, int active, int lane, Sums<Kind>& c) {
  using L             = LayoutOf<Kind>;
  using Bits          = typename Kind::bits;
  using Reg           = typename Kind::reg;
  using Acc           = typename Kind::acc;
  constexpr int V     = 16 / sizeof(Bits);
  constexpr int per   = sizeof(Reg) / sizeof(Bits);  // values a register
  constexpr int parts = part_count<L>(), most = most_groups<Kind>, step = group_step<L, D>();
  static_assert(!image_as_a<L>, "multiply_image_unit takes these layouts");
  constexpr int count = groups > 0 ? groups : most;  // groups the unrolled loops run over
  const Bits* b       = image + tile_offset[group_tile<L>(g, first_group, b_column<L>(lane))];
#if !defined(SPARSTENCIL_GPU_AMD)
  // ldmatrix (NvidiaF16, an even count of groups known at compile time): the shared
  // address of the row lane % 8 of a group.
  const unsigned ldmatrix_row =
      static_cast<unsigned>(__cvta_generic_to_shared(image + tile_offset[group_tile<L>(g, first_group, lane % 8)]));
#endif
#pragma unroll
  for (int j = 0; j < most; ++j)
    for (int p = 0; p < parts; ++p)
      for (int i = 0; i < L::c_values; ++i) c[j][p][i] = Acc(0);
  // A's fragments of the next chunk load while this chunk multiplies.
  Reg av[parts][L::a_values / per], next[parts][L::a_values / per];
#pragma unroll
  for (int p = 0; p < parts; ++p) load_regs<L::a_values / per>(a + a_fragment<L>(p, 0, lane) / per, next[p]);
  for (int kc = 0; kc < g.k_chunks; ++kc) {
#pragma unroll
    for (int p = 0; p < parts; ++p) {
      for (int r = 0; r < L::a_values / per; ++r) av[p][r] = next[p][r];
      if (kc + 1 < g.k_chunks) load_regs<L::a_values / per>(a + a_fragment<L>(p, kc + 1, lane) / per, next[p]);
    }
#if !defined(SPARSTENCIL_GPU_AMD)
    if constexpr (groups > 0 && groups % 2 == 0 && std::is_same_v<L, NvidiaF16>) {
      // Two groups' B at once: ldmatrix.x4 gives lane l row l / 4, values 2 (l % 4) and
      // 2 (l % 4) + 1 of each of four 8 x 8 matrices, rows tiles and columns a run:
      // (group j, run 2 kc), (j, 2 kc + 1), (j + 1, 2 kc), (j + 1, 2 kc + 1), whose row
      // r lane 8 m + r names; that is b0 b1, b2 b3 of groups j and j + 1 (the tests check
      // it against the layout).
      const int2 runs = reinterpret_cast<const int2*>(run_offsets)[kc];
      const int m     = lane / 8;
      const unsigned row =
          ldmatrix_row + static_cast<unsigned>(((m / 2) * step + (m % 2 ? runs.y : runs.x)) * sizeof(Bits));
#pragma unroll
      for (int j = 0; j < count; j += 2) {
        unsigned bv[4];
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(bv[0]), "=r"(bv[1]), "=r"(bv[2]), "=r"(bv[3])
                     : "r"(row + static_cast<unsigned>(j * step * sizeof(Bits))));
        const unsigned first[2] = {bv[0], bv[1]}, second[2] = {bv[2], bv[3]};
        mma<Kind>(c[j][0], av[0], first);
        mma<Kind>(c[j + 1][0], av[0], second);
      }
    } else
#endif
    {
      const Bits* run[L::b_values / L::b_run];
#pragma unroll
      for (int i = 0; i < L::b_values; i += L::b_run)
        run[i / L::b_run] = b + b_run_offset<L>(run_offsets, V, kc, lane, i);
#pragma unroll
      for (int j = 0; j < count; ++j) {
        if (groups > 0 || j < active) {
          Reg bv[L::b_values / per];
#pragma unroll
          for (int i = 0; i < L::b_values; i += L::b_run)
            load_regs<L::b_run / per>(run[i / L::b_run] + j * step, bv + i / per);
#pragma unroll
          for (int p = 0; p < parts; ++p) mma<Kind>(c[j][p], av[p], bv);
        }
      }
    }
  }
}

/// image_as_a: a wave's unit of `active` groups of L::m tiles from `first_group` (as
/// multiply_unit's) and part `part` of their outputs (L::n of each tile), over the k
/// chunks of the part (PartTables): the image's A fragments times A' transposed as B.
template <class Kind, int D, int groups>
__device__ inline void multiply_image_unit(const DenseArgs<D>& g, const typename Kind::bits* image,
                                           const typename Kind::reg* b, const int* tile_offset, int part,
                                           int first_group, int active, int lane, Sums<Kind>& c) {
  using L            = LayoutOf<Kind>;
  using Bits         = typename Kind::bits;
  using Reg          = typename Kind::reg;
  using Acc          = typename Kind::acc;
  constexpr int most = most_groups<Kind>, step = group_step<L, D>();
  constexpr int count = groups > 0 ? groups : most;
  static_assert(image_as_a<L> && a_values_share_k<L>() && sizeof(Reg) == sizeof(Bits),
                "one value a register, one k a lane");
  const Bits* rows[L::a_values];  // the lane's tiles of the first group
#pragma unroll
  for (int i = 0; i < L::a_values; ++i) rows[i] = image + tile_offset[group_tile<L>(g, first_group, L::a(lane, i).row)];
#pragma unroll
  for (int j = 0; j < most; ++j)
    for (int i = 0; i < L::c_values; ++i) c[j][0][i] = Acc(0);
  const int first = g.part_chunk[part], end = g.part_chunk[part + 1], column = L::a(lane, 0).col;
  // The next chunk's B values and image offset load while this chunk multiplies.
  Reg bv[L::b_values], next[L::b_values];
  int offset = 0, next_offset = 0;
  auto load = [&](int chunk) {
    load_regs<L::b_values>(b + b_fragment<L>(chunk, lane), next);
    next_offset = g.chunk_offsets[chunk * L::k + column];
  };
  if (first < end) load(first);
  for (int chunk = first; chunk < end; ++chunk) {
#pragma unroll
    for (int i = 0; i < L::b_values; ++i) bv[i] = next[i];
    offset = next_offset;
    if (chunk + 1 < end) load(chunk + 1);
#pragma unroll
    for (int j = 0; j < count; ++j) {
      if (groups > 0 || j < active) {
        Reg av[L::a_values];
#pragma unroll
        for (int i = 0; i < L::a_values; ++i) av[i] = rows[i][offset + j * step];
        mma<Kind>(c[j][0], av, bv);
      }
    }
  }
}

/// unit(std::integral_constant<int, n>) for the power of two n <= count equal to
/// `active`, else unit(<0>) (tested a group) where active > 0: the planner sizes blocks in
/// powers of two of tiles, so a unit's group count is compiled on its own.
template <int count, class Unit>
__device__ inline void with_group_count(int active, const Unit& unit) {
  if (active == count) unit(std::integral_constant<int, count>{});
  else if constexpr (count > 1) with_group_count<count / 2>(active, unit);
  else if (active > 0) unit(std::integral_constant<int, 0>{});
}

/// Kind: the operands; Grid: the grids' values (Kind's bits, or float read as 16-bit
/// operands).
template <class Kind, class Grid, int D>
__global__ void __launch_bounds__(block_threads, min_blocks) dense_kernel(const DenseArgs<D> g) {
  using L             = LayoutOf<Kind>;
  using Bits          = typename Kind::bits;
  constexpr int V     = 16 / sizeof(Grid);  // values of a 16-byte chunk of results
  constexpr int parts = part_count<L>();
  constexpr int most  = most_groups<Kind>;
  extern __shared__ uint4 shared_chunks[];  // 16-byte aligned
  Bits* image      = reinterpret_cast<Bits*>(shared_chunks);
  int* run_offsets = reinterpret_cast<int*>(reinterpret_cast<char*>(shared_chunks) + g.region_bytes);
  int* tile_offset = run_offsets + g.runs;
  const Grid* in   = static_cast<const Grid*>(g.in);
  Grid* out        = static_cast<Grid*>(g.out);
  const auto* a    = static_cast<const typename Kind::reg*>(g.a);
  long origin[D];
  block_origin(g, static_cast<long>(blockIdx.x), origin);
  for (int i = threadIdx.x; i < g.runs; i += blockDim.x) run_offsets[i] = g.run_offsets[i];
  for (int i = threadIdx.x; i < g.tiles; i += blockDim.x) tile_offset[i] = g.tile_offsets[i];
  fill_image<Kind>(g, origin, in, image);
  __syncthreads();
  // One unit a wave: g.batch groups (consecutive groups `step` values apart), all parts
  // of the tile's outputs, or (image_as_a) the wave's part.
  constexpr int unit_waves = image_as_a<L> ? parts : 1;  // waves sharing a unit's groups
  static_assert(block_threads / L::lanes / unit_waves * group_tiles<L>() == block_threads / 4,
                "a wave's g.batch groups are wave_batch's 64 tiles");
  const int lane = threadIdx.x % L::lanes, wave = threadIdx.x / L::lanes, part = wave % unit_waves;
  const int groups = group_count<L>(g), first_group = wave / unit_waves * g.batch;
  const int active = groups - first_group < g.batch ? groups - first_group : g.batch;  // the same for the whole wave
  Sums<Kind> c;
  with_group_count<most>(active, [&](auto count) {
    if constexpr (image_as_a<L>) {
      multiply_image_unit<Kind, D, decltype(count)::value>(g, image, a, tile_offset, part, first_group, active, lane,
                                                           c);
    } else {
      multiply_unit<Kind, D, decltype(count)::value>(g, image, a, run_offsets, tile_offset, first_group, active, lane,
                                                     c);
    }
  });
  __syncthreads();  // every wave done with the image: the results go where it was
  Grid* stage = reinterpret_cast<Grid*>(shared_chunks);
  if (active > 0) {
    // Where the lane's results of the unit's first group go, per value; the next groups'
    // lie group_step further along the row.
    constexpr int held = unit_parts<L>;
    int at[held][L::c_values];
#pragma unroll
    for (int p = 0; p < held; ++p) {
      for (int i = 0; i < L::c_values; ++i) {
        const Target t = c_target<L>(image_as_a<L> ? part : p, lane, i);
        at[p][i]       = stage_offset(g, group_tile<L>(g, first_group, t.tile)) + t.point;
      }
    }
#pragma unroll
    for (int j = 0; j < most; ++j) {
      if (j < active) {
        for (int p = 0; p < held; ++p)
          for (int i = 0; i < L::c_values; ++i)
            stage[at[p][i] + j * group_step<L, D>()] = stored<Kind, Grid>(c[j][p][i]);
      }
    }
  }
  __syncthreads();
  // The results, 16-byte chunks over the block's rows (a power of two of them a row),
  // under the boundary contract.
  const int x_shift = g.out_chunk_shift, x_chunks = 1 << x_shift;
  for (int chunk = threadIdx.x; chunk < g.rows << x_shift; chunk += blockDim.x) {
    const int row = chunk >> x_shift, x = (chunk & (x_chunks - 1)) * V;
    const OutputRow r = output_row(g, origin, row);
    if (!r.inside) continue;
    const Grid* from = stage + row * g.pitch + x;
    Grid* to         = out + r.out_index + x * g.out_stride[D - 1];
    const bool whole =
        x_inside(g, origin, x + V - 1) &&
        (g.boundary == 0 || (r.interior && x_interior(g, origin, x) && x_interior(g, origin, x + V - 1)));
#if defined(SPARSTENCIL_GPU_AMD)
    if (whole && g.out_stride[D - 1] == 1 && reinterpret_cast<std::uintptr_t>(to) % 16 == 0) {
      *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(from);
      continue;
    }
#else
    if (whole && g.out_stride[D - 1] == 1) {
      gpu::store_16_bytes(to, *reinterpret_cast<const uint4*>(from));
      continue;
    }
#endif
    for (int e = 0; e < V && x_inside(g, origin, x + e); ++e) {
      if (g.boundary == 0 || (r.interior && x_interior(g, origin, x + e))) {
        out[r.out_index + (x + e) * g.out_stride[D - 1]] = from[e];
      } else if (g.boundary == 2) {
        out[r.out_index + (x + e) * g.out_stride[D - 1]] = in[r.in_index + (x + e) * g.in_stride[D - 1]];
      }
    }
  }
}

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

template <class T>
T* upload(const std::vector<T>& host) {
  void* device = nullptr;
  SPARSTENCIL_GPU_CHECK(gpu::malloc_bytes(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
  try {
    SPARSTENCIL_GPU_CHECK(gpu::copy_to_device(device, host.data(), host.size() * sizeof(T)));
  } catch (...) {
    (void)gpu::free_bytes(device);
    throw;
  }
  return static_cast<T*>(device);
}

}  // namespace

struct DenseExecutor::State {
  Plan plan;
  DenseArgs<1> args1;
  DenseArgs<2> args2;
  DenseArgs<3> args3;
  int device         = 0;
  long blocks        = 0;
  std::size_t shared = 0;
  std::vector<long> contiguous;
  std::vector<void*> allocations;
  std::string instruction;

  ~State() {
    for (void* p : allocations) (void)gpu::free_bytes(p);  // no throw from a destructor
  }
  template <int D>
  DenseArgs<D>& args() {
    if constexpr (D == 1) return args1;
    else if constexpr (D == 2) return args2;
    else return args3;
  }
  template <int D>
  void set_up(const void* a, const int* runs, const int* tile_offsets, const int* chunk_offsets,
              const int (&part_chunk)[3]) {
    DenseArgs<D>& g = args<D>();
    g               = dense_args<D>(plan);
    g.a             = a;
    g.run_offsets   = runs;
    g.tile_offsets  = tile_offsets;
    g.chunk_offsets = chunk_offsets;
    std::copy(part_chunk, part_chunk + 3, g.part_chunk);
    blocks = 1;
    for (int ax = 0; ax < D; ++ax) blocks *= g.blocks[ax];
  }
};

DenseExecutor::DenseExecutor(const Plan& plan) : m_state(std::make_unique<State>()) {
  State& s = *m_state;
  if (plan.backend != "dense" || !plan.dense) {
    fail("DenseExecutor", "the plan is for the ", plan.backend, " backend, not dense");
  }
  verify(plan, "DenseExecutor");
  check_kernel_limits(plan, "DenseExecutor");
  s.plan = plan;
  SPARSTENCIL_GPU_CHECK(gpu::current_device(&s.device));
  gpu::DeviceProperties props{};
  SPARSTENCIL_GPU_CHECK(gpu::properties(&props, s.device));
#if defined(SPARSTENCIL_GPU_AMD)
  const std::string arch = props.gcnArchName;
  if (arch.rfind("gfx90a", 0) != 0 && arch.rfind("gfx94", 0) != 0) {
    fail("DenseExecutor", "device ", props.name, " (", arch, ") has no MFMA of the kernel: gfx90a or gfx94x is needed");
  }
#else
  if (props.major < 8) {
    fail("DenseExecutor", "device ", props.name, " (compute capability ", props.major, ".", props.minor,
         ") has no mma.sync of the kernel: 8.0 or newer is needed");
  }
#endif
  // A' in the fragment order of the layout the device runs; every upload kept to be freed
  // (room reserved first: a keep that threw would lose its buffer).
  s.allocations.reserve(8);
  auto keep = [&](auto* device) {
    s.allocations.push_back(const_cast<void*>(static_cast<const void*>(device)));
    return device;
  };
  const void* a            = nullptr;
  const int* chunk_offsets = nullptr;
  int part_chunk[3]{};
  if (plan.precision == Precision::f64) {
    const std::vector<double> row_major = a_row_major(plan);
    const int K                         = static_cast<int>(plan.order.columns.size());
#if defined(SPARSTENCIL_GPU_AMD)
    s.instruction = AmdF64::instruction;
    a             = keep(upload(a_fragments<AmdF64>(row_major, K)));
#else
    // The layout follows __CUDA_ARCH__ of the code that runs: its PTX version (a JIT of
    // compute_80 PTX on an sm_90 device runs m8n8k4).
    cudaFuncAttributes kernel{};
    SPARSTENCIL_GPU_CHECK(cudaFuncGetAttributes(&kernel, dense_kernel<F64, double, 2>));
    if (kernel.ptxVersion >= 90) {
      s.instruction      = NvidiaF64Sm90::instruction;
      const PartTables t = part_tables<NvidiaF64Sm90>(plan);
      a                  = keep(upload(t.b));
      chunk_offsets      = keep(upload(t.offsets));
      std::copy(t.first.begin(), t.first.end(), part_chunk);
    } else {
      s.instruction = NvidiaF64::instruction;
      a             = keep(upload(a_fragments<NvidiaF64>(row_major, K)));
    }
#endif
  } else if (plan.precision == Precision::tf32) {
#if defined(SPARSTENCIL_GPU_AMD)
    fail("DenseExecutor", "device ", props.name, " has no tf32 matrix instructions (MFMA of gfx90a: f16, bf16, f64)");
#else
    s.instruction = NvidiaTF32::instruction;
    a             = keep(upload(a_fragments<NvidiaTF32>(plan.a.values, static_cast<int>(plan.order.columns.size()))));
#endif
  } else {
    std::vector<unsigned short> row_major(plan.a.values.size() * 2);
    for (std::size_t w = 0; w < plan.a.values.size(); ++w) {
      row_major[2 * w]     = static_cast<unsigned short>(plan.a.values[w]);
      row_major[2 * w + 1] = static_cast<unsigned short>(plan.a.values[w] >> 16);
    }
    s.instruction = Layout16::instruction;
    a             = keep(upload(a_fragments<Layout16>(row_major, static_cast<int>(plan.order.columns.size()))));
  }
  const int* runs         = keep(upload(run_offsets(plan)));
  const int* tile_offsets = keep(upload(plan.tile_offsets));
  switch (plan.dims()) {
    case 1: s.set_up<1>(a, runs, tile_offsets, chunk_offsets, part_chunk); break;
    case 2: s.set_up<2>(a, runs, tile_offsets, chunk_offsets, part_chunk); break;
    default: s.set_up<3>(a, runs, tile_offsets, chunk_offsets, part_chunk); break;
  }
  if (s.blocks > 0x7fffffffL) fail("DenseExecutor", "the grid needs ", s.blocks, " blocks, more than a launch takes");
  s.shared = shared_bytes(plan);
#if defined(SPARSTENCIL_GPU_AMD)
  const std::size_t limit = props.sharedMemPerBlock;
#else
  const std::size_t limit = props.sharedMemPerBlockOptin;
#endif
  if (s.shared > limit) {
    fail("DenseExecutor", "a block of the plan (for device ", plan.device, ") needs ", s.shared,
         " bytes of shared memory; device ", props.name, " gives a block at most ", limit);
  }
  s.contiguous.assign(plan.dims(), 1);
  for (int ax = plan.dims() - 2; ax >= 0; --ax) s.contiguous[ax] = s.contiguous[ax + 1] * plan.grid[ax + 1];
}

DenseExecutor::~DenseExecutor()                                   = default;
DenseExecutor::DenseExecutor(DenseExecutor&&) noexcept            = default;
DenseExecutor& DenseExecutor::operator=(DenseExecutor&&) noexcept = default;

const Plan& DenseExecutor::plan() const { return m_state->plan; }

std::string DenseExecutor::describe() const {
  return m_state->instruction + ", " + std::to_string(m_state->blocks) + " blocks x " + std::to_string(block_threads);
}

void DenseExecutor::apply(const void* in, void* out, Stream stream) const {
  apply(in, m_state->contiguous.data(), out, m_state->contiguous.data(), stream);
}

void DenseExecutor::apply(const void* in, const long* in_strides, void* out, const long* out_strides,
                          Stream stream) const {
  State& s    = *m_state;
  const int D = s.plan.dims();
  if (in == nullptr || out == nullptr) fail("DenseExecutor::apply", "null grid pointer");
  for (int a = 0; a < D; ++a) {
    if (in_strides[a] < 1 || out_strides[a] < 1) {
      fail("DenseExecutor::apply", "strides must be positive: in ",
           sparstencil::impl::tuple_string(std::vector<long>(in_strides, in_strides + D)), ", out ",
           sparstencil::impl::tuple_string(std::vector<long>(out_strides, out_strides + D)));
    }
  }
  const std::size_t bytes = static_cast<std::size_t>(storage_bytes(grid_format(s.plan)));
  if (sparstencil::impl::grid_overlap(reinterpret_cast<std::uintptr_t>(in), in_strides,
                                      reinterpret_cast<std::uintptr_t>(out), out_strides, s.plan.grid.data(), D,
                                      bytes) != sparstencil::impl::Overlap::none) {
    fail("DenseExecutor::apply", "in and out overlap in memory (or may: equal strides are decided element by ",
         "element, others by their memory ranges): a step needs separate buffers");
  }
  int current = 0;
  SPARSTENCIL_GPU_CHECK(gpu::current_device(&current));
  if (current != s.device) {
    fail("DenseExecutor::apply", "the executor was built on device ", s.device, " but device ", current, " is current");
  }
  const void* args = nullptr;
  auto fill        = [&](auto& g) {
    g.in  = in;
    g.out = out;
    for (int a = 0; a < D; ++a) g.in_stride[a] = in_strides[a], g.out_stride[a] = out_strides[a];
    args = &g;
  };
  DenseArgs<1> g1 = s.args1;
  DenseArgs<2> g2 = s.args2;
  DenseArgs<3> g3 = s.args3;
  if (D == 1) fill(g1);
  else if (D == 2) fill(g2);
  else fill(g3);
  switch (s.plan.precision) {
    case Precision::f16:
      if (s.plan.float_grids) launch_kind<F16, float>(D, args, s.blocks, s.shared, stream);
      else launch_kind<F16>(D, args, s.blocks, s.shared, stream);
      break;
    case Precision::bf16:
      if (s.plan.float_grids) launch_kind<BF16, float>(D, args, s.blocks, s.shared, stream);
      else launch_kind<BF16>(D, args, s.blocks, s.shared, stream);
      break;
#if !defined(SPARSTENCIL_GPU_AMD)
    case Precision::tf32: launch_kind<TF32>(D, args, s.blocks, s.shared, stream); break;
#endif
    case Precision::f64: launch_kind<F64>(D, args, s.blocks, s.shared, stream); break;
    default: fail("DenseExecutor::apply", "no dense kernel for ", to_string(s.plan.precision), " here");
  }
}

}  // namespace sparstencil::dense
