#pragma once
/// What the row-run kernel (SparStencil_RowRunKernel.cuh) is launched with, and the facts
/// of a step's layout that its stages share: rows a step, a tile's row in a row set, the
/// shifted loops' ring-row offsets.
#include <cstdint>

#include "SparStencil_SparseKernel.cuh"

namespace sparstencil::cuda_sptc::impl {

/// Output rows a warp computes per step (SparStencil_SparseKernelFacts.hpp).
template <Operand P>
constexpr int step_rows_of = P == Operand::tf32 ? step_rows_tf32 : step_rows_16bit;

/// Step row of an MMA's tile (n column) t in row set q.
template <RowLoop Loop>
__device__ __forceinline__ int set_row(int q, int t) {
  return Loop == RowLoop::shifted_pairs || Loop == RowLoop::shifted_chunks ? 2 * t + q : 8 * q + t;
}

/// Shifted loops: ring row a (a warp's image row a) lies 16 bytes into its slot where
/// a mod 16 >= 8, so the 8 rows of one parity an ldmatrix reads (rows 2 t + c) fall on
/// all eight 16-byte bank groups (pitch / V odd).
template <RowLoop Loop>
__device__ __forceinline__ unsigned row_shift(int a) {
  return Loop == RowLoop::shifted_pairs || Loop == RowLoop::shifted_chunks ? (a & 8) << 1 : 0u;
}

struct RowRunParams {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[3]{};  ///< padded 3-D
  long in_stride[3]{};
  long out_stride[3]{};
  int radius[3]{};  ///< the boundary contract's rim
  Boundary boundary = Boundary::periodic;
  int row_halo = 0, plane_halo = 0;
  int lead = 0, chunks = 0;  ///< image values before the strip origin; 16-byte chunks per ring row
  /// 16-byte chunks copied per image row: `chunks`, or with a block per tile (D = 16) the
  /// row's distinct chunks, which the interleaving then spreads over the blocks.
  int copy_chunks = 0;
  /// Plan::interleave: 0, or D (4, 8 or 16) where image rows are held with their 4-byte
  /// pairs interleaved D values apart: in each block of 2 D values (D / 4 16-byte units),
  /// unit m holds the pairs at values 4m, D + 4m, 4m + 2, D + 4m + 2. D = 16: the ring row
  /// holds a block for each 16-output tile of the strip, side by side (block g from grid
  /// column x0 - lead + 16 g: neighbours overlap).
  int interleave  = 0;
  int group_bytes = 32;  ///< bytes between the B' of consecutive groups of 8 tiles in a ring row
  int pitch = 0, ring = 0, plane_values = 0, ahead = 1, stage_pitch = 0, warp_values = 0;
  int warps     = 8;  ///< per thread block
  long strips   = 0;  ///< warp strips (3-D: y blocks times x blocks)
  long strips_x = 0;  ///< strips along the fastest axis
  long steps    = 0;  ///< along axis 0: blocks of step rows (folded rows in 1-D) or z planes
  long segment  = 0;  ///< steps a warp streams
  int k_chunks = 0, runs = 0;
  bool out_aligned = false;  ///< grid pointer and row strides whole 16-byte units (set per launch)
  /// Every odd chunk reads the runs of the chunk before it (an even number of chunks, all
  /// rows split by parity): the kernel's pipelined loop over pairs.
  bool paired        = false;
  bool stage_in_ring = false;  ///< 3-D: RowRunLayout::stage_in_ring
  /// Input pointer and row strides whole 16-byte units, the fastest axis contiguous (set
  /// per launch).
  bool in_aligned                 = false;
  const std::uint32_t* a_values   = nullptr;  ///< [kc][lane][4]
  const std::uint32_t* a_metadata = nullptr;  ///< [kc / 2][lane]
  /// Per run: bits 0-15 byte offset in an image row ((lead + x) * bytes), 16-23 image row
  /// (y + row_halo), 24-30 plane (z + plane_halo), relative to the tile origin; bit 31 set
  /// on the runs of an odd chunk that reads the same runs as the chunk before it.
  const std::uint32_t* run_words = nullptr;
};

}  // namespace sparstencil::cuda_sptc::impl
