#include "SparStencil_DenseModel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

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

std::uint16_t half_bits(Precision p, double v) {
  return p == Precision::bf16 ? impl::bf16_bits(static_cast<float>(v)) : impl::f16_bits(static_cast<float>(v));
}

/// Warp instructions one plan unit (m16n8k16 f16/bf16: one mma.sync; m16n8k4 f64: two
/// m8n8k4) costs where every wave of a block has work, at half the device's issue peak:
/// fitted on the H100 (perf_tests/RESULTS.md: 3 x 3 and 15 x 15
/// boxes f16, 7 x 7 and 15 x 15 boxes f64 at 10240^2, within 5%).
double unit_instructions(Precision p) { return p == Precision::f64 ? 17.5 : 18.0; }
/// The kernel copies each block's image value by value and writes each output on its
/// own: image points and outputs a second, as a share of the copy bandwidth in 2-byte
/// values (the same fit: 15% of it, 224 G points a second on the H100, whatever the
/// precision: latency, not bytes, binds the copy).
constexpr double copy_efficiency = 0.15;

/// The prediction of a dense plan: each block copies its image, then its waves multiply
/// (a barrier between), so the two add. The multiplies run at the share of the block's
/// waves that have a unit of work (a unit: group_batch groups of tiles, one 16-row block
/// of A', one part of the instruction's rows). Fitted on the H100 for 2-D; 3-D f64
/// (7 x 7 x 7 box, two units a block) is underpredicted 1.7x.
Prediction predict_dense(const Plan& p) {
  const DeviceDescription& d = device_description(p.device);
  const long points          = grid_points(p.grid);
  long blocks = 1, image_points = 1;
  for (std::size_t a = 0; a < p.grid.size(); ++a) {
    blocks *= ceil_div(p.grid[a], static_cast<long>(p.tile[a]) * p.tiles_per_block[a]);
    image_points *= p.shared_extent[a];
  }
  const bool amd          = d.wave_lanes == 64;  // AMD's instructions: N 16, M 16 for f64 too
  const int n             = amd ? 16 : 8;
  const int parts         = !amd && p.precision == Precision::f64 ? 2 : 1;
  const int tiles         = product(p.tiles_per_block);
  const long block_units  = ceil_div(tiles / n, group_batch) * p.a.m_blocks * parts;
  const double waves      = static_cast<double>(block_threads) / d.wave_lanes;
  const double idle       = waves / std::min<double>(waves, static_cast<double>(block_units));
  const double units      = static_cast<double>(blocks) * (tiles / 8) * p.mmas_per_tile_group;
  const double flops      = units * 2.0 * p.mma.m * p.mma.n * p.mma.k;
  const double rate       = p.precision == Precision::f64 ? d.dense_f64_flops : d.dense_f16_flops;
  const double issue_rate = d.multiprocessors * 4.0 * d.clock_ghz * 1e9 * 0.5 * (32.0 / d.wave_lanes);
  Prediction pr;
  pr.compute_seconds = std::max(flops / rate, units * unit_instructions(p.precision) * idle / issue_rate);
  const double touched = static_cast<double>(blocks) * image_points + static_cast<double>(points);
  pr.memory_seconds    = touched / (copy_efficiency * d.memory_bytes_per_s / 2.0);
  // Shared memory: the image written once, B and its table entries read per unit.
  const double operand_bytes = p.precision == Precision::f64 ? 8 : 2;
  pr.shared_seconds = (touched * storage_bytes(p.precision) + units * p.mma.k * p.mma.n * (operand_bytes + 4.0)) /
                      d.shared_bytes_per_s;
  finish_prediction(pr, d.launch_seconds, points, p.fused_steps);
  pr.seconds   = pr.compute_seconds + pr.memory_seconds + d.launch_seconds;
  pr.gstencils = static_cast<double>(points) * p.fused_steps / pr.seconds / 1e9;
  return pr;
}

/// Blocks of 8 KiB of outputs (as the sparse gather kernel: 16 rows of axis D-2 in 2-D
/// and 3-D), a multiple of 16 tiles (AMD's N), shrunk along the fastest axis, then the
/// next, while shared memory passes max_shared_bytes. False where no block fits.
bool size_blocks(Plan& p) {
  const int D      = p.dims();
  const int values = 8192 / storage_bytes(p.precision);
  p.tiles_per_block.assign(D, 1);
  p.tiles_per_block[D - 1] = std::max(1, (D == 1 ? values : values / 16) / p.tile[D - 1]);
  if (D >= 2) p.tiles_per_block[D - 2] = std::max(1, 16 / p.tile[D - 2]);
  while (product(p.tiles_per_block) % 16 != 0) p.tiles_per_block[D - 1] *= 2;
  for (;;) {
    size_block_image(p);
    p.gather.assign(p.order.columns.size(), 0);
    p.tile_offsets.assign(static_cast<std::size_t>(product(p.tiles_per_block)), 0);
    if (shared_bytes(p) <= max_shared_bytes) break;
    int axis = D - 1;
    while (axis >= 0 && (p.tiles_per_block[axis] % 2 != 0 || (product(p.tiles_per_block) / 2) % 16 != 0)) --axis;
    if (axis < 0) return false;
    p.tiles_per_block[axis] /= 2;
  }
  fill_block_tables(p);
  return true;
}

/// The plan for `tile`; nothing where its block does not fit shared memory.
std::optional<Plan> dense_plan(const Plan& base, const std::vector<int>& tile) {
  Plan p    = base;
  p.backend = "dense";
  p.dense   = true;
  p.tile    = tile;
  p.radius  = radius(p.stencil);
  p.mma     = mma_shape(p.precision);
  p.rows    = product(tile);
  for (std::size_t a = 0; a < tile.size(); ++a) p.patch.push_back(tile[a] + 2 * p.radius[a]);
  std::visit([&](const auto& s) {
    typename std::decay_t<decltype(s)>::index_type t{};
    std::copy(tile.begin(), tile.end(), t.begin());
    const KernelMatrix a = morph(s, t);
    p.nonzeros           = a.nonzeros();
    const std::vector<bool> used = nonzero_columns(a);
    for (int c = 0; c < a.cols; ++c) {
      if (used[c]) p.order.columns.push_back(c);
      else ++p.order.dropped_columns;
    }
    if (p.order.columns.empty()) p.order.columns.push_back(zero_column), ++p.order.zero_columns;
    while (p.order.columns.size() % p.mma.k != 0) p.order.columns.push_back(zero_column), ++p.order.zero_columns;
    p.pairing = "dense: patch order";
    p.a       = pack_dense(a, p.order, p.precision);
  }, p.stencil);
  if (!size_blocks(p)) return std::nullopt;
  const int k           = static_cast<int>(p.order.columns.size());
  p.sparsity            = static_cast<double>(p.nonzeros) / (16.0 * p.a.m_blocks * k);
  p.mmas_per_tile_group = static_cast<long>(p.a.m_blocks) * p.a.k_chunks;
  p.predicted           = predict_dense(p);
  return p;
}

std::optional<std::string> why_not(const PlanRequest& r) {
  const DeviceDescription& device = device_description(r.device);
  if (!device.has_dense_matrix_cores()) return "device " + r.device + " has no dense matrix cores";
  if (!has_dense_operands(r.precision)) {
    return std::string("precision ") + to_string(r.precision) + " has no dense matrix-core form (f16, bf16 or f64)";
  }
  const double rate = r.precision == Precision::f64 ? device.dense_f64_flops : device.dense_f16_flops;
  if (rate <= 0) return "device " + r.device + " has no " + to_string(r.precision) + " matrix cores";
  // A' holds the (fused) weights in the operand format: one it cannot hold would be inf.
  const double largest = largest_weight(fuse(r.stencil, r.steps));
  if (largest > largest_stored(r.precision)) {
    char text[160];
    std::snprintf(text, sizeof text, "a%s weight of magnitude %.6g passes the %s operands' largest value %.6g",
                  r.steps > 1 ? " fused" : "", largest, to_string(r.precision), largest_stored(r.precision));
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
  std::optional<std::string> cannot_run(const PlanRequest& r) const override { return why_not(r); }

  /// Every tile planned (a dense plan is cheap to make); the fastest bids, the others are
  /// listed as dropped.
  Bids bid(const PlanRequest& /*request*/, const Plan& base, double to_beat) const override {
    Bids bids;
    char reason[160];
    std::optional<Plan> best;
    for (const std::vector<int>& tile : candidate_tiles(base.dims())) {
      std::optional<Plan> plan = dense_plan(base, tile);
      if (!plan) {
        std::snprintf(reason, sizeof reason, "no block of 16 tiles fits the kernel's %zu bytes of shared memory",
                      max_shared_bytes);
        bids.dropped.push_back({"dense", tile, 0, Bid::Outcome::dropped, reason});
        continue;
      }
      if (best && !better(*plan, *best)) {
        bids.dropped.push_back({"dense", tile, plan->predicted.seconds, Bid::Outcome::dropped, "another tile predicted faster"});
        continue;
      }
      if (best) bids.dropped.push_back({"dense", best->tile, best->predicted.seconds, Bid::Outcome::dropped, "another tile predicted faster"});
      best = std::move(plan);
    }
    if (best) {
      std::snprintf(reason, sizeof reason, "%s bound, K = %zu, %ld dense MMAs per 8 tiles", best->predicted.bound.c_str(),
                    best->order.columns.size(), best->mmas_per_tile_group);
      bids.plans.push_back({std::move(*best), reason});
    }
    if (bids.plans.empty() && std::isinf(to_beat)) {
      sparstencil::impl::fail("make_plan", "no tile gives a plan the dense kernel can run (dense forced): ",
                              bids.dropped.empty() ? std::string("none planned") : bids.dropped.back().reason);
    }
    return bids;
  }
};

}  // namespace

bool has_dense_operands(Precision p) { return p == Precision::f16 || p == Precision::bf16 || p == Precision::f64; }

MmaShape mma_shape(Precision p) { return {16, 8, p == Precision::f64 ? 4 : 16}; }

PackedA pack_dense(const KernelMatrix& a, const ColumnOrder& order, Precision precision) {
  if (!has_dense_operands(precision)) {
    sparstencil::impl::fail("pack_dense", "precision ", to_string(precision), " has no dense matrix-core form");
  }
  const int K = static_cast<int>(order.columns.size());
  if (K == 0 || K % mma_shape(precision).k != 0) {
    throw std::logic_error("pack_dense: K = " + std::to_string(K) + " is not a positive multiple of the unit's k");
  }
  PackedA p;
  p.m_blocks       = (a.rows + 15) / 16;
  p.k_chunks       = K / mma_shape(precision).k;
  const int rows   = 16 * p.m_blocks;
  const bool wide  = precision == Precision::f64;
  const std::size_t entries = static_cast<std::size_t>(rows) * K;
  p.values.assign(wide ? 2 * entries : entries / 2, 0u);
  for (int row = 0; row < a.rows; ++row) {
    for (int k = 0; k < K; ++k) {
      const int c = order.columns[k];
      if (c == zero_column) continue;
      const double v      = a(row, c);
      const std::size_t e = static_cast<std::size_t>(row) * K + k;
      if (wide) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        p.values[2 * e]     = static_cast<std::uint32_t>(bits);
        p.values[2 * e + 1] = static_cast<std::uint32_t>(bits >> 32);
      } else {
        p.values[e / 2] |= static_cast<std::uint32_t>(half_bits(precision, v)) << (16 * (e % 2));
      }
    }
  }
  return p;
}

double unpack_dense(const PackedA& packed, Precision precision, int row, int k) {
  const int K         = packed.k_chunks * mma_shape(precision).k;
  const std::size_t e = static_cast<std::size_t>(row) * K + k;
  if (precision == Precision::f64) {
    const std::uint64_t bits = packed.values[2 * e] | static_cast<std::uint64_t>(packed.values[2 * e + 1]) << 32;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  const auto bits = static_cast<std::uint16_t>(packed.values[e / 2] >> (16 * (e % 2)));
  return precision == Precision::bf16 ? impl::bf16_value(bits) : impl::f16_value(bits);
}

std::size_t shared_bytes(const Plan& p) {
  std::size_t rows = 1;
  for (int a = 0; a + 1 < p.dims(); ++a) rows *= static_cast<std::size_t>(p.shared_extent[a]);
  const std::size_t image = (p.dims() == 1 ? 1 : rows) * static_cast<std::size_t>(p.shared_pitch);
  // Ints: the gather table and tile offsets, then the tables of tile origins and tile
  // points, D coordinates each (SparStencil_DenseKernel.hpp).
  const std::size_t tables = p.gather.size() + p.tile_offsets.size() +
                             (p.tile_offsets.size() + 16 * static_cast<std::size_t>(p.a.m_blocks)) * p.dims();
  return image * storage_bytes(p.precision) + tables * sizeof(int);
}

std::vector<std::vector<int>> candidate_tiles(int dims) {
  std::vector<std::vector<int>> tiles;
  if (dims == 1) return {{16}};
  for (int a = 1; a <= 16; a *= 2) {
    if (dims == 2) {
      tiles.push_back({a, 16 / a});
      continue;
    }
    for (int b = 1; a * b <= 16; b *= 2) tiles.push_back({a, b, 16 / (a * b)});
  }
  return tiles;
}

Plan make_dense_plan(const PlanRequest& r, const std::vector<int>& tile) {
  if (const std::optional<std::string> why = why_not(r)) sparstencil::impl::fail("make_dense_plan", *why);
  const Plan base = base_plan(r);
  if (tile.size() != base.grid.size()) {
    sparstencil::impl::fail("make_dense_plan", "tile has ", tile.size(), " extents, need ", base.grid.size());
  }
  if (product(tile) != 16 || std::any_of(tile.begin(), tile.end(), [](int e) { return e < 1; })) {
    sparstencil::impl::fail("make_dense_plan", "tile ", sparstencil::impl::tuple_string(tile),
                            " is not 16 outputs (the 16 rows of A')");
  }
  std::optional<Plan> plan = dense_plan(base, tile);
  if (!plan) {
    sparstencil::impl::fail("make_dense_plan", "tile ", sparstencil::impl::tuple_string(tile),
                            ": no block of 16 tiles fits ", max_shared_bytes, " bytes of shared memory");
  }
  return *plan;
}

ErrorBound step_error_bound(Precision p, std::size_t terms) {
  if (!has_dense_operands(p)) sparstencil::impl::fail("step_error_bound", "precision ", to_string(p), " has no dense form");
  return matrix_step_error_bound(p, terms);
}

const BackendModel& model() {
  static const Model instance;
  return instance;
}

}  // namespace sparstencil::dense
