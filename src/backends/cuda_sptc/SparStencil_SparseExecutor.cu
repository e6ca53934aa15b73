#include "SparStencil_SparseExecutor.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <utility>

#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_Overlap.hpp"
#include "SparStencil_RowRuns.hpp"
#include "SparStencil_SparseKernelFacts.hpp"
#include "SparStencil_SparseOperand.hpp"
#include "SparStencil_RowRunKernel.cuh"
#include "SparStencil_SparseKernel.cuh"
#include "SparStencil_Emulator.hpp"
#include "SparStencil_WallBands.hpp"
#include "SparStencil_WallKernel.cuh"

namespace sparstencil::cuda_sptc {

using impl::KernelParams;
using impl::Operand;
using impl::RowRunParams;
using sparstencil::impl::fail;

namespace {

using Kernel     = void (*)(KernelParams);
using RunKernel  = void (*)(RowRunParams);
using WallKernel = void (*)(impl::WallParams);

/// The variant holding `held` chunks (a power of two >= the plan's) for `m_blocks`: one
/// instantiation per entry of gather_variants, nothing else compiled.
template <Operand P, std::size_t... I>
Kernel kernel_for(int m_blocks, int held, std::index_sequence<I...>) {
  Kernel found = nullptr;
  ((gather_variants[I].m_blocks == m_blocks && gather_variants[I].held_chunks == held
        ? void(found = impl::sparse_stencil_kernel<P, gather_variants[I].m_blocks, gather_variants[I].held_chunks>)
        : void()),
   ...);
  return found;
}
template <Operand P>
Kernel kernel_for(int m_blocks, int held) {
  return kernel_for<P>(m_blocks, held, std::make_index_sequence<std::size(gather_variants)>{});
}

/// A D-vector as the kernel's 3-D form: leading axes of extent `fill`.
template <class T>
std::array<T, 3> padded(const T* v, std::size_t n, T fill) {
  std::array<T, 3> out{fill, fill, fill};
  std::copy(v, v + n, out.begin() + (3 - n));
  return out;
}
template <class T>
std::array<T, 3> padded(const std::vector<T>& v, T fill) {
  return padded(v.data(), v.size(), fill);
}

template <class T>
T* upload(const std::vector<T>& host) {
  T* device = nullptr;
  SPARSTENCIL_GPU_CHECK(cudaMalloc(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
  SPARSTENCIL_GPU_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

long round_up(long v, long m) { return (v + m - 1) / m * m; }

}  // namespace

std::vector<long> contiguous_strides(const std::vector<long>& extents) {
  std::vector<long> strides(extents.size(), 1);
  for (int a = static_cast<int>(extents.size()) - 2; a >= 0; --a) strides[a] = strides[a + 1] * extents[a + 1];
  return strides;
}

struct SparseExecutor::State {
  Plan plan;
  KernelParams params;
  Kernel kernel = nullptr;
  RowRunParams run_params;  ///< row-run plans
  RunKernel run_kernel     = nullptr;
  const char* run_loop     = "";  ///< the row-run kernel's loop over k chunks, for describe()
  int held_chunks          = 0;
  int block_threads        = impl::threads_per_block;
  int device               = 0;
  int element_bytes        = 0;
  std::size_t shared_bytes = 0;
  long grid_blocks         = 0;
  std::vector<long> contiguous;  ///< row-major strides of the plan's grid
  impl::WallParams wall_params;  ///< the wall kernel (interior, fixed_rim), where it has work
  WallKernel wall_kernel        = nullptr;
  long wall_blocks              = 0;
  std::size_t wall_shared_bytes = 0;
  int wall_threads              = 0;
  /// The walls variant of the row-run kernel (2-D, 3-D) stores no point of the band where
  /// the output is aligned: the wall kernel then runs beside it, on its own stream between
  /// two events (its blocks take the SMs the sparse launch's last warps leave).
  bool walls_variant       = false;
  cudaStream_t wall_stream = nullptr;
  cudaEvent_t wall_fork = nullptr, wall_join = nullptr;
  std::vector<void*> allocations;

  ~State() {
    for (void* p : allocations) cudaFree(p);  // no throw from a destructor
    if (wall_stream != nullptr) cudaStreamDestroy(wall_stream);
    if (wall_fork != nullptr) cudaEventDestroy(wall_fork);
    if (wall_join != nullptr) cudaEventDestroy(wall_join);
  }
  /// Launch shape and tables of a row-run plan (`plan` set).
  void set_up_row_runs(const DeviceInfo& info, Operand op);
  /// The wall kernel's boxes and one step's terms, where the plan has wall work.
  void set_up_walls(Operand op);
  /// Enqueues the wall kernel (none where it has no work) on `stream`, or `beside` the
  /// sparse launch enqueued by `sparse()` on the wall stream.
  template <class Sparse>
  void launch_with_walls(const void* in, const long* in_strides, void* out, const long* out_strides,
                         cudaStream_t stream, bool beside, Sparse&& sparse) const;
  template <class T>
  const T* keep(T* p) {
    allocations.push_back(p);
    return p;
  }
};

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
  p.boundary   = plan.boundary == Boundary::periodic ? 0 : plan.boundary == Boundary::interior ? 1 : 2;
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
  s.walls_variant  = plan.boundary != Boundary::periodic && D > 1;
  s.run_kernel     = row_run_variant(op, D, loop, s.walls_variant);
  s.run_loop       = row_loop_name(loop, l.paired);
  s.shared_bytes   = l.shared_bytes;
  s.block_threads  = 32 * l.warps;
  int shared_limit = 0;
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, s.device));
  if (s.shared_bytes > static_cast<std::size_t>(shared_limit)) {
    fail("SparseExecutor", "a block needs ", s.shared_bytes, " bytes of shared memory, the device allows ",
         shared_limit);
  }
  // The device's limit, not this plan's need: the attribute is the function's, and a
  // smaller one set by a later executor would refuse this one's launches.
  SPARSTENCIL_GPU_CHECK(cudaFuncSetAttribute(s.run_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_limit));
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

SparseExecutor::SparseExecutor(const Plan& plan) : m_state(std::make_unique<State>()) {
  State& s     = *m_state;
  s.plan       = plan;
  s.contiguous = contiguous_strides(plan.grid);
  if (plan.backend != "cuda_sptc")
    fail("SparseExecutor", "the plan is for the ", plan.backend, " backend, not cuda_sptc");
  if (!has_sparse_operands(plan.precision)) {
    fail("SparseExecutor", "precision ", to_string(plan.precision), " has no sparse tensor-core form");
  }
  if (plan.float_grids)
    fail("SparseExecutor", "the plan reads float grids: the sparse executor reads grids of its operand format");
  const int D = plan.dims();
  if (D < 1 || D > 3) fail("SparseExecutor", "the plan is ", D, "-D; 1-D to 3-D are supported");

  // The device: the current one, compute capability 8.0 or newer.
  if (device_count() == 0) fail("SparseExecutor", "no CUDA device is available");
  SPARSTENCIL_GPU_CHECK(cudaGetDevice(&s.device));
  const DeviceInfo info = device_info(s.device);
  if (!has_sparse_tensor_cores(info)) {
    fail("SparseExecutor", "device ", s.device, " (", info.name, ", compute capability ", info.major, ".", info.minor,
         ") has no sparse tensor cores: compute capability 8.0 or newer is needed");
  }

  const Operand op = plan.precision == Precision::f16    ? Operand::f16
                     : plan.precision == Precision::bf16 ? Operand::bf16
                                                         : Operand::tf32;
  s.element_bytes  = storage_bytes(plan.precision);
  s.set_up_walls(op);
  if (!plan.runs.empty()) {
    s.set_up_row_runs(info, op);
    return;
  }
  const int m_blocks = plan.a.m_blocks, k_chunks = plan.a.k_chunks;
  // The planner's register rule (max_register_chunks) is the one the variants follow.
  const int max_chunks = max_register_chunks(m_blocks);
  if (max_chunks == 0) {
    fail("SparseExecutor", "tiles of ", plan.rows, " points (", m_blocks,
         " blocks of 16 rows) are not supported; up to 16, 32 or 64 are");
  }
  if (k_chunks > max_chunks) {
    fail("SparseExecutor", "K = ", plan.order.columns.size(), " (", k_chunks, " chunks of ", plan.mma.k,
         ") exceeds the ", max_chunks, " chunks the kernel holds in registers for ", m_blocks, " row block",
         m_blocks > 1 ? "s" : "", "; plan a smaller tile");
  }
  s.held_chunks = 2;
  while (s.held_chunks < k_chunks) s.held_chunks *= 2;
  s.kernel = op == Operand::f16    ? kernel_for<Operand::f16>(m_blocks, s.held_chunks)
             : op == Operand::bf16 ? kernel_for<Operand::bf16>(m_blocks, s.held_chunks)
                                   : kernel_for<Operand::tf32>(m_blocks, s.held_chunks);
  SPARSTENCIL_ASSERT(s.kernel != nullptr);

  // Geometry, padded to 3-D.
  KernelParams& p   = s.params;
  const auto extent = padded(plan.grid, 1L);
  const auto tile = padded(plan.tile, 1), tpb = padded(plan.tiles_per_block, 1);
  const auto lead = padded(plan.shared_lead, 0), image_extent = padded(plan.shared_extent, 1);
  const auto image_stride = padded(plan.shared_strides(), 0);
  const auto radius       = padded(plan.radius, 0);
  for (int a = 0; a < 3; ++a) {
    p.extent[a]       = extent[a];
    p.span[a]         = tile[a] * tpb[a];
    p.lead[a]         = lead[a];
    p.image_extent[a] = image_extent[a];
    p.image_stride[a] = image_stride[a];
    p.radius[a]       = radius[a];
    p.blocks[a]       = static_cast<int>((extent[a] + p.span[a] - 1) / p.span[a]);
  }
  // Rows of the image start 16-byte aligned (the planner pads the pitch to 8 elements).
  const long image_rows     = static_cast<long>(image_extent[0]) * image_extent[1];
  const long image_elements = round_up(D == 1 ? image_extent[2] : image_rows * plan.shared_pitch, 8);
  const long stage_elements = round_up(static_cast<long>(p.span[0]) * p.span[1] * p.span[2], 8);
  p.image_elements          = static_cast<int>(image_elements);
  if (image_elements >= 65536) {
    fail("SparseExecutor", "the shared-memory image of a block (", image_elements,
         " elements) exceeds the 16-bit gather offsets; plan a smaller block");
  }
  s.shared_bytes   = static_cast<std::size_t>(2 * image_elements + stage_elements) * s.element_bytes;
  int shared_limit = 0;
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, s.device));
  if (s.shared_bytes > static_cast<std::size_t>(shared_limit)) {
    fail("SparseExecutor", "a block needs ", s.shared_bytes, " bytes of shared memory, the device allows ",
         shared_limit);
  }
  SPARSTENCIL_GPU_CHECK(cudaFuncSetAttribute(s.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_limit));

  p.stream_axis = 3 - D;
  p.cross_ctas  = 1;
  for (int a = p.stream_axis + 1; a < 3; ++a) p.cross_ctas *= p.blocks[a];
  // Enough thread blocks for several waves; each streams up to 16 blocks of tiles.
  const long target_ctas = 16L * info.multiprocessors;
  const long columns = p.cross_ctas, along = p.blocks[p.stream_axis];
  p.blocks_per_cta = static_cast<int>(std::clamp<long>(columns * along / target_ctas, 1, 16));
  s.grid_blocks    = columns * ((along + p.blocks_per_cta - 1) / p.blocks_per_cta);
  if (s.grid_blocks > INT32_MAX) fail("SparseExecutor", "the grid needs too many thread blocks");
  p.boundary       = plan.boundary == Boundary::periodic ? 0 : plan.boundary == Boundary::interior ? 1 : 2;
  p.groups         = tpb[0] * tpb[1] * tpb[2] / 8;
  p.k_chunks       = k_chunks;
  p.metadata_pairs = (k_chunks + 1) / 2;

  // Tables.
  const int K = plan.mma.k;
  if (static_cast<int>(plan.gather.size()) != k_chunks * K) fail("SparseExecutor", "gather table size mismatch");
  int largest_gather = 0;
  auto offset        = [&](int k) {
    const int g    = plan.gather[k];
    largest_gather = std::max(largest_gather, g);
    return static_cast<std::uint32_t>(g < 0 ? 0 : g);  // zero columns: A' is 0 there, any finite B does
  };
  std::vector<std::uint32_t> b_offsets;
  for (int kc = 0; kc < k_chunks; ++kc) {
    for (int t = 0; t < 4; ++t) {
      if (op == Operand::tf32) {
        for (int w = 0; w < 2; ++w) {
          const int k0 = kc * K + t + 8 * w;
          b_offsets.push_back(offset(k0) | offset(k0 + 4) << 16);
        }
      } else {
        for (int i = 0; i < 4; ++i) {
          const int k0 = kc * K + 2 * t + 8 * i;
          b_offsets.push_back(offset(k0) | offset(k0 + 1) << 16);
        }
      }
    }
  }
  const int tiles = tpb[0] * tpb[1] * tpb[2];
  if (static_cast<int>(plan.tile_offsets.size()) != tiles) fail("SparseExecutor", "tile offset table size mismatch");
  const int largest_tile = *std::max_element(plan.tile_offsets.begin(), plan.tile_offsets.end());
  if (largest_tile + largest_gather >= image_elements) {
    fail("SparseExecutor", "the plan's gather table reaches outside its shared-memory image");
  }
  const std::array<int, 3> stage_stride = {p.span[1] * p.span[2], p.span[2], 1};
  std::vector<int> stage_tiles, stage_rows;
  for (int j = 0; j < tiles; ++j) {
    const int q[3] = {j / (tpb[1] * tpb[2]), j / tpb[2] % tpb[1], j % tpb[2]};
    int o          = 0;
    for (int a = 0; a < 3; ++a) o += q[a] * tile[a] * stage_stride[a];
    stage_tiles.push_back(o);
  }
  for (int r = 0; r < 16 * m_blocks; ++r) {
    if (r >= plan.rows) {
      stage_rows.push_back(-1);
      continue;
    }
    const int q[3] = {r / (tile[1] * tile[2]), r / tile[2] % tile[1], r % tile[2]};
    stage_rows.push_back(q[0] * stage_stride[0] + q[1] * stage_stride[1] + q[2]);
  }
  p.a_values           = s.keep(upload(plan.a.values));
  p.a_metadata         = s.keep(upload(plan.a.metadata));
  p.b_offsets          = s.keep(upload(b_offsets));
  p.tile_offsets       = s.keep(upload(plan.tile_offsets));
  p.stage_tile_offsets = s.keep(upload(stage_tiles));
  p.stage_row_offsets  = s.keep(upload(stage_rows));
}

void SparseExecutor::State::set_up_walls(Operand op) {
  const WallBands bands = wall_bands(plan);
  if (bands.boxes.empty()) return;
  impl::WallParams& w = wall_params;
  const auto extent   = padded(plan.grid, 1L);
  for (int a = 0; a < 3; ++a) w.extent[a] = extent[a], w.radius[a] = bands.radius[a];
  w.steps    = bands.steps;
  w.boundary = plan.boundary == Boundary::interior ? 1 : 2;
  std::vector<int> offsets;
  std::vector<float> weights;
  std::visit(
      [&](const auto& stencil) {
        const int D = static_cast<int>(stencil.radius().size());
        for (const auto& term : stencil.terms()) {
          for (int a = 0; a < 3 - D; ++a) offsets.push_back(0);
          for (int a = 0; a < D; ++a) offsets.push_back(term.offset[a]);
          weights.push_back(emulation::operand_value(plan.precision, term.weight));
        }
      },
      plan.original);
  w.terms   = static_cast<int>(weights.size());
  w.offsets = keep(upload(offsets));
  w.weights = keep(upload(weights));
  std::vector<long> boxes;
  for (const WallBox& box : bands.boxes) {
    boxes.insert(boxes.end(), box.lo.begin(), box.lo.end());
    boxes.insert(boxes.end(), box.hi.begin(), box.hi.end());
  }
  w.boxes     = keep(upload(boxes));
  wall_blocks = static_cast<long>(bands.boxes.size());
  if (wall_blocks > INT32_MAX) fail("SparseExecutor", "the wall bands need too many thread blocks");
  wall_kernel       = op == Operand::f16    ? impl::wall_kernel<Operand::f16>
                      : op == Operand::bf16 ? impl::wall_kernel<Operand::bf16>
                                            : impl::wall_kernel<Operand::tf32>;
  wall_shared_bytes = bands.shared_bytes;
  wall_threads      = wall_block_threads(bands.largest_region);
  int shared_limit  = 0;
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (wall_shared_bytes > static_cast<std::size_t>(shared_limit)) {
    fail("SparseExecutor", "the wall kernel's blocks need ", wall_shared_bytes,
         " bytes of shared memory, the device allows ", shared_limit);
  }
  SPARSTENCIL_GPU_CHECK(cudaFuncSetAttribute(wall_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_limit));
  SPARSTENCIL_GPU_CHECK(cudaStreamCreateWithFlags(&wall_stream, cudaStreamNonBlocking));
  SPARSTENCIL_GPU_CHECK(cudaEventCreateWithFlags(&wall_fork, cudaEventDisableTiming));
  SPARSTENCIL_GPU_CHECK(cudaEventCreateWithFlags(&wall_join, cudaEventDisableTiming));
}

template <class Sparse>
void SparseExecutor::State::launch_with_walls(const void* in, const long* in_strides, void* out,
                                              const long* out_strides, cudaStream_t stream, bool beside,
                                              Sparse&& sparse) const {
  beside = beside && wall_blocks > 0;
  if (beside) {
    SPARSTENCIL_GPU_CHECK(cudaEventRecord(wall_fork, stream));
    SPARSTENCIL_GPU_CHECK(cudaStreamWaitEvent(wall_stream, wall_fork, 0));
  }
  sparse();
  if (wall_blocks == 0) return;
  impl::WallParams w = wall_params;
  w.in               = in;
  w.out              = out;
  const int D        = plan.dims();
  const auto is = padded(in_strides, D, 0L), os = padded(out_strides, D, 0L);
  for (int a = 0; a < 3; ++a) w.in_stride[a] = is[a], w.out_stride[a] = os[a];
  wall_kernel<<<static_cast<unsigned>(wall_blocks), wall_threads, wall_shared_bytes, beside ? wall_stream : stream>>>(
      w);
  SPARSTENCIL_GPU_CHECK_LAUNCH();
  if (beside) {
    SPARSTENCIL_GPU_CHECK(cudaEventRecord(wall_join, wall_stream));
    SPARSTENCIL_GPU_CHECK(cudaStreamWaitEvent(stream, wall_join, 0));
  }
}

SparseExecutor::~SparseExecutor()                                    = default;
SparseExecutor::SparseExecutor(SparseExecutor&&) noexcept            = default;
SparseExecutor& SparseExecutor::operator=(SparseExecutor&&) noexcept = default;

const Plan& SparseExecutor::plan() const { return m_state->plan; }

std::string SparseExecutor::describe() const {
  const State& s = *m_state;
  std::ostringstream out;
  if (s.run_kernel != nullptr) {
    const RowRunParams& p = s.run_params;
    out << to_string(s.plan.precision) << " row runs" << (s.plan.interleave != 0 ? " (interleaved)" : "") << ", "
        << p.k_chunks << " chunks, " << s.run_loop << ", " << s.grid_blocks << " blocks x " << s.block_threads << ", "
        << p.segment << " steps a warp, " << s.shared_bytes << " B shared";
    return out.str();
  }
  out << to_string(s.plan.precision) << " MB=" << s.plan.a.m_blocks << " KC=" << s.held_chunks << ", " << s.grid_blocks
      << " blocks x " << impl::threads_per_block << ", " << s.params.blocks_per_cta << " tile blocks each, "
      << s.shared_bytes << " B shared";
  return out.str();
}

void SparseExecutor::apply(const void* in, void* out, cudaStream_t stream) const {
  const std::vector<long>& strides = m_state->contiguous;
  apply(in, strides.data(), out, strides.data(), stream);
}

void SparseExecutor::apply(const void* in, const std::vector<long>& in_strides, void* out,
                           const std::vector<long>& out_strides, cudaStream_t stream) const {
  const int D = m_state->plan.dims();
  if (static_cast<int>(in_strides.size()) != D || static_cast<int>(out_strides.size()) != D) {
    fail("SparseExecutor::apply", "need ", D, " strides per grid, got ", in_strides.size(), " and ",
         out_strides.size());
  }
  apply(in, in_strides.data(), out, out_strides.data(), stream);
}

void SparseExecutor::apply(const void* in, const long* in_strides, void* out, const long* out_strides,
                           cudaStream_t stream) const {
  const State& s = *m_state;
  const int D    = s.plan.dims();
  if (in == nullptr || out == nullptr) fail("SparseExecutor::apply", "null grid pointer");
  for (int a = 0; a < D; ++a) {
    if (in_strides[a] < 1 || out_strides[a] < 1) {
      fail("SparseExecutor::apply", "strides must be positive: in ",
           sparstencil::impl::tuple_string(std::vector<long>(in_strides, in_strides + D)), ", out ",
           sparstencil::impl::tuple_string(std::vector<long>(out_strides, out_strides + D)));
    }
  }
  if (sparstencil::impl::grid_overlap(reinterpret_cast<std::uintptr_t>(in), in_strides,
                                      reinterpret_cast<std::uintptr_t>(out), out_strides, s.plan.grid.data(), D,
                                      static_cast<std::size_t>(s.element_bytes)) != sparstencil::impl::Overlap::none) {
    fail("SparseExecutor::apply", "in and out overlap in memory (or may: equal strides are decided element by ",
         "element, others by their memory ranges): a step needs separate buffers");
  }
  int current = 0;
  SPARSTENCIL_GPU_CHECK(cudaGetDevice(&current));
  if (current != s.device) {
    fail("SparseExecutor::apply", "the executor was built on device ", s.device, " but device ", current,
         " is current");
  }
  if (s.run_kernel != nullptr) {
    RowRunParams p = s.run_params;
    p.in           = in;
    p.out          = out;
    const auto is = padded(in_strides, D, 0L), os = padded(out_strides, D, 0L);
    for (int a = 0; a < 3; ++a) p.in_stride[a] = is[a], p.out_stride[a] = os[a];
    // Whole 16-byte output rows: the kernel's copy-only store path (1-D rows are a strip
    // apart); input rows of whole 16-byte units: its copy-only fill path. Elsewhere it
    // checks chunk by chunk.
    const int vector = 16 / s.element_bytes;
    p.out_aligned =
        reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && os[2] == 1 && os[1] % vector == 0 && os[0] % vector == 0;
    p.in_aligned =
        reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && is[2] == 1 && is[1] % vector == 0 && is[0] % vector == 0;
    s.launch_with_walls(in, in_strides, out, out_strides, stream, s.walls_variant && p.out_aligned, [&] {
      s.run_kernel<<<static_cast<unsigned>(s.grid_blocks), s.block_threads, s.shared_bytes, stream>>>(p);
      SPARSTENCIL_GPU_CHECK_LAUNCH();
    });
    return;
  }
  KernelParams p = s.params;
  p.in           = in;
  p.out          = out;
  const auto is = padded(in_strides, D, 0L), os = padded(out_strides, D, 0L);
  for (int a = 0; a < 3; ++a) {
    p.in_stride[a]  = is[a];
    p.out_stride[a] = os[a];
  }
  s.launch_with_walls(in, in_strides, out, out_strides, stream, false, [&] {
    s.kernel<<<static_cast<unsigned>(s.grid_blocks), impl::threads_per_block, s.shared_bytes, stream>>>(p);
    SPARSTENCIL_GPU_CHECK_LAUNCH();
  });
}

}  // namespace sparstencil::cuda_sptc
