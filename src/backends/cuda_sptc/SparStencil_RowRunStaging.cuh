#pragma once
/// The row-run kernel's staging of a step's sums: each row set's accumulators to its
/// staging rows in shared memory as storage values (stmatrix on sm_90 for 16-bit values),
/// from where the kernel stores them by 16-byte runs.
#include <cstdint>

#include "SparStencil_RowRunFragments.cuh"

namespace sparstencil::cuda_sptc::impl {

/// Staging row 8 q + t (`stage_pitch` values apart) takes the outputs of tile t of row set
/// q: lane l holds outputs l / 4 and l / 4 + 8 of tiles 2 (l mod 4) and 2 (l mod 4) + 1
/// per group (the MMA's accumulator layout).
template <Operand P>
__device__ __forceinline__ void stage_sums(const RowRunSums<P>& acc, storage_t<P>* stage, unsigned stage_address,
                                           int stage_pitch, int lane) {
  using T                  = storage_t<P>;
  constexpr unsigned bytes = sizeof(T);
  constexpr int row_sets   = step_rows_of<P> / 8;
#if __CUDA_ARCH__ >= 900
  constexpr bool by_stmatrix = P != Operand::tf32;  // 16-bit values
#else
  constexpr bool by_stmatrix = false;
#endif
#pragma unroll
  for (int rs = 0; rs < row_sets; ++rs) {
    const auto& c = acc[rs];
    if constexpr (by_stmatrix) {
      // stmatrix.trans: matrix m of lane l's address is row l % 8 (a tile row) of
      // outputs 8 m .. 8 m + 7 of the pair of groups.
      const int m = lane >> 3;
#pragma unroll
      for (int q = 0; q < strip_groups; q += 2) {
        stmatrix_x4_trans(stage_address + bytes * ((8 * rs + (lane & 7)) * stage_pitch + 16 * q + 8 * m),
                          pack_pair<P>(c[q][0], c[q][1]), pack_pair<P>(c[q][2], c[q][3]),
                          pack_pair<P>(c[q + 1][0], c[q + 1][1]), pack_pair<P>(c[q + 1][2], c[q + 1][3]));
      }
    } else {
      const int g = lane >> 2, t = lane & 3;
#pragma unroll
      for (int q = 0; q < strip_groups; ++q) {
        T* const even = stage + (8 * rs + 2 * t) * stage_pitch + 16 * q + g;
        T* const odd  = even + stage_pitch;
        even[0]       = to_storage<P>(c[q][0]);
        odd[0]        = to_storage<P>(c[q][1]);
        even[8]       = to_storage<P>(c[q][2]);
        odd[8]        = to_storage<P>(c[q][3]);
      }
    }
  }
}

}  // namespace sparstencil::cuda_sptc::impl
