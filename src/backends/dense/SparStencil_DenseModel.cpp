#include "SparStencil_DenseModel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_Fuse.hpp"
#include "SparStencil_Planner.hpp"
#include "SparStencil_Rounding.hpp"

namespace sparstencil::dense {
namespace {

int product(const std::vector<int>& v) {
  int n = 1;
  for (int x : v) n *= x;
  return n;
}
long ceil_div(long a, long b) { return (a + b - 1) / b; }

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// The device's dense matrix-core rate for the operands of `p` (0: none).
double dense_rate(const DeviceDescription& d, Precision p) {
  switch (p) {
    case Precision::f64: return d.dense_f64_flops;
    case Precision::tf32: return d.dense_tf32_flops;
    default: return d.dense_f16_flops;
  }
}

/// The time a unit of the plan (m16n8k16 f16/bf16: one mma.sync; m16n8k8 tf32; m16n8k4
/// f64) takes over the instruction's own at the measured peak, where every wave of a block
/// has work: its loads of A and B, the copy, staging and stores around it. It falls as a
/// unit multiplies more groups by each fragment of weights (batch) and, for 16-bit
/// operands in 1-D and 2-D, as its k chunks share a unit's fixed work (its copy, staging
/// and stores: `chunks` the unit's k chunks). f16/bf16 fitted on the H200 (perf_tests/
/// RESULTS.md, 2026-11-29: the benchmark suite's 2-D single and fused steps, 4 to 285
/// chunks, all 48 within 8%; the batch term from the H100's blocks of 2 and 4 groups);
/// f64, the image as A, on the H100 on the 15 x 15 box (batch 4) and the 7 x 7 x 7 box
/// (batch 2) within 1%; tf32, whose lanes load B a value a load, on the H100 on the
/// 15 x 15 and 7 x 7 x 7 boxes. 3-D blocks issue-bind (copy_efficiency): their units take
/// longer, fitted on the suite's compute-bound 3-D boxes (radius 3 and 4, 2026-11-25).
/// f64 with A' as A (sm_80's m8n8k4, AMD) keeps the fit of that form (the 15 x 15 box,
/// batches 2 and 4, on the H100, 2026-11-25).
double unit_overhead(Precision p, int batch, int dims, bool image_as_a, int chunks) {
  if (p == Precision::f64) {
    const double unit = image_as_a ? 0.72 + 3.87 / batch : 0.5 + 4.1 / batch;
    return dims == 3 ? unit * 1.35 : unit;
  }
  if (p == Precision::tf32) {
    const double unit = (2.6 + 2.1 / batch) * 1.1;
    return dims == 3 ? unit * 1.4 : unit;
  }
  if (dims == 3) return (2.6 + 2.1 / batch) * 2.0;
  return 1.74 + 2.1 / batch + 32.2 / std::max(chunks, 1);
}
/// The share of the copy bandwidth a block's image and outputs move at: 2-D fitted on the
/// 3 x 3 box f16 and the 7 x 7 box f64 (within 2%), 1-D and 3-D on the benchmark suite's
/// single steps (perf_tests/RESULTS.md, 2026-11-25). 1-D rows are long, contiguous copies;
/// 3-D blocks issue-bind (the copy and staging of their many short image rows run with a
/// third of each warp's lanes active: Nsight Compute, Heat-3D f16), f16 more than f64.
/// 2-D float grids (16-bit operands read from 4-byte values): fitted on the 3 x 3 and
/// 7 x 7 boxes (0.80 and 0.70 measured on the H100); in 1-D and 3-D the 16-bit plans'
/// shares, unmeasured.
double copy_efficiency(int dims, Precision p, bool float_grids) {
  const bool wide = p == Precision::f64;
  if (dims == 1) return wide ? 0.77 : 0.55;
  if (dims == 3) return wide ? 0.45 : 0.23;
  return float_grids ? 0.75 : 0.6;
}
/// The bytes of image and outputs an SM's blocks move a cycle at most: the copy, staging
/// and stores are SM work, which binds before device memory where the memory is fast for
/// the SMs (the H200: 1.4x the H100's bandwidth, the same SMs). Fitted on the H200's
/// memory-bound single and fused steps (perf_tests/RESULTS.md, 2026-11-29: the same in 1-D
/// and 2-D, 16-bit 6.6, tf32 7.3, f64 9.2; 3-D 2.6, 3.3, 5.3); the H100's, A100's and
/// MI250X's bandwidth shares bind first but for 16-bit 2-D on the H100 (4% lower). Float
/// grids of 16-bit operands: unmeasured there (no bound).
double copy_bytes_per_sm_cycle(int dims, Precision p, bool float_grids) {
  if (float_grids) return std::numeric_limits<double>::infinity();
  const bool flat = dims < 3;
  switch (p) {
    case Precision::f64: return flat ? 9.2 : 5.3;
    case Precision::tf32: return flat ? 7.3 : 3.3;
    default: return flat ? 6.6 : 2.6;
  }
}

/// How much longer a block takes where grid rows are not whole 16-byte units: its image
/// copied in 8- or 4-byte pieces, or through registers on 2-byte boundaries (NVIDIA;
/// AMD: value by value), its outputs stored so. Measured on the H200 (perf_tests/
/// RESULTS.md, 2026-11-29: Heat-2D and Box-2D49P f16 at 3000 x 4096 against widths 4100,
/// 4098 and 4099), the same for memory- and compute-bound blocks (the copy is not hidden).
double unaligned_rows_factor(int row_alignment) {
  if (row_alignment >= 16) return 1.0;
  if (row_alignment == 8) return 1.07;
  if (row_alignment == 4) return 1.12;
  return 1.35;
}

/// SM cycles a launch takes beyond its blocks' throughput: a block copies its image,
/// multiplies and stores in sequence, others overlapping it only once several run, so the
/// first copies and the last stores are not hidden. Fitted on the H200 (perf_tests/
/// RESULTS.md, 2026-11-29: Heat-2D, Box-2D9P and Box-2D49P f16 single steps from 1024^2 to
/// 4096^2 ran 7.5-14 us above the throughput terms, about 8 us of it this). 2-D plans only:
/// 1-D ones showed none (Heat-1D f16 at 10.24 M points, 28.5 us against 27.8 predicted),
/// 3-D ones are unmeasured on small grids.
constexpr double pipeline_fill_cycles = 16000;

/// Values of float grids an SM rounds into a 16-bit image a cycle where they are copied
/// beside it (copies_beside; H100, perf_tests/RESULTS.md).
constexpr double rounded_per_cycle = 3.8;

/// Tiles a block holds at most: one unit a wave (block_threads / 32 NVIDIA warps of 8
/// tiles a group, or block_threads / 64 AMD waves of 16: 64 tiles a group a wave either way).
int most_tiles(Precision p) {
  return block_threads / 4 * (p == Precision::f64 ? max_unit_groups_64 : max_unit_groups_16);
}

/// Whether the kernel runs the plan with the image as A on the plan's device: f64 on
/// sm_90 (H100, H200), where the executor runs NvidiaF64Sm90 (image_as_a).
bool runs_image_as_a(const Plan& p) {
  return p.precision == Precision::f64 && (p.device == "h100" || p.device == "h200");
}
/// The matrix instructions per 8 tiles the kernel runs on the plan's device: the plan's
/// (A' by the image), or with the image as A the chunks each half of a tile's outputs
/// reaches (part_tables), per 16 tiles.
double executed_mmas(const Plan& p) {
  if (!runs_image_as_a(p)) return p.mmas_per_tile_group;
  long chunks = 0;
  for (const std::vector<int>& part :
       part_chunks<NvidiaF64Sm90>(a_row_major(p), static_cast<int>(p.order.columns.size())))
    chunks += static_cast<long>(part.size());
  return chunks / 2.0;
}

/// The prediction of a dense plan: each block copies its image, multiplies (every wave
/// one unit) and writes its outputs; blocks resident together overlap one's copy with
/// another's multiplies, so the slower of device memory and the matrix work bounds. The
/// matrix work runs at the share of a block's waves that have a unit.
Prediction predict_dense(const Plan& p) {
  const DeviceDescription& d = device_description(p.device);
  const long points          = grid_points(p.grid);
  long blocks = 1, image_points = 1;
  for (std::size_t a = 0; a < p.grid.size(); ++a) {
    blocks *= ceil_div(p.grid[a], static_cast<long>(p.tile[a]) * p.tiles_per_block[a]);
    image_points *= p.shared_extent[a];
  }
  const int tiles    = product(p.tiles_per_block);
  const int batch    = wave_batch(tiles);
  const double waves = static_cast<double>(block_threads) / d.wave_lanes;
  const int n        = d.wave_lanes == 64 ? 16 : 8;
  const double busy  = std::min(waves, std::ceil(static_cast<double>(tiles / n) / batch));
  const double units = static_cast<double>(blocks) * (tiles / 8) * executed_mmas(p);
  const double flops = units * 2.0 * p.mma.m * p.mma.n * p.mma.k;
  const double rate  = dense_rate(d, p.precision);
  const double bytes = storage_bytes(p.precision), grid_bytes = storage_bytes(grid_format(p));
  Prediction pr;
  const bool image_a        = runs_image_as_a(p);
  const double image_values = static_cast<double>(blocks) * image_points;
  const bool beside         = copies_beside(p);
  // Float grids copied beside the image are rounded into it in a pass of its own, after
  // the copy lands and before the block multiplies: SM work its units wait for, at
  // `rounded_per_cycle` values a cycle an SM (fitted on the 15 x 15 box, f16 and bf16).
  const double sm_cycles     = d.sm_cycles_per_second();
  const double rounding_rate = rounded_per_cycle * sm_cycles;
  const double rounding      = beside ? image_values / rounding_rate : 0.0;
  pr.compute_seconds =
      flops / rate * unit_overhead(p.precision, batch, p.dims(), image_a, p.a.k_chunks) * waves / busy + rounding;
  const double touched = (image_values + static_cast<double>(points)) * grid_bytes;
  pr.memory_seconds = touched / std::min(copy_efficiency(p.dims(), p.precision, p.float_grids) * d.memory_bytes_per_s,
                                         copy_bytes_per_sm_cycle(p.dims(), p.precision, p.float_grids) * sm_cycles);
  // Shared memory: the image written and the results staged once, and per unit the
  // image's operand read (B: k x n values; with the image as A: m x k).
  const double read_per_unit = image_a ? p.mma.m * p.mma.k : p.mma.k * p.mma.n;
  const double copied        = beside ? image_values * grid_bytes : 0.0;  // written, read once more
  const double staged        = image_values * bytes + copied + static_cast<double>(points) * grid_bytes;
  pr.shared_seconds          = (2 * staged + units * read_per_unit * bytes) / d.shared_bytes_per_s;
  const double unaligned     = unaligned_rows_factor(p.row_alignment);
  pr.compute_seconds *= unaligned;
  pr.memory_seconds *= unaligned;
  const double fill = p.dims() == 2 ? pipeline_fill_cycles / (d.clock_ghz * 1e9) : 0.0;
  finish_prediction(pr, d.launch_seconds + fill, points, p.fused_steps);
  return pr;
}

/// The runs of a row tile and its K order: for each patch row with a weight (patch order),
/// the runs of V values (16 bytes, V-aligned from the tile origin) its taps reach from the
/// tile's 16 outputs, each value a K row (its patch column, zero_column where A' has no
/// weight); then padding runs at the tile origin (A' zero) to whole k chunks.
template <int D>
void build_runs(Plan& p, const Stencil<D>& s, const KernelMatrix& a) {
  const int V = 16 / storage_bytes(p.precision), r = p.radius[D - 1], n = p.patch[D - 1];
  std::map<std::vector<int>, std::pair<int, int>> reach;  // patch row: lowest and highest tap
  for (const Term<D>& t : s.terms()) {
    if (t.weight == 0.0) continue;
    const std::vector<int> row(t.offset.begin(), t.offset.end() - 1);
    const int dx     = t.offset[D - 1];
    auto [it, fresh] = reach.try_emplace(row, dx, dx);
    if (!fresh) it->second = {std::min(it->second.first, dx), std::max(it->second.second, dx)};
  }
  const std::vector<bool> used = nonzero_columns(a);
  p.runs.clear();
  p.order = ColumnOrder{};
  for (const auto& [row, span] : reach) {
    int base = 0;  // the patch row's first patch column
    for (int ax = 0; ax + 1 < D; ++ax) base = base * p.patch[ax] + row[ax] + p.radius[ax];
    base *= n;
    for (int u = floor_div(span.first, V); u <= floor_div(15 + span.second, V); ++u) {
      std::vector<int> at(row.begin(), row.end());
      at.push_back(u * V);
      p.runs.push_back({at});
      for (int e = 0; e < V; ++e) {
        const int q       = u * V + e + r;  // patch column along the fastest axis
        const bool weight = q >= 0 && q < n && used[base + q];
        p.order.columns.push_back(weight ? base + q : zero_column);
      }
    }
  }
  if (p.runs.empty()) p.runs.push_back({std::vector<int>(D, 0)}), p.order.columns.assign(V, zero_column);
  while (p.order.columns.size() % p.mma.k != 0) {
    p.runs.push_back({std::vector<int>(D, 0)});
    p.order.columns.insert(p.order.columns.end(), V, zero_column);
  }
  p.order.zero_columns    = static_cast<int>(std::count(p.order.columns.begin(), p.order.columns.end(), zero_column));
  p.order.dropped_columns = static_cast<int>(std::count(used.begin(), used.end(), false));
}

/// Image rows `pitch` values apart such that the rows of a group's tiles fall in different
/// banks: pitch / V odd for 16-byte runs (16-bit operands: 8 rows of 16 bytes; tf32: 8
/// rows of 4 values), pitch / V = 2 mod 4 for f64 (a lane a value, 4 rows of 32 bytes a
/// half-wave).
void set_pitch(Plan& p) {
  const int V = 16 / storage_bytes(p.precision), step = p.precision == Precision::f64 ? 4 : 2;
  const int want = p.precision == Precision::f64 ? 2 : 1;
  p.shared_pitch = p.shared_extent.back();
  if (p.dims() > 1) {
    while ((p.shared_pitch / V) % step != want) p.shared_pitch += V;
  }
}

/// Blocks of row tiles: 64 rows (axis D-2) of 8 tiles in 2-D, 4 planes of 16 rows of 8
/// tiles in 3-D, a line of tiles in 1-D, within most_tiles; shrunk (along the fastest axis
/// to 2 tiles, the planes, the rows to 16, the fastest axis to 1) while shared memory
/// passes max_shared_bytes(device). The rows stay a multiple of 16 (a group: 8 or 16 rows) and a
/// 1-D line a multiple of 16 tiles. False where no block fits.
bool size_blocks(Plan& p) {
  const int D = p.dims();
  if (D == 1) p.tiles_per_block = {most_tiles(p.precision)};
  else if (D == 2) p.tiles_per_block = {64, 8};
  else p.tiles_per_block = {4, 16, 8};
  auto fits = [&] {
    size_block_image(p);
    set_pitch(p);
    p.tile_offsets.assign(static_cast<std::size_t>(product(p.tiles_per_block)), 0);
    return product(p.tiles_per_block) <= most_tiles(p.precision) && shared_bytes(p) <= max_shared_bytes(p.device);
  };
  std::vector<int>& t = p.tiles_per_block;
  while (!fits()) {
    if (D == 1 && t[0] > 16) t[0] /= 2;
    else if (D > 1 && t[D - 1] > 2) t[D - 1] /= 2;
    else if (D == 3 && t[0] > 1) t[0] /= 2;
    else if (D > 1 && t[D - 2] > 16) t[D - 2] /= 2;
    else if (D > 1 && t[D - 1] > 1) t[D - 1] /= 2;
    else return false;
  }
  fill_block_tables(p);
  return true;
}

/// The plan; nothing where its block does not fit shared memory.
std::optional<Plan> dense_plan(const Plan& base) {
  Plan p    = base;
  p.backend = "dense";
  p.dense   = true;
  p.tile    = row_tile(base.dims());
  p.radius  = radius(p.stencil);
  p.mma     = mma_shape(p.precision);
  p.rows    = 16;
  for (std::size_t a = 0; a < p.tile.size(); ++a) p.patch.push_back(p.tile[a] + 2 * p.radius[a]);
  std::visit(
      [&](const auto& s) {
        constexpr int D = std::decay_t<decltype(s)>::rank;
        typename std::decay_t<decltype(s)>::index_type t{};
        std::copy(p.tile.begin(), p.tile.end(), t.begin());
        const KernelMatrix a = morph(s, t);
        p.nonzeros           = a.nonzeros();
        build_runs<D>(p, s, a);
        p.pairing = "dense: row runs";
        p.a       = pack_dense(a, p.order, p.precision);
      },
      p.stencil);
  if (!size_blocks(p)) return std::nullopt;
  const int k           = static_cast<int>(p.order.columns.size());
  p.sparsity            = static_cast<double>(p.nonzeros) / (16.0 * k);
  p.mmas_per_tile_group = p.a.k_chunks;
  p.predicted           = predict_dense(p);
  return p;
}

/// `fused`: the request's stencil fused over its steps (base_plan's).
std::optional<std::string> why_not(const PlanRequest& r, const AnyStencil& fused) {
  const DeviceDescription& device = device_description(r.device);
  if (!device.has_dense_matrix_cores()) return "device " + r.device + " has no dense matrix cores";
  if (!has_dense_operands(r.precision)) {
    return std::string("precision ") + to_string(r.precision) +
           " has no dense matrix-core form (f16, bf16, tf32 or f64; float fields run as tf32, f16 or bf16 where asked)";
  }
  if (dense_rate(device, r.precision) <= 0)
    return "device " + r.device + " has no " + to_string(r.precision) + " matrix cores";
  // A' holds the (fused) weights in the operand format: one it cannot hold would be inf.
  const double largest = largest_weight(fused);
  if (largest > largest_stored(r.precision)) {
    char text[160];
    std::snprintf(text, sizeof text, "a%s weight of magnitude %.6g exceeds the %s operands' largest value %.6g",
                  r.steps > 1 ? " fused" : "", largest, to_string(r.precision), largest_stored(r.precision));
    return std::string(text);
  }
  // Float grids are rounded to the operands as they are read: inputs past them would be inf.
  if (r.float_grids && r.input_magnitude > largest_stored(r.precision)) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "input magnitude %.6g exceeds the %s operands' largest value %.6g (float grids "
                  "read as %s)",
                  r.input_magnitude, to_string(r.precision), largest_stored(r.precision), to_string(r.precision));
    return std::string(text);
  }
  if (r.steps > 1 && r.boundary != Boundary::periodic) {
    return "fused steps are exact only away from the rim: " + std::to_string(r.steps) +
           " steps a launch need a periodic boundary (" + to_string(r.boundary) + " given)";
  }
  return std::nullopt;
}

class Model final : public BackendModel {
 public:
  std::string_view name() const override { return "dense"; }
  std::optional<std::string> cannot_run(const PlanRequest& r, const Plan& base) const override {
    return why_not(r, base.stencil);
  }

  /// One plan: the row tile.
  Bids bid(const PlanRequest& /*request*/, const Plan& base, double to_beat) const override {
    Bids bids;
    char reason[160];
    std::optional<Plan> plan = dense_plan(base);
    if (!plan) {
      std::snprintf(reason, sizeof reason, "no block of 16 row tiles fits the kernel's %zu bytes of shared memory",
                    max_shared_bytes(base.device));
      if (std::isinf(to_beat)) sparstencil::impl::fail("make_plan", "no dense plan (dense forced): ", reason);
      bids.dropped.push_back({"dense", row_tile(base.dims()), 0, Bid::Outcome::dropped, reason});
      return bids;
    }
    std::snprintf(reason, sizeof reason, "%s bound, K = %zu in %zu runs, %g dense MMAs per 8 tiles",
                  plan->predicted.bound.c_str(), plan->order.columns.size(), plan->runs.size(), executed_mmas(*plan));
    bids.plans.push_back({std::move(*plan), reason});
    return bids;
  }
};

}  // namespace

bool has_dense_operands(Precision p) {
  return p == Precision::f16 || p == Precision::bf16 || p == Precision::tf32 || p == Precision::f64;
}

MmaShape mma_shape(Precision p) { return {16, 8, p == Precision::f64 ? 4 : p == Precision::tf32 ? 8 : 16}; }

namespace {
std::size_t image_bytes(const Plan& p) {
  std::size_t rows = 1;
  for (int a = 0; a + 1 < p.dims(); ++a) rows *= static_cast<std::size_t>(p.shared_extent[a]);
  return rows * static_cast<std::size_t>(p.shared_pitch) * storage_bytes(p.precision);
}
std::size_t table_bytes(const Plan& p) { return (p.runs.size() + p.tile_offsets.size()) * sizeof(int); }
}  // namespace

bool copies_beside(const Plan& p) {
  // The float copy takes twice the 16-bit image; the staged results fit in it.
  return p.float_grids && 3 * image_bytes(p) + table_bytes(p) <= max_shared_bytes(p.device);
}

std::size_t image_region_bytes(const Plan& p) {
  if (copies_beside(p)) return 3 * image_bytes(p);
  const std::size_t stage = static_cast<std::size_t>(product(p.tiles_per_block) / p.tiles_per_block.back()) *
                            static_cast<std::size_t>(p.shared_pitch) * storage_bytes(grid_format(p));
  return std::max(image_bytes(p), stage);
}

std::size_t shared_bytes(const Plan& p) { return image_region_bytes(p) + table_bytes(p); }

std::size_t max_shared_bytes(const std::string& device) {
  // Half of what an SM holds on the GPUs the model knows, so two blocks share an SM.
  if (device == "h100" || device == "h200") return 113 * 1024;
  if (device == "a100") return 81 * 1024;
  return 48 * 1024;
}

std::vector<int> row_tile(int dims) {
  std::vector<int> tile(static_cast<std::size_t>(std::max(dims, 1)), 1);
  tile.back() = 16;
  return tile;
}

void check_kernel_limits(const Plan& p, const char* function) {
  const int tiles = product(p.tiles_per_block), tiles_x = p.tiles_per_block.back();
  const int batch = wave_batch(tiles);
  if ((tiles_x & (tiles_x - 1)) != 0 || (p.dims() > 1 && tiles_x % batch != 0)) {
    sparstencil::impl::fail(function, "tiles_per_block ", sparstencil::impl::tuple_string(p.tiles_per_block),
                            ": the dense kernel takes a power of two of tiles along the fastest axis, and a wave's ",
                            batch, " groups in one row of groups");
  }
  if (tiles > most_tiles(p.precision)) {
    sparstencil::impl::fail(function, "the plan's blocks hold ", tiles, " tiles, more than the dense kernel's ",
                            most_tiles(p.precision), " for ", to_string(p.precision), " (one unit a wave)");
  }
  if (shared_bytes(p) > max_shared_bytes(p.device)) {
    sparstencil::impl::fail(function, "a block needs ", shared_bytes(p), " bytes of shared memory, more than the ",
                            max_shared_bytes(p.device), " a block of the kernel takes on device ", p.device);
  }
}

Plan make_dense_plan(const PlanRequest& r) {
  const Plan base = base_plan(r);
  if (const std::optional<std::string> why = why_not(r, base.stencil)) sparstencil::impl::fail("make_dense_plan", *why);
  std::optional<Plan> plan = dense_plan(base);
  if (!plan) {
    sparstencil::impl::fail("make_dense_plan", "no block of 16 row tiles fits ", max_shared_bytes(r.device),
                            " bytes of shared memory");
  }
  return *plan;
}

ErrorBound step_error_bound(Precision p, std::size_t terms) {
  if (!has_dense_operands(p))
    sparstencil::impl::fail("step_error_bound", "precision ", to_string(p), " has no dense form");
  return matrix_step_error_bound(p, terms);
}

const BackendModel& model() {
  static const Model instance;
  return instance;
}

}  // namespace sparstencil::dense
