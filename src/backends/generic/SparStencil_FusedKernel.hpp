#pragma once
/// Temporal blocking by overlapped tiles (docs/GENERIC.md, "Several steps a launch"):
/// FusedKernel computes several steps in one launch in team scratch, each tile with a halo
/// of the steps' radii, on any space, shape and boundary; with it the sizes of its two
/// scratch buffers, which the executor checks against the space's team scratch. The
/// streaming and exchanging temporal kernels have files of their own.
#include <Kokkos_Core.hpp>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GenericModel.hpp"
#include "SparStencil_KernelCommon.hpp"
#include "SparStencil_Precision.hpp"

namespace sparstencil::impl {

/// Extents of one of FusedKernel's two scratch buffers (generic::fused_buffer_extent; the
/// extra outputs of the last group of V along k = 0 are dropped).
template <int D>
KOKKOS_INLINE_FUNCTION Kokkos::Array<int, D> fused_buffer_extent(const Geometry<D>& g, int steps, int V) {
  Kokkos::Array<int, D> e;
  for (int k = 0; k < D; ++k) e[k] = generic::fused_buffer_extent(g.tile[k], g.halo[k], steps, V, k == 0);
  return e;
}
template <int D>
KOKKOS_INLINE_FUNCTION long fused_buffer_elements(const Geometry<D>& g, int steps, int V) {
  const Kokkos::Array<int, D> e = fused_buffer_extent(g, steps, V);
  long n                        = 1;
  for (int k = 0; k < D; ++k) n *= e[k];
  return generic::fused_buffer_values(n);
}

/// Temporal blocking (overlapped tiles): `steps` steps in one launch, so device memory is
/// read and written once per launch instead of once per step. A team owns a tile of
/// outputs (the whole grid is tiled: lo = 0, count = extent); it copies the tile and a halo
/// of steps x R into team scratch, then computes the steps there, each over a region R
/// smaller per side than the one before, between two scratch buffers; the last step
/// writes the tile. Values are rounded to T between steps, as unfused steps store them.
/// Periodic reads wrap. Under fixed_rim and interior the rim keeps its input values at
/// every step (iterate's contract: both buffers share the rim); the last step copies it
/// (fixed_rim) or leaves it alone (interior). Points outside the grid are never computed.
template <class T, int D, class Shape, int V, class ExecSpace>
struct FusedKernel {
  using Acc                          = accumulator_t<T>;
  using Member                       = TeamMember<ExecSpace>;
  using ScratchView                  = TeamScratch<T, ExecSpace>;
  static constexpr bool streaming    = false;
  static constexpr const char* label = "sparstencil::generic[temporal]";

  const T* in;
  T* out;
  Geometry<D> g;
  Shape shape;
  int steps;
  Boundary boundary;

  long scratch_bytes() const { return 2 * fused_buffer_elements(g, steps, V) * static_cast<long>(sizeof(T)); }

  KOKKOS_INLINE_FUNCTION long input_index(const Kokkos::Array<int, D>& c) const {
    long i = 0;
    for (int k = 0; k < D; ++k) i += static_cast<long>(c[k]) * g.in_stride[k];
    return i;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const Kokkos::Array<int, D> origin  = tile_origin(g, team.league_rank());
    const Kokkos::Array<int, D> e       = fused_buffer_extent(g, steps, V);
    const long n                        = fused_buffer_elements(g, steps, V);  // padded
    const bool periodic                 = boundary == Boundary::periodic;
    const Kokkos::Array<long, D> stride = packed_strides<D>(e);
    ScratchView scratch(team.team_scratch(0), 2 * n);
    T* buffer[2] = {scratch.data(), scratch.data() + n};
    // Grid coordinate of a scratch position.
    auto grid_coordinate = [&](int p, int k) { return origin[k] + p - steps * g.halo[k]; };

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, static_cast<int>(stride[0] * e[0])), [&](int i) {
      Kokkos::Array<int, D> c;
      bool outside = false;
      for (int k = D - 1, rest = i; k >= 0; --k) {
        c[k] = grid_coordinate(rest % e[k], k);
        rest /= e[k];
        if (periodic) c[k] = ((c[k] % g.extent[k]) + g.extent[k]) % g.extent[k];
        outside = outside || c[k] < 0 || c[k] >= g.extent[k];
      }
      buffer[0][i] = outside ? T(0) : in[input_index(c)];
    });
    team.team_barrier();

    for (int step = 1; step <= steps; ++step) {
      const bool last              = step == steps;
      const T* KOKKOS_RESTRICT src = buffer[(step - 1) & 1];
      T* dst                       = buffer[step & 1];
      // The region this step computes: R per side inside the one before.
      Kokkos::Array<int, D> lo, count;
      int rest_points = 1;
      for (int k = 0; k < D; ++k) {
        lo[k]    = step * g.halo[k];
        count[k] = g.tile[k] + 2 * (steps - step) * g.halo[k];
        if (k > 0) rest_points *= count[k];
      }
      const int groups = (count[0] + V - 1) / V;
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, groups * rest_points), [&](int item) {
        Kokkos::Array<int, D> p;
        for (int k = D - 1, rest = item; k >= 1; --k) {
          p[k] = lo[k] + rest % count[k];
          rest /= count[k];
        }
        p[0]      = lo[0] + (item / rest_points) * V;
        long base = 0;
        for (int k = 0; k < D; ++k) base += p[k] * stride[k];
        Acc acc[V] = {};
        accumulate<V>(shape, src, base, stride, acc, g.axis);
        for (int v = 0; v < V && p[0] + v < lo[0] + count[0]; ++v) {
          Kokkos::Array<int, D> c;
          bool outside = false, rim = false;
          for (int k = 0; k < D; ++k) {
            c[k] = grid_coordinate(p[k] + (k == 0 ? v : 0), k);
            if (last || !periodic) outside = outside || c[k] < 0 || c[k] >= g.extent[k];
            rim = rim || c[k] < g.halo[k] || c[k] >= g.extent[k] - g.halo[k];
          }
          if (outside) continue;  // never read by a point of the grid
          rim = rim && !periodic;
          if (!last) {
            dst[base + v * stride[0]] = rim ? in[input_index(c)] : static_cast<T>(acc[v]);
            continue;
          }
          if (rim && boundary == Boundary::interior) continue;
          long target = 0;
          for (int k = 0; k < D; ++k) target += static_cast<long>(c[k]) * g.out_stride[k];
          out[target] = rim ? in[input_index(c)] : static_cast<T>(acc[v]);
        }
      });
      team.team_barrier();
    }
  }
};

}  // namespace sparstencil::impl
