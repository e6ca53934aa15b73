#pragma once
/// The CUDA sparse tensor-core backend as the planner sees it (no CUDA): the tiles it
/// plans, each as a matrix form (A' in 2:4 order, packed for mma.sp; gather table or row
/// runs; block geometry) and its bid; the cost model of its kernels is
/// SparStencil_SparseCostModel.hpp. Kernel facts come from SparStencil_SparseKernelFacts.hpp.
#include <string>
#include <vector>

#include "SparStencil_Backend.hpp"
#include "SparStencil_SparseCostModel.hpp"

namespace sparstencil::cuda_sptc {

/// Tile shapes planned for a D-dimensional stencil: outputs per tile 16 or 32 (one or two
/// 16-row blocks of A', no row padding), every factorisation over the axes, and 64 in 1-D.
/// Those whose patch exceeds max_patch_points for the radius are dropped, except the
/// 16-output row (row-run plans hold A' in shared memory).
std::vector<std::vector<int>> candidate_tiles(int dims, const std::vector<int>& radius);

/// Whether the executor can run this plan (gather form: A' fits a variant's registers;
/// row-run form: the block fits max_row_run_shared_bytes).
bool fits_kernel(const Plan& plan);

/// The plan for one tile shape, prediction included, nothing rejected. Throws where the
/// request has no sparse form (precision, device) or the tile has the wrong rank.
Plan make_sparse_plan(const PlanRequest& request, const std::vector<int>& tile);

/// The backend's model, for the registry.
const BackendModel& model();

}  // namespace sparstencil::cuda_sptc
