#pragma once
/// Whether two strided grids share an element: decided element by element
/// where the strides allow it (equal strides, as two subviews of one allocation have),
/// conservatively (their spans meet) elsewhere. A step must never read what it wrote.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace sparstencil::impl {

enum class Overlap { none, shared_elements, undecided };

namespace overlap_detail {

inline long floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline long ceil_div(long a, long b) { return -floor_div(-a, b); }

/// Whether delta = sum_a k_a stride[a] for some integers lo[a] <= k_a <= hi[a], axes from
/// `axis` on (strides positive, largest first). `budget` bounds the search.
inline Overlap representable(long delta, const long* stride, const long* lo, const long* hi, int axis, int dims,
                             long& budget) {
  if (axis == dims) return delta == 0 ? Overlap::shared_elements : Overlap::none;
  long rest_lo = 0, rest_hi = 0;  // what the later axes can add
  for (int b = axis + 1; b < dims; ++b) rest_lo += lo[b] * stride[b], rest_hi += hi[b] * stride[b];
  const long s     = stride[axis];
  const long first = std::max(ceil_div(delta - rest_hi, s), lo[axis]);
  const long last  = std::min(floor_div(delta - rest_lo, s), hi[axis]);
  bool undecided   = false;
  for (long k = first; k <= last; ++k) {
    if (--budget < 0) return Overlap::undecided;
    const Overlap rest = representable(delta - k * s, stride, lo, hi, axis + 1, dims, budget);
    if (rest == Overlap::shared_elements) return rest;
    undecided = undecided || rest == Overlap::undecided;
  }
  return undecided ? Overlap::undecided : Overlap::none;
}

}  // namespace overlap_detail

/// Two grids of `dims` axes, grid x of `x_extent` values from byte address `x`, grid y of
/// `y_extent` from `y`, elements of `element_bytes` bytes, strides in elements: exact where
/// the spans are apart or the strides equal, `undecided` where spans of unequal strides meet.
inline Overlap grid_overlap(std::uintptr_t x, const long* x_stride, const long* x_extent, std::uintptr_t y,
                            const long* y_stride, const long* y_extent, int dims, std::size_t element_bytes) {
  // A grid's span: from its lowest to its highest element (negative strides run back).
  auto span = [&](std::uintptr_t first, const long* stride, const long* extent) {
    long low = 0, high = 0;
    for (int a = 0; a < dims; ++a) (stride[a] < 0 ? low : high) += (extent[a] - 1) * stride[a];
    const auto bytes = static_cast<long>(element_bytes);
    return std::pair<std::uintptr_t, std::uintptr_t>{first + static_cast<std::uintptr_t>(low * bytes),
                                                     first + static_cast<std::uintptr_t>((high + 1) * bytes)};
  };
  for (int a = 0; a < dims; ++a) {
    if (x_extent[a] < 1 || y_extent[a] < 1) return Overlap::none;
  }
  const auto [x_begin, x_end] = span(x, x_stride, x_extent);
  const auto [y_begin, y_end] = span(y, y_stride, y_extent);
  if (!(x_begin < y_end && y_begin < x_end)) return Overlap::none;  // spans apart
  const bool same_strides = std::equal(x_stride, x_stride + dims, y_stride);
  const long distance     = static_cast<long>(y - x);  // two's complement: negative where y < x
  if (!same_strides || distance % static_cast<long>(element_bytes) != 0) return Overlap::undecided;
  // Equal strides: x(i) and y(j) are one element exactly when y - x = sum_a (i_a - j_a) s_a,
  // k_a = i_a - j_a within [-(y_extent - 1), x_extent - 1] (mirrored for a negative stride).
  std::array<std::array<long, 3>, 8> axes{};  // |stride|, lo, hi
  for (int a = 0; a < dims; ++a) {
    const long lo = -(y_extent[a] - 1), hi = x_extent[a] - 1;
    axes[a] = x_stride[a] >= 0 ? std::array<long, 3>{x_stride[a], lo, hi} : std::array<long, 3>{-x_stride[a], -hi, -lo};
  }
  std::sort(axes.begin(), axes.begin() + dims, [](const auto& p, const auto& q) { return p[0] > q[0]; });
  long stride[8], lo[8], hi[8];
  for (int a = 0; a < dims; ++a) {
    if (axes[a][0] == 0) return Overlap::undecided;
    stride[a] = axes[a][0], lo[a] = axes[a][1], hi[a] = axes[a][2];
  }
  long budget = 1L << 20;
  return overlap_detail::representable(distance / static_cast<long>(element_bytes), stride, lo, hi, 0, dims, budget);
}

/// The same for two grids of one shape, `extent`.
inline Overlap grid_overlap(std::uintptr_t in, const long* in_stride, std::uintptr_t out, const long* out_stride,
                            const long* extent, int dims, std::size_t element_bytes) {
  return grid_overlap(in, in_stride, extent, out, out_stride, extent, dims, element_bytes);
}

}  // namespace sparstencil::impl
