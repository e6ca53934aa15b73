#pragma once
/// Deep temporal blocking of 3-D radius-1 stars and boxes without a recomputed halo
/// (docs/GENERIC.md, "Tiles that exchange their edges"): a CUDA block owns a 64 x 32 tile
/// across (k = 2, k = 1) and walks its chunk of planes along k = 0 with `Depth` levels in
/// flight, as StreamTemporalKernel does, but each level computes the tile alone. The values
/// a level finishes on the tile's edges go to global memory as words tagged with the phase,
/// and the neighbouring tiles fetch them one phase later into the halo of their copy of that
/// plane, which the next level reads the phase after. So every tile must run at once (a
/// cooperative launch: ExchangeLaunch); a tile waits only where a neighbour's word is not
/// there yet, never on a grid barrier. Only where Kokkos has CUDA and the compiler is nvcc
/// (SPARSTENCIL_BLOCK_LAUNCH).
#include "SparStencil_BlockLaunch.hpp"

#if defined(SPARSTENCIL_BLOCK_LAUNCH)
#include <cstdint>
#include <type_traits>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GenericKernels.hpp"
#include "SparStencil_GenericModel.hpp"

namespace sparstencil::impl {

/// A 32-bit half of a value with the tag of the phase that wrote it, stored and loaded
/// whole (single-copy atomic), so a reader that sees the tag it waits for sees the value.
__device__ __forceinline__ void store_tagged(unsigned long long* word, unsigned bits, unsigned tag) {
  const unsigned long long x = (static_cast<unsigned long long>(tag) << 32) | bits;
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;\n" ::"l"(word), "l"(x) : "memory");
}
__device__ __forceinline__ unsigned long long load_tagged(const unsigned long long* word) {
  unsigned long long x;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];\n" : "=l"(x) : "l"(word) : "memory");
  return x;
}
/// Starts copying *from to *to (shared), or zeroes *to where `inside` is false.
template <class T>
__device__ __forceinline__ void exchange_copy_async(T* to, const T* from, bool inside) {
  const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(shared), "l"(from), "n"(sizeof(T)),
               "r"(inside ? static_cast<int>(sizeof(T)) : 0));
}

/// x as the compiler cannot see through: shared addresses derived from it are computed in
/// the phase that uses them rather than hoisted out of the phase loops, whose two bodies
/// (checked, unchecked) would then hold them all in registers and spill.
__device__ __forceinline__ int opaque(int x) {
  asm volatile("" : "+r"(x));
  return x;
}

/// `Depth` steps of a compiled radius-1 3-D star or box in one launch. Geometry: the whole
/// grid (lo = 0, count = extent), tile = {chunk planes, 32, 64}, tiles = {chunks, tiles
/// along k = 1, along k = 2}; under a periodic boundary the extents across are multiples of
/// the tile (generic::exchange_temporal_runs). Results as StreamTemporalKernel's: values
/// rounded to T between steps, each sum in the generic kernels' order of terms, the rim
/// keeping its input values at every step (fixed_rim, interior) and points outside the grid
/// holding zero.
template <class T, class Shape, int Depth>
struct ExchangeTemporalKernel {
  static_assert(Shape::rank == 3 && Shape::radius == 1, "the exchanging kernel takes 3-D radius-1 shapes");
  static_assert(Depth >= 2 && Depth <= generic::exchange_temporal_depth(sizeof(T), Shape::kind == ShapeKind::box),
                "depth out of range");
  static_assert(sizeof(T) == 4 || sizeof(T) == 8,
                "float or double values (the model enables float: exchange_temporal_depth)");
  using value_type       = T;
  using Acc              = accumulator_t<T>;
  using Word             = unsigned long long;
  static constexpr int R = 1, TX = generic::exchange_tile_columns, TY = generic::exchange_tile_rows;
  static constexpr int rows =
      generic::exchange_rows_per_thread(Shape::kind == ShapeKind::box);  ///< a thread's rows of its column
  static constexpr int threads = TX * TY / rows;
  static constexpr int pitch = TX + 2 * R, plane = (TY + 2 * R) * pitch;
  /// A level's plane is read two phases after it is finished (lag R + 2 planes between
  /// levels): written, its halo filled, read; input planes: read, landing, in flight. So
  /// everything turns with period 3 and the phase loop, unrolled by 3, names constants.
  static constexpr int lag = R + 2, period = 3, ahead = 2;
  static constexpr int exchanged  = Depth - 1;                        ///< levels whose edges are exchanged
  static constexpr int halo_cells = 2 * (TX + 2 * R) + 2 * TY;        ///< one per thread: threads >= halo_cells
  static constexpr int parts      = static_cast<int>(sizeof(T) / 4);  ///< tagged words a value
  static constexpr int strip      = TX > TY ? TX : TY;
  /// A tile's words: [buffer 0..3][level][side: k1 low, k1 high, k2 low, k2 high][i][part].
  /// Four buffers: a tile rewrites a buffer only once all its neighbours have read it.
  static constexpr long side_words    = static_cast<long>(strip) * parts;
  static constexpr long level_words   = 4 * side_words;
  static constexpr long buffer_words  = exchanged * level_words;
  static constexpr long tile_words    = 4 * buffer_words;
  static constexpr const char* label  = "sparstencil::generic[exchanging temporal]";
  static constexpr unsigned max_waits = 1u << 19;  ///< pauses of 2 us: about a second
  static_assert(TX == 64 && rows <= 32, "a warp holds one edge column of the tile, its rows published a lane each");
  static_assert(threads >= halo_cells && threads >= 2 * (TY + 2) + 2 * (TX + 2) && TY % rows == 0 && TX % 32 == 0,
                "the team's shape: a thread for each halo cell and each cell of the rim's lines");

  const T* in;
  T* out;
  Word* words;  ///< tile_words for every tile, zeroed before each launch (ExchangeLaunch)
  Geometry<3> g;
  Shape shape;
  Boundary boundary;

  KOKKOS_INLINE_FUNCTION static constexpr long scratch_values() {
    return (period + period * static_cast<long>(exchanged)) * plane;
  }
  KOKKOS_INLINE_FUNCTION static constexpr long scratch_bytes() {
    return scratch_values() * static_cast<long>(sizeof(T));
  }
  /// Phases a chunk of `outputs` planes takes: the warm-up of Depth radii of input and the
  /// levels' lags, then a plane a phase.
  KOKKOS_INLINE_FUNCTION static constexpr int phases(int outputs) {
    return outputs + Depth * R + (Depth - 1) * lag + R;
  }

  __device__ void operator()(T* scratch) const {
    const bool periodic = boundary == Boundary::periodic;
    const int t         = static_cast<int>(threadIdx.x);
    const int tx = t % TX, ty = t / TX;
    const int n0 = g.extent[0], n1 = g.extent[1], n2 = g.extent[2];
    const int tiles_x = g.tiles[2], tiles_y = g.tiles[1];
    const int tile = static_cast<int>(blockIdx.x);
    const int bx = tile % tiles_x, by = tile / tiles_x % tiles_y, chunk = tile / (tiles_x * tiles_y);
    const int x0 = bx * TX, y0 = by * TY;
    T* const input  = scratch;                   // period planes
    T* const levels = scratch + period * plane;  // level s, buffer b: + (period (s - 1) + b) plane
    for (int i = t; i < scratch_values(); i += threads) scratch[i] = T(0);

    // This thread's column and rows: inside the grid, on its rim across (bits by row).
    const int gx = x0 + tx, gy = y0 + ty * rows;
    unsigned inside = 0, rim = 0;
    SPARSTENCIL_UNROLL
    for (int j = 0; j < rows; ++j) {
      const int y = gy + j;
      if (gx < n2 && y < n1) inside |= 1u << j;
      if (!periodic && (gx < g.halo[2] || gx >= n2 - g.halo[2] || y < g.halo[1] || y >= n1 - g.halo[1])) rim |= 1u << j;
    }
    // Offsets within a plane (GenericExecutor::exchange_runs checks the strides) and among
    // the words (the tiles across are at most the device's SMs) fit 32 bits: fewer
    // registers than pointers.
    const int in_at  = static_cast<int>(gy * g.in_stride[1] + gx * g.in_stride[2]);
    const int out_at = static_cast<int>(gy * g.out_stride[1] + gx * g.out_stride[2]);
    const int at     = (ty * rows + R) * pitch + R + tx;  // row 0 of the thread in a plane

    // The halo cell this thread fills (threads < halo_cells): its place, and where it comes
    // from: the input plane's cell in the grid, and the neighbouring tile's edge word.
    bool h_on = false, h_in_grid = false, h_rim = false;
    int h_at = 0;
    int h_in = 0, h_word = 0;  // (h_word: among the words)
    if (t < halo_cells) {
      int x, y;  // local, -1 .. TX and -1 .. TY
      if (t < TX + 2) y = -1, x = t - 1;
      else if (t < 2 * (TX + 2)) y = TY, x = t - (TX + 2) - 1;
      else if (t < 2 * (TX + 2) + TY) x = -1, y = t - 2 * (TX + 2);
      else x = TX, y = t - 2 * (TX + 2) - TY;
      int cx = x0 + x, cy = y0 + y;
      if (periodic) cx = wrapped(cx, n2), cy = wrapped(cy, n1);
      h_on      = true;
      h_in_grid = cx >= 0 && cx < n2 && cy >= 0 && cy < n1;
      h_rim =
          !periodic && h_in_grid && (cx < g.halo[2] || cx >= n2 - g.halo[2] || cy < g.halo[1] || cy >= n1 - g.halo[1]);
      h_at = (y + R) * pitch + R + x;
      h_in = static_cast<int>((h_in_grid ? cy : 0) * g.in_stride[1] + (h_in_grid ? cx : 0) * g.in_stride[2]);
      if (h_in_grid) {
        const int nx = cx / TX, ny = cy / TY, lx = cx % TX, ly = cy % TY;
        const int side = ly == 0 ? 0 : ly == TY - 1 ? 1 : lx == 0 ? 2 : 3;
        const int i    = side < 2 ? lx : ly;
        h_word = static_cast<int>(((chunk * tiles_y + ny) * tiles_x + nx) * tile_words + side * side_words + i * parts);
      }
    }
    // Halo cells: from the neighbour's words, or (on the rim) copied from the input.
    const bool h_fills = h_on && h_in_grid && !h_rim, h_copies = h_on && h_in_grid && h_rim;
    // The cell on the rim this thread copies from the input into each level's plane, a phase
    // after the level computed it (the rim runs along at most four lines across the span
    // with its halo: x = 0 and n2 - 1, then y = 0 and n1 - 1 but where x is on one), so the
    // levels' loops hold no test for it.
    bool r_on = false;
    int r_at = 0, r_in = 0;
    if (!periodic) {
      int x = -2, y = -2, gx = 0, gy = 0;
      bool line = false;
      if (t < 2 * (TY + 2)) {
        const int column = t < TY + 2 ? 0 : n2 - 1;
        line             = g.halo[2] > 0 && (t < TY + 2 || n2 > 1);
        x = column - x0, y = t % (TY + 2) - 1;
      } else if (t < 2 * (TY + 2) + 2 * (TX + 2)) {
        const int u = t - 2 * (TY + 2), row = u < TX + 2 ? 0 : n1 - 1;
        line = g.halo[1] > 0 && (u < TX + 2 || n1 > 1);
        x = u % (TX + 2) - 1, y = row - y0;
      }
      gx = x0 + x, gy = y0 + y;
      r_on = line && x >= -R && x < TX + R && y >= -R && y < TY + R && gx >= 0 && gx < n2 && gy >= 0 && gy < n1 &&
             (t < 2 * (TY + 2) || g.halo[2] == 0 || (gx != 0 && gx != n2 - 1));
      r_at = (y + R) * pitch + R + x;
      r_in = r_on ? static_cast<int>(gy * g.in_stride[1] + gx * g.in_stride[2]) : 0;
    }
    const int my_words = static_cast<int>(tile * tile_words);
    // The tile's edge column in this thread's warp (TX = 64: one a warp, the low or the
    // high), published by its first `rows` lanes, a row each, from the level's plane.
    const int lane       = t % 32;
    const bool edge_lane = lane < rows;
    const bool low_edge  = tx < 32;
    const int edge_at    = (ty * rows + lane + R) * pitch + R + (low_edge ? 0 : TX - 1);
    const int edge_words = my_words + static_cast<int>((low_edge ? 2 : 3) * side_words) + (ty * rows + lane) * parts;
    constexpr unsigned all_rows = (1u << rows) - 1;

    // The chunk: outputs [z_lo, z_hi); input plane of phase p: z_lo - Depth R + p.
    const int z_lo = chunk * g.tile[0], z_hi = z_lo + g.tile[0] < n0 ? z_lo + g.tile[0] : n0;
    const int count = phases(z_hi - z_lo);
    const int first = z_lo - Depth * R;
    int fetch_z     = periodic ? ((first % n0) + n0) % n0 : first;
    int fetch_left  = count;
    auto fetch      = [&](T* slot) {
      if (fetch_left > 0) {
        const bool z_in   = fetch_z >= 0 && fetch_z < n0;
        const T* plane_in = in + static_cast<long>(z_in ? fetch_z : 0) * g.in_stride[0];
        const int here    = opaque(at);
        SPARSTENCIL_UNROLL
        for (int j = 0; j < rows; ++j) {
          const bool ok = z_in && (inside >> j & 1u);
          exchange_copy_async(slot + here + j * pitch, ok ? plane_in + in_at + j * g.in_stride[1] : in, ok);
        }
        if (h_on) exchange_copy_async(slot + opaque(h_at), z_in && h_in_grid ? plane_in + h_in : in, z_in && h_in_grid);
      }
      asm volatile("cp.async.commit_group;\n" ::);
      --fetch_left;
      if (++fetch_z == n0 && periodic) fetch_z = 0;
    };

    Acc acc[Depth][rows][3];
    SPARSTENCIL_UNROLL
    for (int s = 0; s < Depth; ++s) {
      SPARSTENCIL_UNROLL
      for (int j = 0; j < rows; ++j) {
        SPARSTENCIL_UNROLL
        for (int k = 0; k < 3; ++k) acc[s][j][k] = Acc(0);
      }
    }
    __syncthreads();  // the zeroed planes, before copies land in them
    for (int p = 0; p < ahead; ++p) fetch(input + p * plane);
    asm volatile("cp.async.wait_group %0;\n" ::"n"(ahead - 1) : "memory");
    __syncthreads();

    // Level s's plane in phase p: it adds plane first + p - (s - 1) lag of level s - 1 and
    // finishes the one R before.
    auto finished = [&](int p, int s) { return first + p - (s - 1) * lag - R; };
    // Whether plane o lies on the rim along k = 0 (every point of it on the rim).
    auto rim_plane = [&](int o) { return !periodic && o >= 0 && o < n0 && (o < g.halo[0] || o >= n0 - g.halo[0]); };
    auto phase     = [&](int p, auto turn_c, auto checked_c) {
      constexpr int turn     = decltype(turn_c)::value;  // p % period
      constexpr bool checked = decltype(checked_c)::value;
      constexpr int b_write = turn, b_fill = (turn + 2) % period, b_read = (turn + 1) % period;
      const int buffer = (p & 3) * static_cast<int>(buffer_words),
                filled = ((p - 1) & 3) * static_cast<int>(buffer_words);
      // The rim cells of the planes the levels finished last phase (the levels wrote their
      // sums there; a barrier since), but planes outside the grid or on the rim along k = 0,
      // which the checked phases wrote whole.
      if (r_on && p > 0) {
        const int r_here = opaque(r_at);
        // (Unchecked phases: every level's plane is inside the grid, off the rim.)
        const T* from = in + static_cast<long>(finished(p - 1, 1)) * g.in_stride[0] + r_in;
        SPARSTENCIL_UNROLL
        for (int s = 1; s < Depth; ++s, from -= lag * g.in_stride[0]) {
          const int o = finished(p - 1, s);
          if (!checked || (o >= 0 && o < n0 && !rim_plane(o))) {
            exchange_copy_async(levels + (period * (s - 1) + b_fill) * plane + r_here, from, true);
          }
        }
      }
      asm volatile("cp.async.commit_group;\n" ::);
      fetch(input + ((turn + ahead) % period) * plane);
      const int here = opaque(at), h_here = opaque(h_at);
      // The neighbours' edges of each level of phase p - 1: loaded as the levels go, stored
      // into the halo of that phase's planes at the end (the next phase reads them).
      const bool fills = h_fills && p > 0;
      Word fetched[exchanged][parts];
      SPARSTENCIL_UNROLL
      for (int s = 1; s <= Depth; ++s) {
        const T* source = s == 1 ? input + turn * plane : levels + (period * (s - 2) + b_read) * plane;
        source += here;
        // Output o = q - dz of the plane q added sits in slot (o - first) mod 3, a constant:
        // q - first = p - (s - 1) lag, lag a multiple of 3.
        auto slot = [](int dz) { return ((turn - dz) % 3 + 3) % 3; };
        Acc x[3][rows + 2];
        SPARSTENCIL_UNROLL
        for (int j = 0; j < rows + 2; ++j) {
          SPARSTENCIL_UNROLL
          for (int f = -R; f <= R; ++f) {
            bool needed = false;
            SPARSTENCIL_UNROLL
            for (int dz = -R; dz <= R; ++dz) {
              SPARSTENCIL_UNROLL
              for (int m = -R; m <= R; ++m)
                needed = needed || (j - R - m >= 0 && j - R - m < rows && Shape::has(dz, Shape::rest_index(m, f)));
            }
            if (needed) x[f + R][j] = static_cast<Acc>(source[(j - R) * pitch + f]);
          }
        }
        // Term by term, every row at once: each sum keeps its order of terms, and the rows'
        // chains are independent, so a warp has `rows` FMAs to issue before one waits.
        SPARSTENCIL_UNROLL
        for (int dz = -R; dz <= R; ++dz) {
          bool start = dz == -R;
          SPARSTENCIL_UNROLL
          for (int m = -R; m <= R; ++m) {
            SPARSTENCIL_UNROLL
            for (int f = -R; f <= R; ++f) {
              if (!Shape::has(dz, Shape::rest_index(m, f))) continue;
              const Acc w = shape.weights[(dz + R) * Shape::rest_count + Shape::rest_index(m, f)];
              SPARSTENCIL_UNROLL
              for (int j = 0; j < rows; ++j) {
                Acc& sum       = acc[s - 1][j][slot(dz)];
                const Acc term = w * x[f + R][j + R + m];
                sum            = start ? term : sum + term;
              }
              start = false;
            }
          }
        }
        // Plane o of level s is complete in slot(R). A point outside the grid holds zero, one
        // on the rim its input value, copied asynchronously into the plane (no thread waits
        // on a load); the words of those points are published as they are and never read
        // (the tile beside copies its halo cells on the rim itself). Threads with no such
        // point (all but a few on the grid's faces) take the first branch. Checked phases
        // add the planes outside the grid or on the rim along k = 0 (a rim plane's edge
        // column is not published at all: its rows may still be landing).
        const int o = finished(p, s);
        T value[rows];
        SPARSTENCIL_UNROLL
        for (int j = 0; j < rows; ++j) value[j] = static_cast<T>(acc[s - 1][j][slot(R)]);
        unsigned zero_rows = ~inside & all_rows, copy_rows = 0;
        bool copy_halo = false, zero_halo = false;
        if constexpr (checked) {
          if (!periodic && (o < 0 || o >= n0)) {
            zero_rows = all_rows, copy_rows = 0, copy_halo = false, zero_halo = h_copies;
          } else if (rim_plane(o)) {
            copy_rows = inside, copy_halo = h_on && h_in_grid;
          }
        }
        auto plane_in = [&] { return in + static_cast<long>(o) * g.in_stride[0]; };  // (o in the grid)
        if (s < Depth) {
          T* to = levels + (period * (s - 1) + b_write) * plane + here;
          if ((zero_rows | copy_rows) == 0) {
            SPARSTENCIL_UNROLL
            for (int j = 0; j < rows; ++j) to[j * pitch] = value[j];
          } else {
            SPARSTENCIL_UNROLL
            for (int j = 0; j < rows; ++j) {
              if (zero_rows >> j & 1u) value[j] = T(0);
              if (copy_rows >> j & 1u) {
                exchange_copy_async(to + j * pitch, plane_in() + in_at + j * g.in_stride[1], true);
              } else {
                to[j * pitch] = value[j];
              }
            }
          }
          if (copy_halo) exchange_copy_async(to - here + h_here, plane_in() + h_in, true);
          if (zero_halo) to[h_here - here] = T(0);            // (a halo cell on the rim, of a plane outside)
          const unsigned tag = static_cast<unsigned>(p) + 1;  // (0: not written this launch)
          Word* edges        = words + my_words + buffer + (s - 1) * level_words;  // this level's, this phase's
          auto publish       = [&](Word* word, T v) {
            if constexpr (parts == 1) {
              store_tagged(word, __float_as_uint(v), tag);
            } else {
              const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(v));
              store_tagged(word, static_cast<unsigned>(bits), tag);
              store_tagged(word + 1, static_cast<unsigned>(bits >> 32), tag);
            }
          };
          if (ty == 0) publish(edges + static_cast<long>(tx) * parts, value[0]);
          if (ty == TY / rows - 1) publish(edges + side_words + static_cast<long>(tx) * parts, value[rows - 1]);
          __syncwarp();  // (the edge column's rows, stored by one lane, read by `rows` lanes)
          // (Not a rim plane's rows, which may still be landing: its words are never read.)
          if (edge_lane && !(checked && rim_plane(o))) {
            publish(words + edge_words + buffer + (s - 1) * level_words, to[edge_at - here]);
          }
          // This level's plane of the last phase: the neighbours' words of its halo.
          if (fills && !(checked && rim_plane(finished(p - 1, s)))) {
            SPARSTENCIL_UNROLL
            for (int w = 0; w < parts; ++w)
              fetched[s - 1][w] = load_tagged(words + h_word + filled + (s - 1) * level_words + w);
          }
        } else {
          // The last level stores the chunk's points in the grid off the rim (fixed_rim: a
          // rim launch copies the rim after the kernel).
          T* to               = out + static_cast<long>(o) * g.out_stride[0] + out_at;
          const unsigned keep = inside & ~rim & ~(zero_rows | copy_rows);
          if (!checked && keep == all_rows) {
            SPARSTENCIL_UNROLL
            for (int j = 0; j < rows; ++j) to[j * g.out_stride[1]] = value[j];
          } else if (!checked || (o >= z_lo && o < z_hi)) {
            SPARSTENCIL_UNROLL
            for (int j = 0; j < rows; ++j) {
              if (keep >> j & 1u) to[j * g.out_stride[1]] = value[j];
            }
          }
        }
      }
      if (fills) {
        const unsigned tag = static_cast<unsigned>(p);  // written in phase p - 1
        SPARSTENCIL_UNROLL
        for (int s = 1; s < Depth; ++s) {
          if (checked && rim_plane(finished(p - 1, s))) continue;
          SPARSTENCIL_UNROLL
          for (int w = 0; w < parts; ++w) {
            for (unsigned pause = 64, waits = 0; static_cast<unsigned>(fetched[s - 1][w] >> 32) != tag; ++waits) {
              // A tile that waits loads the memory system less; one that waits about a second
              // stops the launch with an error rather than hang (a fault of this kernel).
              if (waits == max_waits) __trap();
              __nanosleep(pause);
              pause             = pause < 2048 ? 2 * pause : pause;
              fetched[s - 1][w] = load_tagged(words + h_word + filled + (s - 1) * level_words + w);
            }
          }
          T v;
          if constexpr (parts == 1) {
            v = __uint_as_float(static_cast<unsigned>(fetched[s - 1][0]));
          } else {
            v = __longlong_as_double(
                    static_cast<long long>((fetched[s - 1][1] << 32) | (fetched[s - 1][0] & 0xffffffffull)));
          }
          levels[(period * (s - 1) + b_fill) * plane + h_here] = v;
        }
      }
      // This phase's rim copies (and those the last one's levels issued) and the next phase's
      // input have landed; the input of the phase after may still fly.
      asm volatile("cp.async.wait_group %0;\n" ::"n"(ahead - 1) : "memory");
      __syncthreads();
    };

    // Phases [lo, hi) run unchecked, unrolled by the period: every level's plane inside the
    // grid off the rim along k = 0 (any plane, periodic) and the last level's one of the
    // chunk's outputs. The decision is the block's, so every thread meets every barrier.
    // Level Depth (oldest plane) at p: first + p - (Depth - 1) lag - R; level 1 (newest): first + p - R.
    const int oldest = first - (Depth - 1) * lag - R, newest = first - R;
    int lo = z_lo - oldest;                                                       // oldest >= z_lo
    if (!periodic && g.halo[0] - oldest > lo) lo = g.halo[0] - oldest;            // oldest off the rim
    int hi = z_hi - oldest;                                                       // oldest < z_hi
    if (!periodic && n0 - g.halo[0] - newest < hi) hi = n0 - g.halo[0] - newest;  // newest off the rim
    if (hi > count) hi = count;
    lo = (lo + period - 1) / period * period;
    if (lo > count) lo = count;
    hi               = hi / period * period < lo ? lo : hi / period * period;
    auto run_checked = [&](int p) {
      switch (p % period) {
        case 0: phase(p, std::integral_constant<int, 0>{}, std::true_type{}); break;
        case 1: phase(p, std::integral_constant<int, 1>{}, std::true_type{}); break;
        default: phase(p, std::integral_constant<int, 2>{}, std::true_type{}); break;
      }
    };
    for (int p = 0; p < lo; ++p) run_checked(p);
    for (int p = lo; p < hi; p += period) {
      phase(p, std::integral_constant<int, 0>{}, std::false_type{});
      phase(p + 1, std::integral_constant<int, 1>{}, std::false_type{});
      phase(p + 2, std::integral_constant<int, 2>{}, std::false_type{});
    }
    for (int p = hi; p < count; ++p) run_checked(p);
  }
};

}  // namespace sparstencil::impl
#endif
