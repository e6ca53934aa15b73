#pragma once
/// The standard tensor-core stencil benchmark set, with physically meaningful weights
/// (docs/STENCILS.md gives each formula). Each preset is an explicit (FTCS) diffusion or
/// smoothing step whose weights sum to 1.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "SparStencil_Stencil.hpp"

namespace sparstencil::presets {

/// Heat-1D, 3 points: u + 0.25 * (u[-1] - 2u + u[+1])  -> {0.25, 0.5, 0.25}.
Stencil<1> heat_1d();
/// 1D5P, 5 points: u + 0.25 * fourth-order second difference (-1, 16, -30, 16, -1) / 12.
Stencil<1> d1_5p();
/// Heat-2D, 5 points: centre 0.5, four neighbours 0.125 (Pluto/PolyBench heat-2d).
Stencil<2> heat_2d();
/// Box-2D9P, 9 points: 3x3 binomial smoothing (1 2 1; 2 4 2; 1 2 1) / 16.
Stencil<2> box_2d9p();
/// Star-2D13P, 13 points: u + 0.1 * sixth-order Laplacian, per axis
/// (1/90, -3/20, 3/2, -49/18, 3/2, -3/20, 1/90).
Stencil<2> star_2d13p();
/// Box-2D49P, 49 points: 7x7 binomial (1 6 15 20 15 6 1)^2 / 4096, which is exactly Box-2D9P
/// fused over three steps (the convention of ConvStencil's box2d3r).
Stencil<2> box_2d49p();
/// Heat-3D, 7 points: centre 0.25, six neighbours 0.125 (Pluto/PolyBench heat-3d).
Stencil<3> heat_3d();
/// Box-3D27P, 27 points: 3x3x3 binomial (1 2 1)^3 / 64.
Stencil<3> box_3d27p();

/// The eight presets above, in the order listed.
std::vector<AnyStencil> standard_set();

/// A preset by name: heat1d, 1d5p, heat2d, box2d9p, star2d13p, box2d49p, heat3d, box3d27p
/// (case-insensitive; the display names Heat-2D, Box-2D9P, ... are accepted too).
/// Throws, listing the known names, for anything else.
AnyStencil by_name(std::string_view name);

/// The preset called `name` (same spellings as by_name), or nothing.
std::optional<AnyStencil> lookup(std::string_view name);

/// The canonical names accepted by by_name, in standard_set order.
const std::vector<std::string_view>& names();

/// The form names are compared in: lower case, '-' and '_' dropped ("Box-2D9P" = "box2d9p").
std::string canonical(std::string_view name);

}  // namespace sparstencil::presets
