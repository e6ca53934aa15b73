#include "SparStencil_GenericModel.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "SparStencil_Planner.hpp"

namespace sparstencil {

std::string to_string(const GenericConfig& c) {
  std::ostringstream s;
  const char* caching[] = {"cached", "scratch", "streaming"};
  s << caching[static_cast<int>(c.caching)] << ' ' << c.threads_fast << 'x' << c.threads_second << " threads, ";
  if (c.columns != 1) s << c.columns << " columns each, ";
  if (c.caching == GenericCaching::streaming) s << c.outputs << " planes a team";
  else s << c.outputs << (c.outputs == 1 ? " output" : " outputs") << " each";
  return s.str();
}

namespace generic {

std::vector<GenericConfig> candidates(int dims, bool gpu) {
  constexpr auto hw = GenericCaching::hardware, sw = GenericCaching::scratch, st = GenericCaching::streaming;
  if (!gpu) {
    // Host spaces run one thread per team: the team's tile is a loop, so only the tile
    // shape and outputs per iteration matter. The hardware-cached tiles run as vectorised
    // rows (SparStencil_HostRows.hpp): wide along the contiguous axis, 2-8 rows of sums
    // (eight where the target has AVX-512: compute-bound shapes). 3-D tiles of many planes
    // (512 x 8 x 128 and others) measured no faster (perf_tests/RESULTS.md, 2026-12-03).
    if (dims == 1) return {{hw, 256, 1, 4}, {hw, 256, 1, 1}, {sw, 256, 1, 4}};
    if (dims == 2) {
      return {{hw, 256, 1, 4}, {hw, 128, 2, 4}, {hw, 128, 1, 8}, {hw, 256, 1, 8}, {hw, 64, 4, 2}, {sw, 64, 4, 4}};
    }
    return {{hw, 256, 1, 4}, {hw, 128, 2, 4}, {hw, 64, 4, 4}, {hw, 32, 8, 4}, {hw, 256, 1, 8}, {sw, 64, 4, 4}};
  }
  if (dims == 1) return {{hw, 256, 1, 4}, {hw, 256, 1, 1}, {hw, 256, 1, 2}, {hw, 128, 1, 8}, {sw, 256, 1, 4}};
  // Streaming with one column a thread is left out (2-D, 3-D): it keeps a local-memory
  // frame and measured far slower than two columns (docs/GENERIC.md).
  if (dims == 2) {
    return {{hw, 64, 4, 4},      {hw, 64, 4, 2},      {hw, 128, 2, 4},     {hw, 32, 8, 4},       {hw, 64, 4, 8},
            {hw, 32, 4, 8},      {sw, 64, 4, 4},      {st, 64, 1, 128, 2}, {st, 128, 1, 128, 2}, {st, 128, 1, 256, 2},
            {st, 32, 1, 256, 4}, {st, 64, 1, 128, 4}, {st, 64, 1, 256, 4}, {st, 128, 1, 128, 4}};
  }
  return {{hw, 32, 8, 4}, {hw, 64, 4, 4},     {hw, 32, 8, 8},      {hw, 64, 4, 8},     {hw, 64, 2, 8},
          {sw, 32, 8, 4}, {st, 16, 8, 64, 2}, {st, 16, 8, 128, 2}, {st, 32, 8, 64, 2}, {st, 16, 16, 64, 2}};
}

std::vector<GenericConfig> fused_candidates(int dims, bool gpu) {
  constexpr auto sw = GenericCaching::scratch, st = GenericCaching::streaming;
  if (!gpu) {  // one thread a team: small tiles keep both buffers in the host's 32 KiB of team scratch
    if (dims == 1) return {{sw, 256, 1, 4}};
    if (dims == 2) return {{sw, 32, 2, 8}, {sw, 16, 2, 4}};
    return {{sw, 8, 4, 4}, {sw, 4, 4, 2}};
  }
  if (dims == 1) return {{sw, 256, 1, 4}, {sw, 256, 1, 8}, {sw, 128, 1, 8}};
  // Streaming (StreamTemporalKernel, compiled shapes) first: `outputs` caps the planes a
  // team walks; shapes it has no kernel for run FusedKernel with the same team.
  if (dims == 2) {
    return {{st, 128, 1, 1024}, {st, 256, 1, 1024}, {st, 64, 1, 1024}, {sw, 64, 4, 4}, {sw, 64, 4, 8},
            {sw, 128, 2, 4},    {sw, 32, 8, 4},     {sw, 128, 2, 8},   {sw, 64, 2, 8}};
  }
  return {{st, 32, 8, 512}, {st, 16, 16, 512}, {st, 32, 4, 512}, {sw, 32, 8, 4}, {sw, 32, 8, 8},
          {sw, 32, 4, 8},   {sw, 64, 4, 4},    {sw, 16, 16, 4},  {sw, 16, 4, 4}};
}

std::array<int, 3> team_tile(int dims, const GenericConfig& c) {
  std::array<int, 3> tile{1, 1, 1};
  if (dims == 1) {
    tile[0] = c.threads_fast * c.threads_second * c.outputs;
  } else if (c.caching == GenericCaching::streaming) {
    // A plane of threads across the axes k >= 1; `outputs` planes along k = 0.
    tile[0] = c.outputs;
    if (dims == 2) tile[1] = c.threads_fast * c.threads_second * c.columns;
    else tile[1] = c.threads_second, tile[2] = c.threads_fast * c.columns;
  } else {
    tile[dims - 1] = c.threads_fast;
    if (dims == 2) tile[0] = c.threads_second * c.outputs;
    else tile[1] = c.threads_second, tile[0] = c.outputs;
  }
  return tile;
}

std::optional<CompiledShape> compiled_shape(const AnyStencil& stencil, bool gpu) {
  return std::visit(
      [&](const auto& s) -> std::optional<CompiledShape> {
        constexpr int D        = static_cast<int>(std::decay_t<decltype(s)>::rank);
        const auto m           = impl::match_shape(s);
        const CompiledShape* c = m ? find_compiled_shape(D, *m, gpu && D >= 2) : nullptr;
        return c ? std::optional<CompiledShape>(*c) : std::nullopt;
      },
      stencil);
}

// Measured on the H100 (perf_tests/RESULTS.md) and used for every GPU (same code path):
// float single steps at 87-93% of the copy roofline where memory bound (double 84-98%;
// the per-SM byte rates measured on the H200, where they bind first: 1-D 16-bit 5.5,
// 32-bit 6.0, 64-bit 13.0; 2-D 10.1 and 12.9; 3-D 9.1, 12.3 and 12.5);
// Box-2D49P float 292 GStencil/s = 28.6 of 66.9 FMA TFLOP/s, double 111 = 10.9 of 33.5;
// 3-D in float: the periodic Box-3D27P 352 on the H200 = 19.0 TFLOP/s (28%; on the H100
// memory binds it first, 86% of the copy roofline);
// 3-D under walls: the 510^3 interior box at 71-78% of the periodic
// 512^3 rate, the rim launch 60 us for its 1.57M points; half_t Views 79-82% in 2-D,
// 68% in 3-D (2-byte loads through registers). Run-time shapes: 4.2-6.3 TFLOP/s-equivalent
// whatever the precision and radius. Temporal blocking as it stands: 9-14% of the generic
// rate for 2-D stars and boxes of radius 1-3 fused 2-7 times.
Efficiency efficiency(const DeviceDescription& device) {
  Efficiency e;
  if (device.gpu) {
    e.memory               = 0.85;
    e.memory_16bit         = 0.72;
    e.sm_bytes_per_cycle   = {{{5.5, 6.0, 13.0}, {10.1, 12.9, 0}, {9.1, 12.3, 12.5}}};
    e.compute              = 0.42;
    e.compute_3d           = 0.30;
    e.compute_f64          = 0.33;
    e.walls_3d             = 0.74;
    e.walls_2d_16bit       = 0.87;  // H200, 10240^2: Heat-2D f16 0.85, Box-2D9P 0.90 (f32, f64 0.98-1.01)
    e.rim_points_per_s     = 25e9;
    e.compute_wide         = 0.65;  // 15 x 15 and 5 x 5 x 5 boxes, float and double: 64-75% (RESULTS.md)
    e.runtime_shape        = 0.07;
    e.temporal             = 0.1;
    e.stream_scratch_bytes = 232448;
  }
  return e;
}

namespace {

/// Temporal blocking in the model (FusedKernel): of the device's temporal variants the one
/// with the least redundant work whose two buffers fit team scratch. Returns {work, reads}:
/// the sums of the t shrinking regions over t tiles' worth, and the tile plus halo read
/// over the tile; nothing when no variant fits.
std::optional<std::pair<double, double>> temporal_overheads(const std::vector<int>& radius, int steps, int bytes,
                                                            bool gpu, double scratch_bytes) {
  const int D = static_cast<int>(radius.size());
  // Kernel axes: the contiguous (plan) axis last, as FusedKernel walks them.
  std::optional<std::pair<double, double>> best;
  for (const GenericConfig& c : fused_candidates(D, gpu)) {
    if (c.caching != GenericCaching::scratch) continue;  // streaming: stream_temporal_seconds
    const std::array<int, 3> tile = team_tile(D, c);
    double buffer = 1, outputs = 1, work = 0, reads = 1;
    for (int k = 0; k < D; ++k) {
      buffer *= fused_buffer_extent(tile[k], radius[k], steps, c.outputs, k == 0);
      outputs *= tile[k];
      reads *= (tile[k] + 2.0 * steps * radius[k]) / tile[k];
    }
    if (2.0 * static_cast<double>(fused_buffer_values(static_cast<long>(buffer))) * bytes > scratch_bytes) continue;
    for (int s = 1; s <= steps; ++s) {
      double region = 1;
      for (int k = 0; k < D; ++k) region *= tile[k] + 2.0 * (steps - s) * radius[k];
      work += region;
    }
    work /= steps * outputs;
    if (!best || work < best->first) best = std::make_pair(work, reads);
  }
  return best;
}

/// ExchangeTemporalKernel in the model, fitted on the H100 to the kernel's first version
/// (8 rows a thread for boxes too; it predicts the present kernel 1-6% high at depths 3-6
/// on the H200, perf_tests/RESULTS.md). A chunk of n planes takes n + t + 3 (t - 1) + 1
/// phases; a phase of a tile costs t levels of its 64 x 32 points at 32 + 1.12 issue slots
/// a point and term on its SM, and device memory reads and writes a plane of every tile;
/// the two overlap but for half the shorter. Nothing where the kernel
/// does not run the request (generic::exchange_temporal_runs; one block an SM).
std::optional<double> exchange_temporal_seconds(const PlanRequest& r, const DeviceDescription& d,
                                                const CompiledShape& shape) {
  const int t     = r.steps;
  const int bytes = storage_bytes(grid_format(r.precision, r.float_grids));
  if (!d.gpu || d.wave_lanes != 32 || r.grid.size() != 3 || shape.radius != 1 || shape.streaming_only || t < 2 ||
      t > exchange_temporal_depth(bytes, shape.kind == impl::ShapeKind::box) ||
      !exchange_temporal_runs(r.grid[1], r.grid[2], r.boundary == Boundary::periodic, d.multiprocessors)) {
    return std::nullopt;
  }
  const long chunks        = exchange_temporal_chunks(r.grid[0], r.grid[1], r.grid[2], d.multiprocessors);
  const double tiles       = static_cast<double>(chunks * exchange_tiles_across(r.grid[1], r.grid[2]));
  const double planes      = std::ceil(static_cast<double>(r.grid[0]) / chunks);
  const double phases      = planes + t + 3.0 * (t - 1) + 1;
  const double tile_points = exchange_tile_columns * exchange_tile_rows;
  const double slots_per_s = d.cuda_f32_flops / 2 / d.multiprocessors;  // an SM's FMA issue rate
  const double per_point   = 32.0 + 1.12 * static_cast<double>(term_count(r.stencil));
  const double work        = t * tile_points * per_point / slots_per_s;
  const double memory      = tiles * tile_points * 2.0 * bytes / (d.memory_bytes_per_s * 0.865);
  const double per_phase   = std::max(work, memory) + 0.5 * std::min(work, memory);
  // Under fixed_rim a rim launch copies the output's rim after the kernel, but iterate runs
  // it with its first launch only (the rim stays in place from then on): not counted.
  return phases * per_phase;
}

/// StreamTemporalKernel in the model (constants fitted to perf_tests/RESULTS.md,
/// docs/COST_MODEL.md says on what). An output point of a launch of t steps costs its
/// memory traffic (read and write at the copy bandwidth in 2-D, 86.5% of it in 3-D) and
/// its work in issue slots, scaled by the work the team's span and its chunk's warm-up add.
/// 2-D: a fixed cost a launch, and a level 4.8 slots, 0.75 a term (1.6 times that for
/// 8-byte values where a thread owns one column) and for 16-bit values 7 a row of the
/// shape (their conversions); the kernel waits on latencies, so memory and work add.
/// 3-D: 28 + 1.2 a term a level (1.2 times that for one 8-byte column), memory and work
/// overlapping but for 50% of the shorter. The fastest streaming candidate that runs;
/// nothing where none does.
std::optional<double> stream_temporal_seconds(const PlanRequest& r, const DeviceDescription& d,
                                              const CompiledShape& shape) {
  const int D     = static_cast<int>(r.grid.size());
  const int R     = shape.radius;
  const int t     = r.steps;
  const int bytes = storage_bytes(grid_format(r.precision, r.float_grids));
  if (const auto exchanging = exchange_temporal_seconds(r, d, shape)) return exchanging;
  if (!d.gpu || D < 2 || shape.streaming_only || t > stream_temporal_depth(D, R)) return std::nullopt;
  const bool plane           = D == 2;
  const double memory        = 2.0 * bytes / (d.memory_bytes_per_s * (plane ? 1.0 : 0.865));
  const bool one_wide_column = bytes == 8 && stream_temporal_columns(bytes, R) == 1;
  const double terms         = static_cast<double>(term_count(r.stencil));
  const double conversions   = bytes == 2 ? 7.0 * (2 * R + 1) : 0.0;
  const double level_slots   = plane ? 4.8 + 0.75 * terms * (one_wide_column ? 1.6 : 1.0) + conversions
                                     : 28.0 + 1.2 * terms * (one_wide_column ? 1.2 : 1.0);
  const double launch_slots  = plane ? 4.3 : 0.0;
  const double work_seconds  = (launch_slots + t * level_slots) / (d.cuda_f32_flops / 2);
  const double overlap       = plane ? 1.0 : 0.5;
  const double per_point     = std::max(memory, work_seconds) + overlap * std::min(memory, work_seconds);
  // Teams at once: half an SM's threads (the kernels take 72-158 registers a thread), the
  // chunks cut for stream_temporal_waves times them.
  const double threads_on_device = 1024.0 * d.multiprocessors * stream_temporal_waves(R);
  const double scratch_most      = efficiency(d).stream_scratch_bytes;
  std::optional<double> best;
  for (const GenericConfig& c : fused_candidates(D, true)) {
    if (c.caching != GenericCaching::streaming) continue;
    const int columns    = stream_temporal_span_columns(bytes, R, c.threads_fast);
    const int rows       = stream_temporal_span_rows(D, c.threads_second);
    const double scratch = static_cast<double>(stream_temporal_planes(D, t)) *
                           static_cast<double>(stream_temporal_plane(D, R, bytes, c.threads_fast, c.threads_second)) *
                           bytes;
    if (columns <= 2 * t * R || (D == 3 && rows <= 2 * t * R) || scratch > scratch_most) continue;
    // As the executor cuts the grid (temporal_geometry): tiles across, chunks of planes.
    double work = 1, across = 1;
    for (int k = 1; k < D; ++k) {
      const int span = k == D - 1 ? columns : rows;
      const int tile = span - 2 * t * R;
      work *= static_cast<double>(span) / tile;
      across *= std::ceil(static_cast<double>(r.grid[k]) / tile);
    }
    const double chunks = std::max(1.0, std::ceil(threads_on_device / (c.threads_fast * c.threads_second) / across));
    const double planes = std::min<double>(c.outputs, std::ceil(r.grid[0] / chunks));
    work *= (planes + t * (2.0 * R + 1)) / planes;
    const double seconds = static_cast<double>(grid_points(r.grid)) * work * per_point;
    if (!best || seconds < *best) best = seconds;
  }
  return best;
}

/// Points off the rim: (n - 2r) along each axis.
long interior_points(const PlanRequest& r) {
  const std::vector<int> radii = radius(r.stencil);
  long n                       = 1;
  for (std::size_t k = 0; k < r.grid.size(); ++k) n *= std::max(0L, r.grid[k] - 2L * radii[k]);
  return n;
}

}  // namespace

Prediction predict(const PlanRequest& r, std::optional<bool> temporal_form) {
  const DeviceDescription& d = device_description(r.device);
  const Efficiency e         = efficiency(d);
  const long points          = grid_points(r.grid);
  // A compiled shape sums at the precision's FMA rate; a run-time one is bound by its
  // offset and weight loads, at a fraction of the f32 rate whatever the precision.
  // The compute-bound boxes' kernel is the single step's streaming one: fused steps run
  // their terms as run-time data.
  const std::optional<CompiledShape> shape = compiled_shape(r.stencil, d.gpu);
  const double precision_rate              = r.precision == Precision::f64 ? d.cuda_f64_flops : d.cuda_f32_flops;
  const double runtime_rate                = d.cuda_f32_flops * e.runtime_shape;
  const double rate                        = !shape                  ? runtime_rate
                                             : shape->streaming_only ? precision_rate * e.compute_wide
                                             : r.precision == Precision::f64
                                                 ? precision_rate * e.compute_f64
                                                 : precision_rate * (r.grid.size() == 3 ? e.compute_3d : e.compute);
  const double fused_rate                  = shape && !shape->streaming_only ? rate : runtime_rate;
  const double flops_per_step              = points * 2.0 * static_cast<double>(term_count(r.stencil));
  const int bytes                          = storage_bytes(grid_format(r.precision, r.float_grids));
  const double share                       = d.memory_bytes_per_s * (bytes == 2 ? e.memory_16bit : e.memory);
  const double sm_rate   = e.sm_bytes_per_cycle[r.grid.size() - 1][bytes == 2 ? 0 : bytes == 4 ? 1 : 2];
  const double bandwidth = sm_rate > 0 ? std::min(share, sm_rate * d.sm_cycles_per_second()) : share;
  // Under walls a step computes the interior box; fixed_rim then launches over the rim
  // (interior leaves it alone; periodic steps run the streaming kernels, whose reads wrap,
  // as the periodic rates were measured).
  const bool walls         = r.boundary != Boundary::periodic;
  const double rim_points  = static_cast<double>(points - interior_points(r));
  const bool rim_launch    = d.gpu && r.boundary == Boundary::fixed_rim && e.rim_points_per_s > 0;
  const double rim_seconds = rim_launch ? rim_points / e.rim_points_per_s : 0.0;
  Prediction unfused;
  unfused.compute_seconds = r.steps * flops_per_step / rate;
  const double walls_rate = !walls                             ? 1.0
                            : r.grid.size() == 3               ? e.walls_3d
                            : r.grid.size() == 2 && bytes == 2 ? e.walls_2d_16bit
                                                               : 1.0;
  unfused.memory_seconds  = r.steps * points * 2.0 * bytes / (bandwidth * walls_rate);
  finish_prediction(unfused, r.steps * (d.launch_seconds + rim_seconds), points, r.steps);
  if (r.steps == 1 || temporal_form == false) return unfused;
  if (const auto streaming = shape ? stream_temporal_seconds(r, d, *shape) : std::nullopt) {
    // The streaming kernel's fit counts memory and work together (compute_seconds holds it).
    Prediction temporal;
    temporal.temporal_blocking = true;
    temporal.compute_seconds   = *streaming;
    temporal.memory_seconds    = points * bytes * 2.0 / bandwidth;
    finish_prediction(temporal, d.launch_seconds, points, r.steps);
    return temporal_form == true || temporal.seconds < unfused.seconds ? temporal : unfused;
  }
  const auto overheads = temporal_overheads(radius(r.stencil), r.steps, bytes, d.gpu, e.team_scratch_bytes);
  if (!overheads && temporal_form == true) {
    impl::fail("generic_prediction", "temporal blocking of ", r.steps, " steps: no tile with its halo fits ",
               e.team_scratch_bytes, " bytes of team scratch");
  }
  if (!overheads) return unfused;
  // Halo reads overlap neighbouring tiles' and mostly hit the L2: counted at half cost.
  Prediction temporal;
  temporal.temporal_blocking = true;
  temporal.compute_seconds   = r.steps * flops_per_step * overheads->first / (fused_rate * e.temporal);
  temporal.memory_seconds    = points * bytes * (2.0 + 0.5 * (overheads->second - 1)) / bandwidth;
  finish_prediction(temporal, d.launch_seconds, points, r.steps);
  return temporal_form == true || temporal.seconds < unfused.seconds ? temporal : unfused;
}

namespace {

class Model final : public BackendModel {
 public:
  std::string_view name() const override { return "generic"; }
  bool plain_cores() const override { return true; }

  /// Every request: it runs any stencil on any device (tf32 requests and f16/bf16 ones on
  /// float grids as float Views summed in f32, more accurate than asked).
  std::optional<std::string> cannot_run(const PlanRequest&, const Plan&) const override { return std::nullopt; }

  Bids bid(const PlanRequest& r, const Plan& base, double) const override {
    Bids bids;
    Plan p              = base;
    p.backend           = "generic";
    p.predicted         = predict(r);
    const char* how     = r.steps == 1                    ? ""
                          : p.predicted.temporal_blocking ? ", temporal blocking"
                                                          : ", runs the steps unfused";
    std::string summary = p.predicted.bound + " bound on the plain cores" + how;
    bids.plans.push_back({std::move(p), std::move(summary)});
    return bids;
  }
};

}  // namespace

const BackendModel& model() {
  static const Model instance;
  return instance;
}

}  // namespace generic
}  // namespace sparstencil
