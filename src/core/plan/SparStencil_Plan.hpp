#pragma once
/// A Plan: everything an executor needs to run a stencil, decided on the host: the request
/// (stencil, grid, precision, device, boundary, fused steps), the backend that won, its
/// part of the plan and the cost model's prediction, and every backend's bid. Backends
/// that run the stencil as a matrix product (cuda_sptc) fill the matrix form: the tile,
/// A' in its column order, packed per lane for their instruction, the gather table or
/// runs that make B' out of the block's image, and the block geometry. explain() says
/// what was chosen and why; to_json/plan_from_json round-trip it exactly.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Device.hpp"
#include "SparStencil_KernelMatrix.hpp"
#include "SparStencil_Sparsity.hpp"
#include "SparStencil_Stencil.hpp"

namespace sparstencil {

/// The matrix instruction of a matrix-form plan (cuda_sptc: m16n8k32 for f16/bf16,
/// m16n8k16 for tf32; dense: m16n8k16 for f16/bf16, m16n8k4 for f64, the unit each
/// vendor's instructions cover: SparStencil_MatrixFragments.hpp).
struct MmaShape {
  int m = 16, n = 8, k = 32;
};

/// A' packed for its backend.
/// Sparse (cuda_sptc, SparStencil_SparseOperand.hpp): 2:4 compressed in mma.sp's per-lane
/// fragment order, with metadata. Dense (Plan::dense): A' as it is, row-major over
/// m_blocks x 16 rows and K columns in the order's column order, in the operand format
/// (f16/bf16: two values a word, the even column in the low half; tf32: a value a word;
/// f64: two words a value, low word first), no metadata; each vendor's fragment layer reads it by its own lanes.
struct PackedA {
  int m_blocks = 0;  ///< 16-row blocks of A'
  int k_chunks = 0;  ///< K / mma.k
  /// Sparse: [m_block][k_chunk][lane][reg], 4 registers a lane: f16x2 / bf16x2 pairs or
  /// tf32 words. Dense: [row][K] as above.
  std::vector<std::uint32_t> values;
  /// Sparse: [m_block][k_chunk / 2][lane]: one word serves chunks 2q (selector 0) and
  /// 2q+1 (selector 1). Dense: empty.
  std::vector<std::uint32_t> metadata;
};

/// Row-run plans (tile: 16 outputs along the fastest axis, 1 elsewhere): B' is read as
/// runs of V consecutive K rows (V = 16 bytes of storage: 8 f16/bf16 values, 4 tf32), each
/// run V consecutive values of one image row starting at a multiple of V from the tile
/// origin, so one ldmatrix row. A patch row whose taps break 2:4 (1:2 for tf32) on
/// aligned runs (three neighbours in a group of four) is split by tap parity: its even
/// and odd taps get runs of their own, each part within 2:4 at every alignment, so the
/// same image value may feed two K rows with different weights. A split row comes first,
/// its parts chunk after chunk over the same runs, so the kernel loads each B' once.
struct Run {
  /// From the tile origin, one entry per axis: the row (axes but the last) and, along the
  /// last axis, the run's first position (a multiple of V).
  std::vector<int> offset;
};

struct Prediction {
  double seconds         = 0;  ///< one launch over the whole grid (all fused steps)
  double compute_seconds = 0;
  double memory_seconds  = 0;  ///< device memory
  double shared_seconds  = 0;  ///< shared memory (sparse path)
  double gstencils       = 0;  ///< grid points x steps / seconds / 1e9
  std::string bound;           ///< "compute", "memory" or "shared memory"
  /// Generic executor, fused_steps > 1: the steps run in one launch by temporal blocking
  /// (false: one launch a step, where that is predicted faster or the halo does not fit).
  bool temporal_blocking = false;
};

/// The model paper's comparison (tensor-cores-for-stencils-performance-model §3-4) of the
/// sparse plan against the generic executor at the same fusion depth t: arithmetic
/// intensities I (flop per byte of device memory, 2 bytes of values moved a point per
/// launch) against each side's ridge point (peak flop/s over bandwidth), the scenario
/// they make, and the speedup the ideal roofline promises next to the calibrated model's.
struct Scenario {
  bool known               = false;  ///< both sides planned (a device with sparse tensor cores)
  double plain_intensity   = 0;      ///< I_CU = t K / D (K / D a launch when the steps run unfused)
  double plain_ridge       = 0;      ///< P_CU / B
  double tensor_intensity  = 0;      ///< I_TC = t alpha K / (S D): every issued MMA flop
  double tensor_ridge      = 0;      ///< P_TC / B
  double useful_fraction   = 0;      ///< S: the fused stencil's flops over the MMA flops issued
  double ideal_speedup     = 0;      ///< eq. 13: (S / alpha) min(P_TC, B I_TC) / min(P_CU, B I_CU)
  double predicted_speedup = 0;      ///< calibrated model: generic seconds / sparse seconds

  bool plain_compute_bound() const { return plain_intensity > plain_ridge; }
  bool tensor_compute_bound() const { return tensor_intensity > tensor_ridge; }
  /// 1 MB->MB, 2 MB->CB, 3 CB->MB, 4 CB->CB (plain cores -> tensor cores).
  int number() const {
    return plain_compute_bound() ? (tensor_compute_bound() ? 4 : 3) : (tensor_compute_bound() ? 2 : 1);
  }
};

/// A backend's bid for a request, as explain() lists it: a candidate it planned (seconds
/// predicted), one it dropped unplanned, or the reason it cannot run the request at all.
struct Bid {
  enum class Outcome { chosen, slower, dropped, cannot_run };
  std::string backend;
  std::vector<int> tile;  ///< matrix-form candidates: the tile; else empty
  double seconds  = 0;    ///< one launch, predicted (chosen, slower, dropped where known)
  Outcome outcome = Outcome::slower;
  std::string reason;
};
const char* to_string(Bid::Outcome o);
/// Throws for an unknown name.
Bid::Outcome bid_outcome_from_string(std::string_view text);

struct Plan {
  // What is computed.
  AnyStencil original = Stencil<1>({{{0}, 1.0}});  ///< the stencil of one step
  AnyStencil stencil  = Stencil<1>({{{0}, 1.0}});  ///< what one launch applies: fuse(original, fused_steps)
  int fused_steps     = 1;
  Boundary boundary   = Boundary::periodic;
  Precision precision = Precision::f16;  ///< the operand format (what is multiplied)
  bool float_grids    = false;           ///< f16/bf16 operands read from float grids (PlanRequest::float_grids)
  int row_alignment   = 16;              ///< bytes every grid row starts on (PlanRequest::row_alignment)
  std::string device;
  std::vector<long> grid;
  std::string backend = "generic";  ///< the backend that runs the plan (its registered name)

  // Matrix form (backends running a matrix product; empty otherwise).
  std::vector<int> tile, radius, patch;
  int rows = 0;  ///< tile points = rows of A'
  MmaShape mma;
  std::size_t nonzeros = 0;  ///< of A'
  ColumnOrder order;         ///< K rows of B' in order, padded to a multiple of mma.k
  std::string pairing;       ///< what made the order: hierarchical, edmonds or strided swapping
  std::vector<int> gather;   ///< per K row: shared-memory offset from the tile origin; -1 = zero
  /// Row-run plans: K / V runs in K order (empty: B' is gathered element by element
  /// through `gather`). `gather` stays the element each K row reads, for the emulator.
  std::vector<Run> runs;
  /// Row-run plans: 0, image rows as they are; else D (4, 8 or 16): image rows held with
  /// their 4-byte pairs interleaved D values apart, in blocks of 2 D values starting
  /// `interleave_origin` (a multiple of 8, in [-2 D, 0)) from each tile origin (D = 16: a
  /// block for every tile, overlapping its neighbours'), and runs are 16-byte units of that
  /// layout (SparStencil_RowRuns.cpp).
  int interleave        = 0;
  int interleave_origin = 0;
  std::vector<int> tiles_per_block, shared_extent;
  /// Image points before the block origin per axis: the radius, rounded up along the
  /// fastest axis to 16 bytes of storage so image rows start aligned for vector copies.
  std::vector<int> shared_lead;
  int shared_pitch = 0;           ///< elements between rows of the fastest axis
  std::vector<int> tile_offsets;  ///< per tile of a block: offset of its origin
  PackedA a;
  /// A' dense (dense matrix-core backends): every column in the order multiplied, zeros
  /// included, no 2:4 step; packed as PackedA says.
  bool dense               = false;
  double sparsity          = 0;  ///< S: nonzeros / (padded rows x K)
  double redundancy        = 1;  ///< alpha: terms of the fused stencil / (t x terms of one step)
  long mmas_per_tile_group = 0;  ///< mma.sp per 8 tiles (one N block)

  Prediction predicted;
  /// Range problems the request allowed (PlanRequest::allow_overflow): values that may
  /// pass the largest value of the precision's formats.
  std::vector<std::string> warnings;
  std::vector<Bid> bids;  ///< every backend's bids, fastest first; the chosen one included
  Scenario scenario;

  /// Whether one launch equals fused_steps steps at every point: periodic, no fusion, or a
  /// sparse plan (its executor steps the band along each wall, SparStencil_WallBands.hpp);
  /// a dense plan's fused launch is exact only at points t r from the walls.
  bool fusion_exact_everywhere() const { return fused_steps == 1 || boundary == Boundary::periodic || !dense; }
  int dims() const { return static_cast<int>(grid.size()); }
  /// Element strides of the shared-memory block per axis (fastest axis 1, rows
  /// shared_pitch apart): the one layout the gather table and the kernel both assume.
  std::vector<int> shared_strides() const {
    const int D = dims();
    std::vector<int> stride(D, 1);
    if (D >= 2) stride[D - 2] = shared_pitch;
    if (D == 3) stride[0] = shared_pitch * shared_extent[1];
    return stride;
  }
};

/// Whether the plan has a matrix form (a tile and A').
inline bool has_matrix_form(const Plan& plan) { return !plan.tile.empty(); }
/// The format of the plan's grids (f32 for tf32 and float_grids plans).
inline Precision grid_format(const Plan& plan) { return grid_format(plan.precision, plan.float_grids); }

/// Whether `bytes` can be a row alignment (PlanRequest::row_alignment): a power of two from
/// 1 to 16.
inline bool valid_row_alignment(int bytes) { return bytes >= 1 && bytes <= 16 && (bytes & (bytes - 1)) == 0; }

/// The shared-memory image of a matrix-form plan's block (tile, radius, tiles_per_block
/// and precision set): the block plus its halo, `shared_lead` points before the block
/// origin (the radius, rounded up to 16 bytes along the fastest axis so that image rows
/// start on 16-byte boundaries of the grid and travel as 16-byte copies), extents rounded
/// up to 16 bytes along the fastest axis, rows `shared_pitch` apart with pitch / (16
/// bytes) odd (8 rows read at one column hit 8 different bank groups). Returns its points.
long size_block_image(Plan& plan);

/// The tables of a matrix-form plan over its shared-memory image (order, patch, radius,
/// tiles_per_block and the image's lead and pitch set): `gather`, each K row's offset from
/// a tile origin (-1 for a zero column), and `tile_offsets`, each tile origin's offset.
void fill_block_tables(Plan& plan);

/// Query-planner style text: chosen backend and why, tile, patch, nonzeros, padding,
/// S, MMAs per tile, predicted bound and GStencil/s, every bid and why it won or lost.
std::string explain(const Plan& plan);

std::string to_json(const Plan& plan);
/// Reads a plan and verifies it (verify below). Throws std::runtime_error naming the field
/// for malformed input: a wrong type, an integer out of its type's range, a plan that
/// does not verify.
Plan plan_from_json(std::string_view json_text);

/// Checks that a plan is whole and consistent, so that executors and the emulator can index
/// with it as it is: names known (precision, boundary, device; any non-empty backend), grid
/// extents in 1..2^31-1 and as many as the stencil's dimension, `stencil` equal to
/// fuse(original, fused_steps); for matrix-form plans every size agreeing with the tile and
/// precision (radius, patch, rows, K, A' packing, runs) and every table entry inside what
/// it indexes (columns in the patch, gather and tile offsets in the shared-memory image);
/// for other plans the matrix fields empty. Throws std::runtime_error naming `function`
/// and the field at fault.
void verify(const Plan& plan, std::string_view function = "verify");

namespace impl {
/// plan_from_json and verify for a plan inside a larger document: errors name `function`
/// and each field after `field_prefix` ("plans[2].plan.": wisdom files).
Plan read_plan(std::string_view text, std::string_view function, std::string_view field_prefix);
/// How verify_plan checks `stencil` against fuse(original, fused_steps): by comparing, or
/// not at all where the reader derived it so (SparStencil_PlanTree.hpp).
enum class StencilCheck { compare, derived };
void verify_plan(const Plan& plan, std::string_view function, std::string_view field_prefix,
                 StencilCheck stencil = StencilCheck::compare);
/// That `fused_steps` is at least 1 and fusing `original` so often stays within
/// max_supported_radius (before anything fuses it); errors name field 'fused_steps'.
void check_fusion_depth(const AnyStencil& original, int fused_steps, std::string_view function,
                        std::string_view field_prefix);
}  // namespace impl

/// Equal in every field (through their JSON form, which is exact).
bool operator==(const Plan& a, const Plan& b);
inline bool operator!=(const Plan& a, const Plan& b) { return !(a == b); }

}  // namespace sparstencil
