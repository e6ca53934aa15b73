#pragma once
/// The field update's streaming pass (SparStencil_FieldUpdate.hpp chooses and launches it).
#include <Kokkos_Core.hpp>

#include <utility>

#include "SparStencil_FieldUpdateKernel.hpp"

namespace sparstencil::impl {

/// Asks for *p's line in L2 (CUDA; nothing elsewhere): the rows a walk reaches later than
/// its registers can hold.
KOKKOS_FORCEINLINE_FUNCTION void prefetch_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

/// The streaming pass, for shapes whose constant-weight stencils fit a window of K
/// cross-sections (offsets along every axis but the slowest) by 2R + 1 rows along the
/// slowest axis, with no coefficient terms. A work item walks `rows` points of the box
/// inside the radius along the slowest axis; each result keeps its input's values at its
/// cross-sections over the last 2R + 1 rows in registers, so a point costs K loads a
/// result, not one a term, and every distance is fixed for the walk. Points outside the
/// box (the frame) follow, one a work item, with the face rules.
/// Star: cross-section 0 is the zero offset and the others are read on the walk's row
/// only (star stencils): they are loaded for the row being computed, not kept.
template <int K, int R, bool Star = false>
struct FieldWindow {
  static constexpr int cross = K, radius = R;
  static constexpr bool star = Star;
};

template <class Types, int NIn, int NOut, class Pointwise, bool WithPoint, class Win>
struct FieldStreamedPass {
  using T                       = typename Types::value_type;
  static constexpr int D        = Types::rank;
  static constexpr int NResults = Types::results;
  using Acc                     = typename Types::Acc;
  using memory_space            = typename Types::memory_space;
  using Kernel                  = FieldPointKernel<Types, NIn, NOut, Pointwise, WithPoint, false>;
  static constexpr int K = Win::cross, R = Win::radius, W = 2 * Win::radius + 1;
  static constexpr bool Star = Win::star;
  static constexpr int Q     = Star ? W : K * W;          ///< values a result keeps
  static constexpr int C     = Star ? W + K - 1 : K * W;  ///< weights a result has
  /// Rows between the row a step loads and the one it asks L2 for: two walks of the
  /// default length ahead (perf_tests/RESULTS.md, 2026-11-24, 282c474).
  static constexpr int ahead = 32;
  Kernel kernel;                                               ///< the fields, the face rules, the pointwise function
  Kokkos::Array<impl::FieldRef<const T, D>, NResults> source;  ///< each result's input
  Kokkos::Array<int, NResults * K> cross_delta{};              ///< [result][k]: memory distance in its input
  /// [result][k][row offset + R]; Star: [result][row offset + R] of cross-section 0,
  /// then [result][W + k - 1] of cross-section k's row
  Kokkos::Array<Acc, NResults * C> cross_weight{};
  int stream = 0, rows = 1;                      ///< the slowest axis; points a walk covers
  Kokkos::Array<int, D> order{}, lo{}, count{};  ///< axes fastest first (stream last); the box inside
  long walks = 0, frame = 0;                     ///< work items walking the box; points outside it
  Kokkos::Array<long, D> slab{};  ///< frame points with axis order[p] outside the box, order[q < p] inside

  explicit FieldStreamedPass(const Kernel& k) : kernel(k) {}

  /// A walk's state (indexed by constants only, so that it lives in registers).
  struct Walk {
    Kokkos::Array<Acc, NResults * Q> queue;  ///< [result][k][row slot]
    Kokkos::Array<const T*, NResults> lead;  ///< each result's input at the next row to load
    Kokkos::Array<const T*, NIn> centre;
    Kokkos::Array<T*, NOut> out;
    Kokkos::Array<int, D>
        x{};  ///< the point; x[stream] advances (every axis set: value-initialised so the compiler need not prove it)
  };

  /// x with its streaming coordinate set to `row`.
  KOKKOS_FORCEINLINE_FUNCTION Kokkos::Array<int, D> at_row(const Kokkos::Array<int, D>& x, int row) const {
    Kokkos::Array<int, D> y;
    SPARSTENCIL_UNROLL
    for (int a = 0; a < D; ++a) y[a] = a == stream ? row : x[a];
    return y;
  }

  /// Loads each result's cross-sections of the row `lead` points at into `slot`.
  KOKKOS_FORCEINLINE_FUNCTION void load_row(Walk& w, int slot) const {
    SPARSTENCIL_UNROLL
    for (int r = 0; r < NResults; ++r) {
      SPARSTENCIL_UNROLL
      for (int k = 0; k < (Star ? 1 : K); ++k) {
        w.queue[r * Q + k * W + slot] = static_cast<Acc>(w.lead[r][cross_delta[r * K + k]]);
      }
      w.lead[r] += source[r].stride[stream];
    }
  }

  /// One point of a walk; Phase: its row's place in the queue's cycle.
  template <int Phase>
  KOKKOS_FORCEINLINE_FUNCTION void step(Walk& w, int row) const {
    if (row + ahead < lo[stream] + count[stream]) {
      SPARSTENCIL_UNROLL
      for (int r = 0; r < NResults; ++r) prefetch_l2(w.lead[r] + ahead * source[r].stride[stream]);
    }
    load_row(w, (Phase + 2 * R) % W);
    Kokkos::Array<Acc, NResults> results;
    SPARSTENCIL_UNROLL
    for (int r = 0; r < NResults; ++r) {
      Acc sum = 0;
      if constexpr (Star) {
        SPARSTENCIL_UNROLL
        for (int d = 0; d < W; ++d) sum += cross_weight[r * C + d] * w.queue[r * Q + (Phase + d) % W];
        const T* on_row = w.lead[r] - (R + 1) * source[r].stride[stream];  // (lead has passed row + R)
        SPARSTENCIL_UNROLL
        for (int k = 1; k < K; ++k)
          sum += cross_weight[r * C + W + k - 1] * static_cast<Acc>(on_row[cross_delta[r * K + k]]);
      } else {
        SPARSTENCIL_UNROLL
        for (int k = 0; k < K; ++k) {
          SPARSTENCIL_UNROLL
          for (int d = 0; d < W; ++d)
            sum += cross_weight[(r * K + k) * W + d] * w.queue[(r * K + k) * W + (Phase + d) % W];
        }
      }
      results[r] = sum;
    }
    Kokkos::Array<Acc, NIn> centres;
    SPARSTENCIL_UNROLL
    for (int i = 0; i < NIn; ++i) {
      centres[i] = static_cast<Acc>(*w.centre[i]);
      w.centre[i] += kernel.in[i].stride[stream];
    }
    kernel.finish(at_row(w.x, row).data(), results, centres, w.out);
    SPARSTENCIL_UNROLL
    for (int o = 0; o < NOut; ++o) w.out[o] += kernel.out[o].stride[stream];
  }

  /// Rows [row, end) of the walk, the queue's cycle unrolled.
  template <std::size_t... Phase>
  KOKKOS_FORCEINLINE_FUNCTION void walk(Walk& w, int row, int end, std::index_sequence<Phase...>) const {
    while (((row < end && (step<static_cast<int>(Phase)>(w, row++), true)) && ...)) {
    }
  }

  /// Items [0, walks) walk the box, the rest are the frame's points.
  KOKKOS_INLINE_FUNCTION void operator()(long item) const {
    if (item >= walks) {
      frame_point(item - walks);
      return;
    }
    Walk w;
    int place[D];  // the walk's first point along order[p]
    SPARSTENCIL_UNROLL
    for (int p = 0; p + 1 < D; ++p) {
      place[p] = static_cast<int>(item % count[order[p]]);
      item /= count[order[p]];
    }
    place[D - 1] = static_cast<int>(item) * rows;
    SPARSTENCIL_UNROLL
    for (int a = 0; a < D; ++a) {
      SPARSTENCIL_UNROLL
      for (int p = 0; p < D; ++p) {
        if (order[p] == a) w.x[a] = lo[a] + place[p];
      }
    }
    const int row = lo[stream] + place[D - 1];
    const int end = row + rows < lo[stream] + count[stream] ? row + rows : lo[stream] + count[stream];
    const Kokkos::Array<int, D> first = at_row(w.x, row - R);
    SPARSTENCIL_UNROLL
    for (int r = 0; r < NResults; ++r) w.lead[r] = source[r].data + source[r].at(first.data());
    SPARSTENCIL_UNROLL
    for (int i = 0; i < NIn; ++i) w.centre[i] = kernel.in[i].data + kernel.in[i].at(w.x.data());
    SPARSTENCIL_UNROLL
    for (int o = 0; o < NOut; ++o) w.out[o] = kernel.out[o].data + kernel.out[o].at(w.x.data());
    SPARSTENCIL_UNROLL
    for (int slot = 0; slot < 2 * R; ++slot) load_row(w, slot);
    walk(w, row, end, std::make_index_sequence<W>{});
  }

  /// Frame point t: slab p (axis order[p] outside the box, order[q < p] inside, the rest
  /// anywhere), decoded fastest axis first.
  KOKKOS_INLINE_FUNCTION void frame_point(long t) const {
    int p = 0;
    while (p + 1 < D && t >= slab[p]) t -= slab[p++];
    int x[D];
    for (int q = 0; q < D; ++q) {
      const int a = order[q];
      const int n = kernel.extent[a];
      const int e = q < p ? count[a] : (q == p ? n - count[a] : n);
      const int c = static_cast<int>(t % e);
      t /= e;
      x[a] = q < p ? lo[a] + c : (q == p && c >= lo[a] ? c + count[a] : c);
    }
    Kokkos::Array<const T*, NIn> at_in;
    Kokkos::Array<T*, NOut> at_out;
    for (int i = 0; i < NIn; ++i) at_in[i] = kernel.in[i].data + kernel.in[i].at(x);
    for (int o = 0; o < NOut; ++o) at_out[o] = kernel.out[o].data + kernel.out[o].at(x);
    kernel.template point<false>(x, at_in, at_out);
  }
};

}  // namespace sparstencil::impl
