// verify(plan) (SparStencil_Plan.hpp): the checks that let executors and the emulator
// index with a plan read from JSON as if the planner had made it.
#include <algorithm>
#include <climits>
#include <cstdint>

#include "SparStencil_Fuse.hpp"
#include "SparStencil_Plan.hpp"

namespace sparstencil {
namespace {

/// Executors index each axis with 32-bit integers.
constexpr long max_grid_extent = INT32_MAX;
/// Points of a block's shared-memory image: 2^20, several times what any device's shared
/// memory holds (228 KiB at most), and far enough from 2^31 that the emulator's and the
/// executors' int offsets inside the image cannot overflow.
constexpr long max_image_points = 1L << 20;
/// Products of extents saturate here (no overflow; anything this large fails its check).
constexpr long saturated = 1L << 62;

/// The product of the first `count` entries (all by default); 0 where one is below 1.
long product(const std::vector<int>& v, int count = -1) {
  long n = 1;
  int a  = 0;
  for (int x : v) {
    if (a++ == count) break;
    n = x <= 0 ? 0 : n > saturated / x ? saturated : n * x;
  }
  return n;
}

std::string shape(const std::vector<int>& v) { return impl::tuple_string(v); }

class Verifier {
 public:
  Verifier(const Plan& plan, std::string_view function, std::string_view field_prefix,
           impl::StencilCheck stencil = impl::StencilCheck::compare)
      : p(plan), m_function(function), m_prefix(field_prefix), m_stencil(stencil) {}

  void run() {
    request();
    if (has_matrix_form(p)) {
      matrix_form();
    } else {
      no_matrix_form();
    }
  }

 private:
  template <class... Parts>
  [[noreturn]] void fail(std::string_view field, const Parts&... parts) const {
    impl::fail(m_function, "field '", m_prefix, field, "': ", parts...);
  }

  /// What is computed: names, stencils, grid.
  void request() const {
    if (p.backend.empty()) fail("backend", "empty: the plan names no backend");
    const std::vector<std::string> devices = device_names();
    if (std::find(devices.begin(), devices.end(), p.device) == devices.end()) {
      std::string known;
      for (const std::string& d : devices) known += (known.empty() ? "" : ", ") + d;
      fail("device", "unknown device '", p.device, "' (known: ", known, ")");
    }
    const int D = dimension(p.original);
    if (dimension(p.stencil) != D) fail("stencil", "is ", dimension(p.stencil), "-D, the original ", D, "-D");
    if (p.dims() != D) fail("grid", p.dims(), " extents for a ", D, "-D stencil");
    long points = 1;
    for (int a = 0; a < D; ++a) {
      const long n = p.grid[a];
      if (n < 1 || n > max_grid_extent) {
        fail("grid", "extent ", n, " along axis ", a, " is outside 1..", max_grid_extent,
             " (executors index an axis with 32-bit integers)");
      }
      if (points > saturated / n) fail("grid", impl::tuple_string(p.grid), " has more than 2^62 points");
      points *= n;
    }
    impl::check_fusion_depth(p.original, p.fused_steps, m_function, m_prefix);
    if (!valid_row_alignment(p.row_alignment)) {
      fail("row_alignment", p.row_alignment, " bytes is not a power of two from 1 to 16");
    }
    if (p.float_grids && p.precision != Precision::f16 && p.precision != Precision::bf16) {
      fail("float_grids", "set for ", to_string(p.precision), " operands: float grids are read as f16 or bf16");
    }
    const std::vector<int> original_radius = radius(p.original), fused_radius = radius(p.stencil);
    const bool fused = m_stencil == impl::StencilCheck::derived ||
                       std::visit(
                           [&](const auto& original) {
                             using S = std::decay_t<decltype(original)>;
                             return is_fusion_of(std::get<S>(p.stencil), original, p.fused_steps);
                           },
                           p.original);
    if (!fused) {
      fail("stencil", "is not fuse(original, ", p.fused_steps, "): the original (radius ", shape(original_radius),
           ") fused over ", p.fused_steps, " step", p.fused_steps > 1 ? "s" : "", " does not give these ",
           term_count(p.stencil), " terms of radius ", shape(fused_radius));
    }
    for (int a = 0; a < D; ++a) {
      if (p.grid[a] < 2L * fused_radius[a] + 1) {
        fail("grid", "extent ", p.grid[a], " along axis ", a, " is too small for the radius ", fused_radius[a],
             " of 'stencil' (needs at least ", 2 * fused_radius[a] + 1, ")");
      }
    }
  }

  /// Plans that run the stencil otherwise hold none of the matrix form.
  void no_matrix_form() const {
    auto empty = [&](const char* field, bool is_empty) {
      if (!is_empty) fail(field, "set, but the plan has no tile (no matrix form)");
    };
    empty("radius", p.radius.empty());
    empty("patch", p.patch.empty());
    empty("rows", p.rows == 0);
    empty("order.columns", p.order.columns.empty());
    empty("gather", p.gather.empty());
    empty("runs", p.runs.empty());
    empty("interleave", p.interleave == 0 && p.interleave_origin == 0);
    empty("tiles_per_block", p.tiles_per_block.empty());
    empty("shared_extent", p.shared_extent.empty());
    empty("shared_lead", p.shared_lead.empty());
    empty("shared_pitch", p.shared_pitch == 0);
    empty("tile_offsets", p.tile_offsets.empty());
    empty("a", p.a.m_blocks == 0 && p.a.k_chunks == 0 && p.a.values.empty() && p.a.metadata.empty());
    empty("dense", !p.dense);
  }

  void matrix_form() const {
    const int D                                                      = p.dims();
    const std::pair<const char*, const std::vector<int>*> per_axis[] = {{"tile", &p.tile},
                                                                        {"radius", &p.radius},
                                                                        {"patch", &p.patch},
                                                                        {"tiles_per_block", &p.tiles_per_block},
                                                                        {"shared_extent", &p.shared_extent},
                                                                        {"shared_lead", &p.shared_lead}};
    for (const auto& [field, values] : per_axis) {
      if (static_cast<int>(values->size()) != D) fail(field, values->size(), " entries for a ", D, "-D grid");
    }
    operand();
    const long patch_points = shapes();
    const int K             = columns(patch_points);
    packing(K);
    const long image_points = image();
    tables(K, image_points);
    interleaving();
    if (!p.runs.empty()) runs();
    if (p.dense) dense_tables();
  }

  /// The instruction and its operands.
  void operand() const {
    if (p.dense) {
      if (p.precision == Precision::f32) {
        fail("precision", "dense matrix-form plans multiply f16, bf16, tf32 or f64 operands, not ",
             to_string(p.precision));
      }
      const int k = p.precision == Precision::f64 ? 4 : p.precision == Precision::tf32 ? 8 : 16;
      if (p.mma.m != 16 || p.mma.n != 8 || p.mma.k != k) {
        fail("mma", "m", p.mma.m, "n", p.mma.n, "k", p.mma.k, " is not the dense m16n8k", k, " unit of ",
             to_string(p.precision), " operands");
      }
      // The kernel reads B' in runs along 16-output row tiles and places every row's result.
      const bool row_tile = p.tile.back() == 16 && product(p.tile) == 16;
      if (!row_tile)
        fail("tile", shape(p.tile), " is not a row of 16 outputs (1 x ... x 16): dense plans read B' in row runs");
      if (p.runs.empty()) fail("runs", "empty, but dense plans read B' in row runs");
      return;
    }
    if (p.float_grids) fail("float_grids", "set, but the sparse executor reads grids of its operand format");
    const bool tf32 = p.precision == Precision::tf32;
    if (p.precision != Precision::f16 && p.precision != Precision::bf16 && !tf32) {
      fail("precision", "matrix-form plans multiply f16, bf16 or tf32 operands, not ", to_string(p.precision));
    }
    const int k = tf32 ? 16 : 32;
    if (p.mma.m != 16 || p.mma.n != 8 || p.mma.k != k) {
      fail("mma", "m", p.mma.m, "n", p.mma.n, "k", p.mma.k, " is not the m16n8k", k, " shape of ",
           to_string(p.precision), " operands");
    }
  }

  /// Tile, radius, patch and rows; returns the patch's points.
  long shapes() const {
    const std::vector<int> stencil_radius = radius(p.stencil);
    for (int a = 0; a < p.dims(); ++a) {
      if (p.tile[a] < 1) fail("tile", shape(p.tile), " has an extent below 1");
      if (p.radius[a] != stencil_radius[a]) {
        fail("radius", shape(p.radius), " is not the radius ", shape(stencil_radius), " of 'stencil'");
      }
      if (p.patch[a] != static_cast<long>(p.tile[a]) + 2L * p.radius[a]) {
        fail("patch", shape(p.patch), " is not tile + 2 radius along axis ", a);
      }
      if (p.tiles_per_block[a] < 1) fail("tiles_per_block", shape(p.tiles_per_block), " has an extent below 1");
    }
    if (p.rows != product(p.tile)) fail("rows", p.rows, " is not the tile's ", product(p.tile), " points");
    const long tiles = product(p.tiles_per_block);
    if (tiles % 8 != 0 || tiles >= saturated) {
      fail("tiles_per_block", shape(p.tiles_per_block), ": ", tiles,
           " tiles a block, not a multiple of 8 (the N of an MMA: 8 tiles)");
    }
    if (p.dense && tiles % 16 != 0) {
      fail("tiles_per_block", shape(p.tiles_per_block), ": ", tiles,
           " tiles a block, not a multiple of 16 (dense plans: the N of AMD's MFMA)");
    }
    const long patch_points = product(p.patch);
    if (p.nonzeros > static_cast<std::size_t>(p.rows) * static_cast<std::size_t>(std::min(patch_points, 1L << 31))) {
      fail("nonzeros", p.nonzeros, " exceeds the ", p.rows, " x ", patch_points, " entries of A'");
    }
    return patch_points;
  }

  /// The K rows of B' (A's columns in order); returns K.
  int columns(long patch_points) const {
    const ColumnOrder& order = p.order;
    const long K             = static_cast<long>(order.columns.size());
    if (K < p.mma.k || K % p.mma.k != 0) {
      fail("order.columns", K, " columns: not a positive multiple of mma.k = ", p.mma.k);
    }
    if (K > INT_MAX / 2) fail("order.columns", K, " columns: too many");
    int zero = 0;
    for (std::size_t k = 0; k < order.columns.size(); ++k) {
      const int c = order.columns[k];
      if (c == zero_column) {
        ++zero;
      } else if (c < 0 || c >= patch_points) {
        fail("order.columns", "entry ", k, " (", c, ") is neither a patch column (0..", patch_points - 1,
             ") nor zero_column (", zero_column, ")");
      }
    }
    if (order.zero_columns != zero) fail("order.zero_columns", order.zero_columns, ", but the columns hold ", zero);
    if (order.dropped_columns < 0 || order.dropped_columns > patch_points) {
      fail("order.dropped_columns", order.dropped_columns, " is outside 0..", patch_points, " (the patch's columns)");
    }
    return static_cast<int>(K);
  }

  /// A' packed per lane: [m_block][k_chunk][lane][4 registers] values and
  /// [m_block][k_chunk / 2][lane] metadata.
  void packing(int K) const {
    const PackedA& a    = p.a;
    const long m_blocks = (p.rows + 15) / 16, k_chunks = K / p.mma.k;
    if (a.m_blocks != m_blocks) fail("a.m_blocks", a.m_blocks, " is not ceil(rows / 16) = ", m_blocks);
    if (a.k_chunks != k_chunks) fail("a.k_chunks", a.k_chunks, " is not K / mma.k = ", K, " / ", p.mma.k);
    if (p.mmas_per_tile_group != m_blocks * k_chunks) {
      fail("mmas_per_tile_group", p.mmas_per_tile_group, " is not m_blocks x k_chunks = ", m_blocks * k_chunks);
    }
    if (p.dense) {
      // Row-major [m_blocks x 16][K]: two f16/bf16 values a word, a tf32 value a word, or
      // two words an f64.
      const std::size_t entries = static_cast<std::size_t>(m_blocks) * 16 * static_cast<std::size_t>(K);
      const std::size_t words   = p.precision == Precision::f64    ? 2 * entries
                                  : p.precision == Precision::tf32 ? entries
                                                                   : entries / 2;
      if (a.values.size() != words) {
        fail("a.values", a.values.size(), " words, where m_blocks x 16 rows x K = ", entries, " dense ",
             to_string(p.precision), " values take ", words);
      }
      if (!a.metadata.empty()) fail("a.metadata", a.metadata.size(), " words, but dense A' has no metadata");
      return;
    }
    const std::size_t values = static_cast<std::size_t>(m_blocks * k_chunks) * 32 * 4;
    if (a.values.size() != values) {
      fail("a.values", a.values.size(), " words, where m_blocks x k_chunks x 32 lanes x 4 registers = ", values);
    }
    const std::size_t metadata = static_cast<std::size_t>(m_blocks * ((k_chunks + 1) / 2)) * 32;
    if (a.metadata.size() != metadata) {
      fail("a.metadata", a.metadata.size(), " words, where m_blocks x ceil(k_chunks / 2) x 32 lanes = ", metadata);
    }
  }

  /// The shared-memory image of a block (Plan::shared_strides): holds the block and its
  /// halo, rows 16 bytes aligned; returns its points.
  long image() const {
    const int D = p.dims(), vector = 16 / storage_bytes(p.precision);
    for (int a = 0; a < D; ++a) {
      if (p.shared_lead[a] < p.radius[a] || p.shared_lead[a] > max_image_points) {
        fail("shared_lead", shape(p.shared_lead), ": the lead along axis ", a, " is not in ", p.radius[a], "..",
             max_image_points, " (the radius or more)");
      }
      const long needed = static_cast<long>(p.tile[a]) * p.tiles_per_block[a] + p.shared_lead[a] + p.radius[a];
      if (p.shared_extent[a] < needed) {
        fail("shared_extent", shape(p.shared_extent), " does not hold the block and its halo along axis ", a,
             " (tile x tiles_per_block + lead + radius = ", needed, ")");
      }
    }
    if (p.shared_lead[D - 1] % vector != 0) {
      fail("shared_lead", shape(p.shared_lead), ": the lead along the last axis is not a multiple of ", vector,
           " values (16 bytes), so image rows would start unaligned");
    }
    if (p.shared_pitch < p.shared_extent[D - 1] || p.shared_pitch % vector != 0) {
      fail("shared_pitch", p.shared_pitch, " is below the row's ", p.shared_extent[D - 1],
           " values or not a multiple of ", vector, " (16 bytes)");
    }
    // Rows of the fastest axis times the pitch (1-D: the row itself).
    const long rows   = product(p.shared_extent, D - 1);
    const long points = D == 1 ? p.shared_extent[0] : rows > max_image_points ? saturated : rows * p.shared_pitch;
    if (points > max_image_points) {
      fail("shared_extent", shape(p.shared_extent), " with pitch ", p.shared_pitch, ": an image of ", points,
           " points, more than ", max_image_points);
    }
    return points;
  }

  /// The gather table and tile offsets: every read inside the image.
  void tables(int K, long image_points) const {
    if (static_cast<int>(p.gather.size()) != K) fail("gather", p.gather.size(), " entries for K = ", K, " columns");
    int largest = 0;
    for (std::size_t k = 0; k < p.gather.size(); ++k) {
      const int g = p.gather[k];
      if (g < -1 || g >= image_points) {
        fail("gather", "entry ", k, " (", g, ") is neither -1 (zero) nor an offset inside the image of ", image_points,
             " points");
      }
      largest = std::max(largest, g);
    }
    const long tiles = product(p.tiles_per_block);
    if (static_cast<long>(p.tile_offsets.size()) != tiles) {
      fail("tile_offsets", p.tile_offsets.size(), " entries for ", tiles, " tiles a block (tiles_per_block ",
           shape(p.tiles_per_block), ")");
    }
    for (std::size_t j = 0; j < p.tile_offsets.size(); ++j) {
      const long o = p.tile_offsets[j];
      if (o < 0 || o + largest >= image_points) {
        fail("tile_offsets", "entry ", j, " (", o, ") plus the largest gather offset (", largest,
             ") is outside the image of ", image_points, " points");
      }
    }
  }

  /// Dense plans: the gather table and tile offsets are those of the image's layout
  /// (fill_block_tables), so every read lands on a value the kernel copied, and every
  /// tile's results on the tile's own points; every run of every tile lies in the image
  /// rows' copied values; a group of 8 or 16 tiles (the instructions' N, or M) is consecutive
  /// rows of tiles (2-D and 3-D: the rows a multiple of 16), or a 1-D line's consecutive
  /// tiles (a multiple of 16).
  void dense_tables() const {
    Plan expected = p;
    fill_block_tables(expected);
    if (expected.gather != p.gather) fail("gather", "entries differ from the image layout's (fill_block_tables)");
    if (expected.tile_offsets != p.tile_offsets) {
      fail("tile_offsets", "entries differ from the block's tiles in the image (fill_block_tables)");
    }
    const int D = p.dims(), vector = 16 / storage_bytes(p.precision);
    const long rows = product(p.tiles_per_block, D - 1);
    if (D > 1 && rows % 16 != 0) {
      fail("tiles_per_block", shape(p.tiles_per_block), ": ", rows,
           " rows of tiles a block, not a multiple of 16 (dense groups are consecutive rows)");
    }
    const int last = p.shared_lead[D - 1] + 16 * (p.tiles_per_block[D - 1] - 1);  // the last tile's origin
    for (std::size_t i = 0; i < p.runs.size(); ++i) {
      const int x = p.runs[i].offset[D - 1];
      if (p.shared_lead[D - 1] + x < 0 || last + x + vector > p.shared_extent[D - 1]) {
        fail("runs", "run ", i, " ", shape(p.runs[i].offset), " reads outside the image rows' ", p.shared_extent[D - 1],
             " copied values (lead ", p.shared_lead[D - 1], ")");
      }
    }
  }

  /// Row runs: 16-byte runs of image rows, K / V of them, within the stencil's reach of
  /// the tile (plus a chunk of padding runs or an interleaved block).
  void runs() const {
    const int D = p.dims(), vector = 16 / storage_bytes(p.precision);
    const bool row_tile =
        p.tile[D - 1] == 16 && std::all_of(p.tile.begin(), p.tile.end() - 1, [](int e) { return e == 1; });
    if (!row_tile) fail("runs", "row runs need a row tile (1 x ... x 16), the tile is ", shape(p.tile));
    const std::size_t K = p.order.columns.size();
    if (p.runs.size() * vector != K) {
      fail("runs", p.runs.size(), " runs of ", vector, " values, where K = ", K, " rows of B' need ", K / vector);
    }
    const int r = p.radius[D - 1], slack = std::max(4 * vector, 2 * p.interleave);
    for (std::size_t i = 0; i < p.runs.size(); ++i) {
      const std::vector<int>& o = p.runs[i].offset;
      if (static_cast<int>(o.size()) != D) {
        fail("runs", "run ", i, " has ", o.size(), " offsets for a ", D, "-D grid");
      }
      for (int a = 0; a + 1 < D; ++a) {
        if (o[a] < -p.radius[a] || o[a] > p.radius[a]) {
          fail("runs", "run ", i, " ", shape(o), " reads row ", o[a], " along axis ", a, ", beyond the radius ",
               p.radius[a]);
        }
      }
      const int x = o[D - 1];
      if (x % vector != 0 || x < -r - slack || x > 15 + r + slack) {
        fail("runs", "run ", i, " ", shape(o), " starts at ", x, " along the last axis: not a multiple of ", vector,
             " in ", -r - slack, "..", 15 + r + slack, " (the radius ", r, " around the tile and ", slack, " more)");
      }
    }
  }

  void interleaving() const {
    const int d = p.interleave;
    if (d != 0 && d != 4 && d != 8 && d != 16) fail("interleave", d, " is not 0, 4, 8 or 16");
    if (d == 0) {
      if (p.interleave_origin != 0) fail("interleave", "origin ", p.interleave_origin, " without interleaving");
      return;
    }
    if (p.runs.empty()) fail("interleave", d, ", but the plan has no runs (interleaved rows are a row-run form)");
    if (p.interleave_origin % 8 != 0 || p.interleave_origin < -2 * d || p.interleave_origin >= 0) {
      fail("interleave", "origin ", p.interleave_origin, " is not a multiple of 8 in ", -2 * d, "..-8");
    }
  }

  const Plan& p;
  std::string_view m_function, m_prefix;
  impl::StencilCheck m_stencil;
};

}  // namespace

void verify(const Plan& plan, std::string_view function) { Verifier(plan, function, "").run(); }

namespace impl {
void verify_plan(const Plan& plan, std::string_view function, std::string_view field_prefix, StencilCheck stencil) {
  Verifier(plan, function, field_prefix, stencil).run();
}

void check_fusion_depth(const AnyStencil& original, int fused_steps, std::string_view function,
                        std::string_view field_prefix) {
  if (fused_steps < 1) fail(function, "field '", field_prefix, "fused_steps': ", fused_steps, " is below 1");
  const std::vector<int> r = radius(original);
  const int reach          = *std::max_element(r.begin(), r.end());
  if (static_cast<long>(fused_steps) * reach > max_supported_radius) {
    fail(function, "field '", field_prefix, "fused_steps': ", fused_steps, " steps of a radius-", reach,
         " stencil reach radius ", static_cast<long>(fused_steps) * reach, ", beyond the supported radius ",
         max_supported_radius);
  }
}
}  // namespace impl

}  // namespace sparstencil
