#pragma once
/// The generic executor: Kokkos kernels on any execution space (Serial, OpenMP, Threads,
/// CUDA, HIP), any layout (Left, Right, Stride), value types half_t, float, double (sums in
/// accumulator_t, SparStencil_Precision.hpp). Views are checked by the front-end
/// (SparStencil_Apply.hpp) before they get here.
///
/// A step is one launch over the interior (SparStencil_GenericKernels.hpp) and, unless the
/// boundary mode is `interior`, one over the rim. The interior kernel's variant
/// (GenericConfig) is forced by the caller, taken from a short autotuning pass cached per
/// (shape, extents, strides, scalar, execution space, device), or a default for grids too
/// small to be worth tuning (docs/GENERIC.md); that choice is SparStencil_GenericTuner.hpp's.
/// Launches of several steps (temporal blocking) are prepared by members declared here and
/// defined in SparStencil_GenericTemporal.hpp.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "SparStencil_BlockLaunch.hpp"
#include "SparStencil_Boundary.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_GenericKernels.hpp"
#include "SparStencil_GenericModel.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_Stencil.hpp"
#include "SparStencil_ExchangeLaunch.hpp"
#include "SparStencil_StreamTemporalKernel.hpp"

namespace sparstencil {

namespace impl {

/// A stencil made ready for one execution space: its terms in device memory (rim and
/// run-time shapes) and, when it is a star or box the kernels know, that shape.
template <int D, class ExecSpace, class T>
class GenericExecutor {
 public:
  using Acc         = accumulator_t<T>;
  using MemorySpace = typename ExecSpace::memory_space;

  /// The terms reach device memory when a launch is prepared (terms_for), in its kernels' order.
  explicit GenericExecutor(const Stencil<D>& stencil) : m_stencil(stencil), m_match(match_shape(stencil)) {}

  /// Name of the shape the interior kernel of a variant (streaming or another) is
  /// specialised for ("box r1"), or "any".
  std::string shape_name(bool streaming) const {
    if (!m_match || !instantiated(*m_match, streaming)) return "any";
    return std::string(to_string(m_match->kind)) + " r" + std::to_string(m_match->radius);
  }

  /// A prepared launch, called as one: the kernel, then the rim's launch where the kernel
  /// leaves the rim to one. Under fixed_rim that launch copies in's rim to out, which a
  /// call with `rim_held` (out's rim already holds in's) skips.
  template <class InView, class OutView>
  struct Prepared {
    std::function<void(const T*, T*)> kernel;
    std::function<void(const InView&, const OutView&)> rim;
    bool rim_copies = false;
    void operator()(const InView& from, const OutView& to, bool rim_held = false) const {
      if (kernel) kernel(from.data(), to.data());
      if (rim && !(rim_held && rim_copies)) rim(from, to);
    }
  };

  /// A launch made ready for Views of the extents and strides of `in` and `out`: one step
  /// with `config`, or `steps` (>= 2) steps by temporal blocking (FusedKernel: `config`
  /// gives the team and the outputs V a thread computes per item; its caching is
  /// ignored). The variant is checked, the geometry, weights and launch policies fixed
  /// here, so a call only launches, asynchronously on `space`. The executor must outlive it.
  template <class InView, class OutView>
  Prepared<InView, OutView> prepare(const ExecSpace& space, const InView& in, const OutView& out, Boundary boundary,
                                    GenericConfig config, int steps = 1) const {
    Prepared<InView, OutView> launch;
    if (steps > 1) {
      config = temporal_runnable(config, in, out, steps);
      if (config.caching == GenericCaching::streaming) {
        const Geometry<D> g = temporal_geometry(in, out, config, steps, boundary);
        with_shape<false>(space, g, [&](const auto& shape) {
          launch.kernel = prepared_stream_temporal(space, shape, g, steps, boundary);
        });
      } else {
        const Geometry<D> g = geometry(in, out, config, /*whole grid*/ true);
        with_shape<false>(space, g, [&](const auto& shape) {
          with_outputs(config, [&](auto v) {
            using Kernel  = FusedKernel<T, D, std::decay_t<decltype(shape)>, decltype(v)::value, ExecSpace>;
            launch.kernel = prepared(space, Kernel{nullptr, nullptr, g, shape, steps, boundary});
          });
        });
      }
      return launch;
    }
    config = runnable(config, in, out);
    // Streaming kernels wrap their reads: under a periodic boundary they cover the rim too.
    const bool wrap     = config.caching == GenericCaching::streaming && boundary == Boundary::periodic;
    const Geometry<D> g = geometry(in, out, config, wrap);
    bool empty          = false;
    for (int k = 0; k < D; ++k) empty = empty || g.count[k] <= 0;
    if (!empty && config.caching == GenericCaching::streaming) {
      with_shape<true>(space, g, [&](const auto& shape) { launch.kernel = prepared_stream(space, shape, g, config); });
    } else if (!empty) {
      with_shape<false>(space, g,
                        [&](const auto& shape) { launch.kernel = prepared_interior(space, shape, g, config); });
    }
    if (boundary != Boundary::interior && !wrap) launch.rim = prepared_rim<InView, OutView>(space, out, g, boundary);
    launch.rim_copies = boundary == Boundary::fixed_rim;
    return launch;
  }

  /// A launch of `steps` steps by ExchangeTemporalKernel (where exchange_runs), prepared as
  /// prepare() prepares the others.
  template <class InView, class OutView>
  Prepared<InView, OutView> prepare_exchange(const ExecSpace& space, const InView& in, const OutView& out,
                                             Boundary boundary, int steps) const {
    Prepared<InView, OutView> launch;
    launch.kernel = prepared_exchange_temporal(space, in, out, steps, boundary);
    // The kernel leaves the rim of the output alone: under fixed_rim a rim launch copies it.
    if (boundary == Boundary::fixed_rim) {
      launch.rim        = prepared_rim<InView, OutView>(space, out, geometry(in, out, GenericConfig{}), boundary);
      launch.rim_copies = true;
    }
    return launch;
  }

  /// One step (or `steps` fused) from `in` to `out`, prepared and launched at once.
  template <class InView, class OutView>
  void apply(const ExecSpace& space, const InView& in, const OutView& out, Boundary boundary, GenericConfig config,
             int steps = 1) const {
    prepare(space, in, out, boundary, config, steps)(in, out);
  }

  /// Whether a temporal-blocking launch of `steps` steps with `config` fits the space's
  /// team scratch (both buffers of a tile with its halo), or the exchanging kernel runs it.
  template <class InView, class OutView>
  bool fused_fits(const InView& in, const OutView& out, int steps, GenericConfig config, Boundary boundary) const {
    if (exchange_runs(in, out, steps, boundary)) return true;
    config = temporal_runnable(config, in, out, steps);
    return config.caching == GenericCaching::streaming || fused_kernel_fits(in, out, steps, config);
  }

  /// The temporal variant that runs for `config` and `steps`: streaming (StreamTemporalKernel)
  /// where it is compiled for the stencil's shape on this space and type
  /// (generic::stream_temporal_depth), its span wider than the halo of `steps` radii and
  /// its planes within team scratch; else FusedKernel (caching scratch): the variant asked
  /// for, or for a streaming one the first of the space's FusedKernel candidates that fits.
  template <class InView, class OutView>
  GenericConfig temporal_runnable(GenericConfig config, const InView& in, const OutView& out, int steps) const;

  /// Whether ExchangeTemporalKernel runs `steps` steps (whatever the variant asked for):
  /// CUDA Views of float or double, a compiled 3-D radius-1 star or box, a depth compiled
  /// (generic::exchange_temporal_depth), a grid whose tiles across all run at once, one
  /// block an SM (generic::exchange_temporal_runs), and offsets within a plane that fit 32
  /// bits in both Views.
  template <class InView, class OutView>
  bool exchange_runs(const InView& in, const OutView& out, int steps, Boundary boundary) const;

  /// The exchanging kernel's blocks the device holds at once: one an SM.
  static long multiprocessors();

  /// The scratch a team of the streaming temporal kernel may take: a CUDA block's
  /// (BlockLaunch), else a Kokkos team's.
  static long stream_scratch_max();

  /// Whether FusedKernel's two buffers of a tile of `config` and its halo fit team scratch.
  template <class InView, class OutView>
  bool fused_kernel_fits(const InView& in, const OutView& out, int steps, const GenericConfig& config) const;

  /// The variant that runs for `config`. Streaming needs a GPU team, a plane (2-D, 3-D)
  /// and a star or box compiled in: elsewhere the hardware-cached variant with 4 outputs
  /// a thread runs. The hardware-cached kernels read the fastest axis with unit stride,
  /// so Views strided along it take the software-cached one.
  template <class InView, class OutView>
  GenericConfig runnable(GenericConfig config, const InView& in, const OutView& out) const {
    if (config.caching == GenericCaching::streaming &&
        (D == 1 || runs_on_host<ExecSpace>() || shape_name(true) == "any")) {
      config.caching = GenericCaching::hardware;
      config.outputs = 4;
      config.columns = 1;
    }
    const Geometry<D> g = geometry(in, out, config);
    if (config.caching == GenericCaching::hardware && g.in_stride[D - 1] != 1) {
      // A host tile of rows may be larger than a team the scratch kernel takes: then its default.
      const bool fits = config.outputs <= 8 && config.threads_fast * config.threads_second <= max_team_threads;
      config          = fits ? config : GenericConfig{GenericCaching::scratch, 64, 4, 4};
      config.caching  = GenericCaching::scratch;
    }
    return config;
  }

  /// Host spaces run the hardware-cached tile as rows on one thread (InteriorKernel::rows,
  /// D >= 2): its tile, threads_fast x threads_second x outputs (2-D: the rows are
  /// threads_second x outputs), is a loop nest, not a team, and may be as large as
  /// host_tile_points; its rows along k = 0 are walked host_sum_rows at a time.
  static constexpr bool host_tiles       = D >= 2 && runs_on_host<ExecSpace>();
  static constexpr long host_tile_points = 1L << 16;

  /// Checks a forced variant before it runs.
  static void check(const GenericConfig& c) {
    if (c.caching == GenericCaching::streaming) {
      if (c.outputs < 1 || c.outputs > 4096) {
        fail("apply", "generic variant: streaming ", c.outputs, " planes a team must be 1 to 4096");
      }
      if (c.columns != 1 && c.columns != 2 && (c.columns != 4 || D != 2)) {
        fail("apply", "generic variant: streaming ", c.columns, " columns per thread must be 1, 2",
             D == 2 ? " or 4" : " (4 in 2-D only)");
      }
    } else if (c.columns != 1) {
      fail("apply", "generic variant: ", c.columns, " columns per thread: only streaming computes several");
    } else if (host_tiles && c.caching == GenericCaching::hardware) {
      if (c.outputs != 1 && c.outputs != 2 && (c.outputs % 4 != 0 || c.outputs > 4096)) {
        fail("apply", "generic variant: ", c.outputs, " outputs (rows of a host tile along the slowest axis) ",
             "must be 1, 2 or a multiple of 4 up to 4096");
      }
      if (c.threads_fast < 1 || c.threads_second < 1 ||
          static_cast<long>(c.threads_fast) * c.threads_second > host_tile_points) {
        fail("apply", "generic variant: a host tile of ", c.threads_fast, " x ", c.threads_second,
             " columns and rows must be positive and at most ", host_tile_points, " points across");
      }
      return;
    } else if (c.outputs != 1 && c.outputs != 2 && c.outputs != 4 && c.outputs != 8) {
      fail("apply", "generic variant: outputs per thread ", c.outputs, " must be 1, 2, 4 or 8");
    }
    if (c.threads_fast < 1 || c.threads_second < 1 || c.threads_fast * c.threads_second > max_team_threads) {
      fail("apply", "generic variant: ", c.threads_fast, " x ", c.threads_second,
           " threads per team must be positive and at most ", max_team_threads, " in all");
    }
  }

 private:
  Stencil<D> m_stencil;
  std::optional<ShapeMatch> m_match;
  /// The terms in device memory, by kernel-axis order (terms_for).
  mutable std::map<std::array<int, D>, RuntimeShape<D, Acc, MemorySpace>> m_terms;

  /// The terms in the order every kernel sums a point's terms: offsets lexicographic along
  /// the kernel axes `axis` (slowest first), as a FixedShape's loops visit them. So a
  /// point's sum has the same bits whichever kernel computes it (interior, rim, fused) and
  /// wherever it lies in its tile: results do not depend on how a grid is cut up
  /// (docs/DISTRIBUTED.md).
  const RuntimeShape<D, Acc, MemorySpace>& terms_for(const ExecSpace& space, const Kokkos::Array<int, D>& axis) const {
    std::array<int, D> key{};
    for (int k = 0; k < D; ++k) key[k] = axis[k];
    if (auto it = m_terms.find(key); it != m_terms.end()) return it->second;
    std::vector<Term<D>> terms = m_stencil.terms();
    std::stable_sort(terms.begin(), terms.end(), [&](const Term<D>& x, const Term<D>& y) {
      for (int k = 0; k < D; ++k) {
        if (x.offset[axis[k]] != y.offset[axis[k]]) return x.offset[axis[k]] < y.offset[axis[k]];
      }
      return false;
    });
    Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace> offsets("sparstencil::offsets", terms.size(), D);
    Kokkos::View<Acc*, MemorySpace> weights("sparstencil::weights", terms.size());
    auto host_offsets = Kokkos::create_mirror_view(offsets);
    auto host_weights = Kokkos::create_mirror_view(weights);
    for (std::size_t t = 0; t < terms.size(); ++t) {
      for (int a = 0; a < D; ++a) host_offsets(t, a) = terms[t].offset[a];
      host_weights(t) = static_cast<Acc>(terms[t].weight);
    }
    Kokkos::deep_copy(space, offsets, host_offsets);
    Kokkos::deep_copy(space, weights, host_weights);
    space.fence();  // the host copies go out of scope
    return m_terms.emplace(key, RuntimeShape<D, Acc, MemorySpace>{offsets, weights}).first->second;
  }

  /// Streaming kernels run on GPU teams, in 2-D and 3-D only.
  static constexpr bool streams = D >= 2 && !runs_on_host<ExecSpace>();
  static constexpr bool instantiated(const ShapeMatch& m, bool streaming) {
    return generic::has_compiled_kernel(D, m, streaming && streams);
  }

  /// Calls f with the stencil's FixedShape where generic::compiled_shapes has its shape
  /// for the variant (each listed D-dimensional shape instantiated once, streaming-only
  /// ones for the streaming kernel on GPUs alone), else with the run-time shape.
  template <bool Streaming, std::size_t I = 0, class F>
  void with_shape(const ExecSpace& space, const Geometry<D>& g, F&& f) const {
    if constexpr (I < std::size(generic::compiled_shapes)) {
      constexpr generic::CompiledShape shape = generic::compiled_shapes[I];
      if constexpr (shape.dims == D && (!shape.streaming_only || (Streaming && streams))) {
        if (m_match && m_match->kind == shape.kind && m_match->radius == shape.radius) {
          return f(fixed_shape<FixedShape<D, shape.radius, shape.kind, Acc>>(m_stencil, g.axis));
        }
      }
      return with_shape<Streaming, I + 1>(space, g, std::forward<F>(f));
    } else {
      f(terms_for(space, g.axis));
    }
  }

  /// Kernel axes (slowest stride first), interior box and tiles of `config`.
  template <class InView, class OutView>
  Geometry<D> geometry(const InView& in, const OutView& out, const GenericConfig& config, bool wrap = false) const {
    Geometry<D> g;
    g.wrap = wrap;
    Kokkos::Array<int, D> order;
    for (int a = 0; a < D; ++a) order[a] = a;
    // Largest output stride first; ties keep the later (LayoutRight-like) axis faster.
    std::stable_sort(order.data(), order.data() + D, [&](int x, int y) { return out.stride(x) > out.stride(y); });
    for (int k = 0; k < D; ++k) {
      const int a     = order[k];
      g.axis[k]       = a;
      g.halo[k]       = m_stencil.radius()[a];
      g.extent[k]     = static_cast<int>(out.extent(a));
      g.lo[k]         = wrap ? 0 : g.halo[k];
      g.count[k]      = wrap ? g.extent[k] : g.extent[k] - 2 * g.halo[k];
      g.in_stride[k]  = static_cast<long>(in.stride(a));
      g.out_stride[k] = static_cast<long>(out.stride(a));
    }
    const bool one_axis           = D == 1;
    g.threads_fast                = one_axis ? config.threads_fast * config.threads_second : config.threads_fast;
    g.threads_second              = one_axis ? 1 : config.threads_second;
    const std::array<int, 3> tile = generic::team_tile(D, config);
    for (int k = 0; k < D; ++k) g.tile[k] = tile[k];
    for (int k = 0; k < D; ++k) g.tiles[k] = std::max(1, (g.count[k] + g.tile[k] - 1) / g.tile[k]);
    return g;
  }

  /// ExchangeTemporalKernel of depth `steps` for the stencil's shape (exchange_runs checked
  /// it runs): the whole grid in tiles of 64 x 32 across, chunks of planes along k = 0 for
  /// the blocks left (generic::exchange_temporal_chunks).
  template <class InView, class OutView>
  std::function<void(const T*, T*)> prepared_exchange_temporal(const ExecSpace& space, const InView& in,
                                                               const OutView& out, int steps, Boundary boundary) const;

  /// Calls f with `depth` (2 to Most) as a compile-time constant.
  template <int Most, int Depth = 2, class F>
  static void with_depth(int depth, F&& f) {
    if constexpr (Depth <= Most) {
      if (depth == Depth) return f(std::integral_constant<int, Depth>{});
      with_depth<Most, Depth + 1>(depth, std::forward<F>(f));
    }
  }

  /// The whole grid cut for StreamTemporalKernel: tiles across whose span (tile plus a halo
  /// of `steps` radii a side) fills the team, and chunks of at most `outputs` planes
  /// (chunk_planes shortens them: CUDA blocks to generic::stream_temporal_waves times the
  /// blocks the device holds at once, Kokkos teams to the teams its threads make).
  template <class InView, class OutView>
  Geometry<D> temporal_geometry(const InView& in, const OutView& out, const GenericConfig& config, int steps,
                                Boundary boundary) const;

  /// `g` with chunks of at most g.tile[0] planes, at least as many as make `at_once` teams
  /// with the tiles across (a chunk a tile where the tiles alone are more).
  static Geometry<D> chunk_planes(Geometry<D> g, long at_once);

  /// StreamTemporalKernel for a compiled shape, of depth `steps` (temporal_runnable checked
  /// it is compiled: 2 to generic::stream_temporal_depth).
  template <class Shape>
  std::function<void(const T*, T*)> prepared_stream_temporal(const ExecSpace& space, const Shape& shape,
                                                             const Geometry<D>& g, int steps, Boundary boundary) const;

  template <class Shape>
  std::function<void(const T*, T*)> prepared_stream(const ExecSpace& space, const Shape& shape, const Geometry<D>& g,
                                                    const GenericConfig& config) const {
    // runnable() sent run-time shapes, 1-D and host spaces elsewhere.
    if constexpr (streams && !std::is_same_v<Shape, RuntimeShape<D, Acc, MemorySpace>>) {
      switch (config.columns) {
        case 1: return prepared(space, StreamKernel<T, D, Shape, 1, ExecSpace>{nullptr, nullptr, g, shape});
        case 2: return prepared(space, StreamKernel<T, D, Shape, 2, ExecSpace>{nullptr, nullptr, g, shape});
        default:
          if constexpr (D == 2) {
            return prepared(space, StreamKernel<T, D, Shape, 4, ExecSpace>{nullptr, nullptr, g, shape});
          }
          check(config);
      }
    }
    fail("apply", "generic variant: streaming cannot run here (internal: runnable() not applied)");
  }

  /// The hardware- or scratch-cached interior kernel.
  template <class Shape>
  std::function<void(const T*, T*)> prepared_interior(const ExecSpace& space, const Shape& shape, const Geometry<D>& g,
                                                      const GenericConfig& config) const {
    const bool scratch = config.caching == GenericCaching::scratch;
    std::function<void(const T*, T*)> launch;
    GenericConfig compiled = config;
    // Host rows hold host_sum_rows rows of sums at most (InteriorKernel::rows): taller tiles
    // run V = host_sum_rows.
    if (host_tiles && !scratch) compiled.outputs = std::min(config.outputs, host_sum_rows);
    with_outputs(compiled, [&](auto v) {
      constexpr int V = decltype(v)::value;
      if (scratch) {
        launch = prepared(space, InteriorKernel<T, D, Shape, V, true, ExecSpace>{nullptr, nullptr, g, shape});
      } else if constexpr (!host_tiles || V <= host_sum_rows) {
        launch = prepared(space, InteriorKernel<T, D, Shape, V, false, ExecSpace>{nullptr, nullptr, g, shape});
      }
    });
    return launch;
  }

  /// Calls f with the outputs a thread computes, V = 1, 2, 4 or 8, as a compile-time constant.
  template <class F>
  static void with_outputs(const GenericConfig& config, F&& f) {
    switch (config.outputs) {
      case 1: return f(std::integral_constant<int, 1>{});
      case 2: return f(std::integral_constant<int, 2>{});
      case 4: return f(std::integral_constant<int, 4>{});
      case 8: return f(std::integral_constant<int, 8>{});
      default: check(config);
    }
  }

  /// Teams a launch over `g`'s tiles takes (one a tile), at most 2^31 - 1.
  static long league(const Geometry<D>& g) {
    long teams = 1;
    for (int k = 0; k < D; ++k) teams *= g.tiles[k];
    if (teams > INT32_MAX) fail("apply", "generic executor: ", teams, " tiles exceed 2^31 - 1");
    return teams;
  }

  /// The launch of `kernel` (its in and out set per call) with its team policy, checked
  /// once: league and team sizes, team scratch, the loads a streaming plane needs.
  template <class Kernel>
  static std::function<void(const T*, T*)> prepared(const ExecSpace& space, const Kernel& kernel) {
    const Geometry<D>& g = kernel.g;
    const long teams     = league(g);
    const int threads    = g.threads_fast * g.threads_second;
    const int team_size  = runs_on_host<ExecSpace>() ? 1 : threads;
    static_assert(sizeof(Kernel) < max_kernel_bytes, "a generic kernel must fit the launch parameters");
    using Policy = InteriorPolicy<ExecSpace>;
    Policy policy(space, static_cast<int>(teams), team_size);
    if constexpr (Kernel::streaming) {
      const int plane = Kernel::plane_elements(g);
      if (plane > Kernel::loads_per_thread * threads) {
        fail("apply", "generic variant: a plane of ", plane, " values needs more than ", Kernel::loads_per_thread,
             " loads for each of the team's ", threads, " threads");
      }
    }
    if (const long bytes = kernel.scratch_bytes(); bytes > 0) {
      const long max = Policy::scratch_size_max(0);
      if (bytes > max) {
        fail("apply", "generic variant: ", Kernel::label, " needs ", bytes, " bytes of team scratch for a tile ",
             "with its halo, ", ExecSpace::name(), " offers ", max);
      }
      policy.set_scratch_size(0, Kokkos::PerTeam(bytes));
    }
    const int most = policy.team_size_max(kernel, Kokkos::ParallelForTag());
    if (team_size > most) {
      fail("apply", "generic variant: ", team_size, " threads per team exceed the ", most, " ", ExecSpace::name(),
           " allows for this kernel");
    }
    return [policy, kernel](const T* in, T* out) {
      Kernel k = kernel;
      k.in     = in;
      k.out    = out;
      Kokkos::parallel_for(Kernel::label, policy, k);
    };
  }

  /// The rim's launch on a host space: HostRimKernel, a row a work item, dynamically
  /// scheduled (the rows that are rim from end to end gather at the slowest axis' ends).
  template <class InView, class OutView>
  std::function<void(const InView&, const OutView&)> prepared_host_rim(const ExecSpace& space, const Geometry<D>& g,
                                                                       Boundary boundary) const {
    using Kernel = HostRimKernel<D, T, MemorySpace>;
    Kernel kernel{nullptr,      nullptr, terms_for(space, g.axis), g.axis, g.extent, g.halo, g.in_stride,
                  g.out_stride, boundary};
    const Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>, Kokkos::Schedule<Kokkos::Dynamic>> policy(
        space, 0, kernel.rows());
    return [policy, kernel](const InView& in, const OutView& out) {
      Kernel k = kernel;
      k.in     = in.data();
      k.out    = out.data();
      Kokkos::parallel_for("sparstencil::generic[host rim]", policy, k);
    };
  }

  /// The rim's launch under `boundary`: the slabs outside the interior, point by point.
  template <class InView, class OutView>
  std::function<void(const InView&, const OutView&)> prepared_rim(const ExecSpace& space, const OutView& out,
                                                                  const Geometry<D>& g, Boundary boundary) const {
    if constexpr (runs_on_host<ExecSpace>()) {
      if (g.in_stride[D - 1] == 1 && g.out_stride[D - 1] == 1)
        return prepared_host_rim<InView, OutView>(space, g, boundary);
    }
    using Kernel = RimKernel<D, InView, OutView, MemorySpace>;
    Kokkos::Array<int, D> extent;
    for (int a = 0; a < D; ++a) extent[a] = static_cast<int>(out.extent(a));
    const RimSlabs<D> slabs = rim_slabs<D>(m_stencil.radius(), g.axis, extent);
    if (slabs.count == 0) return {};
    static_assert(sizeof(Kernel) < max_kernel_bytes, "the rim kernel must fit the launch parameters");
    const RimPolicy<ExecSpace> policy(space, 0, slabs.begin[slabs.count]);
    const RuntimeShape<D, Acc, MemorySpace> terms = terms_for(space, g.axis);
    return [policy, terms, extent, boundary, slabs](const InView& in, const OutView& out) {
      Kokkos::parallel_for("sparstencil::generic[rim]", policy, Kernel{in, out, terms, extent, boundary, slabs});
    };
  }
};

}  // namespace impl
}  // namespace sparstencil

// The temporal-blocking members declared above.
#include "SparStencil_GenericTemporal.hpp"
