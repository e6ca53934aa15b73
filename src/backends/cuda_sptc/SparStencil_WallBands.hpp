#pragma once
/// The work of the sparse executor's wall kernel (SparStencil_WallKernel.cuh) for a plan
/// with walls (interior, fixed_rim): the band t r_a wide along each wall, where a fused
/// launch differs from t single steps (docs/BOUNDARIES.md), widened along the fastest axis
/// to the ends of the 16-byte runs the rim cuts (the sparse kernel stores whole runs only
/// there), computed t single steps deep; the rim under fixed_rim, the input's values. Cut
/// into boxes of outputs, one a thread block, each computed from its region (the box and
/// t r_a around, inside the grid) held in shared memory. Plain C++: the model costs it, the
/// executor launches it, the emulator computes the same points.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "SparStencil_Plan.hpp"

namespace sparstencil::cuda_sptc {

/// Outputs [lo, hi) of one thread block, grid coordinates padded to 3-D (axis 0 slowest).
struct WallBox {
  std::array<long, 3> lo{}, hi{};
};

struct WallBands {
  std::vector<WallBox> boxes;    ///< empty: no wall kernel (periodic), or not kept
  long blocks = 0;               ///< the wall kernel's blocks (boxes' count where kept)
  std::array<long, 3> low{};     ///< the band's width at the low end of each axis (padded)
  std::array<long, 3> high{};    ///< ... and at the high end
  std::array<int, 3> radius{};   ///< one step's r_a (padded)
  int steps                = 1;  ///< t
  long region_points       = 0;  ///< all blocks' regions (the points each of the t steps visits at most)
  long largest_region      = 0;  ///< one block's, for its shared memory
  std::size_t shared_bytes = 0;  ///< of the block with the largest region: two float buffers, the terms
};

/// Most threads a wall block has (the kernel's launch bounds).
inline constexpr int wall_max_block_threads = 256;
/// Threads of a wall block whose largest region has `region_points` points: 256 where each
/// thread takes at least 8 points a step, else 128 (a warp's set-up of a step costs about
/// two points; 3-D regions: 256 measured faster, 2-D ones at depth 7: 128).
constexpr int wall_block_threads(long region_points) {
  return region_points >= 8L * wall_max_block_threads ? wall_max_block_threads : wall_max_block_threads / 2;
}

/// Largest shared memory a wall block may take (below every sm_80+ device's opt-in limit,
/// two blocks an SM).
inline constexpr std::size_t wall_shared_limit = 96 * 1024;

/// The wall kernel's boxes for `plan` (a cuda_sptc plan; its grid, precision, boundary,
/// fused steps and original stencil). Boxes cover, without overlap, every point of the
/// band: below low_a or from extent_a - high_a on, along some axis a.
/// `keep_boxes` false: the totals alone (the cost model's), without the list of blocks,
/// which under a deep fusion's wide halo holds a block a few points wide for most of the
/// band (millions on a 512^3 grid).
WallBands wall_bands(const Plan& plan, bool keep_boxes = true);

/// Why the wall bands of `steps` fused steps of `original` on `grid` under `boundary`
/// cannot run (a block's region above wall_shared_limit), or nullopt.
std::optional<std::string> wall_bands_excluded(const std::vector<long>& grid, const AnyStencil& original, int steps,
                                               Boundary boundary);

/// Whether grid point `x` (padded to 3-D) lies in the band of `w`.
bool in_wall_band(const WallBands& w, const std::array<long, 3>& extent, const std::array<long, 3>& x);

}  // namespace sparstencil::cuda_sptc
