/// The sparse backend's cost model (docs/COST_MODEL.md): the counts of a plan's launch
/// (SparseCostTerms) weighed by the constants fitted on the H200, and the model paper's
/// scenario of a sparse plan against the generic executor.
#include "SparStencil_SparseCostModel.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "SparStencil_CudaSptcModel.hpp"
#include "SparStencil_Planner.hpp"
#include "SparStencil_RowRuns.hpp"
#include "SparStencil_SparseKernelFacts.hpp"
#include "SparStencil_SparseOperand.hpp"
#include "SparStencil_WallBands.hpp"

namespace sparstencil::cuda_sptc {
namespace {

long ceil_div(long a, long b) { return (a + b - 1) / b; }

/// Outputs along axis 0 that one thread block streams through (2-D and 3-D).
constexpr long stream_length = 512;

/// mma.sp instructions a sparse plan issues over the grid (8 tiles share each N block).
double mma_count(const Plan& p) {
  long tiles = 1;
  for (std::size_t a = 0; a < p.grid.size(); ++a) tiles *= ceil_div(p.grid[a], p.tile[a]);
  return static_cast<double>(ceil_div(tiles, 8)) * p.mmas_per_tile_group;
}

/// Warps of a row-run plan resident on one SM: blocks of `warps` warps, as many as the
/// kernel's launch bounds (SparStencil_SparseKernelFacts.hpp) and the SM's shared memory
/// (the block's bytes and the 1 KiB the CUDA runtime reserves a block) allow.
int resident_row_run_warps(const RowRunLayout& l, const DeviceDescription& d) {
  constexpr long reserved_per_block = 1024;
  const long by_registers           = row_run_min_blocks * row_run_max_threads / 32 / l.warps;
  const long by_shared              = d.shared_bytes_per_sm / (static_cast<long>(l.shared_bytes) + reserved_per_block);
  return static_cast<int>(std::max(1L, std::min(by_registers, by_shared))) * l.warps;
}

/// Issue slots of the row-run kernel per group of 8 tiles at 16 resident warps an SM (the
/// launch bounds' most), fitted to 281 H200 launches of the standard set (t = 1 to 8, both
/// image-row forms, every boundary; RESULTS.md, perf_tests/fit_sparse_model.py): a set-up a group by dimension (1-D
/// strips are short, 3-D steps copy planes), the in-place interleaving of image rows, and a cost a k chunk by the
/// kernel's loop (a plan without runs yet: the cheapest, for a lower bound); tf32 (8-row steps, B rounded in registers)
/// 87 more a group and its own cost a chunk.
double row_run_issue_slots(const SparseCostTerms& c) {
  const double setup = c.dims == 1 ? 106.0 : c.dims == 2 ? 50.0 : 92.0;
  if (c.tf32) return setup + 87.0 + 7.2 * c.chunks;
  double per_chunk = 2.8;  // the pipelined distinct loop; the lower bound
  if (c.loop == row_loop_name(RowLoop::standard, false)) per_chunk = 4.2;
  if (c.loop == row_loop_name(RowLoop::standard, true)) per_chunk = 3.2;
  if (c.loop == row_loop_name(RowLoop::shifted_pairs, true)) per_chunk = 5.0;
  if (c.loop == row_loop_name(RowLoop::shifted_chunks, false)) per_chunk = 5.8;
  return setup + (c.interleaved ? 41.0 : 0.0) + per_chunk * c.chunks;
}

/// What a row-run kernel's data path reaches of the description's copy bandwidth: 0.77 on
/// both devices measured (their memory-bound single steps, launch included, counting the
/// bytes the model counts), held for every dimension (RESULTS.md).
constexpr double row_run_memory_share = 0.77;

/// The wall kernel after the sparse one (interior and fixed_rim, SparStencil_WallBands.hpp):
/// a second launch, and per step its regions' points at 4 instructions a term and 70 a
/// point (its instruction count), of which the share not hidden behind the sparse kernel
/// (it runs beside it where the output is aligned, and fills the SMs the sparse kernel's
/// tail leaves) is fitted: 0.27 (RESULTS.md).
double wall_seconds(const SparseCostTerms& c, const DeviceDescription& d, double issue_rate) {
  if (c.wall_point_steps == 0) return 0;
  constexpr double exposed = 0.27;
  return d.launch_seconds + exposed * c.wall_point_steps * (4.0 * c.terms + 70.0) / 32.0 / issue_rate;
}

/// Grid points a launch an SM gets through at most where grid rows are not whole 16-byte
/// units (PlanRequest::row_alignment): the kernels then copy and store the runs of such
/// rows value by value, through their checked paths. Measured on the H200 (perf_tests/
/// RESULTS.md, 2026-11-29: Box-2D49P f16 on 3001 x 4099 at walls, 106-116 us a step
/// against 33 on 3000 x 4096; periodic 210), taken for every unaligned width.
constexpr double unaligned_points_per_sm_cycle = 0.41;

}  // namespace

SparseCostTerms sparse_cost_terms(const Plan& p) {
  const DeviceDescription& d = device_description(p.device);
  SparseCostTerms c;
  c.dims        = p.dims();
  c.tf32        = p.precision == Precision::tf32;
  c.interleaved = p.interleave != 0;
  c.points      = static_cast<double>(grid_points(p.grid));
  c.steps       = p.fused_steps;
  c.terms       = static_cast<int>(term_count(p.original));
  c.chunks      = static_cast<double>(p.mmas_per_tile_group);
  // Halo re-reads: a block reads its shared extent for its outputs. In 2-D and 3-D the
  // kernel streams blocks along axis 0 (double-buffered), so that axis's halo is paid once
  // per run of stream_length outputs, not per block. The gather kernel reloads every halo
  // per block; the row-run kernel streams 3-D planes through a ring (each plane read once
  // per column). (A lower-bound plan has no runs yet: a 16-output row tile counts as the
  // run form.)
  const bool run_form  = !p.runs.empty() || (p.order.columns.empty() && is_row_run_tile(p.tile));
  double amplification = 1.0;
  long tiles           = 1;
  for (std::size_t a = 0; a < p.grid.size(); ++a) {
    tiles *= ceil_div(p.grid[a], p.tile[a]);
    const bool streamed = a == 0 && (p.grid.size() == 2 || (p.grid.size() == 3 && run_form));
    const double span   = streamed ? static_cast<double>(std::min<long>(p.grid[0], stream_length))
                                   : static_cast<double>(p.tile[a]) * p.tiles_per_block[a];
    amplification *= (span + 2.0 * p.radius[a]) / span;
  }
  c.groups                = static_cast<double>(ceil_div(tiles, 8));
  const double mmas       = c.groups * c.chunks;
  const double rate       = c.tf32 ? d.sparse_tf32_flops : d.sparse_f16_flops;
  c.tensor_seconds        = mmas * 2.0 * p.mma.m * p.mma.n * p.mma.k / rate;
  const int bytes         = storage_bytes(p.precision);
  const double block_load = amplification * c.points * bytes;
  c.memory_bytes          = block_load + c.points * bytes;
  double b_reads          = mmas * p.mma.k * p.mma.n * (c.tf32 ? 4.0 : 2.0);  // B fragments
  if (run_form) {
    c.loop           = lower_bound_loop_name;
    c.resident_warps = row_run_min_blocks * row_run_max_threads / 32;
    if (!p.runs.empty()) {
      const RowRunLayout layout = row_run_layout(p);
      const RowLoop loop        = row_loop(p, layout);
      c.loop                    = row_loop_name(loop, layout.paired);
      c.resident_warps          = resident_row_run_warps(layout, d);
      if (loop == RowLoop::shifted_pairs || loop == RowLoop::shifted_chunks) b_reads /= 2;  // one ldmatrix, two units
    } else {
      b_reads /= 2;  // the least any loop reads
    }
  } else {
    c.loop = gather_loop_name;
  }
  // Shared memory: the block written once, B fragments read per MMA, f32 results staged.
  c.shared_bytes = block_load + b_reads + 2.0 * 4 * c.points;
  if (p.boundary != Boundary::periodic && !wall_bands_excluded(p.grid, p.original, p.fused_steps, p.boundary)) {
    const WallBands w = wall_bands(p, false);
    if (w.blocks > 0) c.wall_point_steps = static_cast<double>(w.region_points) * w.steps;
  }
  return c;
}

/// SparStencil eq. 6-10 over the plan's counts (docs/COST_MODEL.md).
Prediction predict_sparse(const Plan& p) {
  const DeviceDescription& d = device_description(p.device);
  const SparseCostTerms c    = sparse_cost_terms(p);
  const double issue_rate    = d.sm_cycles_per_second() * 4.0 * 0.5;  // half the peak issue
  // Compute: the tensor pipe or the instruction issue around it, whichever is slower.
  double per_group    = 0;
  double memory_share = 1.0;
  if (c.loop != gather_loop_name) {
    // Slower where fewer warps are resident (large A', fused plans).
    per_group    = row_run_issue_slots(c) * std::pow(16.0 / c.resident_warps, 0.87);
    memory_share = row_run_memory_share;
  } else {
    // Gather form, fitted to H100 runs (RESULTS.md, 2026-11-22): B loaded value by value
    // through its table, ~260 slots per 16 rows + 35 per MMA; 3-D's small blocks reload
    // their halos; twice that for the variant holding 32 chunks of A' in registers, whose
    // residency halves.
    per_group = 260.0 * ((p.rows + 15) / 16) + 35.0 * c.chunks;
    if (c.dims == 3) per_group *= 3.0;
    if (p.a.k_chunks > 16) per_group *= 2.0;
  }
  Prediction pr;
  pr.compute_seconds = std::max(c.tensor_seconds, c.groups * per_group / issue_rate);
  if (p.row_alignment < 16) {
    pr.compute_seconds = std::max(pr.compute_seconds, static_cast<double>(grid_points(p.grid)) /
                                                          (unaligned_points_per_sm_cycle * d.sm_cycles_per_second()));
  }
  pr.memory_seconds = c.memory_bytes / (d.memory_bytes_per_s * memory_share);
  pr.shared_seconds = c.shared_bytes / d.shared_bytes_per_s;
  finish_prediction(pr, d.launch_seconds + wall_seconds(c, d, issue_rate), grid_points(p.grid), p.fused_steps);
  return pr;
}

/// The model paper's four scenarios for the sparse plan against the generic executor.
Scenario scenario_of(const Plan& generic, const Plan& sparse) {
  const DeviceDescription& d = device_description(sparse.device);
  const double points        = static_cast<double>(grid_points(sparse.grid));
  const double bytes         = storage_bytes(sparse.precision);
  const double terms         = static_cast<double>(term_count(sparse.original));
  const double steps         = sparse.fused_steps;
  const double mma_flops     = mma_count(sparse) * 2.0 * sparse.mma.m * sparse.mma.n * sparse.mma.k;
  const double bandwidth     = d.memory_bytes_per_s;
  const double plain_peak    = sparse.precision == Precision::f64 ? d.cuda_f64_flops : d.cuda_f32_flops;
  const double tensor_peak   = sparse.precision == Precision::tf32 ? d.sparse_tf32_flops : d.sparse_f16_flops;
  Scenario sc;
  sc.known = true;
  // A point moves 2 D bytes a launch: read once, written once.
  const double plain_steps = generic.predicted.temporal_blocking ? steps : 1;
  sc.plain_intensity       = plain_steps * 2.0 * terms / (2.0 * bytes);
  sc.plain_ridge           = plain_peak / bandwidth;
  sc.tensor_intensity      = mma_flops / (points * 2.0 * bytes);
  sc.tensor_ridge          = tensor_peak / bandwidth;
  sc.useful_fraction       = points * 2.0 * static_cast<double>(term_count(sparse.stencil)) / mma_flops;
  // Useful (t steps of the original stencil) flop/s on each side, eq. 13.
  const double useful_share = steps * 2.0 * terms * points / mma_flops;  // S / alpha
  sc.ideal_speedup          = useful_share * std::min(tensor_peak, bandwidth * sc.tensor_intensity) /
                     std::min(plain_peak, bandwidth * sc.plain_intensity);
  sc.predicted_speedup = generic.predicted.seconds / sparse.predicted.seconds;
  return sc;
}

}  // namespace sparstencil::cuda_sptc
