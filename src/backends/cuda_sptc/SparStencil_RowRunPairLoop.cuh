#pragma once
/// The row-run kernel's pipelined loop over a step's chunks in pairs: plans whose every
/// pair reads one set of runs (RowRunLayout::paired) or whose every chunk reads runs of its
/// own (`Distinct`, interleaved rows).
#include <cstdint>
#include <type_traits>

#include "SparStencil_RowRunFragments.cuh"

namespace sparstencil::cuda_sptc::impl {

/// Chunks 0 .. 2 pairs - 1 of the step; the caller runs an odd last chunk. (`pairs` from the
/// caller, which starts its chunk loop at 2 pairs: recomputed there from k_chunks, the 1-D
/// kernels took 5 registers more and ran 2-5% slower.)
template <Operand P, RowLoop Loop, bool Distinct>
__device__ __forceinline__ void pair_loop(const RowRunFragments<P, Loop>& f, RowRunSums<P>& acc, const int pairs) {
  constexpr int row_sets = RowRunFragments<P, Loop>::row_sets;
  // A software pipeline over pairs of chunks: every pair reads one set of runs (rows
  // split by parity, `paired`), or every chunk its own (`Distinct`, interleaved rows:
  // the pair's second chunk then follows its first group by group). The next group's
  // B' fragments (across a pair's end, the next pair's first) and the next pair's A',
  // metadata and run offset load while the current group's MMAs run, so shared-memory
  // latency stays off the tensor pipe's path.
  std::uint32_t e = ld_shared_u32(f.e_base), a0[4], a1[4], b[row_sets][4];
  f.a_of(0, a0);
  f.a_of(1, a1);
  unsigned address[row_sets];
  f.addresses_of(ld_shared_u32(f.r_base), address);
#pragma unroll
  for (int q = 0; q < row_sets; ++q) f.load_b(b[q], address[q]);
  // One pair's MMAs, group by group (distinct: the first chunk's groups, then the
  // second's), with the loads of what follows (next: the next pair's run offset, or
  // none for the last pair) interleaved.
  auto pair_mmas = [&](int pair, auto last, auto distinct) {
    constexpr bool own_runs = decltype(distinct)::value;
    constexpr int stages    = own_runs ? 2 * strip_groups : strip_groups;
    std::uint32_t next_e = 0, next_r = 0, next_a0[4], next_a1[4], second_r = 0;
    if constexpr (own_runs) second_r = ld_shared_u32(f.r_base + 32 * pair + 16);  // the second chunk's runs
    if constexpr (!decltype(last)::value) {
      next_e = ld_shared_u32(f.e_base + 128 * (pair + 1));
      next_r = ld_shared_u32(f.r_base + 32 * (pair + 1));
    }
#pragma unroll
    for (int t = 0; t < stages; ++t) {
      const int g = t % strip_groups, c = t / strip_groups;  // group, chunk of the pair (distinct)
      std::uint32_t next_b[row_sets][4];
      if (t + 1 < stages) {
        // (distinct: the first chunk's addresses give way to the second's once its
        // last group is loaded)
        if (own_runs && t + 1 == strip_groups) f.addresses_of(second_r, address);
#pragma unroll
        for (int q = 0; q < row_sets; ++q) f.load_b(next_b[q], address[q] + (t + 1) % strip_groups * f.group_bytes);
      } else if constexpr (!decltype(last)::value) {
        f.addresses_of(next_r, address);
#pragma unroll
        for (int q = 0; q < row_sets; ++q) f.load_b(next_b[q], address[q]);
      }
      if constexpr (!decltype(last)::value) {
        if (t + 2 == stages) {
          f.a_of(2 * pair + 2, next_a0);
          f.a_of(2 * pair + 3, next_a1);
        }
      }
#pragma unroll
      for (int q = 0; q < row_sets; ++q) {
        if (own_runs && c == 1) {
          mma_sp<P, 1>(acc[q][g], a1, b[q], e);
        } else {
          mma_sp<P, 0>(acc[q][g], a0, b[q], e);
          if (!own_runs) mma_sp<P, 1>(acc[q][g], a1, b[q], e);
        }
      }
      if (t + 1 < stages || !decltype(last)::value) {
#pragma unroll
        for (int q = 0; q < row_sets; ++q) {
#pragma unroll
          for (int v = 0; v < 4; ++v) b[q][v] = next_b[q][v];
        }
      }
    }
    if constexpr (!decltype(last)::value) {
      e = next_e;
#pragma unroll
      for (int v = 0; v < 4; ++v) a0[v] = next_a0[v], a1[v] = next_a1[v];
    }
  };
  if constexpr (Distinct) {
    for (int pair = 0; pair + 1 < pairs; ++pair) pair_mmas(pair, std::false_type{}, std::true_type{});
    pair_mmas(pairs - 1, std::true_type{}, std::true_type{});
  } else {
    for (int pair = 0; pair + 1 < pairs; ++pair) pair_mmas(pair, std::false_type{}, std::false_type{});
    pair_mmas(pairs - 1, std::true_type{}, std::false_type{});
  }
}

}  // namespace sparstencil::cuda_sptc::impl
