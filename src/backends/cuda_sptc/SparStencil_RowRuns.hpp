#pragma once
/// Row-run plans (16-output row tiles): their runs, K order and packed A'
/// (SparStencil_RowRuns.cpp), and the CUDA row-run kernel's layout for them, which the
/// planner sizes plans by and the executor launches by. Plain C++ (no CUDA).
#include <cstddef>
#include <vector>

#include "SparStencil_Backend.hpp"
#include "SparStencil_SparseKernelFacts.hpp"

namespace sparstencil::cuda_sptc {

/// The CUDA row-run kernel's layout for a row-run plan (the planner sizes plans by it,
/// the executor launches by it). Every warp owns a strip `width` outputs wide and streams
/// along axis 0 on its own, one step at a time: `rows` rows in 1-D and 2-D (the 1-D line
/// folded into rows of `width`), one z plane of `rows` rows in 3-D. Its image arrives in a
/// ring of shared memory `ahead` steps early, so every input row is read once per strip.
struct RowRunLayout {
  int vector     = 8;                ///< values per run (16 bytes)
  int width      = strip_width;      ///< outputs of a warp strip along the fastest axis
  int rows       = step_rows_16bit;  ///< output rows of a warp step (step_rows_tf32 for tf32)
  int row_halo   = 0;                ///< image rows above and below the output rows (radius along axis D-2; 0 in 1-D)
  int plane_halo = 0;                ///< 3-D: image planes before and after (radius along axis 0)
  int lead       = 0;  ///< image values before the strip origin (a multiple of V; interleaved rows: a block start)
  int row_values = 0;  ///< image values a ring row holds (a multiple of V)
  /// Image values copied per row: row_values, or with a block per tile (D = 16) the
  /// distinct values the overlapping blocks hold.
  int copied_values = 0;
  int pitch         = 0;  ///< values between image rows (pitch / V odd: ldmatrix rows hit all banks)
  int ring          = 0;  ///< 1-D/2-D: image rows held; 3-D: planes held
  int plane_values  = 0;  ///< 3-D: one plane of the ring (rows + 2 row_halo rows)
  int ahead         = 1;  ///< steps whose image is in flight while one computes
  int stage_pitch   = 0;  ///< values between rows of a warp's staged outputs
  /// A step's outputs are staged in the ring (1-D/2-D: in the step's first `rows` rows,
  /// stage_pitch = pitch; 3-D: in the step's first plane where it holds them), which the
  /// step has just finished with and only the next step's request rewrites; else beside it.
  bool stage_in_ring = false;
  int warp_values    = 0;  ///< shared values one warp owns: ring and staging
  int warps          = 8;  ///< warps per thread block
  /// Every odd k chunk reads the runs of the chunk before it (rows split by parity, an even
  /// number of chunks): the kernel's software-pipelined loop over pairs of chunks.
  bool paired = false;
  /// No k chunk reads the runs of the chunk before it (interleaved rows), two or more
  /// chunks, 1-D or 3-D: the kernel's variant pipelining such pairs, each chunk's B'
  /// loaded for it.
  bool distinct = false;
  /// 2-D, 16-bit: every unit (a pair split by parity, or one interleaved chunk) reads the
  /// runs of the unit before one image row down (boxes), so the kernel's shifted loops load
  /// one B' for two units (row sets of alternate rows). Pairs interleaved 16 apart (a block
  /// per tile) are planned only where this holds.
  bool shifted             = false;
  std::size_t shared_bytes = 0;  ///< per thread block: the warps' buffers, A', metadata, run table
};
/// Throws std::logic_error for a plan without runs.
RowRunLayout row_run_layout(const Plan& plan);
/// The row-run kernel's loop for a plan and its layout: the distinct and shifted variants
/// exist for 16-bit values, in the dimensions RowRunLayout::distinct (1-D, 3-D) and
/// ::shifted (2-D) mark.
RowLoop row_loop(const Plan& plan, const RowRunLayout& layout);
/// The loop's name in describe() and the cost model: "chunk loop", "pipelined pair loop"
/// (standard, paired), "pipelined distinct loop", "shifted pair loop", "shifted chunk loop".
const char* row_loop_name(RowLoop loop, bool paired);
/// Whether k chunk `chunk` (odd) of a row-run plan reads the same runs as the chunk
/// before it (a row split by parity): the kernel loads its B' once for both.
bool reads_previous_runs(const Plan& plan, std::size_t chunk);

/// Whether a tile is a 16-output row (1 x ... x 16): the row-run form.
bool is_row_run_tile(const std::vector<int>& tile);
/// The runs, K order and packed A' of `p` (stencil, tile, radius, patch, precision set)
/// for its kernel matrix `a`. `rule`: best, parity_split or interleaved (Pairing).
void build_row_runs(Plan& p, const KernelMatrix& a, Pairing rule = Pairing::best);
/// The block of a row-run plan: one warp step by the kernel's layout.
void size_row_run_blocks(Plan& p);

}  // namespace sparstencil::cuda_sptc
