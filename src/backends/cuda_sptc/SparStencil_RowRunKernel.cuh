#pragma once
/// The row-run kernel: row-run plans (Plan::runs, src/backends/cuda_sptc/SparStencil_RowRuns.cpp) on sparse
/// tensor cores. Tiles are 16 outputs along the fastest axis; an MMA's 8 tiles are 8
/// rows at one position (consecutive, or every other row in the shifted loops), so B' is
/// 4 runs of 16 bytes per tile and k chunk: one ldmatrix.x4 per mma.sp, no gather table,
/// no per-element loads.
///
/// Every warp works on its own (no block barrier once A' is in shared memory): it owns a
/// strip of `width` outputs (RowRunLayout) and a range of steps along axis 0, a step
/// being 16 rows (8 for tf32) in 1-D and 2-D (the 1-D line folded into rows of `width`)
/// and one z plane of as many rows in 3-D. Per step:
///   1. the image of the step `ahead` later is requested into the warp's ring (rows in
///      1-D/2-D, planes in 3-D; in the 2-D periodic variants but the shifted chunk loop
///      once the MMAs of 2. are issued), a 16-byte chunk per lane and row: cp.async copies, also
///      where a periodic row wraps whole, element copies only where a chunk straddles an
///      end of the grid; the ring keeps what later steps read again, so every input row
///      is read once per strip (2-D rows inside the grid: one pointer add and one cp.async
///      a row; the ring holds whole steps, so a step's rows never wrap). Interleaved rows
///      (SPIDER's strided swapping) are copied pair by pair to their places in 2-D rows
///      inside the grid, elsewhere as they are and interleaved in place once they arrive
///      (pairs 16 apart: a block of 32 values per tile);
///   2. per k chunk, A' (values, metadata) and the lane's run come from shared memory,
///      then per row set (8 rows) and group of 8 tiles one ldmatrix.x4 and one mma.sp
///      (one ldmatrix.x4 for two mma.sp where a split row's two parts read the same runs;
///      where every pair of chunks does (RowRunLayout::paired), or, in the `Distinct`
///      variant, every chunk reads runs of its own, a software pipeline loads the next
///      group's B' and the next pair's A' while the current group computes; in 2-D boxes
///      the shifted loops load one B' for row set 0 with one unit and row set 1 with the
///      unit a row above, RowLoop);
///   3. results are staged in shared memory (stmatrix for 16-bit values on sm_90), in the
///      ring rows (1-D/2-D) or plane (3-D) the step has just finished with, and stored as
///      16-byte runs under the boundary contract.
#include <cstdint>

#include "SparStencil_RowRunFragments.cuh"
#include "SparStencil_RowRunPairLoop.cuh"
#include "SparStencil_RowRunShiftedLoop.cuh"
#include "SparStencil_RowRunStaging.cuh"

namespace sparstencil::cuda_sptc::impl {

// Two blocks an SM (16 warps): up to 128 registers, which the accumulators of two row sets
// need without spilling (three blocks at 80 registers measured slower on the H100).
//
// Integer work is kept small (run words become window offsets once per block, a chunk's
// B' address is one add and one compare-and-wrap per row set, image rows are found with
// 32-bit indices and a compare, stores with one pointer per row), but what bounds the
// loop is latency (Nsight Compute, 2026-11-23, 5df3a63): each mma.sp holds its warp ~8 cycles
// and, with 4 warps a scheduler, shared-memory loads waited on right before their MMAs
// left the tensor pipe idle; hence the pipelined pair loop. (Tried and slower: a second
// set of accumulators, which spills at 128 registers or, at 168 registers and 6 warps a
// block, loses the warps; ring rows mirrored past the ring's end to drop the wrap, which
// costs warps where shared memory is tight; the pair loop unrolled twice, which spills.)
//
// `Distinct`: the variant for plans whose every chunk reads runs of its own (interleaved
// rows, RowRunLayout::distinct; 1-D and 3-D), pipelined pair by pair. A variant of its
// own: the kernel holding both pipelined loops spilled in 2-D and ran every 2-D plan
// slower (Box-2D9P 540 -> 445 GStencil/s); alone the loop still spills in 2-D.
/// `Walls`: the variant for interior and fixed_rim boundaries in 2-D and 3-D (the other
/// takes any boundary, and is the one for periodic grids): chunks wholly outside the grid
/// are copied as zeros, and where the output is aligned only whole 16-byte runs off the rim
/// are stored; the runs the rim cuts and the rim rows are the wall kernel's
/// (SparStencil_WallKernel.cuh, SparStencil_WallBands.hpp). So warps on strips at a wall
/// keep pace with the rest: element by element at the wall they held back whole launches
/// (3.4x), and even a masked store of those runs cost 20% (2-D). Kept apart: the same code
/// costs the periodic variants registers (the 2-D shifted loops spill).
template <Operand P, int D, RowLoop Loop = RowLoop::standard, bool Walls = false>
__global__ void __launch_bounds__(row_run_max_threads, row_run_min_blocks) row_run_kernel(const RowRunParams p) {
  constexpr bool Distinct = Loop == RowLoop::distinct;
  constexpr bool Shifted  = Loop == RowLoop::shifted_pairs || Loop == RowLoop::shifted_chunks;
  // Variants that may hold interleaved rows (16-bit; split pairs are never interleaved).
  constexpr bool Interleaved = P != Operand::tf32 && Loop != RowLoop::shifted_pairs;
  static_assert(!Shifted || (D == 2 && P != Operand::tf32), "the shifted loop is for 2-D 16-bit plans");
  using T                  = storage_t<P>;
  constexpr int V          = 16 / sizeof(T);
  constexpr unsigned bytes = sizeof(T);
  constexpr int step_rows  = step_rows_of<P>;
  constexpr int row_sets   = step_rows / 8;
  extern __shared__ uint4 shared_words[];
  std::uint32_t* const a_shared = reinterpret_cast<std::uint32_t*>(shared_words);
  std::uint32_t* const e_shared = a_shared + p.k_chunks * 128;
  std::uint32_t* const r_shared = e_shared + (p.k_chunks + 1) / 2 * 32;
  T* const warp_buffers         = reinterpret_cast<T*>(r_shared + p.runs);
  const unsigned pitch_bytes = bytes * p.pitch, plane_bytes = bytes * p.plane_values;
  // Only the shifted chunk loop's plans (2-D) may hold a block per tile (D = 16); elsewhere
  // groups' B' lie 16 values apart.
  constexpr bool TileBlocks  = Loop == RowLoop::shifted_chunks;
  const unsigned group_bytes = TileBlocks ? p.group_bytes : 16 * bytes;
  for (int i = threadIdx.x; i < p.k_chunks * 128; i += blockDim.x) a_shared[i] = __ldg(p.a_values + i);
  for (int i = threadIdx.x; i < (p.k_chunks + 1) / 2 * 32; i += blockDim.x) e_shared[i] = __ldg(p.a_metadata + i);
  // Run words become byte offsets from a step's window origin (plane, row, byte), bit 31
  // (the shared-runs mark) kept: the offsets stay far below 2^31.
  for (int i = threadIdx.x; i < p.runs; i += blockDim.x) {
    const std::uint32_t w = __ldg(p.run_words + i);
    const unsigned plane  = D == 3 ? (w >> 24) & 0x7Fu : 0u;
    r_shared[i]           = (w & 0x8000FFFFu) + ((w >> 16) & 0xFFu) * pitch_bytes + plane * plane_bytes +
                  (Shifted ? ((w >> 16) & 0x7Fu) << 24 : 0u);  // shifted: the row in bits 24-30
  }
  __syncthreads();  // the only block barrier: warps stream on their own from here

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long task  = static_cast<long>(blockIdx.x) * p.warps + warp;
  const long strip = task % p.strips;
  const long first = task / p.strips * p.segment;  // the warp's first step
  // Steps, rows and columns fit 32 bits (the executor refuses larger grids).
  const int count = static_cast<int>(min(p.segment, p.steps - first));
  if (count <= 0) return;
  // The strip's first output: row y0 (3-D), column x0 (2-D, 3-D).
  const int y0  = D == 3 ? static_cast<int>(strip / p.strips_x) * step_rows : 0;
  const int x0  = D == 1 ? 0 : static_cast<int>(strip % p.strips_x) * strip_width;
  T* const ring = warp_buffers + warp * p.warp_values;
  // Staged outputs beside the ring, unless in it (stage_in_ring: the step's first rows or plane).
  T* const stage_beside = ring + (D == 3 ? p.ring * p.plane_values : p.ring * p.pitch);
  // Lanes split an image row's chunks, rows_per_pass rows a pass (chunks <= 32).
  const int rows_per_pass = 32 / p.copy_chunks;
  const int lane_row = lane / p.copy_chunks, lane_chunk = lane % p.copy_chunks;
  const int lane_column = x0 - p.lead + lane_chunk * V;  // grid column of the lane's chunk (1-D: in a folded row)
  // The ring unit it lands in: with a block per tile (D = 16), chunks 2 g + 2, 2 g + 3 are
  // the upper half of block g (units 4 g + 2, 4 g + 3), where interleave_arrived reads
  // them for blocks g and g + 1.
  const bool tile_blocks = TileBlocks && p.interleave == 16;
  const int lane_unit = tile_blocks && lane_chunk >= 2 ? 4 * (lane_chunk / 2 - 1) + 2 + (lane_chunk & 1) : lane_chunk;
  const T* const in   = static_cast<const T*>(p.in);
  // 2-D/3-D: the lane's chunk sits at the same columns of every image row, so whether it
  // is copied whole (inside the grid, or wrapping whole under periodic boundaries, and
  // aligned) is decided once: `lane_source` is its wrapped first column, and the copies
  // of a row cost a row pointer and one cp.async. (Interleaved rows not copied pair by
  // pair are copied so too, then interleaved in place: interleave_arrived.)
  const int n_x = static_cast<int>(p.extent[2]);
  const int n_y = static_cast<int>(p.extent[1]);
  // (Walls: a chunk wholly outside the grid is zeros, written by the copy: source size 0,
  // from the row's first value.)
  const bool lane_outside = Walls && (lane_column + V <= 0 || lane_column >= n_x);
  const int lane_source   = lane_outside ? 0 : wrap_once(p.boundary, lane_column, n_x);
  const bool lane_whole   = D > 1 && p.in_aligned && lane_source >= 0 && lane_source + V <= n_x && lane_source % V == 0;
  const unsigned ring_address = static_cast<unsigned>(__cvta_generic_to_shared(ring));
  const unsigned ring_bytes   = D == 3 ? p.ring * plane_bytes : p.ring * pitch_bytes;
  const unsigned ring_end     = ring_address + ring_bytes;
  const unsigned lane_at      = bytes * lane_unit * V;
  // The lane's chunk of the image row `at` values into the ring from grid coordinate `x`
  // of `row` on (copies by 32-bit shared address: no 64-bit ring pointers held).
  auto fill = [&](int at, const T* row, long x) {
    if (D > 1 && lane_whole && row != nullptr) {
      if constexpr (Walls) cp_async_16(ring_address + bytes * at + lane_at, row + lane_source, lane_outside ? 0u : 16u);
      else cp_async_16(ring_address + bytes * at + lane_at, row + lane_source);
      return;
    }
    fill_chunk<P>(p, ring + at + lane_unit * V, row, x);
  };
  // Every copying lane's chunk lies inside (or wraps whole): 2-D rows that lie inside the
  // grid then take a plain loop (a pointer advanced per row, no checks), and so do 3-D
  // planes in the walls variant (fused 3-D plans at walls 6-10% faster on the H200; the
  // periodic single steps 4% slower with it, as on the H100 before: RESULTS.md).
  const bool warp_whole = __all_sync(0xFFFFFFFFu, lane_whole || lane_row >= rows_per_pass);
  // Interleaved 2-D rows whose pairs all lie inside the grid are copied pair by pair (4
  // bytes) straight to their interleaved places, no in-place pass: lane l fills words l and
  // l + 32 of a ring row. Word d of block b = d / D (a block's D words) holds the block's
  // pair (d mod D) / 2, or the one D / 2 pairs on where d is odd; a block's pairs start D
  // pairs after the block before (D / 2 with a block per tile: neighbours overlap).
  const int row_words = 4 * p.chunks;
  int pair_column = 0, pair_step = 0;  // grid columns of the lane's words l and l + 32 (from pair_column)
  bool pairs_whole = false;
  if (D == 2 && Interleaved && p.interleave != 0 && row_words <= 64) {
    const int half = p.interleave / 2, block_step = tile_blocks ? half : p.interleave, l = lane % p.interleave;
    pair_column = x0 - p.lead + 2 * (lane / p.interleave * block_step + (l >> 1) + (l & 1) * half);
    pair_step   = 64 / p.interleave * block_step;
    auto inside = [&](int word, int column) { return word >= row_words || (column >= 0 && column + 2 <= n_x); };
    pairs_whole = p.in_aligned &&
                  __all_sync(0xFFFFFFFFu, inside(lane, pair_column) && inside(lane + 32, pair_column + pair_step));
  }
  // Grid row y of `plane` (nullptr: outside the grid): wrapped (periodic) or nullptr
  // outside; a compare where it lies inside.
  auto source_row = [&](const T* plane, int y) -> const T* {
    if (plane == nullptr) return nullptr;
    if (static_cast<unsigned>(y) >= static_cast<unsigned>(n_y)) {
      y = static_cast<int>(wrap_coordinate(p.boundary, y, p.extent[1]));
      if (y < 0) return nullptr;
    }
    return plane + static_cast<long>(y) * p.in_stride[1];
  };

  // Step k's image (S = step_rows): 1-D/2-D ring rows [S k + 2 row_halo, S k + S +
  // 2 row_halo) (step 0 also the 2 row_halo before), ring row a being grid row
  // S first - row_halo + a; 3-D plane
  // 2 plane_halo + k of the ring (step 0 also the 2 plane_halo before), ring plane u
  // being z = first - plane_halo + u.
  const int row_origin = D == 3 ? y0 - p.row_halo : step_rows * static_cast<int>(first) - p.row_halo;
  // Ring slot `step` rows (fewer than the ring's) after `slot`.
  auto next_slot   = [&](int slot, int step) { return slot + step >= p.ring ? slot + step - p.ring : slot + step; };
  auto first_plane = [&](int k) { return k == 0 ? 0 : 2 * p.plane_halo + k; };            // 3-D: [first, last]
  auto first_row   = [&](int k) { return k == 0 ? 0 : step_rows * k + 2 * p.row_halo; };  // 1-D/2-D:
  auto end_row     = [&](int k) { return step_rows * (k + 1) + 2 * p.row_halo; };         //   [first, end)
  // Bit k mod 4: step k's interleaved rows came as they are (the in-place pass is due).
  // (Recomputing that from k at the pass instead made the 2-D kernel spill.)
  unsigned raw_steps = 0;
  // `first_slot`: the ring slot of step k's first image row, first_row(k) mod ring (1-D/2-D).
  auto request = [&](int k, int first_slot) {
    if constexpr (D == 2) {
      const int a0 = first_row(k), a1 = end_row(k);
      if (pairs_whole && row_origin + a0 >= 0 && row_origin + a1 <= n_y) {
        const T* from           = in + static_cast<long>(row_origin + a0) * p.in_stride[1] + pair_column;
        unsigned at             = ring_address + first_slot * pitch_bytes + 4 * lane;
        const unsigned lane_end = ring_end + 4 * lane;
#pragma unroll 2
        for (int a = a0; a < a1; ++a, from += p.in_stride[1]) {
          const unsigned to = at + row_shift<Loop>(a);
          if (lane < row_words) cp_async_4(to, from);
          if (lane + 32 < row_words) cp_async_4(to + 128, from + pair_step);
          at += pitch_bytes;
          if (at >= lane_end) at -= ring_bytes;
        }
        raw_steps &= ~(1u << (k & 3));
        cp_async_commit();
        return;
      }
    }
    raw_steps |= 1u << (k & 3);
    if (lane_row < rows_per_pass) {
      if constexpr (D == 3) {
        const int rows = step_rows + 2 * p.row_halo;
        for (int u = first_plane(k); u <= 2 * p.plane_halo + k; ++u) {
          const int z     = static_cast<int>(first) - p.plane_halo + u;
          const long zw   = wrap_coordinate(p.boundary, z, p.extent[0]);
          const T* source = zw < 0 ? nullptr : in + zw * p.in_stride[0];
          const int plane = (u % p.ring) * p.plane_values;
          if (Walls && warp_whole && source != nullptr && row_origin >= 0 && row_origin + rows <= n_y) {
            // The plane's rows inside the grid: the 2-D rows' plain loop (walls variant only;
            // one loop for both, as a lambda, moved the shifted chunk loop's spills from 8 to
            // 26 bytes, so the two are written apart).
            const T* from          = source + static_cast<long>(row_origin + lane_row) * p.in_stride[1] + lane_source;
            const long from_step   = rows_per_pass * p.in_stride[1];
            unsigned at            = ring_address + bytes * (plane + lane_row * p.pitch) + lane_at;
            const unsigned at_step = rows_per_pass * pitch_bytes;
#pragma unroll 2
            for (int r = lane_row; r < rows; r += rows_per_pass, from += from_step, at += at_step) {
              cp_async_16(at, from, lane_outside ? 0u : 16u);
            }
            continue;
          }
          for (int r = lane_row; r < rows; r += rows_per_pass) {
            fill(plane + r * p.pitch, source_row(source, row_origin + r), lane_column);
          }
        }
      } else {
        const int a0 = first_row(k), a1 = end_row(k);
        if (D == 2 && warp_whole && row_origin + a0 >= 0 && row_origin + a1 <= n_y) {
          const T* from        = in + static_cast<long>(row_origin + a0 + lane_row) * p.in_stride[1] + lane_source;
          const long from_step = rows_per_pass * p.in_stride[1];
          // The lane's chunk of ring row a mod ring, advanced and wrapped row by row.
          unsigned at            = ring_address + next_slot(first_slot, lane_row) * pitch_bytes + lane_at;
          const unsigned at_step = rows_per_pass * pitch_bytes, lane_end = ring_end + lane_at;
          // Two rows an iteration: a copy's source registers are not rewritten while the
          // copy still reads them (a long-scoreboard wait per row otherwise); one for tf32,
          // whose registers spill unrolled.
#pragma unroll(P == Operand::tf32 ? 1 : 2)
          for (int a = a0 + lane_row; a < a1; a += rows_per_pass, from += from_step) {
            if constexpr (Walls) cp_async_16(at + row_shift<Loop>(a), from, lane_outside ? 0u : 16u);
            else cp_async_16(at + row_shift<Loop>(a), from);
            at += at_step;
            if (at >= lane_end) at -= ring_bytes;
          }
          cp_async_commit();
          return;
        }
        for (int a = a0 + lane_row, slot = next_slot(first_slot, lane_row); a < a1;
             a += rows_per_pass, slot    = next_slot(slot, rows_per_pass)) {
          const T* row = D == 2 ? source_row(in, row_origin + a) : in;
          const long x = D == 2 ? lane_column : static_cast<long>(row_origin + a) * strip_width + lane_column;
          fill(slot * p.pitch + row_shift<Loop>(a) / bytes, row, x);
        }
      }
    }
    cp_async_commit();
  };
  for (int k = 0; k < p.ahead; ++k) request(k, first_row(k) % p.ring);

  // Interleaved rows (16-bit values): once step k's rows have arrived as they are, each
  // block of 2 D values is rewritten in place, 16-byte loads and stores, pairs moved in
  // registers (lanes split a row's blocks as they split its chunks). With a block per tile
  // (D = 16) block g takes the chunks of block g - 1's upper half too: every lane reads
  // before any writes.
  const int block_units = p.interleave / 4, row_blocks = block_units == 0 ? 1 : p.chunks / block_units;
  const int blocks_per_pass = 32 / row_blocks, lane_block_row = lane / row_blocks, lane_block = lane % row_blocks;
  const unsigned lane_block_at = 16u * block_units * lane_block;
  auto interleave_row          = [&](unsigned row_address, bool active) {
    const unsigned at = row_address + lane_block_at;
    if (tile_blocks) {
      // Block g: its lower D values from units 4 g - 2, 4 g - 1 (block 0: 0, 1), its upper
      // from 4 g + 2, 4 g + 3.
      uint4 u{}, u1{}, v{}, v1{};
      if (active) {
        const unsigned lower = lane_block == 0 ? at : at - 32;
        u = ld_shared_v4(lower), u1 = ld_shared_v4(lower + 16), v = ld_shared_v4(at + 32), v1 = ld_shared_v4(at + 48);
      }
      __syncwarp();
      if (active) {
        st_shared_v4(at, u.x, v.x, u.y, v.y);
        st_shared_v4(at + 16, u.z, v.z, u.w, v.w);
        st_shared_v4(at + 32, u1.x, v1.x, u1.y, v1.y);
        st_shared_v4(at + 48, u1.z, v1.z, u1.w, v1.w);
      }
      return;
    }
    if (!active) return;
    const uint4 u = ld_shared_v4(at);
    if (block_units == 1) {
      st_shared_v4(at, u.x, u.z, u.y, u.w);
    } else {
      const uint4 v = ld_shared_v4(at + 16);
      st_shared_v4(at, u.x, v.x, u.y, v.y);
      st_shared_v4(at + 16, u.z, v.z, u.w, v.w);
    }
  };
  // Passes of blocks_per_pass rows; in the variant that may hold a block per tile, the
  // same count in every lane (interleave_row's __syncwarp).
  auto interleave_arrived = [&](int k) {
    const bool lane_active = lane_block_row < blocks_per_pass;
    if (!TileBlocks && !lane_active) return;
    if constexpr (D == 3) {
      const int rows = step_rows + 2 * p.row_halo;
      for (int u = first_plane(k); u <= 2 * p.plane_halo + k; ++u) {
        const unsigned plane = ring_address + (u % p.ring) * plane_bytes;
        for (int r = lane_block_row; r < rows; r += blocks_per_pass) interleave_row(plane + r * pitch_bytes, true);
      }
    } else if constexpr (TileBlocks) {
      const int end = end_row(k);
      for (int a0 = first_row(k), slot = (a0 + lane_block_row) % p.ring; a0 < end;
           a0 += blocks_per_pass, slot = next_slot(slot, blocks_per_pass)) {
        const int a = a0 + lane_block_row;
        interleave_row(ring_address + slot * pitch_bytes + row_shift<Loop>(a), lane_active && a < end);
      }
    } else {
      for (int a = first_row(k) + lane_block_row, slot = a % p.ring; a < end_row(k);
           a += blocks_per_pass, slot                  = next_slot(slot, blocks_per_pass)) {
        interleave_row(ring_address + slot * pitch_bytes + row_shift<Loop>(a), true);
      }
    }
  };

  const unsigned a_base = static_cast<unsigned>(__cvta_generic_to_shared(a_shared)) + 16 * lane;
  const unsigned e_base = static_cast<unsigned>(__cvta_generic_to_shared(e_shared)) + 4 * lane;
  const unsigned r_base = static_cast<unsigned>(__cvta_generic_to_shared(r_shared)) + 4 * (lane >> 3);
  const int tile_row    = lane & 7;  // lane l gives ldmatrix the address of run l / 8 of tile (row) l % 8
  // (Walls: the radii, read from the parameters where needed: fewer registers.)
  const int rim[3] = {Walls                              ? p.radius[0]
                      : p.boundary == Boundary::periodic ? 0
                                                         : p.radius[0],
                      Walls                              ? p.radius[1]
                      : p.boundary == Boundary::periodic ? 0
                                                         : p.radius[1],
                      Walls                              ? p.radius[2]
                      : p.boundary == Boundary::periodic ? 0
                                                         : p.radius[2]};

  // Stores: lane l writes 16-byte run l mod row_chunks of rows l / row_chunks + m store_rows.
  constexpr int row_chunks = strip_width / V, store_rows = 32 / row_chunks;
  const int store_chunk = lane % row_chunks, store_row = lane / row_chunks;
  const int store_x      = x0 + store_chunk * V;  // 2-D, 3-D
  const bool store_whole = D > 1 && p.out_aligned && store_x >= rim[2] && store_x + V <= p.extent[2] - rim[2];
  T* const out_lane      = static_cast<T*>(p.out) + store_x;
  // Staging row 8 q + t holds the outputs of tile t of row set q, step row set_row(q, t)
  // (so stmatrix's 8 rows are consecutive, on distinct banks, in the shifted loops too):
  // the lane's rows store_row + store_rows m are staging rows slot(store_row) + slot_step m.
  constexpr int slot_step = Shifted ? store_rows / 2 : store_rows;
  const int staged_lane =
      (Shifted ? (store_row >> 1) + 8 * (store_row & 1) : store_row) * p.stage_pitch + store_chunk * V;

  int plane_slot = 0;  // 3-D: ring slot of step k's first plane (k mod ring)
  int row_slot   = 0;  // 1-D/2-D: ring slot of step k's first image row (S k mod ring)
  // A step requests the image of step k + ahead (which writes no row the step reads) before
  // its MMAs or, in the 2-D periodic variants but the shifted chunk loop, behind them, where
  // the request's address work fills their latency (measured per variant: RESULTS.md).
  constexpr bool request_behind = D == 2 && !Walls && Loop != RowLoop::shifted_chunks;
  auto request_next             = [&](int k) {
    if (k + p.ahead < count) {
      // (row_slot is step k's: first_row(k + ahead) lies S ahead + 2 row_halo rows on.)
      request(k + p.ahead, next_slot(row_slot, step_rows * p.ahead + 2 * p.row_halo));
    } else {
      cp_async_commit();
    }
  };
  for (int k = 0; k < count; ++k) {
    if constexpr (!request_behind) {
      __syncwarp();  // every lane is done with the slots the request overwrites
      request_next(k);
    }
    // Step k's copies have arrived (the groups committed after its own may be in flight);
    // the other lanes' are visible, and every lane is done with step k - 1.
    constexpr int later = request_behind ? 0 : 1;
    if (p.ahead == 2) {
      cp_async_wait<1 + later>();
    } else {
      cp_async_wait<later>();
    }
    __syncwarp();
    if constexpr (Interleaved) {
      if (p.interleave != 0 && (raw_steps >> (k & 3) & 1u) != 0) {
        interleave_arrived(k);
        __syncwarp();
      }
    }

    // Per k chunk: A' and the lane's run offset from shared memory, then per row set and
    // group of 8 tiles one ldmatrix.x4 (row tile_row of the run) and one mma.sp: 8
    // independent MMAs share each A' load and run address.
    float acc[row_sets][strip_groups][4] = {};
    unsigned window[row_sets];
#pragma unroll
    for (int q = 0; q < row_sets; ++q) {
      window[q] = D == 3 ? ring_address + plane_slot * plane_bytes + set_row<Loop>(q, tile_row) * pitch_bytes
                         : ring_address + next_slot(row_slot, set_row<Loop>(q, tile_row)) * pitch_bytes;
    }
    const RowRunFragments<P, Loop> fragments{window, ring_end, ring_bytes, group_bytes,
                                             a_base, e_base,   r_base,     tile_row};
    int kc = 0;
    if constexpr (Shifted) {
      shifted_loop(fragments, acc, p.k_chunks);
      kc = p.k_chunks;
    } else if (Distinct || p.paired) {
      const int pairs = p.k_chunks / 2;
      pair_loop<P, Loop, Distinct>(fragments, acc, pairs);
      kc = 2 * pairs;
    }
    chunk_loop(fragments, acc, kc, p.k_chunks);

    if constexpr (request_behind) request_next(k);

    // Stage: c0, c1 are output g of tiles 2t, 2t+1; c2, c3 output g + 8. (In the
    // ring: the step's first plane (3-D) or rows are free from here on; the next request
    // rewrites them, after the stores below.)
    T* const stage               = !p.stage_in_ring ? stage_beside
                                   : D == 3         ? ring + plane_slot * p.plane_values
                                                    : ring + row_slot * p.pitch;
    const unsigned stage_address = static_cast<unsigned>(__cvta_generic_to_shared(stage));
    if (p.stage_in_ring) __syncwarp();  // every lane's reads of those rows are done
    stage_sums<P>(acc, stage, stage_address, p.stage_pitch, lane);
    __syncwarp();

    // Store the step's rows by 16-byte runs: copies where a run lies inside the grid,
    // aligned and (unless periodic) off the rim, else under the boundary contract. A lane
    // stores the same columns of every row (2-D, 3-D: checked once, store_whole).
    const long g0          = D == 3 ? first + k : 0;
    const bool plane_whole = store_whole && (D < 3 || (g0 >= rim[0] && g0 < p.extent[0] - rim[0]));
    // Grid row of the lane's first run (2-D, 3-D), and its output.
    const int row0             = D == 3 ? y0 + store_row : step_rows * (static_cast<int>(first) + k) + store_row;
    T* out_row                 = out_lane + g0 * p.out_stride[0] + static_cast<long>(row0) * p.out_stride[1];
    constexpr int store_passes = step_rows / store_rows;
    if (D > 1 && plane_whole && row0 >= rim[1] && row0 + store_rows * (store_passes - 1) < n_y - rim[1]) {
      // Every run of the lane inside: its shared loads first, then its stores (one wait).
      uint4 v[store_passes];
#pragma unroll
      for (int m = 0; m < store_passes; ++m) {
        v[m] = ld_shared_v4(stage_address + bytes * (staged_lane + slot_step * m * p.stage_pitch));
      }
#pragma unroll
      for (int m = 0; m < store_passes; ++m) st_global_v4(out_row + m * store_rows * p.out_stride[1], v[m]);
    } else {
#pragma unroll
      for (int m = 0; m < store_passes; ++m) {
        const int r      = store_row + store_rows * m;
        const int staged = staged_lane + slot_step * m * p.stage_pitch;
        if constexpr (D > 1) {
          const int g1 = row0 + store_rows * m;
          if (plane_whole && g1 >= rim[1] && g1 < n_y - rim[1]) {
            st_global_v4(out_row, ld_shared_v4(stage_address + bytes * staged));
            out_row += store_rows * p.out_stride[1];
            continue;
          }
          out_row += store_rows * p.out_stride[1];
          // (Walls, aligned: a run at a wall or a rim row is the wall kernel's.)
          if (!Walls || !p.out_aligned) store_run<P>(p, stage + staged, g0, g1, store_x, V);
        } else {
          const long x = (static_cast<long>(step_rows) * (first + k) + r) * strip_width + store_chunk * V;
          if (p.out_aligned && x >= rim[2] && x + V <= p.extent[2] - rim[2]) {
            st_global_v4(static_cast<T*>(p.out) + x, ld_shared_v4(stage_address + bytes * staged));
          } else {
            store_run<P>(p, stage + staged, 0, 0, x, V);
          }
        }
      }
    }
    if (D == 3) plane_slot = plane_slot + 1 == p.ring ? 0 : plane_slot + 1;
    if (D < 3) row_slot = next_slot(row_slot, step_rows);
  }
  cp_async_wait<0>();
}

}  // namespace sparstencil::cuda_sptc::impl
