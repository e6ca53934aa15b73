#pragma once
/// The dense matrix-core backend as the planner sees it (no CUDA, no HIP): the stencil as
/// C = A' x B' (the morphing of SparStencil §3.1, TCStencil's dense formulation) without
/// the 2:4 step, A' dense with K padded to the instruction's, B' gathered from a block's
/// shared-memory image through the plan's table; its kernel's facts, cost model and bid.
/// One plan serves NVIDIA (mma.sync f16/bf16 m16n8k16, f64 m8n8k4) and AMD (MFMA
/// 16x16x16 f16/bf16, 16x16x4 f64): SparStencil_MatrixFragments.hpp.
#include <cstddef>
#include <vector>

#include "SparStencil_Backend.hpp"
#include "SparStencil_Rounding.hpp"

namespace sparstencil::dense {

/// Threads of a block of the dense kernel (8 NVIDIA warps, 4 AMD waves).
inline constexpr int block_threads = 256;
/// Groups of tiles (the instruction's N each) a wave multiplies by each A fragment it loads.
inline constexpr int group_batch = 4;
/// Shared memory a block may take (image, gather table, tile offsets): the default limit
/// of every NVIDIA GPU from sm_80 and below AMD's 64 KiB of LDS, so no opt-in is needed.
inline constexpr std::size_t max_shared_bytes = 48 * 1024;

/// Whether dense matrix cores take this precision: f16, bf16 (summed in f32) and f64.
bool has_dense_operands(Precision p);
/// The plan's multiply unit: m16n8k16 for f16/bf16, m16n8k4 for f64.
MmaShape mma_shape(Precision p);

/// A' (columns in `order`, rows padded to 16) as Plan::dense packs it (PackedA).
PackedA pack_dense(const KernelMatrix& a, const ColumnOrder& order, Precision precision);
/// The A' entry at (row, k) a dense plan holds, in the operand format.
double unpack_dense(const PackedA& packed, Precision precision, int row, int k);

/// Shared memory a block of the plan takes: its image in the storage format, the gather
/// table, the tile offsets and the tables of tile and tile-point coordinates (ints).
std::size_t shared_bytes(const Plan& plan);

/// Tiles planned: the 16 outputs of A's 16 rows, every factorisation over the axes.
std::vector<std::vector<int>> candidate_tiles(int dims);

/// The plan for one tile, prediction included. Throws where the request has no dense
/// form (precision, device, fused steps under walls) or the tile has the wrong rank or
/// is not 16 outputs.
Plan make_dense_plan(const PlanRequest& request, const std::vector<int>& tile);

/// The error bound of one dense step (f16, bf16, f64): matrix_step_error_bound.
using sparstencil::ErrorBound;
ErrorBound step_error_bound(Precision p, std::size_t terms);

/// The backend's model, for the registry.
const BackendModel& model();

}  // namespace sparstencil::dense
