#pragma once
/// The generic executor's kernels (docs/GENERIC.md):
///  - InteriorKernel: the interior (every point at least the radius from each end), one
///    team per tile, each thread V outputs along the blocking axis. Hardware-cached (loads
///    straight from global memory through the caches) or software-cached (the tile and its
///    halo first copied into team scratch). Reads never leave the grid, so no index wraps.
///  - RimKernel: the rim under the boundary mode (periodic wrap, fixed copy), point by point.
/// Both take raw pointers and strides, so one instantiation serves every layout.
#include <Kokkos_Core.hpp>

#include <cstdint>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GenericModel.hpp"
#include "SparStencil_GenericShapes.hpp"
#include "SparStencil_HostRows.hpp"
#include "SparStencil_Precision.hpp"

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
  int threads_fast = 1;  ///< threads along k = D - 1 (2-D, 3-D) or k = 0 (1-D)
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

/// Whether this device code copies global memory to team scratch asynchronously: CUDA
/// sm_80 and later (`cp.async`), values of 4 or 8 bytes. No register holds a value on its
/// way and no store to scratch is issued, which the streaming kernel's large shapes need
/// (their sums use the registers).
template <class T>
KOKKOS_INLINE_FUNCTION constexpr bool copies_async() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return sizeof(T) == 4 || sizeof(T) == 8;
#else
  return false;
#endif
}
/// Starts copying *from to *to (team scratch); only where copies_async<T>().
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_to_scratch_async(T* to, const T* from) {
  static_assert(copies_async<T>(), "copy_to_scratch_async: no asynchronous copies here (copies_async)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(shared), "l"(from), "n"(sizeof(T)));
#endif
}
/// Waits for this thread's copies to scratch (a team barrier must follow before others read them).
KOKKOS_FORCEINLINE_FUNCTION void wait_scratch_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/// Adds V consecutive outputs along k = 0 of a fixed shape: each input value is loaded
/// once and added to every output it feeds. The fastest axis has unit stride (scratch
/// tiles always; global memory where the executor routes it here), so neighbours along
/// it are constant offsets from one address.
template <int V, class Shape, class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void accumulate(const Shape& shape, const T* KOKKOS_RESTRICT src, long base,
                                            const Kokkos::Array<long, Shape::rank>& stride, Acc (&acc)[V],
                                            const Kokkos::Array<int, Shape::rank>&) {
  constexpr int R = Shape::radius;
  const T* KOKKOS_RESTRICT p = src + base;
  const int s0 = static_cast<int>(stride[0]);
  const int s1 = Shape::rank == 3 ? static_cast<int>(stride[1]) : 0;
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
using LightWeight                  = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
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
  long n = 1;
  for (int k = 0; k < D; ++k) n *= e[k];
  return generic::fused_buffer_values(n);
}

template <class T, int D, class Shape, int V, bool Scratch, class ExecSpace>
struct InteriorKernel {
  using Acc    = accumulator_t<T>;
  using Member      = TeamMember<ExecSpace>;
  using ScratchView = TeamScratch<T, ExecSpace>;
  static constexpr bool streaming = false;
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
    const T* src = in;
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

  /// The tile from `origin` on one host thread: up to 4 rows along k = 0 at a time (3-D:
  /// each row along k = 1 in turn), W columns at a time (SparStencil_HostRows.hpp), the
  /// rest of a row one column at a time and the tile's last rows along k = 0 one at a
  /// time, so no read passes the rim.
  KOKKOS_INLINE_FUNCTION void rows(const Kokkos::Array<int, D>& origin) const {
    // At most 4 rows of sums at a time (V = 8 runs as two groups of 4): a block of V x W
    // sums stays in registers, and the fully unrolled blocks are compiled three times,
    // not four.
    constexpr int VR  = V > 4 ? 4 : V;
    constexpr int W   = host_columns<Acc>;
    auto at_most      = [](int a, int b) { return a < b ? a : b; };
    const int rows0   = at_most(g.tile[0], g.count[0] - origin[0]);
    const int rows1   = D == 3 ? at_most(g.tile[1], g.count[1] - origin[1]) : 1;
    const int columns = at_most(g.tile[D - 1], g.count[D - 1] - origin[D - 1]);
    const long of     = g.out_stride[D - 1];
    for (int r0 = 0; r0 < rows0; r0 += VR) {
      for (int r1 = 0; r1 < rows1; ++r1) {
        long base = 0, target = 0;
        for (int k = 0; k < D; ++k) {
          const int i = g.lo[k] + origin[k] + (k == 0 ? r0 : (D == 3 && k == 1) ? r1 : 0);
          base += static_cast<long>(i) * g.in_stride[k];
          target += static_cast<long>(i) * g.out_stride[k];
        }
        const int valid = at_most(VR, rows0 - r0);
        int c           = 0;
        if (valid == VR) {
          for (; c + W <= columns; c += W) {
            host_sums_t<Acc> acc[VR] = {};
            accumulate_columns<VR, Acc>(shape, in, base + c, g.in_stride, acc, g.axis);
            SPARSTENCIL_UNROLL
            for (int v = 0; v < VR; ++v) store_sums<Acc>(out + target + v * g.out_stride[0] + c * of, of, acc[v]);
          }
        }
        for (; c < columns; ++c) {
          for (int v = 0; v < valid; ++v) {
            Acc acc[1] = {};
            accumulate<1>(shape, in, base + c + v * g.in_stride[0], g.in_stride, acc, g.axis);
            out[target + c * of + v * g.out_stride[0]] = static_cast<T>(acc[0]);
          }
        }
      }
    }
  }
};

/// Streaming variant (2-D and 3-D, fixed shapes): a team owns a tile across the axes
/// k >= 1 and walks a chunk of `tile[0]` outputs along k = 0, `group` planes at a time.
/// Each input plane (tile plus halo) is read from global memory once per team into team
/// scratch (two groups of planes: the next group's loads are in flight while this one is
/// summed). Each thread owns W adjacent columns along the fastest axis: per plane and row
/// it reads the W + 2R values they need from scratch once, as aligned W-value chunks (one
/// vector load each), and adds them to the W x (2R+1) outputs along k = 0 they feed, held
/// in registers. Wider W means fewer scratch reads and loop instructions per FMA, which
/// is what bounds large shapes (49 FMAs an output for Box-2D49P).
template <class T, int D, class Shape, int W, class ExecSpace>
struct StreamKernel {
  static_assert(D >= 2, "streaming needs an axis to stream along and a plane across it");
  static_assert(W == 1 || W == 2 || W == 4, "columns per thread: 1, 2 or 4");
  using Acc    = accumulator_t<T>;
  using Member = TeamMember<ExecSpace>;
  static constexpr int R             = Shape::radius;
  static constexpr int width         = 2 * R + 1;
  static constexpr bool streaming    = true;
  static constexpr const char* label = "sparstencil::generic[streaming]";
  /// Planes loaded per step (one barrier each): a multiple of 2R + 1, so the ring of sums
  /// comes back to where it started after each step and shifts by renaming registers; 6
  /// for radius 1 (a barrier per 6 planes), one ring for wider shapes (their two groups of
  /// planes in 48 KiB).
  static constexpr int group = width >= 5 ? width : width * ((6 + width - 1) / width);
  /// Plane values a thread loads at most: in 3-D a tile's rows gain 2R halo rows.
  static constexpr int loads_per_thread = W + (D == 3 ? R : 1);
  /// Shapes of many terms (the compute-bound boxes) keep their sums in a ring that shifts
  /// by a register move a plane, with the plane loop not unrolled: unrolled by renaming,
  /// a step's code outgrew the instruction cache (Nsight Compute: a third of the stalls
  /// were instruction fetches, 15 x 15 box). The moves cost 2R W a plane against the
  /// plane's (2R + 1)^(D-1) (2R + 1) W FMAs.
  static constexpr bool shifted_ring = Shape::dense > 64;
  /// Scratch columns left of the tile: the halo rounded up to a chunk, so every thread's
  /// first chunk starts at a multiple of W.
  static constexpr int pad    = (R + W - 1) / W * W;
  static constexpr int chunks = (pad + W + R - 1) / W + 1;  ///< chunks covering a thread's W + 2R values
  struct alignas(W * sizeof(T)) Chunk {
    T v[W];
  };

  const T* in;
  T* out;
  Geometry<D> g;
  Shape shape;

  KOKKOS_INLINE_FUNCTION static int pitch(const Geometry<D>& g) { return g.tile[D - 1] + 2 * pad; }
  KOKKOS_INLINE_FUNCTION static int rows(const Geometry<D>& g) { return D == 3 ? g.tile[1] + 2 * R : 1; }
  /// Values of a plane that are read (tile plus halo), and the scratch a plane takes.
  KOKKOS_INLINE_FUNCTION static int plane_elements(const Geometry<D>& g) {
    return rows(g) * (g.tile[D - 1] + 2 * R);
  }
  KOKKOS_INLINE_FUNCTION static int plane_scratch(const Geometry<D>& g) { return rows(g) * pitch(g); }
  long scratch_bytes() const {
    return 2L * group * plane_scratch(g) * static_cast<long>(sizeof(T)) + static_cast<long>(sizeof(Chunk));
  }

  KOKKOS_INLINE_FUNCTION static constexpr bool needed(int m, int f) {
    for (int dz = -R; dz <= R; ++dz) {
      if (Shape::has(dz, Shape::rest_index(m, f))) return true;
    }
    return false;
  }
  /// Whether chunk c of row offset m holds a value some output of the thread needs.
  KOKKOS_INLINE_FUNCTION static constexpr bool chunk_needed(int m, int c) {
    for (int f = -R; f <= R; ++f) {
      for (int w = 0; w < W; ++w) {
        if (needed(m, f) && (pad + w + f) / W == c) return true;
      }
    }
    return false;
  }
  /// Ring slot of the output that input plane p of a group feeds with offset dz along k = 0.
  KOKKOS_INLINE_FUNCTION static constexpr int slot(int p, int dz) { return ((p - R - dz) % width + width) % width; }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const Kokkos::Array<int, D> origin = tile_origin(g, team.league_rank());
    const int span    = g.tile[D - 1] + 2 * R;  // values read per row
    const int stride  = plane_scratch(g);
    const int threads = g.threads_fast * g.threads_second;
    T* buffer = static_cast<T*>(team.team_scratch(0).get_shmem_aligned(2L * group * stride * sizeof(T), sizeof(Chunk)));
    const int outputs = g.count[0] - origin[0] < g.tile[0] ? g.count[0] - origin[0] : g.tile[0];
    const int planes  = outputs + 2 * R;
    const int steps   = (planes + group - 1) / group;

    // GPU teams only (one thread per team rank): each thread keeps its own ring of sums
    // across the planes, which a host team of one thread could not.
    const int t = team.team_rank();
    // This thread's share of a plane: load slots t, t + threads, ...; their addresses in
    // plane 0 of the input and of scratch, and whether each lies in the read region. The
    // slots of a row start `shift` values before it, at a 128-byte line where the spare
    // slots allow, so each warp's loads touch one line instead of two.
    int z0 = g.lo[0] + origin[0] - R;  // the first plane to load, wrapped into the grid
    if (g.wrap) z0 = wrapped(z0, g.extent[0]);
    const int line  = 128 / static_cast<int>(sizeof(T));
    long first_read = static_cast<long>(z0) * g.in_stride[0];  // the first value of plane 0 that is read
    for (int k = 1; k < D; ++k) {
      const int x = g.lo[k] + origin[k] - R;
      first_read += static_cast<long>(g.wrap ? wrapped(x, g.extent[k]) : x) * g.in_stride[k];
    }
    int shift = static_cast<int>((reinterpret_cast<std::uintptr_t>(in + first_read) / sizeof(T)) % line);
    if (g.in_stride[D - 1] != 1 || rows(g) * (span + shift) > loads_per_thread * threads) shift = 0;
    // Where slot i's value of the next plane to load is: each advances a plane's stride
    // per plane and wraps back past the grid's end, so a load's address costs one add
    // (an index multiplied out per load cost ~10 instructions and registers the sums need).
    const T* from[loads_per_thread];
    int place[loads_per_thread];
    bool inside[loads_per_thread];
    SPARSTENCIL_UNROLL
    for (int i = 0; i < loads_per_thread; ++i) {
      const int e = t + i * threads;
      Kokkos::Array<int, D> c;
      c[D - 1]  = e % (span + shift) - shift;
      if constexpr (D == 3) c[1] = e / (span + shift);
      place[i]  = (D == 3 ? c[1] * pitch(g) : 0) + pad - R + c[D - 1];
      inside[i] = c[D - 1] >= 0 && e < rows(g) * (span + shift);
      long a    = static_cast<long>(z0) * g.in_stride[0];
      for (int k = 1; k < D; ++k) {
        inside[i]   = inside[i] && c[k] < g.count[k] - origin[k] + 2 * R;
        const int x = g.lo[k] + origin[k] + c[k] - R;
        a += static_cast<long>(g.wrap ? wrapped(x, g.extent[k]) : x) * g.in_stride[k];
      }
      from[i] = in + a;
    }
    // A step's planes: copied straight to scratch where the device copies asynchronously,
    // else loaded into registers by fetch and stored to scratch by stage. (One register
    // array for all steps: a fresh one per step measured 10% slower, more of it spilled.)
    // Steps are fetched in order, each plane once.
    constexpr bool async = copies_async<T>();
    T staged[async ? 1 : group][loads_per_thread];
    int z = z0;
    auto fetch = [&](int step, auto checked) {
      constexpr bool Checked = decltype(checked)::value;
      SPARSTENCIL_UNROLL
      for (int p = 0; p < group; ++p) {
        if (!Checked || step * group + p < planes) {
          SPARSTENCIL_UNROLL
          for (int i = 0; i < loads_per_thread; ++i) {
            if (!inside[i]) continue;
            if constexpr (async) copy_to_scratch_async(buffer + ((step & 1) * group + p) * stride + place[i], from[i]);
            else staged[p][i] = *from[i];
          }
        }
        SPARSTENCIL_UNROLL
        for (int i = 0; i < loads_per_thread; ++i) from[i] += g.in_stride[0];
        if (g.wrap && ++z == g.extent[0]) {
          z = 0;
          SPARSTENCIL_UNROLL
          for (int i = 0; i < loads_per_thread; ++i) from[i] -= g.extent[0] * g.in_stride[0];
        }
      }
    };
    auto stage = [&](int step) {
      if constexpr (async) {
        wait_scratch_copies();
      } else {
        SPARSTENCIL_UNROLL
        for (int p = 0; p < group; ++p) {
          SPARSTENCIL_UNROLL
          for (int i = 0; i < loads_per_thread; ++i) {
            if (inside[i]) buffer[((step & 1) * group + p) * stride + place[i]] = staged[p][i];
          }
        }
      }
    };
    // This thread's row (3-D) and first column, and how many of its W columns are outputs.
    const int l1      = D == 3 ? t / g.threads_fast : 0;
    const int l2      = (D == 3 ? t % g.threads_fast : t) * W;
    const int first   = origin[D - 1] + l2;
    const int columns = g.count[D - 1] - first < W ? g.count[D - 1] - first : W;
    const bool active = columns > 0 && (D == 2 || (l1 < g.tile[1] && origin[1] + l1 < g.count[1]));
    const int corner  = (D == 3 ? l1 * pitch(g) : 0) + l2;  // the thread's first chunk in a plane
    long target       = static_cast<long>(g.lo[0] + origin[0]) * g.out_stride[0] +
                  static_cast<long>(g.lo[D - 1] + first) * g.out_stride[D - 1];
    if constexpr (D == 3) target += static_cast<long>(g.lo[1] + origin[1] + l1) * g.out_stride[1];
    T* to = out + target;  // the next output to store (the first plane's, then one plane on)

    Acc acc[width][W] = {};
    // Whole chunks of outputs go out as one vector store each where the output is
    // contiguous and aligned (periodic grids of aligned rows).
    const bool vector_store = W > 1 && columns == W && g.out_stride[D - 1] == 1 &&
                              reinterpret_cast<std::uintptr_t>(to) % sizeof(Chunk) == 0 &&
                              g.out_stride[0] * static_cast<long>(sizeof(T)) % static_cast<long>(sizeof(Chunk)) == 0;
    // Adds the plane at `base` to the sums: the output it feeds with offset dz along k = 0
    // is acc[ring(dz)] (ring's value a constant once the loops are unrolled).
    auto add_plane = [&](const T* KOKKOS_RESTRICT base, auto ring) {
      SPARSTENCIL_UNROLL
      for (int m = (D == 3 ? -R : 0); m <= (D == 3 ? R : 0); ++m) {
        T x[chunks * W];
        const T* row = base + (m + R) * (D == 3 ? pitch(g) : 0);
        SPARSTENCIL_UNROLL
        for (int c = 0; c < chunks; ++c) {
          if constexpr (W == 1) {  // (a one-value Chunk copy went through local memory)
            if (chunk_needed(m, c)) x[c] = row[c];
          } else if (chunk_needed(m, c)) {
            const Chunk v = reinterpret_cast<const Chunk*>(row)[c];
            SPARSTENCIL_UNROLL
            for (int w = 0; w < W; ++w) x[c * W + w] = v.v[w];
          }
        }
        SPARSTENCIL_UNROLL
        for (int f = -R; f <= R; ++f) {
          const int u = Shape::rest_index(m, f);
          SPARSTENCIL_UNROLL
          for (int dz = -R; dz <= R; ++dz) {
            if (!Shape::has(dz, u)) continue;
            const Acc weight = shape.weights[(dz + R) * Shape::rest_count + u];
            SPARSTENCIL_UNROLL
            for (int w = 0; w < W; ++w) acc[ring(dz)][w] += weight * static_cast<Acc>(x[pad + w + f]);
          }
        }
      }
    };
    // Stores the complete sums acc[s] as the next output plane.
    auto store = [&](int s) {
      if (vector_store) {
        Chunk v;
        SPARSTENCIL_UNROLL
        for (int w = 0; w < W; ++w) v.v[w] = static_cast<T>(acc[s][w]);
        *reinterpret_cast<Chunk*>(to) = v;
      } else {
        SPARSTENCIL_UNROLL
        for (int w = 0; w < W; ++w) {
          if (w < columns) to[w * g.out_stride[D - 1]] = static_cast<T>(acc[s][w]);
        }
      }
      to += g.out_stride[0];  // outputs are stored plane after plane
    };
    // The planes of one step, unrolled: the ring turns by renaming registers. Checked:
    // planes past the last, and outputs before the first (the first 2R planes complete
    // none), are skipped (first and last steps only).
    auto sum_group = [&](int step, auto checked) {
      constexpr bool Checked = decltype(checked)::value;
      SPARSTENCIL_UNROLL
      for (int p = 0; p < group; ++p) {
        const int q = step * group + p;
        if (!Checked || q < planes) {
          add_plane(buffer + ((step & 1) * group + p) * stride + corner, [&](int dz) { return slot(p, dz); });
          // The output 2R planes back is complete: store it; its slot starts the next one.
          const int s = (p + 1) % width;
          if (!Checked || q >= 2 * R) store(s);
          SPARSTENCIL_UNROLL
          for (int w = 0; w < W; ++w) acc[s][w] = Acc(0);
        }
      }
    };
    // Plane q of the shifted ring: acc[k] sums output q - 2R + k (offset R - k along k = 0);
    // after the plane acc[0] is complete and the ring moves down one.
    auto sum_plane = [&](const T* KOKKOS_RESTRICT base, int q) {
      add_plane(base, [](int dz) { return R - dz; });
      if (q >= 2 * R) store(0);
      SPARSTENCIL_UNROLL
      for (int k = 0; k + 1 < width; ++k) {
        SPARSTENCIL_UNROLL
        for (int w = 0; w < W; ++w) acc[k][w] = acc[k + 1][w];
      }
      SPARSTENCIL_UNROLL
      for (int w = 0; w < W; ++w) acc[width - 1][w] = Acc(0);
    };

    fetch(0, std::true_type{});
    stage(0);
    team.team_barrier();
    for (int step = 0; step < steps; ++step) {
      // The next step's loads are in flight while this one is summed.
      if (step + 2 < steps) fetch(step + 1, std::false_type{});
      else if (step + 1 < steps) fetch(step + 1, std::true_type{});
      if (active) {
        if constexpr (shifted_ring) {
          const int last = planes - step * group < group ? planes - step * group : group;
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll 1
#endif
          for (int p = 0; p < last; ++p) sum_plane(buffer + ((step & 1) * group + p) * stride + corner, step * group + p);
        } else if (step == 0 || (step + 1) * group > planes) {
          sum_group(step, std::true_type{});
        } else {
          sum_group(step, std::false_type{});
        }
      }
      if (step + 1 < steps) stage(step + 1);
      team.team_barrier();
    }
  }
};

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
  using Acc    = accumulator_t<T>;
  using Member      = TeamMember<ExecSpace>;
  using ScratchView = TeamScratch<T, ExecSpace>;
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
    const Kokkos::Array<int, D> origin = tile_origin(g, team.league_rank());
    const Kokkos::Array<int, D> e      = fused_buffer_extent(g, steps, V);
    const long n                       = fused_buffer_elements(g, steps, V);  // padded
    const bool periodic                = boundary == Boundary::periodic;
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
      const bool last           = step == steps;
      const T* KOKKOS_RESTRICT src = buffer[(step - 1) & 1];
      T* dst                    = buffer[step & 1];
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
        p[0] = lo[0] + (item / rest_points) * V;
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

/// Element of a rank-D View at a multi-index.
template <int D, class View>
KOKKOS_INLINE_FUNCTION auto& element(const View& v, const Kokkos::Array<int, D>& i) {
  if constexpr (D == 1) {
    return v(i[0]);
  } else if constexpr (D == 2) {
    return v(i[0], i[1]);
  } else {
    return v(i[0], i[1], i[2]);
  }
}

/// The rim as disjoint boxes ("slabs"): along each axis its two ends, the axes before it
/// restricted to their interior so no point is visited twice. Boxes are listed with the
/// view axes in kernel order (fastest last), so consecutive indices walk memory.
template <int D>
struct RimSlabs {
  int count = 0;
  Kokkos::Array<long, 2 * D + 1> begin;  ///< first flat index of each slab; begin[count] = total
  Kokkos::Array<Kokkos::Array<int, D>, 2 * D> lower, extent;  ///< per slab, per kernel axis
  Kokkos::Array<int, D> axis;                                  ///< view axis of kernel axis k
};

/// Rim points under the boundary mode: periodic sums wrap their reads, fixed_rim copies
/// `in`; interior mode leaves the rim alone and never launches this kernel.
template <int D, class InView, class OutView, class MemorySpace>
struct RimKernel {
  using value_type = typename OutView::non_const_value_type;
  using acc_type   = accumulator_t<value_type>;

  InView m_in;
  OutView m_out;
  RuntimeShape<D, acc_type, MemorySpace> m_shape;
  Kokkos::Array<int, D> m_extent;
  Boundary m_boundary;
  RimSlabs<D> m_slabs;

  KOKKOS_INLINE_FUNCTION void operator()(long flat) const {
    int s = 0;
    while (flat >= m_slabs.begin[s + 1]) ++s;
    long rest = flat - m_slabs.begin[s];
    Kokkos::Array<int, D> i;
    for (int k = D - 1; k >= 0; --k) {
      const int e               = m_slabs.extent[s][k];
      i[m_slabs.axis[k]]        = m_slabs.lower[s][k] + static_cast<int>(rest % e);
      rest /= e;
    }
    point(i);
  }

  KOKKOS_INLINE_FUNCTION void point(const Kokkos::Array<int, D>& i) const {
    if (m_boundary == Boundary::fixed_rim) {
      element<D>(m_out, i) = element<D>(m_in, i);
      return;
    }
    acc_type sum     = 0;
    const int nterms = static_cast<int>(m_shape.weights.extent(0));
    for (int t = 0; t < nterms; ++t) {
      Kokkos::Array<int, D> j;
      for (int a = 0; a < D; ++a) {
        // |offset| <= radius < extent / 2, so one wrap is enough.
        int k = i[a] + m_shape.offsets(t, a);
        k += (k < 0) ? m_extent[a] : 0;
        k -= (k >= m_extent[a]) ? m_extent[a] : 0;
        j[a] = k;
      }
      sum += m_shape.weights(t) * static_cast<acc_type>(element<D>(m_in, j));
    }
    element<D>(m_out, i) = static_cast<value_type>(sum);
  }
};

}  // namespace sparstencil::impl
