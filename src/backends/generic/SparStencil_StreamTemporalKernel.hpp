#pragma once
/// Deep temporal blocking on GPU teams (docs/GENERIC.md, "Several steps a launch"): a team
/// owns a tile across the axes k >= 1 with a halo of `Depth` radii and walks its chunk of
/// planes along k = 0 once, all `Depth` levels in flight. Level 0 is the input, streamed
/// into a ring of team-scratch planes by asynchronous copies a few planes ahead; level s
/// adds each plane of level s - 1 to the 2R + 1 planes of sums it feeds (registers), and
/// the plane it completes goes to a two-plane buffer of its own, which level s + 1 reads
/// one phase later. So every level advances one plane per phase, one barrier a phase, and
/// device memory is read and written once for all the steps. Each thread owns the same W
/// columns (and, in 3-D, Y rows) at every level, so its loads of the input are the values
/// it sums first, and its own columns of a level's plane stay in its registers for the
/// level after.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GenericKernels.hpp"

namespace sparstencil::impl {

/// Starts copying *from to *to (team scratch), or zeroes *to reading nothing where
/// `inside` is false (cp.async with a source size of 0 fills with zeros); only where
/// copies_async<T>().
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void copy_or_zero_async([[maybe_unused]] T* to, [[maybe_unused]] const T* from,
                                                    [[maybe_unused]] bool inside) {  // (used on sm_80+ only)
  static_assert(copies_async<T>(), "copy_or_zero_async: no asynchronous copies here (copies_async)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto shared = static_cast<unsigned>(__cvta_generic_to_shared(to));
  const int bytes   = inside ? static_cast<int>(sizeof(T)) : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(shared), "l"(from), "n"(sizeof(T)), "r"(bytes));
#endif
}
/// Closes this thread's group of asynchronous copies issued since the last one.
KOKKOS_FORCEINLINE_FUNCTION void commit_scratch_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
/// Waits until at most N of this thread's groups are still in flight.
template <int N>
KOKKOS_FORCEINLINE_FUNCTION void wait_scratch_groups() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/// `Depth` steps of a compiled star or box in one launch (GPU teams, 2-D and
/// 3-D). Geometry: the whole grid (lo = 0, count = extent), `wrap` for periodic; tile[0]
/// the planes a team walks, tile[k >= 1] the outputs across, which with a halo of `Depth`
/// radii per side fill the team: threads_fast x W columns, threads_second x Y rows (3-D).
/// Values are rounded to T between steps, as unfused steps store them; each output's sum
/// adds its terms in the order every generic kernel does. Under fixed_rim and interior the
/// rim keeps its input values at every step (iterate's contract) and points outside the
/// grid hold zero; the last step copies the rim (fixed_rim) or leaves it (interior).
template <class T, int D, class Shape, int W, int Y, int Depth, class ExecSpace>
struct StreamTemporalKernel {
  static_assert(D == 2 || D == 3, "streaming temporal blocking walks planes of 2-D and 3-D grids");
  static_assert(D == 3 || Y == 1, "2-D planes are one row");
  using value_type                   = T;
  using Acc                          = accumulator_t<T>;
  using Member                       = TeamMember<ExecSpace>;
  static constexpr int R             = Shape::radius;
  static constexpr int width         = 2 * R + 1;
  static constexpr bool streaming    = false;  // (prepared()'s plane check is StreamKernel's)
  static constexpr const char* label = "sparstencil::generic[streaming temporal]";
  /// The input ring (a power of two: the plane being read, the one arriving, those in
  /// flight ahead of it; generic::stream_temporal_planes).
  static constexpr int input_slots = generic::stream_temporal_input_planes(D);
  static constexpr int ahead       = input_slots - 2;
  static_assert(generic::stream_temporal_columns(sizeof(T), R) == W && generic::stream_temporal_rows(D) == Y,
                "the kernel owns the columns and rows the model counts");
  /// Blocks an SM the registers are budgeted for as a CUDA block (BlockLaunch): 2, but 1
  /// for double rows of two columns (radius 3), whose rings of sums want more than the 128
  /// registers two blocks of 256 threads leave (H100, perf_tests/RESULTS.md).
  static constexpr int blocks_per_sm = sizeof(T) == 8 && W == 2 ? 1 : 2;
  /// Scratch columns left and right of a plane's span, so reads of its first and last
  /// columns stay inside and chunks stay aligned.
  static constexpr int pad    = generic::stream_temporal_pad(R, W);
  static constexpr int chunks = (pad + W + R - 1) / W + 1;  ///< chunks covering a thread's W + 2R values
  struct alignas(W * sizeof(T)) Chunk {
    T v[W];
  };

  const T* in;
  T* out;
  Geometry<D> g;
  Shape shape;
  Boundary boundary;

  /// A plane's span across (the team's columns and rows) and its scratch layout.
  KOKKOS_INLINE_FUNCTION static int span_columns(const Geometry<D>& g) {
    return generic::stream_temporal_span_columns(sizeof(T), R, g.threads_fast);
  }
  KOKKOS_INLINE_FUNCTION static int span_rows(const Geometry<D>& g) {
    return generic::stream_temporal_span_rows(D, g.threads_second);
  }
  KOKKOS_INLINE_FUNCTION static int pitch(const Geometry<D>& g) { return span_columns(g) + 2 * pad; }
  KOKKOS_INLINE_FUNCTION static long plane_scratch(const Geometry<D>& g) {
    return generic::stream_temporal_plane(D, R, sizeof(T), g.threads_fast, g.threads_second);
  }
  KOKKOS_INLINE_FUNCTION static constexpr long scratch_planes() { return generic::stream_temporal_planes(D, Depth); }
  long scratch_bytes() const {
    return scratch_values() * static_cast<long>(sizeof(T)) + static_cast<long>(sizeof(Chunk));
  }

  /// Whether a star or box shape has the point (dz along k = 0, m along k = 1 in 3-D, f
  /// along the fastest axis).
  KOKKOS_INLINE_FUNCTION static constexpr bool has(int dz, int m, int f) {
    return Shape::has(dz, Shape::rest_index(m, f));
  }
  /// Whether chunk c of row offset m holds a value one of the thread's sums needs.
  KOKKOS_INLINE_FUNCTION static constexpr bool chunk_needed(int m, int c) {
    for (int dz = -R; dz <= R; ++dz) {
      for (int f = -R; f <= R; ++f) {
        for (int w = 0; w < W; ++w) {
          if (has(dz, m, f) && (pad + w + f) / W == c) return true;
        }
      }
    }
    return false;
  }

  /// Ring slot of the output that level s's plane q feeds with offset dz along k = 0, in
  /// phase p (Turn = p % (2R + 1)): (q - dz) modulo 2R + 1 up to a shift the same for all
  /// phases of the level (q = first + p - 1 - (s - 1)(R + 1)).
  KOKKOS_INLINE_FUNCTION static constexpr int ring_slot(int turn, int s, int dz) {
    return (((turn - 1 - (s - 1) * (R + 1) - dz) % width) + width) % width;
  }
  /// Whether the term (dz, m, f) is the first an output adds: the first of its first plane
  /// (dz = -R) in the order the plane's terms are added (m, then f).
  KOKKOS_INLINE_FUNCTION static constexpr bool starts_sum(int dz, int m, int f) {
    if (dz != -R || !has(dz, m, f)) return false;
    for (int m2 = (D == 3 ? -R : 0); m2 <= m; ++m2) {
      for (int f2 = -R; f2 <= R; ++f2) {
        if ((m2 < m || f2 < f) && has(dz, m2, f2)) return false;
      }
    }
    return true;
  }
  /// Calls f with `turn` (0 to N - 1) as a compile-time constant.
  template <int N, int I = 0, class F>
  KOKKOS_FORCEINLINE_FUNCTION static void with_turn(int turn, F&& f) {
    if constexpr (I < N) {
      if (turn == I) return f(std::integral_constant<int, I>{});
      with_turn<N, I + 1>(turn, f);
    }
  }

  /// A Kokkos team: its scratch from Kokkos.
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    walk(team, static_cast<T*>(team.team_scratch(0).get_shmem_aligned(scratch_values() * sizeof(T), sizeof(Chunk))));
  }
  /// Values of scratch a team takes (its planes).
  KOKKOS_INLINE_FUNCTION long scratch_values() const { return scratch_planes() * plane_scratch(g); }

  /// The team's walk, `scratch` (scratch_values(), aligned to a chunk) its own. `Team` has
  /// league_rank(), team_rank() and team_barrier() (a Kokkos team, or a CUDA block:
  /// BlockLaunch).
  template <class Team>
  KOKKOS_INLINE_FUNCTION void walk(const Team& team, T* scratch) const {
    constexpr int lo_m = D == 3 ? -R : 0, hi_m = D == 3 ? R : 0;
    const Kokkos::Array<int, D> origin = tile_origin(g, team.league_rank());
    const bool periodic                = boundary == Boundary::periodic;
    const int threads                  = g.threads_fast * g.threads_second;
    const int t                        = team.team_rank();
    const long plane                   = plane_scratch(g);
    // Zero every plane once: the pads are never written and must hold finite values.
    for (long i = t; i < scratch_values(); i += threads) scratch[i] = T(0);

    // This thread's columns and rows: local span positions, grid coordinates, whether
    // each lies in the grid, on the rim, in the team's tile of outputs.
    constexpr int halo_span = Depth * R;  // values a plane spans beyond the tile on each side
    const int column0       = (t % g.threads_fast) * W;
    const int row0          = D == 3 ? t / g.threads_fast : 0;
    const int n0            = g.extent[0];
    const T* read_at[Y][W];  // the point's place in plane 0 (any plane: + its offset)
    T* write_at[Y][W];
    bool inside[Y][W], rim[Y][W], owned[Y][W];
    SPARSTENCIL_UNROLL
    for (int j = 0; j < Y; ++j) {
      SPARSTENCIL_UNROLL
      for (int w = 0; w < W; ++w) {
        int local[2]   = {D == 3 ? row0 + j * g.threads_second : 0, column0 + w};
        int extent[2]  = {D == 3 ? span_rows(g) : 1, span_columns(g)};
        inside[j][w]   = true;
        rim[j][w]      = false;
        owned[j][w]    = true;
        long in_offset = 0, out_offset = 0;
        for (int k = D == 3 ? 1 : 2; k < 3; ++k) {
          const int a = k - (3 - D);  // kernel axis: 1 (3-D rows) or D - 1 (columns)
          const int n = g.extent[a];
          int c       = origin[a] + local[k - 1] - halo_span;
          if (periodic) c = ((c % n) + n) % n;
          const bool in_grid = c >= 0 && c < n;
          inside[j][w]       = inside[j][w] && in_grid;
          rim[j][w]          = rim[j][w] || (in_grid && (c < g.halo[a] || c >= n - g.halo[a]));
          owned[j][w]        = owned[j][w] && local[k - 1] >= halo_span && local[k - 1] < extent[k - 1] - halo_span &&
                        origin[a] + local[k - 1] - halo_span < n;
          if (in_grid) {
            in_offset += static_cast<long>(c) * g.in_stride[a];
            out_offset += static_cast<long>(c) * g.out_stride[a];
          }
        }
        if (periodic) rim[j][w] = false;
        read_at[j][w]  = in + in_offset;
        write_at[j][w] = out + out_offset;
      }
    }
    // Where the thread's chunk of row j lies in a plane's scratch.
    auto corner = [&](int j) {
      return (D == 3 ? static_cast<long>(R + row0 + j * g.threads_second) * pitch(g) : 0L) + pad + column0;
    };
    T* const input = scratch;

    // The chunk's planes: inputs [first, first + inputs), outputs [origin[0], + outputs).
    const int outputs = n0 - origin[0] < g.tile[0] ? n0 - origin[0] : g.tile[0];
    const int first   = origin[0] - halo_span;
    const int inputs  = outputs + 2 * halo_span;
    const int phases  = outputs + Depth * width;

    // The next input plane to fetch along k = 0 (wrapped into the grid when periodic) and
    // its offset, and the offset of the plane the last level completes: each advances a
    // plane a phase, so an address costs an add rather than 64-bit multiplies.
    int fetch_z = first;
    if (periodic) fetch_z = ((fetch_z % n0) + n0) % n0;
    long fetch_base = static_cast<long>(fetch_z) * g.in_stride[0];
    long store_base = static_cast<long>(first - Depth * (R + 1)) * g.out_stride[0];  // phase 0's last level

    // Issues the copies of input plane `first + p` into its ring slot (zero outside the
    // grid; wrapped under a periodic boundary), then closes the group. Called for p = 0,
    // 1, 2, ... in turn.
    auto fetch = [&](int p) {
      if (p < inputs) {
        const bool z_in = fetch_z >= 0 && fetch_z < n0;
        T* slot         = input + (p & (input_slots - 1)) * plane;
        SPARSTENCIL_UNROLL
        for (int j = 0; j < Y; ++j) {
          SPARSTENCIL_UNROLL
          for (int w = 0; w < W; ++w) {
            const bool ok = z_in && inside[j][w];
            T* to         = slot + corner(j) + w;
            const T* from = ok ? read_at[j][w] + fetch_base : in;
            if constexpr (copies_async<T>()) copy_or_zero_async(to, from, ok);
            else *to = ok ? *from : T(0);
          }
        }
      }
      commit_scratch_copies();
      ++fetch_z;
      fetch_base += g.in_stride[0];
      if (periodic && fetch_z == n0) {
        fetch_z    = 0;
        fetch_base = 0;
      }
    };

    // Level s's sums of the 2R + 1 planes in flight, a ring that turns by renaming: the
    // phase loop is unrolled by 2R + 1, so every slot is a constant (ring_slot).
    Acc acc[Depth][Y][width][W];
    SPARSTENCIL_UNROLL
    for (int s = 0; s < Depth; ++s) {
      SPARSTENCIL_UNROLL
      for (int j = 0; j < Y; ++j) {
        SPARSTENCIL_UNROLL
        for (int k = 0; k < width; ++k) {
          SPARSTENCIL_UNROLL
          for (int w = 0; w < W; ++w) acc[s][j][k][w] = Acc(0);  // (sums start at their first term)
        }
      }
    }
    // The rows the levels but the last completed last phase (zero, as their planes are,
    // before the first): a level reads its own columns of the row before from here, not
    // from scratch, where the thread stored them.
    T carried[Depth > 1 ? Depth - 1 : 1][Y][W];
    SPARSTENCIL_UNROLL
    for (int s = 0; s < Depth - 1; ++s) {
      SPARSTENCIL_UNROLL
      for (int j = 0; j < Y; ++j) {
        SPARSTENCIL_UNROLL
        for (int w = 0; w < W; ++w) carried[s][j][w] = T(0);
      }
    }
    team.team_barrier();  // the zeroed planes, before copies land in them
    for (int p = 0; p < ahead; ++p) fetch(p);

    // Phase p with p % (2R + 1) == Turn: level s adds the plane level s - 1 finished last
    // phase (q) and completes plane o = q - R. Checked: some point of the thread's may be
    // outside the grid, on the rim or outside the chunk (each point decided on its own);
    // else every point is computed and the last level stores them all. The phase stores
    // nothing until every level has summed: a store the compiler cannot tell from the
    // levels' loads would keep each level's loads behind the one before.
    auto phase = [&](int p, auto turn, auto checked) {
      constexpr int Turn     = decltype(turn)::value;
      constexpr bool Checked = decltype(checked)::value;
      const T* input_plane   = input + ((p - 1) & (input_slots - 1)) * plane;
      const T* read_levels   = scratch + (input_slots + ((p - 1) & 1)) * plane;  // + 2 (s - 1) planes: level s
      T* write_levels        = scratch + (input_slots + (p & 1)) * plane;
      T value[Depth][Y][W];  // the rows the levels complete
      bool keep[Y][W];       // whether the last level stores the point
      SPARSTENCIL_UNROLL
      for (int s = 1; s <= Depth; ++s) {
        const T* source = s == 1 ? input_plane : read_levels + 2L * (s - 2) * plane;
        SPARSTENCIL_UNROLL
        for (int j = 0; j < Y; ++j) {
          SPARSTENCIL_UNROLL
          for (int m = lo_m; m <= hi_m; ++m) {
            const T* row = source + corner(j) - pad + static_cast<long>(m) * (D == 3 ? pitch(g) : 0);
            T x[chunks * W];
            SPARSTENCIL_UNROLL
            for (int c = 0; c < chunks; ++c) {
              if (s > 1 && m == 0 && c * W == pad) {
                SPARSTENCIL_UNROLL
                for (int w = 0; w < W; ++w) x[c * W + w] = carried[s - 2][j][w];
              } else if constexpr (W == 1) {
                if (chunk_needed(m, c)) x[c] = row[c];
              } else if (chunk_needed(m, c)) {
                const Chunk v = reinterpret_cast<const Chunk*>(row)[c];
                SPARSTENCIL_UNROLL
                for (int w = 0; w < W; ++w) x[c * W + w] = v.v[w];
              }
            }
            // Output q - dz sits in ring_slot(Turn, s, dz); its sum adds its planes in
            // order, the first term of its first plane (dz = -R) starting it.
            SPARSTENCIL_UNROLL
            for (int dz = -R; dz <= R; ++dz) {
              SPARSTENCIL_UNROLL
              for (int f = -R; f <= R; ++f) {
                if (!has(dz, m, f)) continue;
                const Acc weight = shape.weights[(dz + R) * Shape::rest_count + Shape::rest_index(m, f)];
                Acc(&sum)[W]     = acc[s - 1][j][ring_slot(Turn, s, dz)];
                SPARSTENCIL_UNROLL
                for (int w = 0; w < W; ++w) {
                  const Acc term = weight * static_cast<Acc>(x[pad + w + f]);
                  sum[w]         = starts_sum(dz, m, f) ? term : sum[w] + term;
                }
              }
            }
          }
          // The slot of dz = R holds row j of plane o of level s, complete.
          const Acc(&done)[W] = acc[s - 1][j][ring_slot(Turn, s, R)];
          SPARSTENCIL_UNROLL
          for (int w = 0; w < W; ++w) value[s - 1][j][w] = static_cast<T>(done[w]);
          if (s == Depth) {
            SPARSTENCIL_UNROLL
            for (int w = 0; w < W; ++w) keep[j][w] = owned[j][w];
          }
          if constexpr (Checked) {
            const int o       = first + p - s * (R + 1);
            const bool o_in   = o >= 0 && o < n0;
            const bool o_rim  = !periodic && o_in && (o < g.halo[0] || o >= n0 - g.halo[0]);
            const long z_base = static_cast<long>(o_in ? o : 0) * g.in_stride[0];  // checked phases only
            SPARSTENCIL_UNROLL
            for (int w = 0; w < W; ++w) {
              const bool in_grid = inside[j][w] && (periodic || o_in);
              const bool on_rim  = in_grid && (rim[j][w] || o_rim);
              if (!in_grid) value[s - 1][j][w] = T(0);
              else if (on_rim) value[s - 1][j][w] = read_at[j][w][z_base];
              if (s == Depth) {
                keep[j][w] = keep[j][w] && in_grid && !(on_rim && boundary == Boundary::interior) && o >= origin[0] &&
                             o < origin[0] + outputs;
              }
            }
          }
        }
      }
      SPARSTENCIL_UNROLL
      for (int s = 1; s <= Depth; ++s) {
        SPARSTENCIL_UNROLL
        for (int j = 0; j < Y; ++j) {
          if (s < Depth) {
            Chunk v;
            SPARSTENCIL_UNROLL
            for (int w = 0; w < W; ++w) v.v[w] = carried[s - 1][j][w] = value[s - 1][j][w];
            *reinterpret_cast<Chunk*>(write_levels + 2L * (s - 1) * plane + corner(j)) = v;
          } else {
            SPARSTENCIL_UNROLL
            for (int w = 0; w < W; ++w) {
              if (keep[j][w]) write_at[j][w][store_base] = value[s - 1][j][w];
            }
          }
        }
      }
    };
    // One phase: the next input plane's copies issued, the levels, then (once input plane
    // first + p has landed, at most `ahead` later groups in flight) the barrier that lets
    // the next phase read it and this phase's level planes.
    auto run = [&](int p, auto turn, auto checked) {
      fetch(p + ahead);
      phase(p, turn, checked);
      store_base += g.out_stride[0];
      wait_scratch_groups<ahead>();
      team.team_barrier();
    };
    auto run_checked = [&](int p) { with_turn<width>(p % width, [&](auto turn) { run(p, turn, std::true_type{}); }); };
    // Phases [lo, hi) run unchecked, unrolled by 2R + 1 (every turn a constant): those whose
    // level planes all lie inside the grid off the rim (any plane, when periodic) and whose
    // last level's plane is one of the chunk's outputs, for a team whose span lies inside
    // the grid off the rim across (periodic: every team). The decision is the team's, so
    // every thread meets every barrier at the same place.
    bool team_plain = true;
    for (int k = 1; k < D; ++k) {
      const int low  = origin[k] - halo_span;
      const int high = low + (k == D - 1 ? span_columns(g) : span_rows(g));
      team_plain     = team_plain && (periodic || (low >= g.halo[k] && high <= g.extent[k] - g.halo[k]));
    }
    // Level s's plane in phase p is first + p - s (R + 1): levels 1 (newest) and Depth (oldest).
    const int chunk_start = origin[0] - first + Depth * (R + 1);  // oldest >= origin[0]
    const int rim_start   = g.halo[0] - first + Depth * (R + 1);  // oldest off the rim
    const int rim_end     = n0 - g.halo[0] - first + (R + 1);     // newest off the rim
    int lo                = periodic || chunk_start > rim_start ? chunk_start : rim_start;
    int hi                = periodic || phases < rim_end ? phases : rim_end;
    lo                    = (lo + width - 1) / width * width;
    hi                    = hi / width * width < lo ? lo : hi / width * width;
    if (!team_plain) lo = hi = phases;
    for (int p = 0; p < lo; ++p) run_checked(p);
    for (int p0 = lo; p0 < hi; p0 += width) {
      SPARSTENCIL_UNROLL
      for (int turn = 0; turn < width; ++turn) {
        with_turn<width>(turn, [&](auto constant_turn) { run(p0 + turn, constant_turn, std::false_type{}); });
      }
    }
    for (int p = hi; p < phases; ++p) run_checked(p);
  }
};

}  // namespace sparstencil::impl
