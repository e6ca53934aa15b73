#pragma once
/// The dense GPU kernel, one body for every operand kind and both vendors: a block copies
/// its image (SparStencil_DenseImageCopies.cuh), each wave multiplies its unit
/// (SparStencil_DenseMultiply.cuh), and the block stages its results where the image was
/// and writes them a row at a time under the boundary contract. Its geometry and lane
/// mapping are SparStencil_DenseKernel.hpp's, shared with the host emulator. Device
/// code: included by SparStencil_DenseLaunch.cuh and SparStencil_DenseExecutor.cu (which
/// reads the kernel's PTX version).
#include <cstdint>
#include <type_traits>

#include "SparStencil_DenseImageCopies.cuh"
#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_DenseMultiply.cuh"
#include "SparStencil_DenseOperandKinds.cuh"
#include "SparStencil_GpuRuntime.hpp"

#if !defined(SPARSTENCIL_GPU_AMD)
#include "SparStencil_GpuCopies.cuh"
#endif

namespace sparstencil::dense::detail {

/// Blocks an SM holds at least: 3 (registers capped at 85 a thread; more blocks would
/// spill the accumulators).
constexpr int min_blocks = 3;

/// Kind: the operands; Grid: the grids' values (Kind's bits, or float read as 16-bit
/// operands).
template <class Kind, class Grid, int D>
__global__ void __launch_bounds__(block_threads, min_blocks) dense_kernel(const DenseArgs<D> g) {
  using L             = LayoutOf<Kind>;
  using Bits          = typename Kind::bits;
  constexpr int V     = 16 / sizeof(Grid);  // values of a 16-byte chunk of results
  constexpr int parts = part_count<L>();
  constexpr int most  = most_groups<Kind>;
  extern __shared__ uint4 shared_chunks[];  // 16-byte aligned
  Bits* image      = reinterpret_cast<Bits*>(shared_chunks);
  int* run_offsets = reinterpret_cast<int*>(reinterpret_cast<char*>(shared_chunks) + g.region_bytes);
  int* tile_offset = run_offsets + g.runs;
  const Grid* in   = static_cast<const Grid*>(g.in);
  Grid* out        = static_cast<Grid*>(g.out);
  const auto* a    = static_cast<const typename Kind::reg*>(g.a);
  long origin[D];
  block_origin(g, static_cast<long>(blockIdx.x), origin);
  for (int i = threadIdx.x; i < g.runs; i += blockDim.x) run_offsets[i] = g.run_offsets[i];
  for (int i = threadIdx.x; i < g.tiles; i += blockDim.x) tile_offset[i] = g.tile_offsets[i];
  fill_image<Kind>(g, origin, in, image);
  __syncthreads();
  // One unit a wave: g.batch groups (consecutive groups `step` values apart), all parts
  // of the tile's outputs, or (image_as_a) the wave's part.
  constexpr int unit_waves = image_as_a<L> ? parts : 1;  // waves sharing a unit's groups
  static_assert(block_threads / L::lanes / unit_waves * group_tiles<L>() == block_threads / 4,
                "a wave's g.batch groups are wave_batch's 64 tiles");
  const int lane = threadIdx.x % L::lanes, wave = threadIdx.x / L::lanes, part = wave % unit_waves;
  const int groups = group_count<L>(g), first_group = wave / unit_waves * g.batch;
  const int active = groups - first_group < g.batch ? groups - first_group : g.batch;  // the same for the whole wave
  Sums<Kind> c;
  with_group_count<most>(active, [&](auto count) {
    if constexpr (image_as_a<L>) {
      multiply_image_unit<Kind, D, decltype(count)::value>(g, image, a, tile_offset, part, first_group, active, lane,
                                                           c);
    } else {
      multiply_unit<Kind, D, decltype(count)::value>(g, image, a, run_offsets, tile_offset, first_group, active, lane,
                                                     c);
    }
  });
  __syncthreads();  // every wave done with the image: the results go where it was
  Grid* stage = reinterpret_cast<Grid*>(shared_chunks);
  if (active > 0) {
    // Where the lane's results of the unit's first group go, per value; the next groups'
    // lie group_step further along the row.
    constexpr int held = unit_parts<L>;
    int at[held][L::c_values];
#pragma unroll
    for (int p = 0; p < held; ++p) {
      for (int i = 0; i < L::c_values; ++i) {
        const Target t = c_target<L>(image_as_a<L> ? part : p, lane, i);
        at[p][i]       = stage_offset(g, group_tile<L>(g, first_group, t.tile)) + t.point;
      }
    }
#pragma unroll
    for (int j = 0; j < most; ++j) {
      if (j < active) {
        for (int p = 0; p < held; ++p)
          for (int i = 0; i < L::c_values; ++i)
            stage[at[p][i] + j * group_step<L, D>()] = stored<Kind, Grid>(c[j][p][i]);
      }
    }
  }
  __syncthreads();
  // The results, 16-byte chunks over the block's rows (a power of two of them a row),
  // under the boundary contract.
  const int x_shift = g.out_chunk_shift, x_chunks = 1 << x_shift;
  for (int chunk = threadIdx.x; chunk < g.rows << x_shift; chunk += blockDim.x) {
    const int row = chunk >> x_shift, x = (chunk & (x_chunks - 1)) * V;
    const OutputRow r = output_row(g, origin, row);
    if (!r.inside) continue;
    const Grid* from = stage + row * g.pitch + x;
    Grid* to         = out + r.out_index + x * g.out_stride[D - 1];
    const bool whole = x_inside(g, origin, x + V - 1) &&
                       (g.boundary == Boundary::periodic ||
                        (r.interior && x_interior(g, origin, x) && x_interior(g, origin, x + V - 1)));
#if defined(SPARSTENCIL_GPU_AMD)
    if (whole && g.out_stride[D - 1] == 1 && reinterpret_cast<std::uintptr_t>(to) % 16 == 0) {
      *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(from);
      continue;
    }
#else
    if (whole && g.out_stride[D - 1] == 1) {
      gpu::store_16_bytes(to, *reinterpret_cast<const uint4*>(from));
      continue;
    }
#endif
    for (int e = 0; e < V && x_inside(g, origin, x + e); ++e) {
      if (g.boundary == Boundary::periodic || (r.interior && x_interior(g, origin, x + e))) {
        out[r.out_index + (x + e) * g.out_stride[D - 1]] = from[e];
      } else if (g.boundary == Boundary::fixed_rim) {
        out[r.out_index + (x + e) * g.out_stride[D - 1]] = in[r.in_index + (x + e) * g.in_stride[D - 1]];
      }
    }
  }
}

}  // namespace sparstencil::dense::detail
