/// The row-run kernel's set-up: its variant for the plan's loop and walls, the ring and
/// staging layout in shared memory, A' and run tables, and the warps' segments.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "SparStencil_Error.hpp"
#include "SparStencil_RowRunKernel.cuh"
#include "SparStencil_RowRuns.hpp"
#include "SparStencil_SparseExecutorState.cuh"
#include "SparStencil_SparseKernelFacts.hpp"

namespace sparstencil::cuda_sptc {

using impl::Operand;
using impl::padded;
using impl::RowRunParams;
using impl::RunKernel;
using impl::upload;
using sparstencil::impl::fail;
namespace {

/// Segments per column (strip) that finish soonest: waves of streamers (thread blocks or
/// warps, `resident` at once) times the planes (steps) each streams plus its prologue.
long best_segments(long columns, long planes, long resident, int prologue) {
  long best        = 1;
  double best_time = INFINITY;
  for (long s = 1; s <= planes; ++s) {
    const long length = (planes + s - 1) / s;
    if (s > 1 && (planes + length - 1) / length < s) continue;  // same split as a smaller s
    const long waves  = (columns * s + resident - 1) / resident;
    const double time = static_cast<double>(waves) * (length + prologue);
    if (time < best_time * 0.999) best_time = time, best = s;
  }
  return best;
}

}  // namespace

namespace {
template <Operand P, bool Walls>
RunKernel row_run_variant(int dims, RowLoop loop) {
  using impl::row_run_kernel;
  if constexpr (P != Operand::tf32) {
    if (loop == RowLoop::distinct) {
      return dims == 1 ? row_run_kernel<P, 1, RowLoop::distinct> : row_run_kernel<P, 3, RowLoop::distinct, Walls>;
    }
    if (loop == RowLoop::shifted_pairs) return row_run_kernel<P, 2, RowLoop::shifted_pairs, Walls>;
    if (loop == RowLoop::shifted_chunks) return row_run_kernel<P, 2, RowLoop::shifted_chunks, Walls>;
  }
  return dims == 1   ? row_run_kernel<P, 1>
         : dims == 2 ? row_run_kernel<P, 2, RowLoop::standard, Walls>
                     : row_run_kernel<P, 3, RowLoop::standard, Walls>;
}
/// The kernel of a plan: the walls variant where asked (interior and fixed_rim, 2-D, 3-D).
RunKernel row_run_variant(Operand op, int dims, RowLoop loop, bool walls) {
  if (walls) {
    return op == Operand::f16    ? row_run_variant<Operand::f16, true>(dims, loop)
           : op == Operand::bf16 ? row_run_variant<Operand::bf16, true>(dims, loop)
                                 : row_run_variant<Operand::tf32, true>(dims, loop);
  }
  return op == Operand::f16    ? row_run_variant<Operand::f16, false>(dims, loop)
         : op == Operand::bf16 ? row_run_variant<Operand::bf16, false>(dims, loop)
                               : row_run_variant<Operand::tf32, false>(dims, loop);
}
}  // namespace

void SparseExecutor::State::set_up_row_runs(const DeviceInfo& info, Operand op) {
  State& s         = *this;
  const Plan& plan = s.plan;
  const int D      = plan.dims();
  if (plan.a.m_blocks != 1) fail("SparseExecutor", "row-run plans have 16-output tiles (one block of A' rows)");
  const RowRunLayout l = row_run_layout(plan);
  RowRunParams& p      = s.run_params;
  const int step_rows  = op == Operand::tf32 ? impl::step_rows_of<Operand::tf32> : impl::step_rows_of<Operand::f16>;
  if (l.width != strip_width || l.rows != step_rows) {
    fail("SparseExecutor", "row-run steps are ", step_rows, " x ", strip_width, " outputs, the plan's layout has ",
         l.rows, " x ", l.width);
  }
  const auto extent = padded(plan.grid, 1L);
  const auto radius = padded(plan.radius, 0);
  for (int a = 0; a < 3; ++a) p.extent[a] = extent[a], p.radius[a] = radius[a];
  p.boundary   = plan.boundary;
  p.row_halo   = l.row_halo;
  p.plane_halo = l.plane_halo;
  p.lead       = l.lead;
  if (plan.interleave != 0 && plan.interleave != 4 && plan.interleave != 8 && plan.interleave != 16) {
    fail("SparseExecutor", "image rows interleave pairs 4, 8 or 16 values apart, not ", plan.interleave);
  }
  if (plan.interleave != 0 && op == Operand::tf32) fail("SparseExecutor", "interleaved image rows hold 16-bit values");
  if (plan.interleave == 16 && !(D == 2 && l.shifted && !l.paired)) {
    fail("SparseExecutor", "a block per tile (pairs interleaved 16 apart) is for 2-D plans whose rows shift");
  }
  p.interleave = plan.interleave;
  // A tile's runs in the ring row: 16 values on per group of 8 tiles, 32 where every tile
  // has a block of its own (D = 16).
  p.group_bytes   = (plan.interleave > 8 ? 2 * plan.interleave : 16) * s.element_bytes;
  p.chunks        = l.row_values / l.vector;
  p.copy_chunks   = l.copied_values / l.vector;
  p.pitch         = l.pitch;
  p.ring          = l.ring;
  p.plane_values  = l.plane_values;
  p.ahead         = l.ahead;
  p.stage_pitch   = l.stage_pitch;
  p.stage_in_ring = l.stage_in_ring;
  p.warp_values   = l.warp_values;
  p.warps         = l.warps;
  p.k_chunks      = plan.a.k_chunks;
  p.runs          = static_cast<int>(plan.runs.size());
  if (p.copy_chunks > 32 || p.chunks > 32) {
    fail("SparseExecutor", "image rows of ", l.row_values, " values are too long for a warp");
  }
  // Interleaved rows not copied pair by pair are copied as they are, 16 bytes at a time,
  // then interleaved block by block in the ring: image rows start 16-byte aligned and hold
  // whole blocks.
  if (plan.interleave != 0 && (l.lead % l.vector != 0 || p.chunks % (plan.interleave / 4) != 0)) {
    fail("SparseExecutor", "interleaved image rows must start on a 16-byte unit and hold whole blocks of ",
         2 * plan.interleave, " values (lead ", l.lead, ", ", l.row_values, " values a row)");
  }
  if (p.ahead != 1 && p.ahead != 2) fail("SparseExecutor", "the kernel prefetches 1 or 2 steps, not ", p.ahead);
  if (D < 3 && p.ring < step_rows * (p.ahead + 1) + 2 * l.row_halo) {
    fail("SparseExecutor", "the row ring (", p.ring, " rows) is smaller than its steps in flight");
  }
  if (D < 3 && p.stage_in_ring && (p.ring % step_rows != 0 || p.stage_pitch != p.pitch)) {
    fail("SparseExecutor", "outputs staged in a ring of ", p.ring, " rows: it must hold whole steps of ", step_rows,
         " rows at the ring's pitch");
  }
  if (p.runs != 4 * p.k_chunks) fail("SparseExecutor", "the plan's runs (", p.runs, ") do not fill its k chunks");
  if (D == 3) {
    p.strips_x = (extent[2] + strip_width - 1) / strip_width;
    p.strips   = (extent[1] + step_rows - 1) / step_rows * p.strips_x;
    p.steps    = extent[0];
  } else if (D == 2) {
    p.strips_x = (extent[2] + strip_width - 1) / strip_width;
    p.strips   = p.strips_x;
    p.steps    = (extent[1] + step_rows - 1) / step_rows;
  } else {
    p.strips_x = p.strips = 1;
    p.steps               = ((extent[2] + strip_width - 1) / strip_width + step_rows - 1) / step_rows;
  }
  if (step_rows * p.steps + 64 > INT32_MAX) fail("SparseExecutor", "too many rows along axis 0");
  if (D > 1 && extent[2] + 2 * strip_width > INT32_MAX) fail("SparseExecutor", "rows too long along the last axis");
  if (D == 3 && extent[1] + 2 * step_rows > INT32_MAX) fail("SparseExecutor", "too many rows along axis 1");

  // Per run: byte offset in an image row, image row and plane from the tile origin's.
  std::vector<std::uint32_t> words;
  for (const Run& run : plan.runs) {
    const int z = D == 3 ? run.offset[0] : 0, y = D >= 2 ? run.offset[D - 2] : 0;
    const long column = static_cast<long>(l.lead + run.offset[D - 1]) * s.element_bytes;
    if (std::abs(z) > l.plane_halo || std::abs(y) > l.row_halo || column < 0 || column > 0xFFFF) {
      fail("SparseExecutor", "a run of the plan reads beyond the stencil's radius");
    }
    words.push_back(static_cast<std::uint32_t>(column) | static_cast<std::uint32_t>(y + l.row_halo) << 16 |
                    static_cast<std::uint32_t>(z + l.plane_halo) << 24);
  }
  if (l.row_halo > 255 || l.plane_halo > 127) fail("SparseExecutor", "the stencil's radius is too large");
  // Odd chunks reading the same runs as the chunk before share its B' (bit 31).
  for (std::size_t c = 1; 4 * c + 3 < words.size(); c += 2) {
    if (reads_previous_runs(plan, c)) {
      for (std::size_t i = 4 * c; i < 4 * c + 4; ++i) words[i] |= 1u << 31;
    }
  }
  p.paired     = l.paired;
  p.a_values   = s.keep(upload(plan.a.values));
  p.a_metadata = s.keep(upload(plan.a.metadata));
  p.run_words  = s.keep(upload(words));

  const RowLoop loop = row_loop(plan, l);
  if (plan.interleave != 0 && (op == Operand::tf32 || loop == RowLoop::shifted_pairs)) {
    fail("SparseExecutor", "interleaved image rows are for 16-bit values and unpaired chunks");
  }
  s.walls_variant = plan.boundary != Boundary::periodic && D > 1;
  s.run_kernel    = row_run_variant(op, D, loop, s.walls_variant);
  s.run_loop      = row_loop_name(loop, l.paired);
  s.shared_bytes  = l.shared_bytes;
  s.block_threads = 32 * l.warps;
  s.allow_shared(s.run_kernel, s.shared_bytes, "a block needs ");
  int per_sm = 0;
  SPARSTENCIL_GPU_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s.run_kernel, s.block_threads, s.shared_bytes));
  if (per_sm < 1) fail("SparseExecutor", "the row-run kernel cannot be resident with ", s.shared_bytes, " bytes");
  // Warps, not blocks, stream: segments per strip for the resident warps.
  const long resident = static_cast<long>(per_sm) * l.warps * info.multiprocessors;
  const int prologue  = D == 3 ? 2 * l.plane_halo : (2 * l.row_halo + l.rows - 1) / l.rows;
  const long segments = best_segments(p.strips, p.steps, resident, prologue);
  p.segment           = (p.steps + segments - 1) / segments;
  const long tasks    = p.strips * ((p.steps + p.segment - 1) / p.segment);
  s.grid_blocks       = (tasks + l.warps - 1) / l.warps;
  if (s.grid_blocks > INT32_MAX) fail("SparseExecutor", "the grid needs too many thread blocks");
}

}  // namespace sparstencil::cuda_sptc
