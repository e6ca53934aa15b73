#pragma once
/// Facts of the CUDA sparse tensor-core kernels that the planner sizes plans by. Plain C++
/// (no CUDA): the kernels (SparStencil_SparseKernel.cuh, SparStencil_RowRunKernel.cuh)
/// and the executor include this header too, so each fact is written once.
#include <cstddef>

namespace sparstencil::cuda_sptc {

// ---- gather kernel (any tile; B gathered value by value through the plan's table)

/// Threads of a gather-kernel block.
inline constexpr int gather_threads_per_block = 256;

/// The gather kernel's variants: A' held in registers, `m_blocks` blocks of 16 rows of
/// `held_chunks` k chunks each (a plan's chunk count rounds up to the next held count).
/// The executor compiles exactly these.
struct GatherVariant {
  int m_blocks;
  int held_chunks;
};
inline constexpr GatherVariant gather_variants[] = {{1, 2}, {1, 4}, {1, 8},  {1, 16}, {1, 32}, {2, 2},
                                                    {2, 4}, {2, 8}, {2, 16}, {4, 2},  {4, 4}};

/// The most k chunks a gather variant holds for `m_blocks` blocks of A' rows; 0 where no
/// variant has that many blocks.
constexpr int max_register_chunks(int m_blocks) {
  int most = 0;
  for (const GatherVariant& v : gather_variants) {
    if (v.m_blocks == m_blocks && v.held_chunks > most) most = v.held_chunks;
  }
  return most;
}

/// The gather kernel's shared-memory image is addressed by 16-bit offsets; the planner
/// narrows blocks to stay within max_image_points.
inline constexpr long max_gather_image_points = 65536;
inline constexpr long max_image_points        = 16384;

/// Patches larger than this are not planned for the gather kernel: A' would not fit a
/// warp's registers with room to spare (1024 columns = 32 chunks of m16n8k32).
inline constexpr int max_patch_points = 1024;

// ---- row-run kernel (16-output row tiles; B' read as 16-byte runs of the image)

/// Groups of 8 tiles (16 outputs wide each) across a warp's strip: 64 outputs.
inline constexpr int strip_groups = 4;
inline constexpr int strip_width  = 16 * strip_groups;
/// Output rows a warp computes per step, in sets of 8 (the 8 tiles of an MMA): 16 for
/// 16-bit values, 8 for tf32 (whose 4-byte rows would leave too few warps resident).
inline constexpr int step_rows_16bit = 16;
inline constexpr int step_rows_tf32  = 8;

/// Shared memory a row-run block may use: the smallest opt-in limit of the devices with
/// sparse tensor cores (A100: 163 KiB).
inline constexpr std::size_t max_row_run_shared_bytes = 163 * 1024;
/// Shared memory of A' a row-run block holds per k chunk (16 rows of 16 kept values, in
/// 16-bit or paired tf32 form), before its metadata, run table and image buffers.
inline constexpr std::size_t row_run_bytes_per_chunk = 512;

/// The row-run kernel's launch bounds: blocks of at most 256 threads, two resident an SM
/// (so at most 128 registers a thread: 16 warps an SM where shared memory allows).
inline constexpr int row_run_max_threads = 256;
inline constexpr int row_run_min_blocks  = 2;

/// The row-run kernel's loop over k chunks (row_loop, SparStencil_RowRuns.hpp): `standard`
/// (chunk by chunk, or the pipelined pair loop where RowRunLayout::paired), `distinct`
/// (pipelined, every chunk its own runs) or, in 2-D with 16-bit values, `shifted_pairs` /
/// `shifted_chunks` (RowRunLayout::shifted: unit l + 1, a pair or one chunk, reads unit
/// l's runs one row down; row set q is rows 2 t + q, so set 1 with unit l - 1 reads the B'
/// set 0 reads with unit l).
enum class RowLoop { standard, distinct, shifted_pairs, shifted_chunks };

}  // namespace sparstencil::cuda_sptc
