#pragma once
/// The row-run kernel: row-run plans (Plan::runs, core/SparStencil_RowRuns.cpp) on sparse
/// tensor cores. Tiles are 16 outputs along the fastest axis; an MMA's 8 tiles are 8
/// consecutive rows at one position, so B' is 4 runs of 16 bytes per tile and k chunk:
/// one ldmatrix.x4 per mma.sp, no gather table, no per-element loads.
///
/// A thread block streams planes along axis 0 (padded 3-D: z planes of a column in 3-D,
/// blocks of 16 rows in 2-D, blocks of 16 folded rows in 1-D). Per plane:
///   1. the image (plane plus halo) arrives by 16-byte cp.async copies (element copies
///      where rows wrap or leave the grid), one plane ahead; in 3-D through a ring of
///      2 r + 2 planes, so every input plane is read once per column;
///   2. the swapped images (forward, backward) are built from it where runs read them;
///   3. per warp task (8 rows x 16 G outputs): per k chunk A' (values, metadata) from
///      shared memory, then per group of 8 tiles one ldmatrix.x4 and one mma.sp;
///   4. results staged in shared memory and stored as 16-byte runs under the boundary
///      contract.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "SparStencil_SparseKernel.cuh"

namespace sparstencil::cuda::impl {

/// Groups of 8 tiles (16 outputs wide each) a warp task covers: one A' load serves them.
constexpr int run_groups = 2;

struct RowRunParams {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[3]{};  ///< padded 3-D
  long in_stride[3]{};
  long out_stride[3]{};
  int radius[3]{};  ///< the boundary contract's rim
  int boundary = 0;  ///< 0 periodic, 1 interior, 2 fixed_rim
  int dims     = 2;  ///< of the grid: 1 folds the line into rows of `width`
  int width    = 0;  ///< outputs of a block row
  int lead     = 0;  ///< image columns before the block origin
  int row_lead = 0;
  int image_rows = 0, pitch = 0, plane_values = 0;
  int ring = 2, ring_lead = 0;
  int swapped_ring = 0, swapped_low = 0, swapped_rows[2]{};
  int swap_distance = 0;
  int shift[3]{};
  int stage_pitch = 0;
  long columns = 1;          ///< blocks across the streamed axis (y, x blocks in 3-D; x blocks in 2-D)
  long column_blocks[2]{};   ///< 3-D: blocks along y and x; 2-D: 1 and x blocks
  long planes = 0;           ///< planes along the streamed axis
  long segment = 0;          ///< planes one thread block streams
  long segments = 0;         ///< per column
  int k_chunks = 0, runs = 0;
  bool in_aligned  = false;  ///< grid pointer and row strides whole 16-byte units (set per launch)
  bool out_aligned = false;
  const std::uint32_t* a_values   = nullptr;  ///< [kc][lane][4]
  const std::uint32_t* a_metadata = nullptr;  ///< [kc / 2][lane]
  const int* run_source = nullptr;            ///< 0 image, 1 forward, 2 backward
  const int* run_plane  = nullptr;            ///< plane offset (3-D z)
  const int* run_offset = nullptr;            ///< in-plane offset from the tile origin, shift included
};

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&b)[4], unsigned address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(address));
}
__device__ __forceinline__ uint4 ld_shared_v4(unsigned address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(address));
  return v;
}
__device__ __forceinline__ unsigned ld_shared_u32(unsigned address) {
  unsigned v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(address));
  return v;
}

/// Grid coordinates of image row `row` of plane `plane` for the column at `column_origin`
/// (padded 3-D: axis 0, axis 1 and the first value along axis 2, before wrapping).
struct RowPlace {
  long g0, g1, first;
};
__device__ __forceinline__ RowPlace image_row_place(const RowRunParams& p, long plane, const long (&column_origin)[3],
                                                    int row) {
  if (p.dims == 3) return {plane, column_origin[1] + row - p.row_lead, column_origin[2] - p.lead};
  if (p.dims == 2) return {0, plane * 16 + row - p.row_lead, column_origin[2] - p.lead};
  return {0, 0, (plane * 16 + row) * static_cast<long>(p.width) - p.lead};
}

/// Where rows of a plane start in a grid: `count` image rows from `first_row`, `values`
/// values each from image column `column`; the first row's first value and the distance
/// between rows, in elements; `inside` when all of them lie in the grid unwrapped.
struct PlaneRows {
  long start = 0, row_stride = 0;
  bool inside = false;
};
__device__ __forceinline__ PlaneRows plane_rows(const RowRunParams& p, long plane, const long (&column_origin)[3],
                                                int first_row, int count, int column, int values,
                                                const long (&stride)[3]) {
  const RowPlace a = image_row_place(p, plane, column_origin, first_row);
  const RowPlace b = image_row_place(p, plane, column_origin, first_row + count - 1);
  PlaneRows r;
  r.row_stride = p.dims == 1 ? p.width : stride[1];
  r.start      = a.g0 * stride[0] + a.g1 * stride[1] + (a.first + column) * stride[2];
  r.inside = stride[2] == 1 && a.g0 >= 0 && a.g0 < p.extent[0] && a.g1 >= 0 && b.g1 < p.extent[1] &&
             a.first + column >= 0 && b.first + column + values <= p.extent[2];
  return r;
}

/// Phase 1: issues the copies of plane `plane` into `image` (warps take rows, lanes the
/// row's 16-byte chunks).
template <Operand P>
__device__ void fill_plane(const RowRunParams& p, long plane, const long (&column_origin)[3], storage_t<P>* image) {
  using T         = storage_t<P>;
  constexpr int V = 16 / sizeof(T);
  const T* in     = static_cast<const T*>(p.in);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int chunks = (p.width + 2 * p.lead) / V;
  // Fast path: the whole image inside the grid, rows 16-byte aligned: copies only.
  const PlaneRows rows = plane_rows(p, plane, column_origin, 0, p.image_rows, 0, chunks * V, p.in_stride);
  if (rows.inside && p.in_aligned) {
    const T* source = in + rows.start;
    for (int row = warp; row < p.image_rows; row += warps_per_block) {
      const T* from = source + row * rows.row_stride;
      T* to         = image + row * p.pitch;
      for (int c = lane; c < chunks; c += 32) cp_async_16(to + c * V, from + c * V);
    }
    return;
  }
  for (int row = warp; row < p.image_rows; row += warps_per_block) {
    const RowPlace place = image_row_place(p, plane, column_origin, row);
    fill_row<P>(p, image + row * p.pitch, wrap_coordinate(p.boundary, place.g0, p.extent[0]),
                wrap_coordinate(p.boundary, place.g1, p.extent[1]), place.first, chunks);
  }
}

/// Phase 2: one swapped image of `image` (direction +1 forward, -1 backward) over the rows
/// runs read and the slack after them. Buffer index b holds image index i = b - shift;
/// since shift = r (mod 2) and tile origins are even, b even holds x(i) and b odd
/// x(i + direction h). 16-bit values go as 32-bit words (x(i) and x(i + 1 + direction h)
/// merged by one byte permute), 16 bytes a thread; source words outside the plane are
/// clamped (only padding positions of runs read what they give).
template <Operand P>
__device__ void build_swapped(const RowRunParams& p, const storage_t<P>* image, storage_t<P>* swapped, int direction) {
  const int s     = p.shift[direction > 0 ? 1 : 2];
  const int dh    = direction * p.swap_distance;
  const int words = p.plane_values * static_cast<int>(sizeof(storage_t<P>)) / 4;  // 32-bit words of a plane
  const unsigned* src = reinterpret_cast<const unsigned*>(image);
  uint4* dst          = reinterpret_cast<uint4*>(swapped);
  // Per 32-bit word w of the buffer: the words its two values come from.
  int da, db;
  unsigned selector = 0;
  if constexpr (P == Operand::tf32) {
    da = -s, db = -s + dh;  // even elements b from word b - s, odd ones from word b - s + dh
  } else {
    const int ha = s & 1;               // half of word w + da holding x(2w - s)
    da           = -((s + 1) >> 1);
    db           = (1 - s + dh) >> 1;   // floor: word holding x(2w + 1 - s + dh), the other half
    selector     = (2 * ha) | (2 * ha + 1) << 4 | (4 + 2 * (1 - ha)) << 8 | (5 + 2 * (1 - ha)) << 12;
  }
  auto word = [&](int w) { return src[min(max(w, 0), words - 1)]; };
  const int first = p.swapped_rows[0] * p.pitch * static_cast<int>(sizeof(storage_t<P>)) / 16;
  for (int q = first + static_cast<int>(threadIdx.x); q < words / 4; q += threads_per_block) {
    unsigned v[4];
    if constexpr (P == Operand::tf32) {
      // Words 4q .. 4q+3 are elements; even ones from x(b - s), odd ones from x(b - s + dh).
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = word(4 * q + k + (k % 2 == 0 ? da : db));
    } else {
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = __byte_perm(word(4 * q + k + da), word(4 * q + k + db), selector);
    }
    dst[q] = make_uint4(v[0], v[1], v[2], v[3]);
  }
}

template <Operand P>
__global__ void __launch_bounds__(threads_per_block) row_run_kernel(const RowRunParams p) {
  using T = storage_t<P>;
  extern __shared__ uint4 shared_words[];
  T* const images   = reinterpret_cast<T*>(shared_words);
  T* const forward  = images + p.ring * p.plane_values;
  T* const backward = forward + p.swapped_ring * p.plane_values;
  T* const stage    = backward + p.swapped_ring * p.plane_values;
  std::uint32_t* const a_shared = reinterpret_cast<std::uint32_t*>(stage + 16 * p.stage_pitch);
  std::uint32_t* const e_shared = a_shared + p.k_chunks * 128;
  unsigned* const run_address   = e_shared + (p.k_chunks + 1) / 2 * 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  constexpr unsigned bytes = sizeof(T);

  // Images, swapped images and staging zero first: padding a run may read stays finite.
  // (A' and its metadata follow them; they are copied in, not zeroed.)
  {
    uint4* words      = shared_words;
    const int count   = static_cast<int>((reinterpret_cast<char*>(a_shared) - reinterpret_cast<char*>(words)) / 16);
    for (int i = threadIdx.x; i < count; i += threads_per_block) words[i] = make_uint4(0, 0, 0, 0);
    for (int i = threadIdx.x; i < p.k_chunks * 128; i += threads_per_block) a_shared[i] = __ldg(p.a_values + i);
    for (int i = threadIdx.x; i < (p.k_chunks + 1) / 2 * 32; i += threads_per_block) e_shared[i] = __ldg(p.a_metadata + i);
  }
  __syncthreads();

  // This thread block: one column, planes [first, first + count).
  const long column  = blockIdx.x % p.columns;
  const long segment = blockIdx.x / p.columns;
  long column_origin[3] = {0, 0, 0};
  if (p.dims == 3) {
    column_origin[1] = (column / p.column_blocks[1]) * 16;
    column_origin[2] = (column % p.column_blocks[1]) * p.width;
  } else if (p.dims == 2) {
    column_origin[2] = column * p.width;
  }
  const long first = segment * p.segment;
  const long count = min(p.segment, p.planes - first);
  if (count <= 0) return;

  // Ring slots without division: `ring_base` is (i - first) mod ring, `swapped_base`
  // (i - first) mod swapped_ring, advanced by one each plane. Plane i + d of the image
  // ring (-ring_lead <= d <= ring_lead + 2) sits at ring_base + ring_lead + d, wrapped
  // once; plane i + dz of the swapped ring at swapped_base + dz - swapped_low.
  int ring_base = 0, swapped_base = 0;
  auto wrap       = [](int slot, int ring) { return slot >= ring ? slot - ring : slot; };
  auto image_at   = [&](int d) { return images + wrap(ring_base + p.ring_lead + d, p.ring) * p.plane_values; };
  auto swapped_at = [&](T* base, int dz) {
    return base + wrap(swapped_base + dz - p.swapped_low, p.swapped_ring) * p.plane_values;
  };
  // Prologue: planes first - ring_lead .. first + ring_lead (one copy group), then one ahead.
  for (int d = -p.ring_lead; d <= p.ring_lead; ++d) fill_plane<P>(p, first + d, column_origin, image_at(d));
  cp_async_commit();
  fill_plane<P>(p, first + p.ring_lead + 1, column_origin, image_at(p.ring_lead + 1));
  cp_async_commit();

  const int tasks_x_log2 = __ffs(p.width / (16 * run_groups)) - 1;  // widths are powers of two
  const int tasks        = 2 << tasks_x_log2;
  for (long i = first; i < first + count; ++i) {
    cp_async_wait<1>();  // all but the plane one ahead
    __syncthreads();
    if (p.swapped_ring > 0) {
      // Swapped images of the planes that become readable: all in the prologue, then the newest.
      const int newest = p.swapped_low + p.swapped_ring - 1;
      for (int dz = (i == first ? p.swapped_low : newest); dz <= newest; ++dz) {
        build_swapped<P>(p, image_at(dz), swapped_at(forward, dz), 1);
        build_swapped<P>(p, image_at(dz), swapped_at(backward, dz), -1);
      }
    }
    for (int u = threadIdx.x; u < p.runs; u += threads_per_block) {
      const int source = p.run_source[u];
      const int dz     = p.run_plane[u];
      const T* base    = source == 0 ? image_at(dz) : swapped_at(source == 1 ? forward : backward, dz);
      run_address[u]   = static_cast<unsigned>(__cvta_generic_to_shared(base)) + bytes * p.run_offset[u];
    }
    __syncthreads();

    // Phase 3: MMAs. Lane l gives ldmatrix the address of run l / 8 of tile (row) l % 8.
    for (int task = warp; task < tasks; task += warps_per_block) {
      const int row0 = (task >> tasks_x_log2) * 8;
      const int x0   = (task & ((1 << tasks_x_log2) - 1)) * 16 * run_groups;
      const unsigned tile_base = bytes * ((p.row_lead + row0 + (lane & 7)) * p.pitch + p.lead + x0);
      float acc[run_groups][4] = {};
      const unsigned a_base = static_cast<unsigned>(__cvta_generic_to_shared(a_shared)) + 16 * lane;
      const unsigned e_base = static_cast<unsigned>(__cvta_generic_to_shared(e_shared)) + 4 * lane;
      const unsigned r_base = static_cast<unsigned>(__cvta_generic_to_shared(run_address)) + 4 * (lane >> 3);
      auto chunk = [&](int kc, std::uint32_t e, auto selector) {
        const uint4 av            = ld_shared_v4(a_base + 512 * kc);
        const std::uint32_t a[4]  = {av.x, av.y, av.z, av.w};
        const unsigned address    = ld_shared_u32(r_base + 16 * kc) + tile_base;
#pragma unroll
        for (int g = 0; g < run_groups; ++g) {
          std::uint32_t b[4];
          ldmatrix_x4(b, address + g * 16 * bytes);
          if constexpr (P == Operand::tf32) {  // round to nearest like the emulator (the MMA truncates)
#pragma unroll
            for (int v = 0; v < 4; ++v) b[v] = to_tf32(__uint_as_float(b[v]));
          }
          mma_sp<P, decltype(selector)::value>(acc[g], a, b, e);
        }
      };
      int kc = 0;
      for (; kc + 1 < p.k_chunks; kc += 2) {
        const std::uint32_t e = ld_shared_u32(e_base + 128 * (kc / 2));
        chunk(kc, e, std::integral_constant<int, 0>{});
        chunk(kc + 1, e, std::integral_constant<int, 1>{});
      }
      if (kc < p.k_chunks) chunk(kc, ld_shared_u32(e_base + 128 * (kc / 2)), std::integral_constant<int, 0>{});
      // c0, c1: output g of tiles (rows) 2t, 2t+1; c2, c3: output g + 8.
      const int g = lane >> 2, t = lane & 3;
#pragma unroll
      for (int q = 0; q < run_groups; ++q) {
        T* at = stage + (row0 + 2 * t) * p.stage_pitch + x0 + 16 * q + g;
        at[0]                  = to_storage<P>(acc[q][0]);
        at[p.stage_pitch]      = to_storage<P>(acc[q][1]);
        at[8]                  = to_storage<P>(acc[q][2]);
        at[p.stage_pitch + 8]  = to_storage<P>(acc[q][3]);
      }
    }
    __syncthreads();
    // The plane two ahead goes to the slot the finished MMAs read last.
    fill_plane<P>(p, i + p.ring_lead + 2, column_origin, image_at(p.ring_lead + 2));
    cp_async_commit();
    ring_base    = wrap(ring_base + 1, p.ring);
    swapped_base = p.swapped_ring > 0 ? wrap(swapped_base + 1, p.swapped_ring) : 0;

    // Phase 4: staged outputs to the grid, a warp per row, 16-byte runs per lane; copies
    // only where all 16 rows lie inside the grid and (unless periodic) off the rim.
    constexpr int V = 16 / sizeof(T);
    const PlaneRows out_rows = plane_rows(p, i, column_origin, p.row_lead, 16, p.lead, p.width, p.out_stride);
    const RowPlace first_row = image_row_place(p, i, column_origin, p.row_lead);
    const RowPlace last_row  = image_row_place(p, i, column_origin, p.row_lead + 15);
    const int rim[3] = {p.boundary == 0 ? 0 : p.radius[0], p.boundary == 0 ? 0 : p.radius[1],
                        p.boundary == 0 ? 0 : p.radius[2]};
    const bool off_rim = first_row.g0 >= rim[0] && first_row.g0 < p.extent[0] - rim[0] && first_row.g1 >= rim[1] &&
                         last_row.g1 < p.extent[1] - rim[1] && first_row.first + p.lead >= rim[2] &&
                         last_row.first + p.lead + p.width <= p.extent[2] - rim[2];
    if (out_rows.inside && off_rim && p.out_aligned) {
      T* target = static_cast<T*>(p.out) + out_rows.start;
      for (int row = warp; row < 16; row += warps_per_block) {
        for (int c = lane; c * V < p.width; c += 32) {
          *reinterpret_cast<uint4*>(target + row * out_rows.row_stride + c * V) =
              *reinterpret_cast<const uint4*>(stage + row * p.stage_pitch + c * V);
        }
      }
    } else {
      for (int row = warp; row < 16; row += warps_per_block) {
        const RowPlace place = image_row_place(p, i, column_origin, p.row_lead + row);
        store_row<P>(p, stage + row * p.stage_pitch, place.g0, place.g1, place.first + p.lead, p.width);
      }
    }
  }
  cp_async_wait<0>();
}

}  // namespace sparstencil::cuda::impl
