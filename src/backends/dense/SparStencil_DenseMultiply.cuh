#pragma once
/// The dense kernel's multiply: each vendor's matrix instruction behind one call
/// (mma<Kind>: inline PTX mma.sync on NVIDIA, the MFMA builtins on AMD), and a wave's
/// unit of work, its groups of tiles times A' over every k chunk (multiply_unit) or,
/// image_as_a, the image times A' transposed over the chunks of the wave's part
/// (multiply_image_unit), with its group count compiled in where the planner's powers of
/// two allow (with_group_count). The fragment mapping the lanes follow is
/// SparStencil_DenseKernel.hpp's, which the host emulator runs too. Device code: included
/// by SparStencil_DenseExecutor.cu only.
#include <type_traits>

#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_DenseOperandKinds.cuh"
#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_MatrixFragments.hpp"

namespace sparstencil::dense::detail {

/// c += a b on the vendor's matrix instruction for Kind, the operands in its lanes' layout
/// (LayoutOf<Kind>).
#if defined(SPARSTENCIL_GPU_AMD)
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
#else
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
#endif

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

}  // namespace sparstencil::dense::detail
