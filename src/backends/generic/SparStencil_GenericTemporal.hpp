#pragma once
/// The generic executor's temporal blocking (docs/GENERIC.md, "Several steps a launch"):
/// the members of GenericExecutor (SparStencil_Generic.hpp, where they are declared and
/// described) that pick the temporal kernel a launch of several steps runs (streaming,
/// exchanging or overlapped tiles), check it fits, cut the grid for it and prepare its
/// launch. Defined here, outside the class, so that the executor's header holds its
/// interface and the one-step launches; SparStencil_Generic.hpp includes this file.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "SparStencil_BlockLaunch.hpp"
#include "SparStencil_Boundary.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_ExchangeLaunch.hpp"
#include "SparStencil_Generic.hpp"
#include "SparStencil_GenericKernels.hpp"
#include "SparStencil_GenericModel.hpp"
#include "SparStencil_StreamTemporalKernel.hpp"

namespace sparstencil::impl {

template <int D, class ExecSpace, class T>
template <class InView, class OutView>
GenericConfig GenericExecutor<D, ExecSpace, T>::temporal_runnable(GenericConfig config, const InView& in,
                                                                  const OutView& out, int steps) const {
  if (config.caching != GenericCaching::streaming) {
    config.caching = GenericCaching::scratch;
    return config;
  }
  const int R       = m_match ? m_match->radius : 0;
  const int columns = generic::stream_temporal_span_columns(sizeof(T), R, config.threads_fast);
  const int rows    = D == 3 ? generic::stream_temporal_span_rows(D, config.threads_second) : INT32_MAX;
  const long bytes  = generic::stream_temporal_planes(D, steps) *
                         generic::stream_temporal_plane(D, R, sizeof(T), config.threads_fast, config.threads_second) *
                         static_cast<long>(sizeof(T)) +
                     16;  // + the kernel's alignment of a chunk
  const bool runs = streams && m_match && steps <= generic::stream_temporal_depth(D, *m_match) &&
                    columns > 2 * steps * R && rows > 2 * steps * R && (D == 3 || config.threads_second == 1) &&
                    bytes <= stream_scratch_max();
  if (runs) {
    config.columns = generic::stream_temporal_columns(sizeof(T), R);
    return config;
  }
  const std::vector<GenericConfig> candidates = generic::fused_candidates(D, streams);
  for (const GenericConfig& c : candidates) {
    if (c.caching == GenericCaching::scratch && fused_kernel_fits(in, out, steps, c)) return c;
  }
  // None fits: the last, the smallest tile (its launch throws, naming the bytes).
  return candidates.back();
}

template <int D, class ExecSpace, class T>
template <class InView, class OutView>
bool GenericExecutor<D, ExecSpace, T>::exchange_runs(const InView& in, const OutView& out, int steps,
                                                     Boundary boundary) const {
#if defined(SPARSTENCIL_BLOCK_LAUNCH)
  if constexpr (D == 3 && std::is_same_v<ExecSpace, Kokkos::Cuda> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    if (!m_match || m_match->radius != 1 || !instantiated(*m_match, false) || steps < 2 ||
        steps > generic::exchange_temporal_depth(sizeof(T), m_match->kind == ShapeKind::box)) {
      return false;
    }
    const Geometry<D> g = geometry(in, out, GenericConfig{});
    // The kernel holds a point's offset within a plane in 32 bits (strided Views may not fit).
    auto offsets_fit = [&](const Kokkos::Array<long, D>& stride) {
      return (g.extent[1] - 1L) * stride[1] + (g.extent[2] - 1L) * stride[2] <= INT32_MAX;
    };
    return offsets_fit(g.in_stride) && offsets_fit(g.out_stride) &&
           generic::exchange_temporal_runs(g.extent[1], g.extent[2], boundary == Boundary::periodic, multiprocessors());
  }
#endif
  (void)in, (void)out, (void)steps, (void)boundary;
  return false;
}

template <int D, class ExecSpace, class T>
long GenericExecutor<D, ExecSpace, T>::multiprocessors() {
#if defined(SPARSTENCIL_BLOCK_LAUNCH)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    int count = 0;
    SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, Kokkos::Cuda().cuda_device()));
    return count;
  }
#endif
  return 0;
}

template <int D, class ExecSpace, class T>
long GenericExecutor<D, ExecSpace, T>::stream_scratch_max() {
#if defined(SPARSTENCIL_BLOCK_LAUNCH)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) return block_shared_max(Kokkos::Cuda().cuda_device());
#endif
  return InteriorPolicy<ExecSpace>::scratch_size_max(0);
}

template <int D, class ExecSpace, class T>
template <class InView, class OutView>
bool GenericExecutor<D, ExecSpace, T>::fused_kernel_fits(const InView& in, const OutView& out, int steps,
                                                         const GenericConfig& config) const {
  const Geometry<D> g = geometry(in, out, config, true);
  const long bytes    = 2 * fused_buffer_elements(g, steps, config.outputs) * static_cast<long>(sizeof(T));
  return bytes <= InteriorPolicy<ExecSpace>::scratch_size_max(0);
}

template <int D, class ExecSpace, class T>
template <class InView, class OutView>
std::function<void(const T*, T*)> GenericExecutor<D, ExecSpace, T>::prepared_exchange_temporal(
    const ExecSpace& space, const InView& in, const OutView& out, int steps, Boundary boundary) const {
#if defined(SPARSTENCIL_BLOCK_LAUNCH)
  if constexpr (D == 3 && std::is_same_v<ExecSpace, Kokkos::Cuda> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    Geometry<D> g     = geometry(in, out, GenericConfig{}, boundary == Boundary::periodic);
    g.lo              = Kokkos::Array<int, D>{};
    g.count           = g.extent;
    g.tile[1]         = generic::exchange_tile_rows;
    g.tile[2]         = generic::exchange_tile_columns;
    g.tiles[1]        = (g.extent[1] + g.tile[1] - 1) / g.tile[1];
    g.tiles[2]        = (g.extent[2] + g.tile[2] - 1) / g.tile[2];
    const long chunks = generic::exchange_temporal_chunks(g.extent[0], g.extent[1], g.extent[2], multiprocessors());
    g.tile[0]         = static_cast<int>((g.extent[0] + chunks - 1) / chunks);
    g.tiles[0]        = (g.extent[0] + g.tile[0] - 1) / g.tile[0];
    std::function<void(const T*, T*)> step;
    with_shape<false>(space, g, [&](const auto& shape) {
      using Shape = std::decay_t<decltype(shape)>;
      if constexpr (!std::is_same_v<Shape, RuntimeShape<D, Acc, MemorySpace>>) {
        if constexpr (Shape::radius == 1) {
          auto make = [&](auto depth) {
            using Kernel      = ExchangeTemporalKernel<T, Shape, decltype(depth)::value>;
            const auto launch = std::make_shared<ExchangeLaunch<Kernel>>(space);
            const long tiles  = static_cast<long>(g.tiles[0]) * g.tiles[1] * g.tiles[2];
            if (tiles > launch->resident()) {
              fail("iterate", "generic variant: ", Kernel::label, " needs ", tiles,
                   " blocks at once, the device holds ", launch->resident());
            }
            launch->reserve(tiles);
            const Kernel kernel{nullptr, nullptr, nullptr, g, shape, boundary};
            step = [launch, kernel](const T* from, T* to) {
              Kernel k = kernel;
              k.in     = from;
              k.out    = to;
              (*launch)(k);
            };
          };
          with_depth<generic::exchange_temporal_depth(sizeof(T), Shape::kind == ShapeKind::box)>(steps, make);
        }
      }
    });
    if (step) return step;
  }
#endif
  (void)space, (void)in, (void)out, (void)steps, (void)boundary;
  fail("iterate",
       "generic variant: the exchanging temporal kernel cannot run here (internal: exchange_runs() not applied)");
}

template <int D, class ExecSpace, class T>
template <class InView, class OutView>
Geometry<D> GenericExecutor<D, ExecSpace, T>::temporal_geometry(const InView& in, const OutView& out,
                                                                const GenericConfig& config, int steps,
                                                                Boundary boundary) const {
  Geometry<D> g = geometry(in, out, config, boundary == Boundary::periodic);
  const int R   = m_match->radius;
  g.lo          = Kokkos::Array<int, D>{};
  g.count       = g.extent;
  g.tile[D - 1] = generic::stream_temporal_span_columns(sizeof(T), R, config.threads_fast) - 2 * steps * R;
  if constexpr (D == 3) g.tile[1] = generic::stream_temporal_span_rows(D, config.threads_second) - 2 * steps * R;
  for (int k = 1; k < D; ++k) g.tiles[k] = (g.extent[k] + g.tile[k] - 1) / g.tile[k];
  g.tile[0]  = config.outputs;
  g.tiles[0] = (g.extent[0] + g.tile[0] - 1) / g.tile[0];
  return g;
}

template <int D, class ExecSpace, class T>
Geometry<D> GenericExecutor<D, ExecSpace, T>::chunk_planes(Geometry<D> g, long at_once) {
  long across = 1;
  for (int k = 1; k < D; ++k) across *= g.tiles[k];
  const long chunks = std::max(1L, (at_once + across - 1) / across);
  const long even   = (g.extent[0] + chunks - 1) / chunks;
  g.tile[0]         = static_cast<int>(std::max(1L, std::min<long>(g.tile[0], even)));
  g.tiles[0]        = (g.extent[0] + g.tile[0] - 1) / g.tile[0];
  return g;
}

template <int D, class ExecSpace, class T>
template <class Shape>
std::function<void(const T*, T*)> GenericExecutor<D, ExecSpace, T>::prepared_stream_temporal(
    const ExecSpace& space, const Shape& shape, const Geometry<D>& g, int steps, Boundary boundary) const {
  if constexpr (streams && !std::is_same_v<Shape, RuntimeShape<D, Acc, MemorySpace>>) {
    constexpr int W   = generic::stream_temporal_columns(sizeof(T), Shape::radius);
    constexpr int Y   = generic::stream_temporal_rows(D);
    const int threads = g.threads_fast * g.threads_second;
    auto make         = [&](auto depth) -> std::function<void(const T*, T*)> {
      using Kernel = StreamTemporalKernel<T, D, Shape, W, Y, decltype(depth)::value, ExecSpace>;
      Kernel kernel{nullptr, nullptr, g, shape, boundary};
#if defined(SPARSTENCIL_BLOCK_LAUNCH)
      if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
        const auto launch = std::make_shared<const BlockLaunch<Kernel>>(
            space, threads, kernel.scratch_values() * static_cast<long>(sizeof(T)), Kernel::label);
        kernel.g          = chunk_planes(g, generic::stream_temporal_waves(Shape::radius) * launch->resident());
        const long blocks = league(kernel.g);
        return [launch, kernel, blocks](const T* in, T* out) {
          Kernel k = kernel;
          k.in     = in;
          k.out    = out;
          (*launch)(k, blocks);
        };
      }
#endif
      kernel.g = chunk_planes(g, std::max(1L, static_cast<long>(space.concurrency()) / threads));
      return prepared(space, kernel);
    };
    std::function<void(const T*, T*)> step;
    with_depth<generic::stream_temporal_depth(D, Shape::radius)>(steps, [&](auto depth) { step = make(depth); });
    if (step) return step;
  }
  fail("iterate",
       "generic variant: streaming temporal blocking cannot run here (internal: temporal_runnable() not applied)");
}

}  // namespace sparstencil::impl
