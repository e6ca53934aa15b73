#pragma once
/// The streaming interior kernel of one step (docs/GENERIC.md), 2-D and 3-D stars and
/// boxes on GPU teams: a team walks its tile plane by plane along the blocking axis, each
/// input plane read into team scratch once, the sums of the planes it feeds in registers;
/// under a periodic boundary its reads wrap and it covers the rim too. With it the
/// asynchronous copies to team scratch it (and StreamTemporalKernel) use where the device
/// has them.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "SparStencil_KernelCommon.hpp"
#include "SparStencil_Precision.hpp"

namespace sparstencil::impl {

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
KOKKOS_FORCEINLINE_FUNCTION void copy_to_scratch_async([[maybe_unused]] T* to,
                                                       [[maybe_unused]] const T* from) {  // (used on sm_80+ only)
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
  using Acc                          = accumulator_t<T>;
  using Member                       = TeamMember<ExecSpace>;
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
  KOKKOS_INLINE_FUNCTION static int plane_elements(const Geometry<D>& g) { return rows(g) * (g.tile[D - 1] + 2 * R); }
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
    const int span                     = g.tile[D - 1] + 2 * R;  // values read per row
    const int stride                   = plane_scratch(g);
    const int threads                  = g.threads_fast * g.threads_second;
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
      c[D - 1] = e % (span + shift) - shift;
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
    int z      = z0;
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
          for (int p = 0; p < last; ++p)
            sum_plane(buffer + ((step & 1) * group + p) * stride + corner, step * group + p);
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

}  // namespace sparstencil::impl
