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
/// and 64 in 1-D. Those whose patch exceeds max_patch_points for the radius are dropped,
/// except the 16-output row (row-run plans hold A' in shared memory).
std::vector<std::vector<int>> candidate_tiles(int dims, const std::vector<int>& radius);

/// A' chunks (K / mma.k) the CUDA sparse kernel holds in registers per 16-row block count
/// of A' (1, 2 or 4 blocks); 0 where it has no variant.
int max_register_chunks(int m_blocks);
/// Shared memory a row-run plan's thread block may use (A100's opt-in limit, 163 KiB).
inline constexpr std::size_t max_row_run_shared_bytes = 163 * 1024;
/// Whether the CUDA sparse executor can run this sparse plan (gather form: A' fits its
/// registers; row-run form: the block fits max_row_run_shared_bytes).
bool fits_sparse_kernel(const Plan& plan);

/// The CUDA row-run kernel's shared-memory layout for a row-run plan (both the planner,
/// which sizes blocks by it, and the executor use it). The kernel streams planes along
/// axis 0: in 3-D z planes through a ring (each plane loaded once), in 2-D blocks of 16
/// rows, in 1-D blocks of 16 rows of `width` values each (the line folded into rows).
struct RowRunLayout {
  int vector        = 8;   ///< values per run (16 bytes)
  int width         = 0;   ///< outputs of a block row along the fastest axis
  int row_lead      = 0;   ///< image rows above the first output row (radius along the row axis)
  int image_rows    = 0;   ///< 16 + 2 row_lead
  int lead          = 0;   ///< image columns before the block origin (radius rounded up to V)
  int pitch         = 0;   ///< values between image rows (pitch / V odd: ldmatrix rows hit all banks)
  int plane_values  = 0;   ///< one plane buffer, slack included (runs may read past the last row)
  int ring          = 2;   ///< image planes in flight (2 radius_z + 2 in 3-D, else 2)
  int ring_lead     = 0;   ///< radius along the streamed axis in 3-D, else 0
  int swapped_ring  = 0;   ///< planes of each swapped image (0: no run reads them)
  int swapped_low   = 0;   ///< lowest plane offset a swapped run reads
  int swapped_rows[2]{};   ///< image rows [first, last] the swapped images are built for
  int shift[3]{};          ///< per source: buffer index = image index + shift (run starts aligned)
  int stage_pitch   = 0;   ///< values between rows of the staged outputs
  std::size_t shared_bytes = 0;
};
/// Throws std::logic_error for a plan without runs.
RowRunLayout row_run_layout(const Plan& plan);

namespace impl {
/// Row-run plans (SparStencil_RowRuns.cpp), used by the planner: whether a tile is a
/// 16-output row; the K order and runs of `p` (stencil, tile, radius, patch, precision
/// set) for its kernel matrix `a`; its block size by the kernel's shared memory.
bool is_row_run_tile(const std::vector<int>& tile);
void build_row_runs(Plan& p, const KernelMatrix& a);
void size_row_run_blocks(Plan& p);
}  // namespace impl

/// The best plan; throws std::runtime_error for invalid requests (dimension mismatch,
/// grid too small for the fused radius, steps < 1, forcing cuda_sptc where it cannot run).
Plan make_plan(const PlanRequest& request);

/// The sparse tensor-core plan for one tile shape, prediction included, nothing rejected.
Plan make_sparse_plan(const PlanRequest& request, const std::vector<int>& tile);

}  // namespace sparstencil
