#pragma once
/// The rim on CPU threads (host spaces, both Views of unit stride along the fastest kernel
/// axis): the grid walked as rows along that axis, a work item a row. A row with a slower
/// coordinate within the radius of an end is rim from end to end: its terms' source rows
/// are found with wrapped coordinates, and the columns away from its ends summed W at a
/// time as the host rows sum the interior (SparStencil_HostRows.hpp); every other row is
/// rim at its ends only, the radius along the fastest axis, summed point by point. The
/// point-by-point rim kernel (SparStencil_RimKernel.hpp) decodes every point by divisions,
/// which on a CPU cost the 3-D rim as much as the interior (perf_tests/RESULTS.md). Sums add
/// the terms in the table's order (the kernel axes' order, as every kernel adds them), so
/// a point's bits do not depend on which kernel computed it.
#include <Kokkos_Core.hpp>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GenericShapes.hpp"
#include "SparStencil_HostRows.hpp"
#include "SparStencil_KernelCommon.hpp"
#include "SparStencil_Precision.hpp"

namespace sparstencil::impl {

template <int D, class T, class MemorySpace>
struct HostRimKernel {
  using Acc = accumulator_t<T>;

  const T* in;
  T* out;
  RuntimeShape<D, Acc, MemorySpace> shape;  ///< offsets by view axis, in the kernel axes' order
  Kokkos::Array<int, D> axis;               ///< view axis of kernel axis k (fastest last)
  Kokkos::Array<int, D> extent, radius;     ///< by kernel axis
  Kokkos::Array<long, D> in_stride, out_stride;
  Boundary boundary;

  /// Rows of the grid along the fastest kernel axis: the work items.
  long rows() const {
    long n = 1;
    for (int k = 0; k + 1 < D; ++k) n *= extent[k];
    return n;
  }

  KOKKOS_INLINE_FUNCTION void operator()(long row) const {
    Kokkos::Array<int, D> i{};
    bool rim_row = false;
    long from = 0, to = 0;
    for (int k = D - 2; k >= 0; --k) {
      i[k] = static_cast<int>(row % extent[k]);
      row /= extent[k];
      rim_row = rim_row || i[k] < radius[k] || i[k] >= extent[k] - radius[k];
      from += i[k] * in_stride[k];
      to += i[k] * out_stride[k];
    }
    const int n = extent[D - 1], r = radius[D - 1];
    if (boundary == Boundary::fixed_rim) {  // in's rim copied: a rim row whole, else its two ends
      auto copy = [&](int c0, int c1) {
        for (int c = c0; c < c1; ++c) out[to + c] = in[from + c];
      };
      if (rim_row) {
        copy(0, n);
      } else {
        copy(0, r);
        copy(n - r, n);
      }
      return;
    }
    for (int c = 0; c < r; ++c) point(i, c, to);
    for (int c = n - r; c < n; ++c) point(i, c, to);
    if (!rim_row) return;
    constexpr int W = host_columns<Acc>;
    const int terms = static_cast<int>(shape.weights.extent(0));
    int c           = r;
    for (; c + W <= n - r; c += W) {
      host_sums_t<Acc> acc[1] = {};
      for (int t = 0; t < terms; ++t) {
        host_sums_t<Acc> x;
        load_sums<Acc>(x, in + source_row(i, t) + c + shape.offsets(t, axis[D - 1]));
        acc[0] += shape.weights(t) * x;
      }
      store_sums<Acc>(out + to + c, 1, acc[0]);
    }
    for (; c < n - r; ++c) point(i, c, to);
  }

  /// Offset in `in` of term t's row for the row at slower coordinates i, wrapped (|offset|
  /// <= radius < extent / 2: one wrap is enough).
  KOKKOS_INLINE_FUNCTION long source_row(const Kokkos::Array<int, D>& i, int t) const {
    long at = 0;
    for (int k = 0; k + 1 < D; ++k) at += wrapped(i[k] + shape.offsets(t, axis[k]), extent[k]) * in_stride[k];
    return at;
  }

  /// The point at column c of the row at slower coordinates i, every read wrapped.
  KOKKOS_INLINE_FUNCTION void point(const Kokkos::Array<int, D>& i, int c, long to) const {
    const int terms = static_cast<int>(shape.weights.extent(0));
    Acc sum         = 0;
    for (int t = 0; t < terms; ++t) {
      const long at = source_row(i, t) + wrapped(c + shape.offsets(t, axis[D - 1]), extent[D - 1]);
      sum += shape.weights(t) * static_cast<Acc>(in[at]);
    }
    out[to + c] = static_cast<T>(sum);
  }
};

}  // namespace sparstencil::impl
