#pragma once
/// The planner: for a stencil, grid, precision, device and fusion depth, build the sparse
/// tensor-core plan of every candidate tile shape, predict each with the cost model
/// (docs/COST_MODEL.md), predict the generic executor too, and keep the fastest.
#include <optional>
#include <string>
#include <vector>

#include "SparStencil_Plan.hpp"

namespace sparstencil {

/// How the 2:4 column order is made: the shortest of the rules that apply (best), or one
/// rule forced (to compare them; strided swapping needs a row tile).
enum class Pairing { best, hierarchical, edmonds, strided_swapping };

struct PlanRequest {
  AnyStencil stencil = Stencil<1>({{{0}, 1.0}});  ///< one step
  std::vector<long> grid;                         ///< extents, one per dimension
  Precision precision = Precision::f16;
  std::string device  = "h100";
  int steps           = 1;  ///< steps fused into one launch
  Boundary boundary   = Boundary::periodic;
  std::optional<ExecutorKind> executor;  ///< force an executor
  Pairing pairing = Pairing::best;
};

/// Patches larger than this are not planned for tensor cores: A' would not fit a warp's
/// registers with room to spare (1024 columns = 32 chunks of m16n8k32).
inline constexpr int max_patch_points = 1024;

/// Points of a block's shared-memory image (block plus halo, padded rows) the planner
/// aims to stay within by narrowing the block; the sparse executor refuses plans whose
/// image reaches 65536 points.
inline constexpr long max_image_points = 16384;

/// Tile shapes the planner considers for a D-dimensional stencil: outputs per tile 16 or
/// 32 (one or two 16-row blocks of A', no row padding), every factorisation over the axes,
/// and 64 in 1-D. Those whose patch exceeds max_patch_points for the radius are dropped.
std::vector<std::vector<int>> candidate_tiles(int dims, const std::vector<int>& radius);

/// A' chunks (K / mma.k) the CUDA sparse kernel holds in registers per 16-row block count
/// of A' (1, 2 or 4 blocks); 0 where it has no variant.
int max_register_chunks(int m_blocks);
/// Whether the CUDA sparse executor can run this sparse plan (A' fits its registers).
bool fits_sparse_kernel(const Plan& plan);

/// The best plan; throws std::runtime_error for invalid requests (dimension mismatch,
/// grid too small for the fused radius, steps < 1, forcing cuda_sptc where it cannot run).
Plan make_plan(const PlanRequest& request);

/// The sparse tensor-core plan for one tile shape, prediction included, nothing rejected.
Plan make_sparse_plan(const PlanRequest& request, const std::vector<int>& tile);

}  // namespace sparstencil
