#pragma once
/// The dense kernel, one body for every vendor, written against a fragment layout L
/// (SparStencil_MatrixFragments.hpp). A block of block_threads threads copies its image
/// (block plus halo: periodic reads wrap, reads outside the grid are zero) and the plan's
/// tables into shared memory; each wave then takes units of work, one L::m-row part of a
/// 16-row block of A' times one group of L::n tiles over every k chunk, and writes its
/// results under the boundary contract (fixed_rim copies the rim, interior leaves it).
/// The geometry and per-lane index functions below are the kernel's fragment mapping: the
/// host emulator (SparStencil_DenseEmulator.hpp) runs the same ones.
#include <cstdint>

#include "SparStencil_MatrixFragments.hpp"
#include "SparStencil_Plan.hpp"

namespace sparstencil::dense {

/// What the kernel reads of a plan, in plain arrays (axis 0 slowest), and the launch's
/// grids. `boundary`: 0 periodic, 1 interior, 2 fixed_rim.
template <int D>
struct DenseArgs {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[D]{}, in_stride[D]{}, out_stride[D]{}, blocks[D]{};
  int tile[D]{}, tiles_per_block[D]{}, shared_extent[D]{}, shared_lead[D]{}, shared_stride[D]{}, radius[D]{};
  int image_values = 0;  ///< the image's values with row padding (where the tables start)
  int fill_points  = 0;  ///< the image's points without padding (copied)
  int tiles = 0, m_blocks = 0, k_chunks = 0, K = 0;
  int boundary = 0;
  const std::uint32_t* a    = nullptr;  ///< A', row-major [m_blocks x 16][K] (PackedA, dense)
  const int* gather         = nullptr;
  const int* tile_offsets   = nullptr;
};

/// The arguments for a plan (verified by the caller), the grids' element strides given
/// (nullptr: contiguous, last axis fastest) and the data pointers left to the caller.
template <int D>
DenseArgs<D> dense_args(const Plan& p, const long* in_strides = nullptr, const long* out_strides = nullptr) {
  DenseArgs<D> g;
  const std::vector<int> stride = p.shared_strides();
  long contiguous               = 1;
  g.fill_points                 = 1;
  for (int a = D - 1; a >= 0; --a) {
    g.extent[a]          = p.grid[a];
    g.in_stride[a]       = in_strides ? in_strides[a] : contiguous;
    g.out_stride[a]      = out_strides ? out_strides[a] : contiguous;
    contiguous *= p.grid[a];
    g.tile[a]            = p.tile[a];
    g.tiles_per_block[a] = p.tiles_per_block[a];
    const long span      = static_cast<long>(p.tile[a]) * p.tiles_per_block[a];
    g.blocks[a]          = (p.grid[a] + span - 1) / span;
    g.shared_extent[a]   = p.shared_extent[a];
    g.shared_lead[a]     = p.shared_lead[a];
    g.shared_stride[a]   = stride[a];
    g.radius[a]          = p.radius[a];
    g.fill_points *= p.shared_extent[a];
  }
  g.image_values = g.fill_points / p.shared_extent[D - 1] * p.shared_pitch;
  g.tiles        = static_cast<int>(p.tile_offsets.size());
  g.m_blocks     = p.a.m_blocks;
  g.k_chunks     = p.a.k_chunks;
  g.K            = static_cast<int>(p.order.columns.size());
  g.boundary     = p.boundary == Boundary::periodic ? 0 : p.boundary == Boundary::interior ? 1 : 2;
  return g;
}

/// One unit of a block's work: a group of L::n tiles, a 16-row block of A', an L::m-row part.
struct Unit {
  int group, m_block, part;
};
template <class L>
SPARSTENCIL_FRAGMENT_HD constexpr int parts() {
  return 16 / L::m;
}
template <class L>
SPARSTENCIL_FRAGMENT_HD inline int unit_count(int tiles, int m_blocks) {
  return tiles / L::n * m_blocks * parts<L>();
}
template <class L>
SPARSTENCIL_FRAGMENT_HD inline Unit unit_of(int u, int m_blocks) {
  const int per_group = m_blocks * parts<L>();
  return {u / per_group, u % per_group / parts<L>(), u % parts<L>()};
}

/// Index into row-major A' of lane `lane`'s A value i in chunk kc.
template <class L>
SPARSTENCIL_FRAGMENT_HD inline long a_index(const Unit& u, int K, int kc, int lane, int i) {
  const Element e = L::a(lane, i);
  return static_cast<long>(u.m_block * 16 + u.part * L::m + e.row) * K + kc * L::k + e.col;
}
/// Lane `lane`'s B value i in chunk kc is the image value at its tile's origin (b_tile)
/// plus its K row's gather entry (b_gather; -1: a zero column). b_offset: the sum, or -1.
template <class L>
SPARSTENCIL_FRAGMENT_HD inline int b_tile(const Unit& u, const int* tile_offsets, int lane, int i) {
  return tile_offsets[u.group * L::n + L::b(lane, i).col];
}
template <class L>
SPARSTENCIL_FRAGMENT_HD inline int b_gather(const int* gather, int kc, int lane, int i) {
  return gather[kc * L::k + L::b(lane, i).row];
}
template <class L>
SPARSTENCIL_FRAGMENT_HD inline int b_offset(const Unit& u, const int* gather, const int* tile_offsets, int kc,
                                            int lane, int i) {
  const int g = b_gather<L>(gather, kc, lane, i);
  return g < 0 ? -1 : b_tile<L>(u, tile_offsets, lane, i) + g;
}
/// The block's tile and the tile point (row of A') of lane `lane`'s result i.
struct Target {
  int tile, row;
};
template <class L>
SPARSTENCIL_FRAGMENT_HD inline Target c_target(const Unit& u, int lane, int i) {
  const Element e = L::c(lane, i);
  return {u.group * L::n + e.col, u.m_block * 16 + u.part * L::m + e.row};
}

/// The grid origin of block `b` (row-major over the blocks).
template <int D>
SPARSTENCIL_FRAGMENT_HD inline void block_origin(const DenseArgs<D>& g, long b, long (&origin)[D]) {
  for (int a = D - 1; a >= 0; --a) {
    origin[a] = b % g.blocks[a] * g.tile[a] * g.tiles_per_block[a];
    b /= g.blocks[a];
  }
}

/// The grid coordinate along axis a of image position `local` (wrapped under periodic,
/// without a 64-bit division where one turn suffices), or -1 outside the grid (a zero).
template <int D>
SPARSTENCIL_FRAGMENT_HD inline long image_coordinate(const DenseArgs<D>& g, const long (&origin)[D], int a, int local) {
  long x = origin[a] + local - g.shared_lead[a];
  if (x >= 0 && x < g.extent[a]) return x;
  if (g.boundary != 0) return -1;
  x = x < 0 ? x + g.extent[a] : x - g.extent[a];
  if (x < 0 || x >= g.extent[a]) x = (x % g.extent[a] + g.extent[a]) % g.extent[a];
  return x;
}

/// Rows of the image: its points over its extent along the fastest axis.
template <int D>
SPARSTENCIL_FRAGMENT_HD inline int image_rows(const DenseArgs<D>& g) {
  return g.fill_points / g.shared_extent[D - 1];
}

/// Image row `row` (row-major over the axes but the fastest): the offset of its first
/// value in the image and the input element of its axes but the fastest; inside = false
/// where the row lies outside the grid (zeros). Its values are copied along the fastest
/// axis: image[offset + x] = in[in_index + image_coordinate(D - 1, x) * in_stride[D - 1]].
struct ImageRow {
  int offset;
  long in_index;
  bool inside;
};
template <int D>
SPARSTENCIL_FRAGMENT_HD inline ImageRow image_row(const DenseArgs<D>& g, const long (&origin)[D], int row) {
  ImageRow r{0, 0, true};
  for (int a = D - 2; a >= 0; --a) {
    const int local = row % g.shared_extent[a];
    row /= g.shared_extent[a];
    r.offset += local * g.shared_stride[a];
    const long x = image_coordinate(g, origin, a, local);
    r.inside     = r.inside && x >= 0;
    r.in_index += (x < 0 ? 0 : x) * g.in_stride[a];
  }
  return r;
}

/// Along axis a: the origin of the block's tile `tile` from the block origin, and the
/// position of tile point `row` (a row of A') in its tile. The kernel tabulates both once
/// a block.
template <int D>
SPARSTENCIL_FRAGMENT_HD inline int tile_coordinate(const DenseArgs<D>& g, int tile, int a) {
  for (int b = D - 1; b > a; --b) tile /= g.tiles_per_block[b];
  return tile % g.tiles_per_block[a] * g.tile[a];
}
template <int D>
SPARSTENCIL_FRAGMENT_HD inline int point_coordinate(const DenseArgs<D>& g, int row, int a) {
  for (int b = D - 1; b > a; --b) row /= g.tile[b];
  return row % g.tile[a];
}

/// The grid point of a result, from its tile's and tile point's coordinates (D each):
/// inside the grid, and whether the stencil's reach from it stays inside (the interior
/// the walls' contract computes).
struct OutputPoint {
  long in_index, out_index;
  bool inside, interior;
};
template <int D>
SPARSTENCIL_FRAGMENT_HD inline OutputPoint output_point(const DenseArgs<D>& g, const long (&origin)[D], const int* tile_at,
                                                        const int* point_at) {
  OutputPoint p{0, 0, true, true};
  for (int a = 0; a < D; ++a) {
    const long x = origin[a] + tile_at[a] + point_at[a];
    p.inside     = p.inside && x < g.extent[a];
    p.interior   = p.interior && x >= g.radius[a] && x < g.extent[a] - g.radius[a];
    p.in_index += x * g.in_stride[a];
    p.out_index += x * g.out_stride[a];
  }
  return p;
}

}  // namespace sparstencil::dense
