#pragma once
/// What the generic executor's team kernels share (docs/GENERIC.md): the geometry of a
/// launch (Geometry: axes, interior box, strides, tiles) and a team's tile in it, the
/// accumulation of V outputs along the blocking axis (accumulate: fixed shapes unrolled,
/// run-time shapes looped), and the launch policies, team and scratch types they are
/// launched with. The kernels themselves have a file each (SparStencil_GenericKernels.hpp
/// lists them).
#include <Kokkos_Core.hpp>

#include "SparStencil_GenericShapes.hpp"

namespace sparstencil::impl {

/// Whether an execution space runs on the host's threads (Serial, OpenMP, Threads).
template <class ExecSpace>
constexpr bool runs_on_host() {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
}

/// Where a tile's outputs and inputs lie, in kernel-axis order (k = 0 blocking axis,
/// k = D - 1 fastest): `axis[k]` is the view axis; the interior starts at `lo` and spans
/// `count`; strides in elements; `halo` the stencil's radius along each axis; tiles are
/// `tile` points along each axis (tile[0] = V times the threads along k = 0).
template <int D>
struct Geometry {
  Kokkos::Array<int, D> axis, lo, count, halo, tile, tiles;
  Kokkos::Array<long, D> in_stride, out_stride;
  int threads_fast   = 1;  ///< threads along k = D - 1 (2-D, 3-D) or k = 0 (1-D)
  int threads_second = 1;
  /// Periodic boundary handled by the kernel itself (streaming): the "interior" is the
  /// whole grid (lo = 0) and reads wrap around; no rim kernel runs.
  bool wrap = false;
  Kokkos::Array<int, D> extent;  ///< grid extents per kernel axis (for wrapping)
};

/// Origin of the tile a team owns (interior coordinates), from its league rank with the
/// fastest axis varying first.
template <int D>
KOKKOS_INLINE_FUNCTION Kokkos::Array<int, D> tile_origin(const Geometry<D>& g, int rank) {
  Kokkos::Array<int, D> origin;
  for (int k = D - 1; k >= 0; --k) {
    origin[k] = (rank % g.tiles[k]) * g.tile[k];
    rank /= g.tiles[k];
  }
  return origin;
}

/// Coordinate c (at most one extent outside [0, n)) wrapped into the grid.
KOKKOS_INLINE_FUNCTION int wrapped(int c, int n) { return c < 0 ? c + n : c >= n ? c - n : c; }

/// Adds V consecutive outputs along k = 0 of a fixed shape: each input value is loaded
/// once and added to every output it feeds. The fastest axis has unit stride (scratch
/// tiles always; global memory where the executor routes it here), so neighbours along
/// it are constant offsets from one address.
template <int V, class Shape, class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void accumulate(const Shape& shape, const T* KOKKOS_RESTRICT src, long base,
                                            const Kokkos::Array<long, Shape::rank>& stride, Acc (&acc)[V],
                                            const Kokkos::Array<int, Shape::rank>&) {
  constexpr int R            = Shape::radius;
  const T* KOKKOS_RESTRICT p = src + base;
  const int s0               = static_cast<int>(stride[0]);
  const int s1               = Shape::rank == 3 ? static_cast<int>(stride[1]) : 0;
  SPARSTENCIL_UNROLL
  for (int j = 0; j < V + 2 * R; ++j) {
    SPARSTENCIL_UNROLL
    for (int u = 0; u < Shape::rest_count; ++u) {
      bool needed = false;
      SPARSTENCIL_UNROLL
      for (int v = 0; v < V; ++v) needed = needed || Shape::has(j - R - v, u);
      if (!needed) continue;
      int offset = (j - R) * s0;
      if constexpr (Shape::rank == 2) offset += Shape::rest_offset(u, 1);
      if constexpr (Shape::rank == 3) offset += Shape::rest_offset(u, 1) * s1 + Shape::rest_offset(u, 2);
      const Acc x = static_cast<Acc>(p[offset]);
      SPARSTENCIL_UNROLL
      for (int v = 0; v < V; ++v) {
        if (Shape::has(j - R - v, u)) acc[v] += shape.weights[(j - v) * Shape::rest_count + u] * x;
      }
    }
  }
}

/// The same for any stencil: terms looped at run time.
template <int V, int D, class Acc, class MemorySpace, class T>
KOKKOS_FORCEINLINE_FUNCTION void accumulate(const RuntimeShape<D, Acc, MemorySpace>& shape,
                                            const T* KOKKOS_RESTRICT src, long base,
                                            const Kokkos::Array<long, RuntimeShape<D, Acc, MemorySpace>::rank>& stride,
                                            Acc (&acc)[V],
                                            const Kokkos::Array<int, RuntimeShape<D, Acc, MemorySpace>::rank>& axis) {
  const int terms = static_cast<int>(shape.weights.extent(0));
  for (int t = 0; t < terms; ++t) {
    long offset = base;
    for (int k = 0; k < D; ++k) offset += shape.offsets(t, axis[k]) * stride[k];
    const Acc w = shape.weights(t);
    SPARSTENCIL_UNROLL
    for (int v = 0; v < V; ++v) acc[v] += w * static_cast<Acc>(src[offset + v * stride[0]]);
  }
}

/// The interior kernels are compiled for teams of up to 256 threads, two teams an SM at
/// least (GPUs): up to 128 registers a thread, so the unrolled sums of large shapes with
/// 8 outputs a thread stay in registers (Kokkos' default bound allows 64).
inline constexpr int max_team_threads = 256;
using InteriorLaunchBounds            = Kokkos::LaunchBounds<max_team_threads, 2>;

/// Kernels are passed as launch parameters (Kokkos' light-weight launch; they stay under
/// the 4 KB parameter limit of CUDA and HIP): no copy of the kernel to constant memory and
/// no event per launch, and a launch that stream capture records as it is (a CUDA graph
/// replays it; a constant-memory copy would be replayed from a reused staging buffer).
using LightWeight                      = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
inline constexpr long max_kernel_bytes = 4096;
template <class ExecSpace>
using InteriorPolicy = Kokkos::TeamPolicy<ExecSpace, InteriorLaunchBounds, LightWeight>;
template <class ExecSpace>
using RimPolicy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>, LightWeight>;

/// A team of the interior kernels, and a View over its scratch.
template <class ExecSpace>
using TeamMember = typename InteriorPolicy<ExecSpace>::member_type;
template <class T, class ExecSpace>
using TeamScratch = Kokkos::View<T*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Element strides of a contiguous scratch box of extents `e` (the last axis fastest).
template <int D>
KOKKOS_INLINE_FUNCTION Kokkos::Array<long, D> packed_strides(const Kokkos::Array<int, D>& e) {
  Kokkos::Array<long, D> stride;
  long s = 1;
  for (int k = D - 1; k >= 0; --k) {
    stride[k] = s;
    s *= e[k];
  }
  return stride;
}

}  // namespace sparstencil::impl
