#pragma once
/// The interior kernel of one step (docs/GENERIC.md): the interior (every point at least
/// the radius from each end), one team per tile, each thread V outputs along the blocking
/// axis. Hardware-cached (loads straight from global memory through the caches) or
/// software-cached (the tile and its halo first copied into team scratch); on host spaces
/// the hardware-cached tile is walked in vectorised rows (SparStencil_HostRows.hpp). Reads
/// never leave the grid, so no index wraps. It takes raw pointers and strides, so one
/// instantiation serves every layout.
#include <Kokkos_Core.hpp>

#include "SparStencil_HostRows.hpp"
#include "SparStencil_KernelCommon.hpp"
#include "SparStencil_Precision.hpp"

namespace sparstencil::impl {

template <class T, int D, class Shape, int V, bool Scratch, class ExecSpace>
struct InteriorKernel {
  using Acc                          = accumulator_t<T>;
  using Member                       = TeamMember<ExecSpace>;
  using ScratchView                  = TeamScratch<T, ExecSpace>;
  static constexpr bool streaming    = false;
  static constexpr const char* label = Scratch ? "sparstencil::generic[scratch]" : "sparstencil::generic[cached]";

  const T* in;
  T* out;
  Geometry<D> g;
  Shape shape;

  /// Scratch extents and strides of a tile with its halo (software-cached variant).
  KOKKOS_INLINE_FUNCTION Kokkos::Array<int, D> scratch_extent() const {
    Kokkos::Array<int, D> e;
    for (int k = 0; k < D; ++k) e[k] = g.tile[k] + 2 * g.halo[k];
    return e;
  }
  KOKKOS_INLINE_FUNCTION static long scratch_elements(const Geometry<D>& g) {
    long n = 1;
    for (int k = 0; k < D; ++k) n *= g.tile[k] + 2 * g.halo[k];
    return n;
  }
  long scratch_bytes() const { return Scratch ? scratch_elements(g) * static_cast<long>(sizeof(T)) : 0; }

  /// Host spaces run a team as one thread: there the hardware-cached tile is walked in
  /// vectorised rows (SparStencil_HostRows.hpp).
  static constexpr bool host_rows = !Scratch && D >= 2 && runs_on_host<ExecSpace>();

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const Kokkos::Array<int, D> origin = tile_origin(g, team.league_rank());
    if constexpr (host_rows) {
      rows(origin);
      return;
    }
    const T* src                      = in;
    Kokkos::Array<long, D> src_stride = g.in_stride;
    if constexpr (Scratch) {
      const Kokkos::Array<int, D> e = scratch_extent();
      ScratchView tile(team.team_scratch(0), scratch_elements(g));
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, static_cast<int>(scratch_elements(g))), [&](int i) {
        long global = 0;
        bool inside = true;
        for (int k = D - 1, rest = i; k >= 0; --k) {
          const int c = rest % e[k];
          rest /= e[k];
          // Only the part of the tile that is in the interior, plus its halo, is read.
          inside = inside && c < g.count[k] - origin[k] + 2 * g.halo[k];
          global += static_cast<long>(g.lo[k] + origin[k] + c - g.halo[k]) * g.in_stride[k];
        }
        if (inside) tile(i) = in[global];
      });
      team.team_barrier();
      src        = tile.data();
      src_stride = packed_strides<D>(e);
    }
    const int threads = g.threads_fast * g.threads_second;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, threads), [&](int t) {
      // Thread t's first output, relative to the tile origin.
      Kokkos::Array<int, D> local;
      if constexpr (D == 1) {
        local[0] = t * V;
      } else {
        local[D - 1] = t % g.threads_fast;
        if constexpr (D == 2) {
          local[0] = (t / g.threads_fast) * V;
        } else {
          local[1] = t / g.threads_fast;
          local[0] = 0;
        }
      }
      for (int k = 1; k < D; ++k) {
        if (origin[k] + local[k] >= g.count[k]) return;
      }
      const int valid = g.count[0] - origin[0] - local[0];
      if (valid <= 0) return;
      long base = 0, target = 0;
      for (int k = 0; k < D; ++k) {
        const int i = origin[k] + local[k];
        base += Scratch ? static_cast<long>(local[k] + g.halo[k]) * src_stride[k]
                        : static_cast<long>(g.lo[k] + i) * g.in_stride[k];
        target += static_cast<long>(g.lo[k] + i) * g.out_stride[k];
      }
      if (valid >= V) {
        Acc acc[V] = {};
        accumulate<V>(shape, src, base, src_stride, acc, g.axis);
        SPARSTENCIL_UNROLL
        for (int v = 0; v < V; ++v) out[target + v * g.out_stride[0]] = static_cast<T>(acc[v]);
      } else {
        // The tile's last outputs along k = 0: one at a time, so no read passes the rim.
        for (int v = 0; v < valid; ++v) {
          Acc acc[1] = {};
          accumulate<1>(shape, src, base + v * src_stride[0], src_stride, acc, g.axis);
          out[target + v * g.out_stride[0]] = static_cast<T>(acc[0]);
        }
      }
    });
  }

  /// The tile from `origin` on one host thread: host_sum_rows rows along k = 0 at a time
  /// (3-D: each row along k = 1 in turn), the tile's last rows along k = 0 one at a time,
  /// each row W columns at a time (SparStencil_HostRows.hpp) and the rest of it one column
  /// at a time, so no read passes the rim.
  KOKKOS_INLINE_FUNCTION void rows(const Kokkos::Array<int, D>& origin) const {
    constexpr int VR  = V > host_sum_rows ? host_sum_rows : V;
    auto at_most      = [](int a, int b) { return a < b ? a : b; };
    const int rows0   = at_most(g.tile[0], g.count[0] - origin[0]);
    const int rows1   = D == 3 ? at_most(g.tile[1], g.count[1] - origin[1]) : 1;
    const int columns = at_most(g.tile[D - 1], g.count[D - 1] - origin[D - 1]);
    for (int r0 = 0; r0 < rows0; r0 += VR) {
      const int valid = at_most(VR, rows0 - r0);
      for (int r1 = 0; r1 < rows1; ++r1) {
        long base = 0, target = 0;
        for (int k = 0; k < D; ++k) {
          const int i = g.lo[k] + origin[k] + (k == 0 ? r0 : (D == 3 && k == 1) ? r1 : 0);
          base += static_cast<long>(i) * g.in_stride[k];
          target += static_cast<long>(i) * g.out_stride[k];
        }
        if (valid == VR) {
          row_block<VR>(base, target, columns);
        } else {
          for (int v = 0; v < valid; ++v)
            row_block<1>(base + v * g.in_stride[0], target + v * g.out_stride[0], columns);
        }
      }
    }
  }

  /// VB rows from `base` (in) and `target` (out), `columns` long.
  template <int VB>
  KOKKOS_INLINE_FUNCTION void row_block(long base, long target, int columns) const {
    constexpr int W = host_columns<Acc>;
    const long of   = g.out_stride[D - 1];
    int c           = 0;
    for (; c + W <= columns; c += W) {
      host_sums_t<Acc> acc[VB] = {};
      accumulate_columns<VB, Acc>(shape, in, base + c, g.in_stride, acc, g.axis);
      SPARSTENCIL_UNROLL
      for (int v = 0; v < VB; ++v) store_sums<Acc>(out + target + v * g.out_stride[0] + c * of, of, acc[v]);
    }
    for (; c < columns; ++c) {
      for (int v = 0; v < VB; ++v) {
        Acc acc[1] = {};
        accumulate<1>(shape, in, base + c + v * g.in_stride[0], g.in_stride, acc, g.axis);
        out[target + c * of + v * g.out_stride[0]] = static_cast<T>(acc[0]);
      }
    }
  }
};

}  // namespace sparstencil::impl
