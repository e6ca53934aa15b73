#pragma once
/// The row-run kernel: row-run plans (Plan::runs, core/SparStencil_RowRuns.cpp) on sparse
/// tensor cores. Tiles are 16 outputs along the fastest axis; an MMA's 8 tiles (its N) sit
/// side by side in one output row, so a warp's strip is 128 outputs wide and B' is 4 runs
/// of 16 bytes per tile and k chunk: one ldmatrix.x4 per B' fragment, no gather table.
///
/// Every warp works on its own (no block barrier once A' is in shared memory): it owns a
/// strip of 128 outputs and a range of steps along axis 0, a step being 8 output rows
/// (1-D: the line folded into rows of 128; 3-D: 8 rows of one z plane). Per step:
///   1. the image of the step `ahead` later is requested into the warp's ring (rows in
///      1-D/2-D, planes in 3-D), 16-byte cp.async copies (element copies only where a
///      chunk straddles an end of the grid); the ring keeps what later steps read again,
///      so every input row is read once per strip. Interleaved rows (SPIDER's strided
///      swapping) are copied as they are, then interleaved in place once they arrive;
///   2. k chunks are taken in run sets (core run_sets): a set's B' is a window of 8
///      fragments, one per output row, each feeding one or two mma.sp. Where a set reads
///      the previous set's runs one image row further (the patch rows of a box, in order)
///      the window shifts by a row: one ldmatrix.x4 for the set instead of 8, so a box's
///      B' traffic no longer grows with its rows. The loop is software-pipelined: the next
///      set's A', metadata and new fragment load while the current set's MMAs run;
///   3. results are staged in shared memory (stmatrix for 16-bit values on sm_90; in 3-D
///      in the ring plane the step has just finished with) and stored as 16-byte runs
///      under the boundary contract.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "SparStencil_SparseKernel.cuh"

namespace sparstencil::cuda::impl {

/// The 8 tiles (16 outputs each) of an MMA side by side: a warp strip's width; output rows
/// a warp computes per step (one B' fragment each in a run set's window).
constexpr int strip_tiles = 8;
constexpr int strip_width = 16 * strip_tiles;
constexpr int step_rows   = 8;
/// Run sets a plan may have: their words travel in the kernel's parameters, so that the
/// set loop's branches are on values the compiler knows to be warp-uniform.
constexpr int max_run_sets = 256;

/// Ring and staging rows hold their 16-byte unit u at u ^ ((u / 8) mod T), T a tile's units
/// (2 for 16-bit values, 4 for tf32): one ldmatrix matrix reads a run of each of the 8
/// tiles, units T apart, which would otherwise fall in the same banks 2 or 4 times. (Rows
/// hold whole groups of T units: the planner pads the pitch to 16 values.)
template <Operand P>
__device__ __forceinline__ unsigned swizzled(unsigned unit) {
  constexpr unsigned tile_units = P == Operand::tf32 ? 4 : 2;
  return unit ^ ((unit >> 3) & (tile_units - 1));
}

struct RowRunParams {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[3]{};  ///< padded 3-D
  long in_stride[3]{};
  long out_stride[3]{};
  int radius[3]{};   ///< the boundary contract's rim
  int boundary = 0;  ///< 0 periodic, 1 interior, 2 fixed_rim
  int row_halo = 0, plane_halo = 0;
  int lead = 0, chunks = 0;  ///< image values before the strip origin; 16-byte chunks per image row
  /// Plan::interleave: 0, or D (4 or 8) where image rows are held with their 4-byte pairs
  /// interleaved D values apart: in each block of 2 D values (D / 4 16-byte units), unit m
  /// holds the pairs at values 4m, D + 4m, 4m + 2, D + 4m + 2.
  int interleave = 0;
  int pitch = 0, ring = 0, plane_values = 0, ahead = 1, stage_pitch = 0, warp_values = 0;
  /// Ring rows hold image value 0 this many 16-byte units in (RowRunLayout::unit_shift).
  int unit_shift = 0;
  int warps = 8;         ///< per thread block
  long strips   = 0;     ///< warp strips (3-D: y blocks times x blocks)
  long strips_x = 0;     ///< strips along the fastest axis
  long steps    = 0;     ///< along axis 0: blocks of step rows (folded rows in 1-D) or z planes
  long segment  = 0;     ///< steps a warp streams
  int k_chunks = 0, sets = 0;
  bool out_aligned = false;  ///< grid pointer and row strides whole 16-byte units (set per launch)
  bool stage_in_ring = false;  ///< 3-D: RowRunLayout::stage_in_ring
  /// Input pointer and row strides whole 16-byte units, the fastest axis contiguous (set
  /// per launch).
  bool in_aligned = false;
  const std::uint32_t* a_values   = nullptr;  ///< [kc][lane][4]
  /// [kc][lane]: chunk kc's metadata where sparsity selector 0 reads it (lanes 4g, 4g + 1).
  const std::uint32_t* a_metadata = nullptr;
  /// Per run set (core run_sets): bits 0-7 its first chunk, 8-9 its chunks (1 or 2), bit
  /// 16 set where its window is the previous set's shifted a row (else loaded whole).
  std::uint32_t set_words[max_run_sets]{};
  /// [set][4], the set's runs: bits 0-15 byte offset in an image row ((lead + x) * bytes),
  /// 16-23 image row (y + row_halo), 24-30 plane (z + plane_halo), from the tile origin.
  const std::uint32_t* run_words = nullptr;
};

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&b)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(address));
}
/// sm_90 and newer.
__device__ __forceinline__ void stmatrix_x4_trans(unsigned address, std::uint32_t r0, std::uint32_t r1,
                                                  std::uint32_t r2, std::uint32_t r3) {
#if __CUDA_ARCH__ >= 900
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(address), "r"(r0),
               "r"(r1), "r"(r2), "r"(r3));
#endif
}
__device__ __forceinline__ uint4 ld_shared_v4(unsigned address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(address));
  return v;
}
/// A 16-byte global store (the compiler splits a uint4 store through a pointer it cannot
/// prove aligned into four).
__device__ __forceinline__ void st_global_v4(void* address, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"l"(address), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
__device__ __forceinline__ void st_shared_v4(unsigned address, std::uint32_t x, std::uint32_t y, std::uint32_t z,
                                             std::uint32_t w) {
  asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"r"(address), "r"(x), "r"(y), "r"(z), "r"(w) : "memory");
}
__device__ __forceinline__ unsigned ld_shared_u32(unsigned address) {
  unsigned v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(address));
  return v;
}

/// Two results as one 32-bit word of 16-bit values (`lo` in the low half).
template <Operand P>
__device__ __forceinline__ std::uint32_t pack_pair(float lo, float hi) {
  if constexpr (P == Operand::f16) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
}

// Two blocks an SM (16 warps): up to 128 registers, which the accumulators (8 rows) and a
// run set's window of 8 B' fragments need. What bounded the previous form (tiles stacked
// along y, one ldmatrix.x4 per patch row and 8 tiles; Nsight Compute, tenth session) was
// shared-memory traffic and its latency at 4 warps a scheduler: B' fragments were 65% of
// the shared wavefronts, each patch row of a box reloading what the row before had
// loaded one row lower. Tiles side by side let a window shift instead.
template <Operand P, int D>
__global__ void __launch_bounds__(256, 2) row_run_kernel(const RowRunParams p) {
  using T = storage_t<P>;
  constexpr int V          = 16 / sizeof(T);
  constexpr unsigned bytes = sizeof(T);
  extern __shared__ uint4 shared_words[];
  std::uint32_t* const a_shared = reinterpret_cast<std::uint32_t*>(shared_words);
  std::uint32_t* const e_shared = a_shared + p.k_chunks * 128;
  std::uint32_t* const r_shared = e_shared + p.k_chunks * 32;
  T* const warp_buffers         = reinterpret_cast<T*>(r_shared + 32 * p.sets);
  const unsigned pitch_bytes = bytes * p.pitch, plane_bytes = bytes * p.plane_values;
  for (int i = threadIdx.x; i < p.k_chunks * 128; i += blockDim.x) a_shared[i] = __ldg(p.a_values + i);
  for (int i = threadIdx.x; i < p.k_chunks * 32; i += blockDim.x) e_shared[i] = __ldg(p.a_metadata + i);
  // Per set and lane: the byte offset from a window row's origin of the lane's ldmatrix row
  // (run l / 8 of tile l % 8): plane, row, and its unit in the ring row.
  for (int i = threadIdx.x; i < 32 * p.sets; i += blockDim.x) {
    const std::uint32_t w = __ldg(p.run_words + 4 * (i >> 5) + ((i & 31) >> 3));
    const unsigned plane  = D == 3 ? (w >> 24) & 0x7Fu : 0u;
    const unsigned unit   = swizzled<P>(((w & 0xFFFFu) + 16 * bytes * (i & 7)) / 16 + p.unit_shift);
    r_shared[i]           = ((w >> 16) & 0xFFu) * pitch_bytes + plane * plane_bytes + 16 * unit;
  }
  __syncthreads();  // the only block barrier: warps stream on their own from here

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long task = static_cast<long>(blockIdx.x) * p.warps + warp;
  const long strip = task % p.strips;
  const long first = task / p.strips * p.segment;  // the warp's first step
  // Steps, rows and columns fit 32 bits (the executor refuses larger grids).
  const int count = static_cast<int>(min(p.segment, p.steps - first));
  if (count <= 0) return;
  // The strip's first output: row y0 (3-D), column x0 (2-D, 3-D).
  const int y0 = D == 3 ? static_cast<int>(strip / p.strips_x) * step_rows : 0;
  const int x0 = D == 1 ? 0 : static_cast<int>(strip % p.strips_x) * strip_width;
  T* const ring  = warp_buffers + warp * p.warp_values;
  const unsigned ring_address = static_cast<unsigned>(__cvta_generic_to_shared(ring));
  // Staged outputs beside the ring, or (3-D, stage_in_ring) in the step's first plane.
  T* const stage_beside = ring + (D == 3 ? p.ring * p.plane_values : p.ring * p.pitch);
  const T* const in = static_cast<const T*>(p.in);
  const int n_x     = static_cast<int>(p.extent[2]);
  const int n_y     = static_cast<int>(p.extent[1]);
  const int column0 = x0 - p.lead;  // grid column of an image row's first value (1-D: in a folded row)
  // Where unit c of an image row sits in its ring row: shifted so that 32-byte sectors of
  // the grid land on aligned unit pairs (RowRunLayout::unit_shift), then swizzled.
  auto ring_unit = [&](unsigned c) { return swizzled<P>(c + p.unit_shift); };

  // Lanes take a step's image rows item by item (16-byte chunks, or blocks of interleaved
  // rows), item i = lane + 32 m in row-major order: `Items` is the lane's first item and
  // how it advances by 32.
  struct Items {
    int row, column, row_step, column_step, columns;
    __device__ Items(int lane, int columns_)
        : row(lane / columns_), column(lane % columns_), row_step(32 / columns_), column_step(32 % columns_),
          columns(columns_) {}
    __device__ void next(int& r, int& c) const {
      r += row_step, c += column_step;
      if (c >= columns) c -= columns, ++r;
    }
  };
  const Items chunk_items(lane, p.chunks);
  // Every chunk of the strip's image rows lies inside the grid and aligned (all strips
  // but those at the grid's ends): rows are copied with cp.async and no checks.
  const bool strip_whole = D > 1 && p.in_aligned && column0 >= 0 && column0 + p.chunks * V <= n_x;
  // The lane's chunk `c` of image row `at` (values into the ring) from grid row `row`
  // (nullptr: outside the grid, zeros), grid coordinate `x` of its first value.
  auto fill = [&](int at, const T* row, long x) {
    if (strip_whole && row != nullptr) {
      cp_async_16(ring_address + bytes * at, row + x);
    } else {
      fill_chunk<P>(p, ring + at, row, x);
    }
  };
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
  // S first - row_halo + a; 3-D plane 2 plane_halo + k of the ring (step 0 also the
  // 2 plane_halo before), ring plane u being z = first - plane_halo + u.
  const int row_origin = D == 3 ? y0 - p.row_halo : step_rows * static_cast<int>(first) - p.row_halo;
  auto first_plane = [&](int k) { return k == 0 ? 0 : 2 * p.plane_halo + k; };           // 3-D: [first, last]
  auto first_row   = [&](int k) { return k == 0 ? 0 : step_rows * k + 2 * p.row_halo; };  // 1-D/2-D:
  auto end_row     = [&](int k) { return step_rows * (k + 1) + 2 * p.row_halo; };        //   [first, end)
  const long item_step  = chunk_items.row_step * p.in_stride[1] + chunk_items.column_step * V;
  const long item_carry = p.in_stride[1] - static_cast<long>(p.chunks) * V;
  auto request = [&](int k) {
    if constexpr (D == 3) {
      const int rows = step_rows + 2 * p.row_halo;
      for (int u = first_plane(k); u <= 2 * p.plane_halo + k; ++u) {
        const int z     = static_cast<int>(first) - p.plane_halo + u;
        const long zw   = wrap_coordinate(p.boundary, z, p.extent[0]);
        const T* source = zw < 0 ? nullptr : in + zw * p.in_stride[0];
        const int plane = (u % p.ring) * p.plane_values;
        for (int r = chunk_items.row, c = chunk_items.column; r < rows; chunk_items.next(r, c)) {
          fill(plane + r * p.pitch + ring_unit(c) * V, source_row(source, row_origin + r), column0 + c * V);
        }
      }
    } else {
      const int a0 = first_row(k), a1 = end_row(k);
      if (D == 2 && strip_whole && row_origin + a0 >= 0 && row_origin + a1 <= n_y) {
        // Rows inside the grid: a source pointer advanced item by item, no checks.
        const T* from = in + static_cast<long>(row_origin + a0 + chunk_items.row) * p.in_stride[1] + column0 +
                        chunk_items.column * V;
        for (int r = chunk_items.row, c = chunk_items.column; r < a1 - a0;) {
          cp_async_16(ring_address + ((a0 + r) & (p.ring - 1)) * pitch_bytes + ring_unit(c) * 16, from);
          from += item_step;
          r += chunk_items.row_step, c += chunk_items.column_step;
          if (c >= p.chunks) c -= p.chunks, ++r, from += item_carry;
        }
      } else {
        for (int r = chunk_items.row, c = chunk_items.column; r < a1 - a0; chunk_items.next(r, c)) {
          const int a  = a0 + r;
          const T* row = D == 2 ? source_row(in, row_origin + a) : in;
          const long x = D == 2 ? column0 + c * V : static_cast<long>(row_origin + a) * strip_width + column0 + c * V;
          fill((a & (p.ring - 1)) * p.pitch + ring_unit(c) * V, row, x);
        }
      }
    }
    cp_async_commit();
  };
  for (int k = 0; k < p.ahead; ++k) request(k);

  // Interleaved rows (16-bit values): once step k's rows have arrived as they are, each
  // block of 2 D values is rewritten in place, 16-byte loads and stores, pairs moved in
  // registers.
  const int block_units = p.interleave / 4;
  const Items block_items(lane, block_units == 0 ? 1 : p.chunks / block_units);
  auto interleave_row = [&](unsigned row_address, int block) {
    const unsigned at = row_address + 16u * ring_unit(block_units * block);
    const uint4 u     = ld_shared_v4(at);
    if (block_units == 1) {
      st_shared_v4(at, u.x, u.z, u.y, u.w);
    } else {
      const unsigned next = row_address + 16u * ring_unit(block_units * block + 1);
      const uint4 v       = ld_shared_v4(next);
      st_shared_v4(at, u.x, v.x, u.y, v.y);
      st_shared_v4(next, u.z, v.z, u.w, v.w);
    }
  };
  auto interleave_arrived = [&](int k) {
    if constexpr (D == 3) {
      const int rows = step_rows + 2 * p.row_halo;
      for (int u = first_plane(k); u <= 2 * p.plane_halo + k; ++u) {
        const unsigned plane = ring_address + (u % p.ring) * plane_bytes;
        for (int r = block_items.row, b = block_items.column; r < rows; block_items.next(r, b)) {
          interleave_row(plane + r * pitch_bytes, b);
        }
      }
    } else {
      const int a0 = first_row(k), a1 = end_row(k);
      for (int r = block_items.row, b = block_items.column; r < a1 - a0; block_items.next(r, b)) {
        interleave_row(ring_address + ((a0 + r) & (p.ring - 1)) * pitch_bytes, b);
      }
    }
  };

  const unsigned ring_bytes = D == 3 ? p.ring * plane_bytes : p.ring * pitch_bytes;
  const unsigned ring_end   = ring_address + ring_bytes;
  const unsigned a_base = static_cast<unsigned>(__cvta_generic_to_shared(a_shared)) + 16 * lane;
  const unsigned e_base = static_cast<unsigned>(__cvta_generic_to_shared(e_shared)) + 4 * lane;
  const unsigned r_base = static_cast<unsigned>(__cvta_generic_to_shared(r_shared)) + 4 * lane;
  const int rim[3] = {p.boundary == 0 ? 0 : p.radius[0], p.boundary == 0 ? 0 : p.radius[1],
                      p.boundary == 0 ? 0 : p.radius[2]};

  // Stores: lane l writes 16-byte run l mod row_chunks of rows l / row_chunks + m store_rows.
  constexpr int row_chunks = strip_width / V, store_rows = 32 / row_chunks;
  const int store_chunk = lane % row_chunks, store_row = lane / row_chunks;
  const int store_x     = x0 + store_chunk * V;  // 2-D, 3-D
  const bool store_whole =
      D > 1 && p.out_aligned && store_x >= rim[2] && store_x + V <= p.extent[2] - rim[2];
  T* const out_lane = static_cast<T*>(p.out) + store_x;
  const int staged_lane = store_row * p.stage_pitch + swizzled<P>(store_chunk) * V;  // in the staging rows

  int plane_slot = 0;  // 3-D: ring slot of step k's first plane (k mod ring)
  for (int k = 0; k < count; ++k) {
    __syncwarp();  // every lane is done with the slots the request below overwrites
    if (k + p.ahead < count) {
      request(k + p.ahead);
    } else {
      cp_async_commit();
    }
    if (p.ahead == 2) {
      cp_async_wait<2>();
    } else {
      cp_async_wait<1>();
    }
    __syncwarp();  // the other lanes' copies are visible
    if constexpr (P != Operand::tf32) {
      if (p.interleave != 0) {
        interleave_arrived(k);
        __syncwarp();
      }
    }

    // The lane's tile in row 0 of the step's window; output row j's image rows lie j
    // pitches further (a step's 8 rows are consecutive in the ring), a run's offset is
    // added and, past the ring's end, wrapped once.
    const unsigned window = D == 3 ? ring_address + plane_slot * plane_bytes
                                   : ring_address + ((step_rows * k) & (p.ring - 1)) * pitch_bytes;
    auto address_of = [&](int j, std::uint32_t offset) {
      const unsigned at = window + j * pitch_bytes + offset;
      return at >= ring_end ? at - ring_bytes : at;
    };
    auto load_b = [&](std::uint32_t (&b)[4], unsigned address) {
      ldmatrix_x4(b, address);
      if constexpr (P == Operand::tf32) {  // round to nearest like the emulator (the MMA truncates)
#pragma unroll
        for (int v = 0; v < 4; ++v) b[v] = to_tf32(__uint_as_float(b[v]));
      }
    };
    auto a_of = [&](int kc, std::uint32_t (&a)[4]) {
      const uint4 av = ld_shared_v4(a_base + 512 * kc);
      a[0] = av.x, a[1] = av.y, a[2] = av.z, a[3] = av.w;
    };

    // Run sets, software-pipelined: while set s's MMAs run, set s + 1's A' and metadata
    // load, and its window's fragments as the slots free up (row 7 only where the window
    // shifts a row). Set s's window row j is in b[(j + s) mod 8]: the window shifts by
    // renaming registers, not moving them, the loop taking 8 sets an iteration.
    float acc[step_rows][4] = {};
    std::uint32_t b[step_rows][4], a[2][2][4], e[2][2];
    auto load_a = [&](std::uint32_t word, auto h) {  // the set's first two chunks' A' and metadata
      constexpr int H = decltype(h)::value;
      const int kc = word & 0xFFu;
      a_of(kc, a[H][0]);
      e[H][0] = ld_shared_u32(e_base + 128 * kc);
      if ((word >> 8 & 3u) == 2) {
        a_of(kc + 1, a[H][1]);
        e[H][1] = ld_shared_u32(e_base + 128 * (kc + 1));
      }
    };
    std::uint32_t next_offset = 0;
    {
      const std::uint32_t offset = ld_shared_u32(r_base);
#pragma unroll
      for (int j = 0; j < step_rows; ++j) load_b(b[j], address_of(j, offset));
      load_a(p.set_words[0], std::integral_constant<int, 0>{});
      if (p.sets > 1) next_offset = ld_shared_u32(r_base + 128);
    }
    // Set s (i = s mod 8, static); true once the last set is done.
    auto set = [&](auto slot, int s) {
      constexpr int i = decltype(slot)::value, h = i & 1;
      const std::uint32_t word = p.set_words[s];
      const bool more          = s + 1 < p.sets;
      const std::uint32_t next = more ? p.set_words[s + 1] : 0u;
      std::uint32_t after_offset = 0;
      if (more) {
        load_a(next, std::integral_constant<int, 1 - h>{});
        if (s + 2 < p.sets) after_offset = ld_shared_u32(r_base + 128 * (s + 2));
      }
      // Row j's slot is free once its MMAs are issued: it takes the next window's row
      // j - 1 (row 7 for j = 0; only row 7 where the window shifts).
      auto rows = [&](auto two, auto whole) {
        if constexpr (decltype(two)::value) {  // the first chunk's MMAs first: no two in a row on one accumulator
#pragma unroll
          for (int j = 0; j < step_rows; ++j) mma_sp<P, 0>(acc[j], a[h][0], b[(j + i) % step_rows], e[h][0]);
        }
#pragma unroll
        for (int j = 0; j < step_rows; ++j) {
          mma_sp<P, 0>(acc[j], a[h][decltype(two)::value ? 1 : 0], b[(j + i) % step_rows], e[h][decltype(two)::value ? 1 : 0]);
          if (j == 0 && more) load_b(b[i % step_rows], address_of(step_rows - 1, next_offset));
          if constexpr (decltype(whole)::value) {
            if (j > 0) load_b(b[(j + i) % step_rows], address_of(j - 1, next_offset));
          }
        }
      };
      using yes = std::true_type;
      using no  = std::false_type;
      const bool whole = more && (next >> 16 & 1u) == 0;
      if ((word >> 8 & 3u) == 2) {
        if (whole) {
          rows(yes{}, yes{});
        } else {
          rows(yes{}, no{});
        }
      } else {
        if (whole) {
          rows(no{}, yes{});
        } else {
          rows(no{}, no{});
        }
      }
      next_offset = after_offset;
      return !more;
    };
    for (int s = 0;; s += step_rows) {
      using std::integral_constant;
      if (set(integral_constant<int, 0>{}, s) || set(integral_constant<int, 1>{}, s + 1) ||
          set(integral_constant<int, 2>{}, s + 2) || set(integral_constant<int, 3>{}, s + 3) ||
          set(integral_constant<int, 4>{}, s + 4) || set(integral_constant<int, 5>{}, s + 5) ||
          set(integral_constant<int, 6>{}, s + 6) || set(integral_constant<int, 7>{}, s + 7)) {
        break;
      }
    }

    // Stage: c0, c1 are output g of tiles 2t, 2t+1 of the row; c2, c3 output g + 8. (In
    // 3-D the step's first plane is free from here on: the next request rewrites it,
    // after the stores below.)
    T* const stage = D == 3 && p.stage_in_ring ? ring + plane_slot * p.plane_values : stage_beside;
    const unsigned stage_address = static_cast<unsigned>(__cvta_generic_to_shared(stage));
    if (D == 3 && p.stage_in_ring) __syncwarp();  // every lane's reads of the plane are done
#if __CUDA_ARCH__ >= 900
    constexpr bool by_stmatrix = P != Operand::tf32;  // 16-bit values
#else
    constexpr bool by_stmatrix = false;
#endif
    if constexpr (by_stmatrix) {
      // stmatrix.trans: matrix m of lane l's address is tile l % 8's outputs 8 (m & 1) ..
      // 8 (m & 1) + 7 of row j + m / 2.
      const int m = lane >> 3;
      const unsigned lane_stage =
          stage_address + bytes * (m >> 1) * p.stage_pitch + 16 * swizzled<P>(2 * (lane & 7) + (m & 1));
#pragma unroll
      for (int j = 0; j < step_rows; j += 2) {
        stmatrix_x4_trans(lane_stage + bytes * j * p.stage_pitch, pack_pair<P>(acc[j][0], acc[j][1]),
                          pack_pair<P>(acc[j][2], acc[j][3]), pack_pair<P>(acc[j + 1][0], acc[j + 1][1]),
                          pack_pair<P>(acc[j + 1][2], acc[j + 1][3]));
      }
    } else {
      // Output o of tile n is value 16 n + o of the staged row, in its swizzled unit.
      const int g = lane >> 2, t = lane & 3;
      auto staged = [&](int value) { return swizzled<P>(value / V) * V + value % V; };
      const int at0 = staged(32 * t + g), at1 = staged(32 * t + 16 + g), at2 = staged(32 * t + 8 + g),
                at3 = staged(32 * t + 24 + g);
#pragma unroll
      for (int j = 0; j < step_rows; ++j) {
        T* row   = stage + j * p.stage_pitch;
        row[at0] = to_storage<P>(acc[j][0]);
        row[at1] = to_storage<P>(acc[j][1]);
        row[at2] = to_storage<P>(acc[j][2]);
        row[at3] = to_storage<P>(acc[j][3]);
      }
    }
    __syncwarp();

    // Store the step's rows by 16-byte runs: copies where a run lies inside the grid,
    // aligned and (unless periodic) off the rim, else under the boundary contract. A lane
    // stores the same columns of every row (2-D, 3-D: checked once, store_whole).
    const long g0 = D == 3 ? first + k : 0;
    const bool plane_whole = store_whole && (D < 3 || (g0 >= rim[0] && g0 < p.extent[0] - rim[0]));
    // Grid row of the lane's first run (2-D, 3-D), and its output.
    const int row0 = D == 3 ? y0 + store_row : step_rows * (static_cast<int>(first) + k) + store_row;
    T* out_row     = out_lane + g0 * p.out_stride[0] + static_cast<long>(row0) * p.out_stride[1];
#pragma unroll
    for (int m = 0; m < step_rows / store_rows; ++m) {
      const int r      = store_row + store_rows * m;
      const int staged = staged_lane + store_rows * m * p.stage_pitch;
      if constexpr (D > 1) {
        const int g1 = row0 + store_rows * m;
        if (plane_whole && g1 >= rim[1] && g1 < n_y - rim[1]) {
          st_global_v4(out_row, ld_shared_v4(stage_address + bytes * staged));
          out_row += store_rows * p.out_stride[1];
          continue;
        }
        out_row += store_rows * p.out_stride[1];
        store_run<P>(p, stage + staged, g0, g1, store_x, V);
      } else {
        const long x = (static_cast<long>(step_rows) * (first + k) + r) * strip_width + store_chunk * V;
        if (p.out_aligned && x >= rim[2] && x + V <= p.extent[2] - rim[2]) {
          st_global_v4(static_cast<T*>(p.out) + x, ld_shared_v4(stage_address + bytes * staged));
        } else {
          store_run<P>(p, stage + staged, 0, 0, x, V);
        }
      }
    }
    if (D == 3) plane_slot = plane_slot + 1 == p.ring ? 0 : plane_slot + 1;
  }
  cp_async_wait<0>();
}

}  // namespace sparstencil::cuda::impl
