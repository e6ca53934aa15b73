#pragma once
/// The row-run kernel's loop over a step's chunks for 2-D boxes (RowLoop::shifted_pairs,
/// shifted_chunks): row set 1 reads the rows one above row set 0's, so one B' serves set 0
/// with one unit of chunks and set 1 with the unit before it.
#include <cstdint>
#include <type_traits>

#include "SparStencil_RowRunFragments.cuh"

namespace sparstencil::cuda_sptc::impl {

template <Operand P, RowLoop Loop>
__device__ __forceinline__ void shifted_loop(const RowRunFragments<P, Loop>& f, RowRunSums<P>& acc, int k_chunks) {
  // Units of `per` chunks (a pair split by parity, or one interleaved chunk) read rows
  // one apart: level 0 computes set 0 with unit 0 and set 1 with the last unit, each
  // its own B'; level l > 0 loads one B' (unit l's runs) for set 0 with unit l and set 1
  // with unit l - 1, pipelined: the next group's B' and the next unit's A' load while
  // the current group's MMAs run.
  // The lane's ldmatrix row of a run (word: offset, and its image row in bits 24-30) for
  // row set q: wrapped once, then shifted as its ring row is (row_shift).
  auto fragment_at = [&](std::uint32_t word, int q) {
    unsigned at = f.window[q] + (word & 0xFFFFFFu);
    at          = at >= f.ring_end ? at - f.ring_bytes : at;
    return at + row_shift<Loop>(static_cast<int>(word >> 24) + set_row<Loop>(q, f.tile_row));
  };
  // Single chunks all take selector 0: an odd chunk's metadata (lanes 4 g + 2, 4 g + 3
  // of its pair's word) is read by lanes 4 g, 4 g + 1.
  const unsigned e_swapped = f.e_base ^ 8u;
  auto levels              = [&](auto per_chunks) {
    constexpr int per = decltype(per_chunks)::value;
    const int units   = k_chunks / per;
    auto e_of         = [&](int u) {
      return per == 2 ? ld_shared_u32(f.e_base + 128 * u)
                                           : ld_shared_u32((u & 1 ? e_swapped : f.e_base) + 128 * (u >> 1));
    };
    auto a_unit = [&](int u, std::uint32_t(&a)[per][4]) {
#pragma unroll
      for (int c = 0; c < per; ++c) f.a_of(per * u + c, a[c]);
    };
    auto mmas = [&](float(&c)[4], const std::uint32_t(&a)[per][4], const std::uint32_t(&b)[4], std::uint32_t e) {
      mma_sp<P, 0>(c, a[0], b, e);
      if constexpr (per == 2) mma_sp<P, 1>(c, a[1], b, e);
    };
    // A' and metadata of three units rotate through three buffers (level l: unit l, unit
    // l - 1, unit l + 1 arriving), the level loop unrolled by that period so no register
    // is copied from level to level. Level 0: unit 0 in buffer 0, the last unit in 1.
    std::uint32_t A[3][per][4], E[3];
    E[0] = e_of(0), E[1] = e_of(units - 1);
    a_unit(0, A[0]);
    a_unit(units - 1, A[1]);
    {
      const unsigned at0 = fragment_at(ld_shared_u32(f.r_base), 0);
      const unsigned at1 = fragment_at(ld_shared_u32(f.r_base + 16 * per * (units - 1)), 1);
#pragma unroll
      for (int g = 0; g < strip_groups; ++g) {
        std::uint32_t b0[4], b1[4];
        f.load_b(b0, at0 + g * f.group_bytes);
        f.load_b(b1, at1 + g * f.group_bytes);
        mmas(acc[0][g], A[0], b0, E[0]);
        mmas(acc[1][g], A[1], b1, E[1]);
      }
    }
    unsigned at = fragment_at(ld_shared_u32(f.r_base + 16 * per), 0);
    std::uint32_t b[4];
    f.load_b(b, at);
    E[1] = e_of(1);
    a_unit(1, A[1]);
    // Level l: unit l in buffer `Now`, unit l - 1 in `Before`, unit l + 1 into `Next`.
    auto level = [&](int l, auto last, auto now, auto before, auto next) {
      constexpr bool is_last = decltype(last)::value;
      constexpr int Now = decltype(now)::value, Before = decltype(before)::value, Next = decltype(next)::value;
      std::uint32_t next_r = 0;
      if constexpr (!is_last) {
        E[Next] = e_of(l + 1);
        next_r  = ld_shared_u32(f.r_base + 16 * per * (l + 1));
      }
#pragma unroll
      for (int g = 0; g < strip_groups; ++g) {
        std::uint32_t next_b[4];
        if (g + 1 < strip_groups) {
          f.load_b(next_b, at + (g + 1) * f.group_bytes);
        } else if constexpr (!is_last) {
          at = fragment_at(next_r, 0);
          f.load_b(next_b, at);
        }
        if constexpr (!is_last) {
          if (g + 2 == strip_groups) a_unit(l + 1, A[Next]);
        }
        mmas(acc[0][g], A[Now], b, E[Now]);
        mmas(acc[1][g], A[Before], b, E[Before]);
        if (g + 1 < strip_groups || !is_last) {
#pragma unroll
          for (int v = 0; v < 4; ++v) b[v] = next_b[v];
        }
      }
    };
    using I0 = std::integral_constant<int, 0>;
    using I1 = std::integral_constant<int, 1>;
    using I2 = std::integral_constant<int, 2>;
    const std::false_type more;
    const std::true_type last;
    int l = 1;
    for (; l + 3 < units; l += 3) {
      level(l, more, I1{}, I0{}, I2{});
      level(l + 1, more, I2{}, I1{}, I0{});
      level(l + 2, more, I0{}, I2{}, I1{});
    }
    if (l + 1 == units) {
      level(l, last, I1{}, I0{}, I2{});
    } else if (l + 2 == units) {
      level(l, more, I1{}, I0{}, I2{});
      level(l + 1, last, I2{}, I1{}, I0{});
    } else {
      level(l, more, I1{}, I0{}, I2{});
      level(l + 1, more, I2{}, I1{}, I0{});
      level(l + 2, last, I0{}, I2{}, I1{});
    }
  };
  levels(std::integral_constant < int, Loop == RowLoop::shifted_pairs ? 2 : 1 > {});
}

}  // namespace sparstencil::cuda_sptc::impl
