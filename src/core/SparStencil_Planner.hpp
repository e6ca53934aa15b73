#pragma once
/// The planner: for a stencil, grid, precision, device and fusion depth, build the sparse
/// tensor-core plan of every candidate tile shape, predict each with the cost model
/// (docs/COST_MODEL.md), predict the generic executor too, and keep the fastest.
#include <optional>
#include <string>
#include <vector>

#include "SparStencil_Plan.hpp"

namespace sparstencil {

/// How A' columns are ordered for 2:4. `best`: the planner's choice (row runs on 16-output
/// row tiles: image rows as they are, or in 3-D interleaved where that needs fewer chunks,
/// SparStencil_RowRuns.cpp). The others force a form: the gather form's pairing rules, or
/// for row tiles only `parity_split` (row runs on image rows as they are) and
/// `interleaved` (row runs on interleaved image rows where the stencil has that form).
enum class Pairing { best, hierarchical, edmonds, strided_swapping, parity_split, interleaved };

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

/// The CUDA row-run kernel's layout for a row-run plan (the planner sizes plans by it,
/// the executor launches by it). Every warp owns a strip `width` outputs wide and streams
/// along axis 0 on its own, one step at a time: `rows` rows in 1-D and 2-D (the 1-D line
/// folded into rows of `width`), one z plane of `rows` rows in 3-D. Its image arrives in a
/// ring of shared memory `ahead` steps early, so every input row is read once per strip.
struct RowRunLayout {
  int vector      = 8;   ///< values per run (16 bytes)
  int width       = 64;  ///< outputs of a warp strip along the fastest axis
  int rows        = 16;  ///< output rows of a warp step (16; 8 for tf32)
  int row_halo    = 0;   ///< image rows above and below the output rows (radius along axis D-2; 0 in 1-D)
  int plane_halo  = 0;   ///< 3-D: image planes before and after (radius along axis 0)
  int lead        = 0;   ///< image values before the strip origin (a multiple of V; interleaved rows: a block start)
  int row_values  = 0;   ///< image values a ring row holds (a multiple of V)
  /// Image values copied per row: row_values, or with a block per tile (D = 16) the
  /// distinct values the overlapping blocks hold.
  int copied_values = 0;
  int pitch       = 0;   ///< values between image rows (pitch / V odd: ldmatrix rows hit all banks)
  int ring        = 0;   ///< 1-D/2-D: image rows held; 3-D: planes held
  int plane_values = 0;  ///< 3-D: one plane of the ring (rows + 2 row_halo rows)
  int ahead       = 1;   ///< steps whose image is in flight while one computes
  int stage_pitch = 0;   ///< values between rows of a warp's staged outputs
  /// A step's outputs are staged in the ring (1-D/2-D: in the step's first `rows` rows,
  /// stage_pitch = pitch; 3-D: in the step's first plane where it holds them), which the
  /// step has just finished with and only the next step's request rewrites; else beside it.
  bool stage_in_ring = false;
  int warp_values = 0;   ///< shared values one warp owns: ring and staging
  int warps       = 8;   ///< warps per thread block
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
  bool shifted = false;
  std::size_t shared_bytes = 0;  ///< per thread block: the warps' buffers, A', metadata, run table
};
/// Throws std::logic_error for a plan without runs.
RowRunLayout row_run_layout(const Plan& plan);
/// Whether k chunk `chunk` (odd) of a row-run plan reads the same runs as the chunk
/// before it (a row split by parity): the kernel loads its B' once for both.
bool reads_previous_runs(const Plan& plan, std::size_t chunk);

namespace impl {
/// Row-run plans (SparStencil_RowRuns.cpp), used by the planner: whether a tile is a
/// 16-output row; the runs, K order and packed A' of `p` (stencil, tile, radius, patch,
/// precision set) for its kernel matrix `a`; its block (one warp step) by the kernel.
bool is_row_run_tile(const std::vector<int>& tile);
/// `rule`: best, parity_split or interleaved (Pairing).
void build_row_runs(Plan& p, const KernelMatrix& a, Pairing rule = Pairing::best);
void size_row_run_blocks(Plan& p);
}  // namespace impl

/// The cost model's generic executor for a request: the faster of its two forms for fused
/// steps (t launches of one step, or one launch by temporal blocking), or the form asked
/// for (`temporal`; true throws std::runtime_error where no tile and halo fit team scratch).
Prediction generic_prediction(const PlanRequest& request, std::optional<bool> temporal = std::nullopt);

/// The best plan; throws std::runtime_error for invalid requests (dimension mismatch,
/// grid too small for the fused radius, steps < 1, forcing cuda_sptc where it cannot run).
Plan make_plan(const PlanRequest& request);

/// The sparse tensor-core plan for one tile shape, prediction included, nothing rejected.
Plan make_sparse_plan(const PlanRequest& request, const std::vector<int>& tile);

}  // namespace sparstencil
