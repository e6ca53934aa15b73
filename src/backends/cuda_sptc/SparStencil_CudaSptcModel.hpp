#pragma once
/// The CUDA sparse tensor-core backend as the planner sees it (no CUDA): the tiles it
/// plans, each as a matrix form (A' in 2:4 order, packed for mma.sp; gather table or row
/// runs; block geometry), the cost model of its two kernels (docs/COST_MODEL.md), and its
/// bid. Kernel facts come from SparStencil_SparseKernelFacts.hpp.
#include <string>
#include <vector>

#include "SparStencil_Backend.hpp"

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

/// What the cost model counts for a sparse plan before it weighs the counts with its
/// fitted constants (docs/COST_MODEL.md): what a refit needs of each measured launch
/// (sparstencil_bench_sparse --json, perf_tests/fit_sparse_model.py).
struct SparseCostTerms {
  /// The kernel: gather_loop_name, the row-run loop (row_loop_name) or, for a plan
  /// without runs yet, lower_bound_loop_name.
  std::string loop;
  int dims                = 0;
  bool tf32               = false;
  bool interleaved        = false;  ///< row-run image rows interleaved in place
  double points           = 0;      ///< grid points
  int steps               = 1;      ///< fused steps
  int terms               = 0;      ///< of the one-step stencil (the wall kernel's)
  double groups           = 0;      ///< groups of 8 tiles (one MMA's N)
  double chunks           = 0;      ///< mma.sp per group
  int resident_warps      = 0;      ///< row-run: warps an SM (launch bounds and shared memory)
  double tensor_seconds   = 0;      ///< the MMAs at the sparse rate
  double memory_bytes     = 0;      ///< device memory moved (halo re-reads included)
  double shared_bytes     = 0;      ///< shared memory moved (block, B fragments, staged results)
  double wall_point_steps = 0;      ///< the wall kernel's region points x steps (0: none)
};
inline constexpr const char* gather_loop_name      = "gather";
inline constexpr const char* lower_bound_loop_name = "lower bound";
SparseCostTerms sparse_cost_terms(const Plan& plan);

/// The backend's model, for the registry.
const BackendModel& model();

}  // namespace sparstencil::cuda_sptc
