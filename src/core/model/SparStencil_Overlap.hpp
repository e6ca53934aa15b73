#pragma once
/// Whether two strided grids of equal extents share an element: decided element by element
/// where the strides allow it (equal strides, as two subviews of one allocation have),
/// conservatively (their spans meet) elsewhere. A step must never read what it wrote.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>

namespace sparstencil::impl {

enum class Overlap { none, shared_elements, undecided };

namespace overlap_detail {

inline long floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// Whether delta = sum_a k_a stride[a] for some integers |k_a| < extent[a], axes from
/// `axis` on (strides positive, largest first). `budget` bounds the search.
inline Overlap representable(long delta, const long* stride, const long* extent, int axis, int dims, long& budget) {
  if (axis == dims) return delta == 0 ? Overlap::shared_elements : Overlap::none;
  long reach = 0;  // the most the later axes can add or take away
  for (int b = axis + 1; b < dims; ++b) reach += (extent[b] - 1) * stride[b];
  const long s     = stride[axis];
  const long first = std::max(-floor_div(reach - delta, s), -(extent[axis] - 1));  // ceil((delta - reach) / s)
  const long last  = std::min(floor_div(delta + reach, s), extent[axis] - 1);
  bool undecided   = false;
  for (long k = first; k <= last; ++k) {
    if (--budget < 0) return Overlap::undecided;
    const Overlap rest = representable(delta - k * s, stride, extent, axis + 1, dims, budget);
    if (rest == Overlap::shared_elements) return rest;
    undecided = undecided || rest == Overlap::undecided;
  }
  return undecided ? Overlap::undecided : Overlap::none;
}

}  // namespace overlap_detail

/// Two grids of `dims` axes with `extent` values each, elements of `element_bytes` bytes,
/// first elements at byte addresses `in` and `out`, strides in elements.
inline Overlap grid_overlap(std::uintptr_t in, const long* in_stride, std::uintptr_t out, const long* out_stride,
                            const long* extent, int dims, std::size_t element_bytes) {
  long in_last = 0, out_last = 0;
  for (int a = 0; a < dims; ++a) {
    if (extent[a] < 1) return Overlap::none;
    in_last += (extent[a] - 1) * in_stride[a];
    out_last += (extent[a] - 1) * out_stride[a];
  }
  const std::uintptr_t in_end  = in + (static_cast<std::uintptr_t>(in_last) + 1) * element_bytes;
  const std::uintptr_t out_end = out + (static_cast<std::uintptr_t>(out_last) + 1) * element_bytes;
  if (!(in < out_end && out < in_end)) return Overlap::none;  // spans apart
  const bool same_strides = std::equal(in_stride, in_stride + dims, out_stride);
  const long distance     = static_cast<long>(out > in ? out - in : in - out);
  if (!same_strides || distance % static_cast<long>(element_bytes) != 0) return Overlap::undecided;
  // Equal strides: an element is shared exactly when the offset between the first elements
  // is a difference of two index vectors' offsets.
  std::array<std::pair<long, long>, 8> axes{};
  for (int a = 0; a < dims; ++a) axes[a] = {std::labs(in_stride[a]), extent[a]};
  std::sort(axes.begin(), axes.begin() + dims, [](const auto& x, const auto& y) { return x.first > y.first; });
  long stride[8], extents[8];
  for (int a = 0; a < dims; ++a) {
    if (axes[a].first == 0) return Overlap::undecided;
    stride[a] = axes[a].first, extents[a] = axes[a].second;
  }
  long budget = 1L << 20;
  return overlap_detail::representable(distance / static_cast<long>(element_bytes), stride, extents, 0, dims, budget);
}

}  // namespace sparstencil::impl
