#include "SparStencil_WallBands.hpp"

#include <algorithm>
#include <variant>

#include "SparStencil_Device.hpp"
#include "SparStencil_Error.hpp"

namespace sparstencil::cuda_sptc {

namespace {

/// Block extents along a band whose normal is axis `normal`: the band's width across (up to
/// 16), 64 along the fastest axis, 32 and 8 along the others (each block with work for its
/// 256 threads at every step, and blocks enough to fill the SMs: the kernel's time is its
/// blocks' t dependent steps, and it runs after the sparse kernel has left the SMs); halved
/// (the widest axis first, the normal last) until the region (extents + 2 halo, inside the
/// grid) fits `max_points`. nullopt where even one point's region does not.
std::optional<std::array<long, 3>> block_extents(const std::array<long, 3>& box, int normal,
                                                 const std::array<long, 3>& halo, const std::array<long, 3>& n,
                                                 long max_points) {
  std::array<long, 3> t = {8, 32, 64};
  t[normal]             = 16;
  for (int a = 0; a < 3; ++a) t[a] = std::max(1L, std::min(t[a], box[a]));
  auto points = [&] {
    long v = 1;
    for (int a = 0; a < 3; ++a) v *= std::min(t[a] + 2 * halo[a], n[a]);
    return v;
  };
  while (points() > max_points) {
    int widest = -1;
    for (int a = 0; a < 3; ++a) {
      if (a != normal && t[a] > 1 && (widest < 0 || t[a] > t[widest])) widest = a;
    }
    if (widest < 0 && t[normal] > 1) widest = normal;
    if (widest < 0) return std::nullopt;
    t[widest] = (t[widest] + 1) / 2;
  }
  return t;
}

struct Geometry {
  std::array<long, 3> n{};
  std::array<int, 3> radius{};
  int steps         = 1;
  std::size_t terms = 0;
};

Geometry geometry(const std::vector<long>& grid, const AnyStencil& original, int steps) {
  Geometry g;
  g.n.fill(1);
  const int D = static_cast<int>(grid.size());
  for (int a = 0; a < D; ++a) g.n[3 - D + a] = grid[a];
  std::visit(
      [&](const auto& s) {
        for (int a = 0; a < D; ++a) g.radius[3 - D + a] = s.radius()[a];
        g.terms = s.size();
      },
      original);
  g.steps = steps;
  return g;
}

long max_region_points(std::size_t terms) {
  const long term_bytes = static_cast<long>(terms) * 8;  // offset and weight
  return std::max(0L, (static_cast<long>(wall_shared_limit) - term_bytes) / 8);
}

}  // namespace

std::optional<std::string> wall_bands_excluded(const std::vector<long>& grid, const AnyStencil& original, int steps,
                                               Boundary boundary) {
  if (boundary == Boundary::periodic) return std::nullopt;
  const Geometry g = geometry(grid, original, steps);
  long points      = 1;
  for (int a = 0; a < 3; ++a) points *= std::min(1 + 2L * g.steps * g.radius[a], g.n[a]);
  if (points <= max_region_points(g.terms)) return std::nullopt;
  return "the band along the walls, " + std::to_string(g.steps) + " steps deep, needs regions of " +
         std::to_string(points) + " points a block, above the wall kernel's " +
         std::to_string(max_region_points(g.terms)) + " (shared memory)";
}

WallBands wall_bands(const Plan& plan, bool keep_boxes) {
  WallBands w;
  if (plan.boundary == Boundary::periodic) return w;
  if (const auto why = wall_bands_excluded(plan.grid, plan.original, plan.fused_steps, plan.boundary)) {
    sparstencil::impl::fail("wall_bands", *why);
  }
  const Geometry g = geometry(plan.grid, plan.original, plan.fused_steps);
  w.steps          = g.steps;
  w.radius         = g.radius;
  // Along the fastest axis the band reaches the ends of the 16-byte runs the rim cuts.
  const long run = 16 / storage_bytes(plan.precision);
  std::array<long, 3> halo{};
  for (int a = 0; a < 3; ++a) {
    const long width = std::min<long>(static_cast<long>(g.steps) * g.radius[a], g.n[a]);
    w.low[a]         = a < 2 || width == 0 ? width : std::min(g.n[a], (width + run - 1) / run * run);
    w.high[a]        = a < 2 || width == 0 ? width : g.n[a] - std::max(0L, (g.n[a] - width) / run * run);
    halo[a]          = static_cast<long>(g.steps) * g.radius[a];
  }
  const long max_points = max_region_points(g.terms);
  for (int k = 0; k < 3; ++k) {
    for (int side = 0; side < 2; ++side) {
      // Axis k's band at this side: the range left by earlier axes' bands, whole later axes.
      WallBox band;
      bool empty = false;
      for (int j = 0; j < 3; ++j) {
        band.lo[j] = j < k ? w.low[j] : 0;
        band.hi[j] = j < k ? g.n[j] - w.high[j] : g.n[j];
      }
      band.lo[k] = side == 0 ? 0 : std::max(w.low[k], g.n[k] - w.high[k]);
      band.hi[k] = side == 0 ? w.low[k] : g.n[k];
      for (int j = 0; j < 3; ++j) empty = empty || band.hi[j] <= band.lo[j];
      if (empty) continue;
      std::array<long, 3> extent{};
      for (int j = 0; j < 3; ++j) extent[j] = band.hi[j] - band.lo[j];
      const auto t = block_extents(extent, k, halo, g.n, max_points);
      if (!t) sparstencil::impl::fail("wall_bands", "no block of the band fits the wall kernel's shared memory");
      for (long z = band.lo[0]; z < band.hi[0]; z += (*t)[0]) {
        for (long y = band.lo[1]; y < band.hi[1]; y += (*t)[1]) {
          for (long x = band.lo[2]; x < band.hi[2]; x += (*t)[2]) {
            WallBox box;
            box.lo      = {z, y, x};
            box.hi      = {std::min(z + (*t)[0], band.hi[0]), std::min(y + (*t)[1], band.hi[1]),
                           std::min(x + (*t)[2], band.hi[2])};
            long points = 1;
            for (int a = 0; a < 3; ++a) {
              points *= std::min(box.hi[a] + halo[a], g.n[a]) - std::max(box.lo[a] - halo[a], 0L);
            }
            w.region_points += points;
            w.largest_region = std::max(w.largest_region, points);
            ++w.blocks;
            if (keep_boxes) w.boxes.push_back(box);
          }
        }
      }
    }
  }
  w.shared_bytes = static_cast<std::size_t>(2 * w.largest_region) * 4 + g.terms * 8;
  return w;
}

bool in_wall_band(const WallBands& w, const std::array<long, 3>& extent, const std::array<long, 3>& x) {
  for (int a = 0; a < 3; ++a) {
    if (x[a] < w.low[a] || x[a] >= extent[a] - w.high[a]) return true;
  }
  return false;
}

}  // namespace sparstencil::cuda_sptc
