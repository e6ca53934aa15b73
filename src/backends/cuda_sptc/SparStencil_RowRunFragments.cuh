#pragma once
/// A row-run step's operands as its MMA loops read them from shared memory: the lane's
/// A' (values, metadata) and run words, its ldmatrix rows of B' in the step's window of
/// the ring, and one chunk's MMAs over every row set and group of 8 tiles. The loops over
/// a step's chunks (SparStencil_RowRunPairLoop.cuh, SparStencil_RowRunShiftedLoop.cuh, and
/// chunk_loop below) are written on it.
#include <cstdint>
#include <type_traits>

#include "SparStencil_RowRunParams.cuh"
#include "SparStencil_SharedInstructions.cuh"

namespace sparstencil::cuda_sptc::impl {

/// A step's sums: per row set, group of 8 tiles, the lane's 4 MMA accumulators.
template <Operand P>
using RowRunSums = float[step_rows_of<P> / 8][strip_groups][4];

template <Operand P, RowLoop Loop>
struct RowRunFragments {
  static constexpr int row_sets = step_rows_of<P> / 8;
  /// The shared address of the lane's ldmatrix row in the step's window, per row set: a
  /// run's offset is added and, past the ring's end, wrapped once (the offsets reach less
  /// than a ring further). The kernel's own array (copied in here, ptxas spilled in the
  /// shifted and 3-D variants).
  const unsigned (&window)[row_sets];
  unsigned ring_end, ring_bytes;
  unsigned group_bytes;             ///< between the B' of consecutive groups of 8 tiles in a ring row
  unsigned a_base, e_base, r_base;  ///< the lane's A' values, metadata word, run word of chunk 0
  int tile_row;                     ///< lane l gives ldmatrix the address of run l / 8 of tile (row) l % 8

  __device__ __forceinline__ void addresses_of(std::uint32_t offset, unsigned (&address)[row_sets]) const {
#pragma unroll
    for (int q = 0; q < row_sets; ++q) {
      const unsigned at = window[q] + offset;
      address[q]        = at >= ring_end ? at - ring_bytes : at;
    }
  }
  __device__ __forceinline__ static void load_b(std::uint32_t (&b)[4], unsigned address) {
    ldmatrix_x4(b, address);
    if constexpr (P == Operand::tf32) {  // round to nearest like the emulator (the MMA truncates)
#pragma unroll
      for (int v = 0; v < 4; ++v) b[v] = gpu::tf32_bits(__uint_as_float(b[v]));
    }
  }
  __device__ __forceinline__ void a_of(int kc, std::uint32_t (&a)[4]) const {
    const uint4 av = ld_shared_v4(a_base + 512 * kc);
    a[0] = av.x, a[1] = av.y, a[2] = av.z, a[3] = av.w;
  }
  /// Chunk kc on the runs at `offset`; `Both`: chunk kc + 1 too, which reads the same runs
  /// (a split row's two parts, selectors 0 and 1): B' once for both.
  template <int Selector, bool Both>
  __device__ __forceinline__ void chunk(RowRunSums<P>& acc, int kc, std::uint32_t offset, std::uint32_t e) const {
    std::uint32_t a[4], a1[4];
    a_of(kc, a);
    if constexpr (Both) a_of(kc + 1, a1);
    unsigned address[row_sets];
    addresses_of(offset, address);
#pragma unroll
    for (int g = 0; g < strip_groups; ++g) {
#pragma unroll
      for (int q = 0; q < row_sets; ++q) {
        std::uint32_t b[4];
        load_b(b, address[q] + g * group_bytes);
        mma_sp<P, Selector>(acc[q][g], a, b, e);
        if constexpr (Both) mma_sp<P, 1>(acc[q][g], a1, b, e);
      }
    }
  }
};

/// Chunks kc, kc + 1, ... of a step two at a time, B' once for a pair that reads one set of
/// runs (bit 31 of the second's run word), unpipelined: plans whose chunks the pair and
/// shifted loops do not take, and what those leave.
template <Operand P, RowLoop Loop>
__device__ __forceinline__ void chunk_loop(const RowRunFragments<P, Loop>& f, RowRunSums<P>& acc, int kc,
                                           int k_chunks) {
  for (; kc + 1 < k_chunks; kc += 2) {
    const std::uint32_t e  = ld_shared_u32(f.e_base + 128 * (kc / 2));
    const std::uint32_t r0 = ld_shared_u32(f.r_base + 16 * kc), r1 = ld_shared_u32(f.r_base + 16 * (kc + 1));
    if (r1 >> 31) {  // chunk kc + 1 reads chunk kc's runs
      f.template chunk<0, true>(acc, kc, r0, e);
      continue;
    }
    f.template chunk<0, false>(acc, kc, r0, e);
    f.template chunk<1, false>(acc, kc + 1, r1, e);
  }
  if (kc < k_chunks)
    f.template chunk<0, false>(acc, kc, ld_shared_u32(f.r_base + 16 * kc), ld_shared_u32(f.e_base + 128 * (kc / 2)));
}

}  // namespace sparstencil::cuda_sptc::impl
