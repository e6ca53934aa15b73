#pragma once
/// The sparse backend's cost model (docs/COST_MODEL.md, no CUDA): what it counts for a
/// plan's launch, the prediction it weighs from those counts with its fitted constants,
/// and the sparse plan's scenario against the generic executor.
#include <string>

#include "SparStencil_Backend.hpp"

namespace sparstencil::cuda_sptc {

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

/// SparStencil eq. 6-10 over the plan's counts.
Prediction predict_sparse(const Plan& p);
/// The model paper's four scenarios for the sparse plan against the generic executor.
Scenario scenario_of(const Plan& generic, const Plan& sparse);

}  // namespace sparstencil::cuda_sptc
