#pragma once
/// The generic executor as the planner sees it (no Kokkos): its variants, the tiles they
/// cover, the stencil shapes compiled in, the figures it reaches on each device, and its
/// bid. The Kokkos executor (SparStencil_Generic.hpp) reads the same facts, so the model
/// and the kernels cannot drift apart.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "SparStencil_Backend.hpp"
#include "SparStencil_ShapeMatch.hpp"

/// For the few functions both host models and device kernels call.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define SPARSTENCIL_HOST_DEVICE __host__ __device__
#else
#define SPARSTENCIL_HOST_DEVICE
#endif

namespace sparstencil {

/// How the generic executor's interior kernel reaches its inputs (docs/GENERIC.md).
enum class GenericCaching {
  hardware,  ///< straight from global memory through the caches; V outputs a thread
  scratch,   ///< the team's tile and halo copied to team scratch first; V outputs a thread
  streaming  ///< GPU, 2-D/3-D stars and boxes: planes streamed through scratch, sums in registers
};

/// One variant of the generic executor's interior kernel.
struct GenericConfig {
  GenericCaching caching = GenericCaching::hardware;
  int threads_fast       = 64;  ///< threads of a team along the contiguous axis
  int threads_second     = 4;   ///< threads along the next axis (2-D hardware/scratch: the blocking axis)
  /// hardware, scratch: outputs per thread along the blocking axis (1, 2, 4 or 8);
  /// streaming: planes a team walks along the slowest axis (1 to 4096).
  int outputs = 4;
  /// streaming: adjacent outputs per thread along the contiguous axis (1, 2 or 4 in 2-D;
  /// 1 or 2 in 3-D); 1 for the other variants.
  int columns = 1;

  friend bool operator==(const GenericConfig& a, const GenericConfig& b) {
    return a.caching == b.caching && a.threads_fast == b.threads_fast && a.threads_second == b.threads_second &&
           a.outputs == b.outputs && a.columns == b.columns;
  }
  friend bool operator!=(const GenericConfig& a, const GenericConfig& b) { return !(a == b); }
};

std::string to_string(const GenericConfig& c);

/// How the generic executor picks its variant when none is forced.
struct GenericTuning {
  bool autotune   = true;      ///< time the candidates once per problem (grids of min_points or more)
  long min_points = 1L << 20;  ///< smaller grids take the default variant untimed

  friend bool operator==(const GenericTuning& a, const GenericTuning& b) {
    const auto& [autotune, min_points] = a;  // (fails to compile where a field is added and not compared)
    return autotune == b.autotune && min_points == b.min_points;
  }
  friend bool operator!=(const GenericTuning& a, const GenericTuning& b) { return !(a == b); }
};

namespace generic {

/// What a user may ask of the generic executor alone (the front-end's Options::generic).
struct Options {
  /// A variant to run instead of the tuned or default one, checked before it runs
  /// (docs/GENERIC.md).
  std::optional<GenericConfig> variant;
  GenericTuning tuning;

  friend bool operator==(const Options& a, const Options& b) {
    const auto& [variant, tuning] = a;  // (fails to compile where a field is added and not compared)
    return variant == b.variant && tuning == b.tuning;
  }
  friend bool operator!=(const Options& a, const Options& b) { return !(a == b); }
};

/// The single-step variants the tuner times, per dimension, on a GPU or a host space; the
/// first is the untimed default.
std::vector<GenericConfig> candidates(int dims, bool gpu);
/// The temporal-blocking variants (FusedKernel: team scratch, V outputs a thread along the
/// blocking axis, so `caching` is scratch); the first is the untimed default.
std::vector<GenericConfig> fused_candidates(int dims, bool gpu);

/// Outputs a team of `c` covers per kernel axis (k = 0 the blocking axis, k = dims - 1
/// the contiguous one); entries past dims - 1 are 1.
std::array<int, 3> team_tile(int dims, const GenericConfig& c);

/// Extent along one kernel axis of each of FusedKernel's two scratch buffers: the tile,
/// a halo of `steps` radii on both sides, and along the blocking axis V - 1 more values,
/// where the last group of V outputs of a region may run past it.
SPARSTENCIL_HOST_DEVICE constexpr int fused_buffer_extent(int tile, int radius, int steps, int outputs,
                                                          bool blocking_axis) {
  return tile + 2 * steps * radius + (blocking_axis ? outputs - 1 : 0);
}

/// Values a FusedKernel scratch buffer holds for `values` grid values: a whole number of
/// 8-value units, so the second buffer starts aligned and team scratch (which rounds each
/// request up to its alignment) has room for both.
SPARSTENCIL_HOST_DEVICE constexpr long fused_buffer_values(long values) { return (values + 7) / 8 * 8; }

/// A star or box the executor has a kernel compiled for (unrolled, offsets as constants).
struct CompiledShape {
  int dims;
  impl::ShapeKind kind;
  int radius;
  /// Compiled for the streaming variant on GPUs only: large shapes, compute bound, whose
  /// unrolled sums would cost every other variant's build much and gain it little.
  bool streaming_only = false;
};
/// The presets' shapes and the compute-bound boxes of the benchmarks (15 x 15, 5 x 5 x 5);
/// SparStencil_Generic.hpp instantiates exactly these.
inline constexpr CompiledShape compiled_shapes[] = {
    {1, impl::ShapeKind::star, 1},     {1, impl::ShapeKind::star, 2}, {2, impl::ShapeKind::star, 1},
    {2, impl::ShapeKind::box, 1},      {2, impl::ShapeKind::star, 3}, {2, impl::ShapeKind::box, 3},
    {3, impl::ShapeKind::star, 1},     {3, impl::ShapeKind::box, 1},  {2, impl::ShapeKind::box, 7, true},
    {3, impl::ShapeKind::box, 2, true}};

/// Whether the shape `m` has a compiled kernel in the variant: `streaming` on a GPU, or
/// any other.
constexpr const CompiledShape* find_compiled_shape(int dims, const impl::ShapeMatch& m, bool streaming) {
  for (const CompiledShape& s : compiled_shapes) {
    if (s.dims == dims && s.kind == m.kind && s.radius == m.radius && (streaming || !s.streaming_only)) return &s;
  }
  return nullptr;
}
constexpr bool has_compiled_kernel(int dims, const impl::ShapeMatch& m, bool streaming) {
  return find_compiled_shape(dims, m, streaming) != nullptr;
}
/// Streaming temporal blocking (StreamTemporalKernel: GPU teams, 2-D and 3-D, the compiled
/// shapes but the compute-bound boxes). The deepest launch compiled for a shape of that
/// radius: 5 for radius 1 in 2-D, 4 in 3-D, 2 for wider shapes; each depth from 2 to it is
/// compiled, a launch of t steps running the kernel of depth t (deeper ones measured no
/// faster, their rings of sums costing registers and so teams an SM: perf_tests/RESULTS.md).
constexpr int stream_temporal_depth(int dims, int radius) { return radius > 1 ? 2 : dims == 2 ? 5 : 4; }
/// Launches of it as CUDA blocks cut the planes into chunks for this many times the blocks
/// the device holds at once: teams that finish early take the next, so those that walk the
/// rim's tests, and the last wave, cost less; more waves repeat more chunks' warm-up. 6 for
/// radius 1, 3 for wider shapes: the best measured (perf_tests/RESULTS.md).
constexpr int stream_temporal_waves(int radius) { return radius == 1 ? 6 : 3; }
/// The same for a matched shape: 0 where the kernel has none.
constexpr int stream_temporal_depth(int dims, const impl::ShapeMatch& m) {
  const CompiledShape* s = find_compiled_shape(dims, m, false);
  return dims >= 2 && s != nullptr ? stream_temporal_depth(dims, m.radius) : 0;
}
/// The exchanging temporal kernel (ExchangeTemporalKernel: CUDA, 3-D radius-1 stars and
/// boxes of float): a tile of 64 x 32 across a block, one block an SM, no halo recomputed.
/// A thread owns rows of one column: 8 for a star (256 threads, whose rings of sums of 6
/// levels take up to 255 registers), 4 for a box (512 threads: its 27 terms a point want
/// more warps in flight, and its shallower rings fit 128 registers). The deepest launch: 6
/// for a star (the rings of 7 levels spill), 3 for a box (4 spills and measured slower,
/// perf_tests/RESULTS.md). Double is not enabled: its depth-4 launch spilled and did not
/// run; the streaming kernel runs it.
inline constexpr int exchange_tile_columns = 64, exchange_tile_rows = 32;
SPARSTENCIL_HOST_DEVICE constexpr int exchange_rows_per_thread(bool box) { return box ? 4 : 8; }
SPARSTENCIL_HOST_DEVICE constexpr int exchange_temporal_depth(int bytes, bool box) {
  return bytes == 4 ? (box ? 3 : 6) : 0;
}
/// Tiles across a grid of extents n1 (k = 1) and n2 (k = 2, the fastest).
constexpr long exchange_tiles_across(long n1, long n2) {
  return ((n1 + exchange_tile_rows - 1) / exchange_tile_rows) *
         ((n2 + exchange_tile_columns - 1) / exchange_tile_columns);
}
/// Whether it runs a grid on a device holding `resident` of its blocks at once: every tile
/// across at once (its tiles wait on their neighbours), and under a periodic boundary
/// extents across that are multiples of the tile (a tile's neighbour across the wrap is
/// then a whole tile).
constexpr bool exchange_temporal_runs(long n1, long n2, bool periodic, long resident) {
  return exchange_tiles_across(n1, n2) <= resident &&
         (!periodic || (n1 % exchange_tile_rows == 0 && n2 % exchange_tile_columns == 0));
}
/// Chunks of planes along k = 0: as many as the resident blocks allow beside the tiles
/// across (all run at once, so shorter chunks finish sooner, each with its own warm-up).
constexpr long exchange_temporal_chunks(long n0, long n1, long n2, long resident) {
  const long chunks = resident / exchange_tiles_across(n1, n2);
  return chunks < 1 ? 1 : chunks < n0 ? chunks : n0;
}
/// Adjacent columns a thread owns (one vector load or store of scratch) and rows it owns in
/// 3-D: two 2- or 4-byte values; one 8-byte value for radius 1 and 2, which keeps deep
/// double rings of sums in registers, two from radius 3, where a thread's loads of
/// 2R + 2 values serve twice the terms (H100, perf_tests/RESULTS.md).
SPARSTENCIL_HOST_DEVICE constexpr int stream_temporal_columns(int bytes, int radius) {
  return bytes == 8 && radius < 3 ? 1 : 2;
}
SPARSTENCIL_HOST_DEVICE constexpr int stream_temporal_rows(int dims) { return dims == 3 ? 2 : 1; }
/// Scratch columns beside a plane's span: the radius rounded up to whole chunks of columns.
SPARSTENCIL_HOST_DEVICE constexpr int stream_temporal_pad(int radius, int columns) {
  return (radius + columns - 1) / columns * columns;
}
/// A team's span across (columns, rows; rows 1 in 2-D): the tile of outputs plus a halo
/// of `steps` radii on each side.
SPARSTENCIL_HOST_DEVICE constexpr int stream_temporal_span_columns(int bytes, int radius, int threads_fast) {
  return threads_fast * stream_temporal_columns(bytes, radius);
}
SPARSTENCIL_HOST_DEVICE constexpr int stream_temporal_span_rows(int dims, int threads_second) {
  return dims == 3 ? threads_second * stream_temporal_rows(dims) : 1;
}
/// Values of scratch a plane takes (pad rows of one radius above and below in 3-D), and the
/// planes a launch of `steps` keeps: a ring of input planes (8 in 2-D, 4 in 3-D: the plane
/// being summed, the one landing and the rest in flight), two for each level but the last.
SPARSTENCIL_HOST_DEVICE constexpr long stream_temporal_plane(int dims, int radius, int bytes, int threads_fast,
                                                             int threads_second) {
  return static_cast<long>(dims == 3 ? stream_temporal_span_rows(dims, threads_second) + 2 * radius : 1) *
         (stream_temporal_span_columns(bytes, radius, threads_fast) +
          2 * stream_temporal_pad(radius, stream_temporal_columns(bytes, radius)));
}
SPARSTENCIL_HOST_DEVICE constexpr int stream_temporal_input_planes(int dims) { return dims == 2 ? 8 : 4; }
SPARSTENCIL_HOST_DEVICE constexpr long stream_temporal_planes(int dims, int steps) {
  return stream_temporal_input_planes(dims) + 2L * (steps - 1);
}

/// The compiled shape `stencil` runs through on a GPU (where the streaming variant runs)
/// or a host, if any.
std::optional<CompiledShape> compiled_shape(const AnyStencil& stencil, bool gpu);
inline bool has_compiled_kernel(const AnyStencil& stencil, bool gpu) {
  return compiled_shape(stencil, gpu).has_value();
}

/// What the executor reaches on a device, as it stands (measured on the H100 for every
/// GPU: the same code path; 1 where unmeasured, docs/COST_MODEL.md).
struct Efficiency {
  double memory       = 1;  ///< of the copy bandwidth, 32- and 64-bit Views
  double memory_16bit = 1;  ///< 16-bit Views (one 2-byte load a value)
  /// Single steps: the most device-memory bytes an SM moves a cycle, by dimension (1-3)
  /// and 2-, 4- or 8-byte values (0: no such bound). The kernels keep few bytes in flight
  /// a thread, so where a device has more bandwidth an SM's rate binds before the share.
  std::array<std::array<double, 3>, 3> sm_bytes_per_cycle{};
  double compute      = 1;  ///< of the FMA rate, compiled shapes in half_t and float
  double compute_3d   = 1;  ///< the same, 3-D grids
  double compute_f64  = 1;  ///< of the FMA rate, compiled shapes in double
  double compute_wide = 1;  ///< of the FMA rate, the compute-bound boxes (CompiledShape::streaming_only)
  /// Shapes without a compiled kernel loop over offsets and weights in memory: bound by
  /// issuing those loads, so this fraction applies to the f32 rate whatever the precision.
  double runtime_shape = 1;
  /// Single steps of 3-D grids under interior and fixed_rim: the interior box, one rim
  /// in from each face, runs at this fraction of a whole periodic grid's rate.
  double walls_3d = 1;
  /// The same for 2-D grids of 16-bit values (wider rows hide it in 32- and 64-bit ones).
  double walls_2d_16bit = 1;
  /// The rim launch under fixed_rim (copies) and interior-free boundaries: rim points a second.
  double rim_points_per_s = 0;
  /// Temporal blocking: the fraction of the compute rate its sums reach (scratch reads, a
  /// barrier a step).
  double temporal = 1;
  /// Team scratch a block may take (Kokkos on CUDA: 48 KiB less the team's reserve): the
  /// two temporal buffers must fit.
  double team_scratch_bytes = 40944;
  /// Shared memory a team of the streaming temporal kernel may take (a CUDA block's opt-in
  /// limit: 227 KiB on Hopper; BlockLaunch).
  double stream_scratch_bytes = 40944;
};
Efficiency efficiency(const DeviceDescription& device);

/// The cost model's prediction: the faster of the two forms for fused steps (t launches
/// of one step, or one launch by temporal blocking), or the form asked for (`temporal`;
/// true throws std::runtime_error where no tile and halo fit team scratch).
Prediction predict(const PlanRequest& request, std::optional<bool> temporal = std::nullopt);

/// The backend's model, for the registry.
const BackendModel& model();

}  // namespace generic

}  // namespace sparstencil
