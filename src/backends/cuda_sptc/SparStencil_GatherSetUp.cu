/// The gather kernel's set-up: its variant for the plan's tile and chunks, launch shape and
/// tables (B offsets a lane gathers, tile and staging offsets).
#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "SparStencil_Error.hpp"
#include "SparStencil_SparseExecutorState.cuh"
#include "SparStencil_SparseKernel.cuh"
#include "SparStencil_SparseKernelFacts.hpp"
#include "SparStencil_SparseOperand.hpp"

namespace sparstencil::cuda_sptc {

using impl::KernelParams;
using impl::Operand;
using impl::padded;
using impl::round_up;
using impl::upload;
using sparstencil::impl::fail;

namespace {

/// The variant holding `held` chunks (a power of two >= the plan's) for `m_blocks`: one
/// instantiation per entry of gather_variants, nothing else compiled.
template <Operand P, std::size_t... I>
impl::Kernel kernel_for(int m_blocks, int held, std::index_sequence<I...>) {
  impl::Kernel found = nullptr;
  ((gather_variants[I].m_blocks == m_blocks && gather_variants[I].held_chunks == held
        ? void(found = impl::sparse_stencil_kernel<P, gather_variants[I].m_blocks, gather_variants[I].held_chunks>)
        : void()),
   ...);
  return found;
}
template <Operand P>
impl::Kernel kernel_for(int m_blocks, int held) {
  return kernel_for<P>(m_blocks, held, std::make_index_sequence<std::size(gather_variants)>{});
}

}  // namespace

void SparseExecutor::State::set_up_gather(const DeviceInfo& info, Operand op) {
  State& s           = *this;
  const int D        = plan.dims();
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
  s.shared_bytes = static_cast<std::size_t>(2 * image_elements + stage_elements) * s.element_bytes;
  s.allow_shared(s.kernel, s.shared_bytes, "a block needs ");

  p.stream_axis = 3 - D;
  p.cross_ctas  = 1;
  for (int a = p.stream_axis + 1; a < 3; ++a) p.cross_ctas *= p.blocks[a];
  // Enough thread blocks for several waves; each streams up to 16 blocks of tiles.
  const long target_ctas = 16L * info.multiprocessors;
  const long columns = p.cross_ctas, along = p.blocks[p.stream_axis];
  p.blocks_per_cta = static_cast<int>(std::clamp<long>(columns * along / target_ctas, 1, 16));
  s.grid_blocks    = columns * ((along + p.blocks_per_cta - 1) / p.blocks_per_cta);
  if (s.grid_blocks > INT32_MAX) fail("SparseExecutor", "the grid needs too many thread blocks");
  p.boundary       = plan.boundary;
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

}  // namespace sparstencil::cuda_sptc
