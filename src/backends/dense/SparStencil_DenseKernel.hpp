#pragma once
/// The dense kernel, one body for every vendor, written against a fragment layout L
/// (SparStencil_MatrixFragments.hpp). Dense plans are row-run plans: 16-output row tiles
/// (1 x ... x 16) and B' read from the block's shared-memory image in runs of V = 16
/// bytes of consecutive values (Plan::runs). A block of block_threads threads copies its
/// image (block plus halo: periodic reads wrap, reads outside the grid are zero) 16 bytes
/// at a time where it can (float grids read as 16-bit operands: copied beside the image,
/// then rounded into it, or rounded on the way: copies_beside); each wave then takes units of work, `batch` groups of
/// L::n tiles times all 16 rows of A' over every k chunk. A group's tiles are L::n consecutive rows of the block at one
/// column of tiles (1-D: L::n consecutive tiles), so the image pitch (pitch / V odd) puts their runs in different
/// banks. Layouts with image_as_a multiply the other way round: the image (L::m tiles) as A, A' transposed as B, a part
/// of L::n outputs of the tile at a time over only the k chunks its weights reach. Results are staged in the image's
/// place, in the grids' format, and written a row at a time under the boundary contract (fixed_rim copies the rim,
/// interior leaves it). The geometry and per-lane index functions below are the kernel's fragment mapping: the host
/// emulator (SparStencil_DenseEmulator.hpp) runs the same ones.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "SparStencil_DenseModel.hpp"
#include "SparStencil_MatrixFragments.hpp"
#include "SparStencil_Plan.hpp"

namespace sparstencil::dense {

/// What the kernel reads of a plan, in plain arrays (axis 0 slowest), and the launch's
/// grids.
template <int D>
struct DenseArgs {
  const void* in = nullptr;
  void* out      = nullptr;
  long extent[D]{}, in_stride[D]{}, out_stride[D]{}, blocks[D]{};
  int tiles_per_block[D]{}, shared_extent[D]{}, shared_lead[D]{}, shared_stride[D]{}, radius[D]{};
  int image_values = 0;                  ///< the image's values with row padding
  int region_bytes = 0;                  ///< image_region_bytes: where the run table starts
  int copy_beside  = 0;                  ///< copies_beside: float grids copied beside the image, then rounded
  int pitch        = 0;                  ///< values between image rows, and between rows of staged results
  int vector       = 0;                  ///< V: values of a run (16 bytes)
  int tiles = 0, tiles_x = 0, rows = 0;  ///< tiles of a block, along the fastest axis, rows of them
  int runs = 0, k_chunks = 0, K = 0;
  int batch = 1;  ///< groups a unit multiplies by each fragment of weights (wave_batch)
  /// Threads along an image row's 16-byte chunks in the copy: 2^chunk_shift (the row's
  /// chunks rounded up to a power of two, at most block_threads).
  int chunk_shift          = 0;
  int out_chunk_shift      = 0;  ///< a block's row of outputs: 2^out_chunk_shift 16-byte chunks of the grids' values
  Boundary boundary        = Boundary::periodic;
  const void* a            = nullptr;  ///< A' in fragment order (a_fragments; image_as_a: PartTables::b)
  const int* run_offsets   = nullptr;  ///< per run: image offset of its first value from a tile origin
  const int* tile_offsets  = nullptr;  ///< per tile: image offset of its origin
  const int* chunk_offsets = nullptr;  ///< image_as_a: PartTables::offsets
  int part_chunk[3]{};                 ///< image_as_a: PartTables::first
};

/// A' (16 rows x K, row-major) as its operand values.
inline std::vector<double> a_row_major(const Plan& p) {
  const int K = static_cast<int>(p.order.columns.size());
  std::vector<double> a(static_cast<std::size_t>(16) * K);
  for (int row = 0; row < 16; ++row)
    for (int k = 0; k < K; ++k) a[static_cast<std::size_t>(row) * K + k] = unpack_dense(p.a, p.precision, row, k);
  return a;
}

/// Each run's image offset from a tile origin (its rows and its first value along the
/// fastest axis, lead included): the table the kernel reads B' through.
inline std::vector<int> run_offsets(const Plan& p) {
  const std::vector<int> stride = p.shared_strides();
  std::vector<int> offsets;
  for (const Run& r : p.runs) {
    int o = 0;
    for (int a = 0; a < p.dims(); ++a) o += (r.offset[a] + p.shared_lead[a]) * stride[a];
    offsets.push_back(o);
  }
  return offsets;
}

/// The arguments for a plan (verified by the caller), the grids' element strides given
/// (nullptr: contiguous, last axis fastest) and the data pointers left to the caller.
template <int D>
DenseArgs<D> dense_args(const Plan& p, const long* in_strides = nullptr, const long* out_strides = nullptr) {
  DenseArgs<D> g;
  const std::vector<int> stride = p.shared_strides();
  long contiguous               = 1;
  int fill_points               = 1;
  g.tiles                       = 1;
  for (int a = D - 1; a >= 0; --a) {
    g.extent[a]     = p.grid[a];
    g.in_stride[a]  = in_strides ? in_strides[a] : contiguous;
    g.out_stride[a] = out_strides ? out_strides[a] : contiguous;
    contiguous *= p.grid[a];
    g.tiles_per_block[a] = p.tiles_per_block[a];
    const long span      = static_cast<long>(p.tile[a]) * p.tiles_per_block[a];
    g.blocks[a]          = (p.grid[a] + span - 1) / span;
    g.shared_extent[a]   = p.shared_extent[a];
    g.shared_lead[a]     = p.shared_lead[a];
    g.shared_stride[a]   = stride[a];
    g.radius[a]          = p.radius[a];
    fill_points *= p.shared_extent[a];
    g.tiles *= p.tiles_per_block[a];
  }
  g.image_values = fill_points / p.shared_extent[D - 1] * p.shared_pitch;
  g.region_bytes = static_cast<int>(image_region_bytes(p));
  g.copy_beside  = copies_beside(p);
  g.pitch        = p.shared_pitch;
  g.vector       = 16 / storage_bytes(p.precision);
  g.tiles_x      = p.tiles_per_block[D - 1];
  g.rows         = g.tiles / g.tiles_x;
  g.runs         = static_cast<int>(p.runs.size());
  g.batch        = wave_batch(g.tiles);
  while ((1 << g.chunk_shift) < p.shared_extent[D - 1] / g.vector && (2 << g.chunk_shift) <= block_threads)
    ++g.chunk_shift;
  const int out_vector = 16 / storage_bytes(grid_format(p));
  while ((1 << g.out_chunk_shift) < g.tiles_x * 16 / out_vector) ++g.out_chunk_shift;
  g.k_chunks = p.a.k_chunks;
  g.K        = static_cast<int>(p.order.columns.size());
  g.boundary = p.boundary;
  return g;
}

/// Whether the kernel multiplies the image (A: L::m tiles x k) by A' transposed (B: k x
/// L::n outputs) for layout L: sm_90's f64 m16n8k4, whose N = 8 splits a tile's 16
/// outputs in two parts, each multiplying only the k chunks its taps reach (a third fewer
/// DMMAs on radius-3 boxes). The other layouts multiply A' (all 16 outputs) by the image.
template <class L>
inline constexpr bool image_as_a = std::is_same_v<L, NvidiaF64Sm90>;
/// Tiles of a group: the instruction's dimension the image fills.
template <class L>
SPARSTENCIL_FRAGMENT_HD constexpr int group_tiles() {
  return image_as_a<L> ? L::m : L::n;
}
/// Parts of a tile's 16 outputs (rows of A'), each the instruction's other dimension.
template <class L>
SPARSTENCIL_FRAGMENT_HD constexpr int part_count() {
  return 16 / (image_as_a<L> ? L::n : L::m);
}

/// Tile `column` (0..group_tiles - 1) of group `group`: consecutive rows of tiles at one
/// column of tiles (1-D: consecutive tiles).
template <class L, int D>
SPARSTENCIL_FRAGMENT_HD inline int group_tile(const DenseArgs<D>& g, int group, int column) {
  constexpr int n = group_tiles<L>();
  if (D == 1) return group * n + column;
  return (group / g.tiles_x * n + column) * g.tiles_x + group % g.tiles_x;
}
template <class L, int D>
SPARSTENCIL_FRAGMENT_HD inline int group_count(const DenseArgs<D>& g) {
  return g.tiles / group_tiles<L>();
}

/// Index into row-major A' of lane `lane`'s A value i of part `part` (L::m rows of the
/// 16) in chunk kc.
template <class L>
SPARSTENCIL_FRAGMENT_HD inline long a_index(int part, int K, int kc, int lane, int i) {
  const Element e = L::a(lane, i);
  return static_cast<long>(part * L::m + e.row) * K + kc * L::k + e.col;
}
/// A' (row-major, 16 x K values) in the order the kernel loads it: per k chunk, per part,
/// per lane its L::a_values values together (one vector load a lane a part).
template <class L, class T>
std::vector<T> a_fragments(const std::vector<T>& row_major, int K) {
  constexpr int parts = 16 / L::m;
  std::vector<T> f;
  for (int kc = 0; kc < K / L::k; ++kc)
    for (int part = 0; part < parts; ++part)
      for (int lane = 0; lane < L::lanes; ++lane)
        for (int i = 0; i < L::a_values; ++i)
          f.push_back(row_major[static_cast<std::size_t>(a_index<L>(part, K, kc, lane, i))]);
  return f;
}
/// Where lane `lane`'s A values of part `part` in chunk kc start in a_fragments.
template <class L>
SPARSTENCIL_FRAGMENT_HD inline long a_fragment(int part, int kc, int lane) {
  return ((static_cast<long>(kc) * (16 / L::m) + part) * L::lanes + lane) * L::a_values;
}
/// Image values between the origins of a unit's consecutive groups: the next column of
/// tiles (2-D, 3-D: a unit's groups lie in one row of groups, check_kernel_limits), or
/// the next group of a 1-D line.
template <class L, int D>
SPARSTENCIL_FRAGMENT_HD constexpr int group_step() {
  return D == 1 ? 16 * group_tiles<L>() : 16;
}
/// The image offset, from the lane's tile origin, of lane `lane`'s B value i in chunk kc:
/// its K row's run and place in the run. Values i .. i + L::b_run - 1 follow it.
template <class L>
SPARSTENCIL_FRAGMENT_HD inline int b_run_offset(const int* run_offsets, int vector, int kc, int lane, int i) {
  const int k = kc * L::k + L::b(lane, i).row;
  return run_offsets[k / vector] + k % vector;
}
/// The group's column (tile) of the lane's B values: one for all of them in every layout
/// (the tests check it).
template <class L>
SPARSTENCIL_FRAGMENT_HD constexpr int b_column(int lane) {
  return L::b(lane, 0).col;
}
/// The tile (of the group) and the tile point (row of A') of lane `lane`'s result i of
/// part `part`.
struct Target {
  int tile, point;
};
template <class L>
SPARSTENCIL_FRAGMENT_HD inline Target c_target(int part, int lane, int i) {
  const Element e = L::c(lane, i);
  if constexpr (image_as_a<L>) return {e.row, part * L::n + e.col};
  else return {e.col, part * L::m + e.row};
}

/// image_as_a: per part (outputs p L::n .. of a tile), the plan's k chunks where its rows
/// of A' hold a nonzero, in k order: the chunks the part multiplies.
template <class L>
std::vector<std::vector<int>> part_chunks(const std::vector<double>& row_major, int K) {
  static_assert(image_as_a<L>, "A' by the image multiplies every chunk");
  std::vector<std::vector<int>> chunks(part_count<L>());
  for (int part = 0; part < part_count<L>(); ++part) {
    for (int kc = 0; kc < K / L::k; ++kc) {
      bool reaches = false;
      for (int n = 0; n < L::n; ++n)
        for (int k = 0; k < L::k; ++k)
          reaches = reaches || row_major[static_cast<std::size_t>(part * L::n + n) * K + kc * L::k + k] != 0.0;
      if (reaches) chunks[part].push_back(kc);
    }
  }
  return chunks;
}

/// image_as_a: what the lanes load a k chunk of a part. Part p takes chunks first[p] ..
/// first[p + 1] - 1 of the tables (its part_chunks). Per such chunk: `offsets`, the image
/// offset from a tile origin of each of its L::k values of k (the lane's A values: its
/// column's), and `b`, A' transposed in the order lanes take it (b_fragment).
struct PartTables {
  std::vector<int> first, offsets;
  std::vector<double> b;
};
template <class L>
PartTables part_tables(const Plan& p) {
  const std::vector<double> row_major = a_row_major(p);
  const std::vector<int> runs         = run_offsets(p);
  const int K = static_cast<int>(p.order.columns.size()), V = 16 / storage_bytes(p.precision);
  const std::vector<std::vector<int>> chunks = part_chunks<L>(row_major, K);
  PartTables t;
  for (int part = 0; part < part_count<L>(); ++part) {
    t.first.push_back(static_cast<int>(t.offsets.size()) / L::k);
    for (int kc : chunks[part]) {
      for (int k = kc * L::k; k < (kc + 1) * L::k; ++k) t.offsets.push_back(runs[k / V] + k % V);
      for (int lane = 0; lane < L::lanes; ++lane) {
        for (int i = 0; i < L::b_values; ++i) {
          const Element e = L::b(lane, i);
          t.b.push_back(row_major[static_cast<std::size_t>(part * L::n + e.col) * K + kc * L::k + e.row]);
        }
      }
    }
  }
  t.first.push_back(static_cast<int>(t.offsets.size()) / L::k);
  return t;
}
/// image_as_a: where lane `lane`'s B values of table chunk `chunk` start in PartTables::b.
template <class L>
SPARSTENCIL_FRAGMENT_HD inline long b_fragment(int chunk, int lane) {
  return (static_cast<long>(chunk) * L::lanes + lane) * L::b_values;
}
/// image_as_a: a lane's A values of a chunk share one k (the kernel loads its offset once).
template <class L>
SPARSTENCIL_FRAGMENT_HD constexpr bool a_values_share_k() {
  for (int lane = 0; lane < L::lanes; ++lane)
    for (int i = 1; i < L::a_values; ++i)
      if (L::a(lane, i).col != L::a(lane, 0).col) return false;
  return true;
}
/// Where the staged results of a block's tile `tile` start: its row of tiles (the axes
/// but the fastest) g.pitch values apart, as image rows (pitch / V odd: a group's rows
/// in different banks), 16 values a tile along the row.
template <int D>
SPARSTENCIL_FRAGMENT_HD inline int stage_offset(const DenseArgs<D>& g, int tile) {
  return tile / g.tiles_x * g.pitch + tile % g.tiles_x * 16;
}

/// The grid origin of block `b` (row-major over the blocks).
template <int D>
SPARSTENCIL_FRAGMENT_HD inline void block_origin(const DenseArgs<D>& g, long b, long (&origin)[D]) {
  for (int a = D - 1; a >= 0; --a) {
    origin[a] = b % g.blocks[a] * (a == D - 1 ? 16 : 1) * g.tiles_per_block[a];
    b /= g.blocks[a];
  }
}

/// The grid coordinate along axis a of image position `local` (wrapped under periodic,
/// without a 64-bit division where one turn suffices), or -1 outside the grid (a zero).
template <int D>
SPARSTENCIL_FRAGMENT_HD inline long image_coordinate(const DenseArgs<D>& g, const long (&origin)[D], int a, int local) {
  long x = origin[a] + local - g.shared_lead[a];
  if (x >= 0 && x < g.extent[a]) return x;
  if (g.boundary != Boundary::periodic) return -1;
  x = x < 0 ? x + g.extent[a] : x - g.extent[a];
  if (x < 0 || x >= g.extent[a]) x = (x % g.extent[a] + g.extent[a]) % g.extent[a];
  return x;
}

/// Rows of the image: its points over its extent along the fastest axis.
template <int D>
SPARSTENCIL_FRAGMENT_HD inline int image_rows(const DenseArgs<D>& g) {
  int rows = 1;
  for (int a = 0; a + 1 < D; ++a) rows *= g.shared_extent[a];
  return rows;
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
    const int local = a == 0 ? row : row % g.shared_extent[a];  // row < the image's rows
    if (a > 0) row /= g.shared_extent[a];
    r.offset += local * g.shared_stride[a];
    const long x = image_coordinate(g, origin, a, local);
    r.inside     = r.inside && x >= 0;
    r.in_index += (x < 0 ? 0 : x) * g.in_stride[a];
  }
  return r;
}

/// Output row `row` of a block (row-major over the tile rows, the axes but the fastest):
/// the elements of its first point in `in` and `out`, whether it lies inside the grid, and
/// whether it lies in the interior along the axes but the fastest.
struct OutputRow {
  long in_index, out_index;
  bool inside, interior;
};
template <int D>
SPARSTENCIL_FRAGMENT_HD inline OutputRow output_row(const DenseArgs<D>& g, const long (&origin)[D], int row) {
  OutputRow r{0, 0, true, true};
  for (int a = D - 2; a >= 0; --a) {
    const long x = origin[a] + (a == 0 ? row : row % g.tiles_per_block[a]);  // row < the block's rows
    if (a > 0) row /= g.tiles_per_block[a];
    r.inside   = r.inside && x < g.extent[a];
    r.interior = r.interior && x >= g.radius[a] && x < g.extent[a] - g.radius[a];
    r.in_index += x * g.in_stride[a];
    r.out_index += x * g.out_stride[a];
  }
  r.in_index += origin[D - 1] * g.in_stride[D - 1];
  r.out_index += origin[D - 1] * g.out_stride[D - 1];
  return r;
}
/// Whether output x (from the block origin) along the fastest axis is inside the grid,
/// and whether it is in the interior along that axis.
template <int D>
SPARSTENCIL_FRAGMENT_HD inline bool x_inside(const DenseArgs<D>& g, const long (&origin)[D], int x) {
  return origin[D - 1] + x < g.extent[D - 1];
}
template <int D>
SPARSTENCIL_FRAGMENT_HD inline bool x_interior(const DenseArgs<D>& g, const long (&origin)[D], int x) {
  const long at = origin[D - 1] + x;
  return at >= g.radius[D - 1] && at < g.extent[D - 1] - g.radius[D - 1];
}

}  // namespace sparstencil::dense
