#pragma once
/// The dense matrix-core backend as the planner sees it (no CUDA, no HIP): the stencil as
/// C = A' x B' (the morphing of SparStencil §3.1, TCStencil's dense formulation) without
/// the 2:4 step, for 16-output row tiles: A' dense, K in runs of 16 bytes of consecutive
/// image values (Plan::runs) padded to the instruction's k, B' read from a block's
/// shared-memory image run by run; its kernel's facts, cost model and bid.
/// One plan serves NVIDIA (mma.sync f16/bf16 m16n8k16, tf32 m16n8k8, f64 m8n8k4 or sm_90's m16n8k4) and AMD
/// (MFMA 16x16x16 f16/bf16, 16x16x4 f64; no tf32): SparStencil_MatrixFragments.hpp.
#include <cstddef>
#include <string>
#include <vector>

#include "SparStencil_Backend.hpp"
#include "SparStencil_DensePacking.hpp"  // A' in the operand format: pack_dense, unpack_dense
#include "SparStencil_Rounding.hpp"

namespace sparstencil::dense {

/// Threads of a block of the dense kernel (8 NVIDIA warps, 4 AMD waves).
inline constexpr int block_threads = 256;
/// Groups of tiles (the instruction's N each; sm_90 f64: its M) a wave's one unit of work multiplies by each
/// A fragment it loads, at most: the accumulators' registers (f32 sums: 8 groups of four
/// a lane; f64: 4 groups of four). A block holds at most 8 x this many tiles a wave.
inline constexpr int max_unit_groups_16 = 8;
inline constexpr int max_unit_groups_64 = 4;
/// Groups a wave's one unit takes in a block of `tiles` tiles: the block's groups over its
/// waves, the same on both vendors (NVIDIA: groups of 8 over 8 warps, AMD: of 16 over 4).
inline int wave_batch(int tiles) {
  const int wave_tiles = block_threads / 4;
  return (tiles + wave_tiles - 1) / wave_tiles;
}
/// Shared memory a block of a plan for `device` may take: half an SM's where the model
/// knows the GPU (H100 and H200: 113 KiB of 227, A100: 81 KiB of 163; two blocks an SM),
/// else 48 KiB (NVIDIA's default limit, under AMD's 64 KiB of LDS). The executor opts in
/// on the device it runs on for plans above 48 KiB and refuses one past its limit.
std::size_t max_shared_bytes(const std::string& device);

/// Whether dense matrix cores take this precision: f16, bf16, tf32 (float grids; summed in
/// f32) and f64. Whether a device has them: DeviceDescription (AMD's gfx90a: no tf32).
bool has_dense_operands(Precision p);
/// The plan's multiply unit: m16n8k16 for f16/bf16, m16n8k8 for tf32, m16n8k4 for f64.
MmaShape mma_shape(Precision p);

/// Whether a float-grid plan's blocks copy their float values as they are beside the
/// 16-bit image (every chunk in flight) and then round them into it: where the shared
/// memory a block may take (max_shared_bytes) holds both; else each value is rounded as it
/// is loaded (a few chunks in flight a thread), and blocks keep their size.
bool copies_beside(const Plan& plan);
/// Bytes of a block's shared memory before its tables: the image in the operand format
/// (and the float values beside it: copies_beside), where the results are then staged in
/// the grids' format (grid_format: float grids stage 4-byte results).
std::size_t image_region_bytes(const Plan& plan);
/// Shared memory a block of the plan takes: image_region_bytes, then the run table and the
/// tile offsets (ints).
std::size_t shared_bytes(const Plan& plan);

/// The tile of a dense plan: a row of 16 outputs along the fastest axis (1 x ... x 16).
std::vector<int> row_tile(int dims);

/// Throws where a (verified) dense plan holds more tiles a block than its waves' single
/// units take (block_threads / 4 x max_unit_groups) or more shared memory than
/// max_shared_bytes(plan.device): what the kernel and the emulator assume.
void check_kernel_limits(const Plan& plan, const char* function);

/// The dense plan of a request, prediction included. Throws where the request has no
/// dense form (precision, device, fused steps under walls, weights past the operands).
Plan make_dense_plan(const PlanRequest& request);

/// The error bound of one dense step (f16, bf16, tf32, f64): matrix_step_error_bound.
using sparstencil::ErrorBound;
ErrorBound step_error_bound(Precision p, std::size_t terms);

/// The backend's model, for the registry.
const BackendModel& model();

}  // namespace sparstencil::dense
