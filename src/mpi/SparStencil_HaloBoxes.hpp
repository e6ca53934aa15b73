#pragma once
/// Boxes of a rank's padded block (docs/DISTRIBUTED.md): as subviews, as contiguous
/// buffers, and every box of an exchange packed into or unpacked from its buffer in one
/// launch.

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "SparStencil_Error.hpp"
#include "SparStencil_ViewElement.hpp"
#include "SparStencil_Views.hpp"

namespace sparstencil {
namespace impl {

/// Points [begin, begin + size) of a rank-D View, as a subview.
template <int D, class View>
auto subbox(const View& v, const std::array<long, D>& begin, const std::array<long, D>& size) {
  auto r = [&](int a) { return std::pair<long, long>(begin[a], begin[a] + size[a]); };
  if constexpr (D == 1) {
    return Kokkos::subview(v, r(0));
  } else if constexpr (D == 2) {
    return Kokkos::subview(v, r(0), r(1));
  } else {
    return Kokkos::subview(v, r(0), r(1), r(2));
  }
}

/// `size` values of T at `data` in MemSpace, as an unmanaged contiguous (LayoutRight) View.
template <class MemSpace, int D, class T>
auto packed(T* data, const std::array<long, D>& size) {
  using View = Kokkos::View<typename grid_data<T, D>::type, Kokkos::LayoutRight, MemSpace,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if constexpr (D == 1) {
    return View(data, size[0]);
  } else if constexpr (D == 2) {
    return View(data, size[0], size[1]);
  } else {
    return View(data, size[0], size[1], size[2]);
  }
}

/// Boxes of a padded field copied to or from contiguous buffers (each box's points in
/// LayoutRight order) in one launch: every message of an exchange packed, or unpacked,
/// at once instead of a copy each.
template <class PaddedView, int D>
struct BoxCopies {
  using T                   = typename PaddedView::non_const_value_type;
  static constexpr int most = 26;  ///< the neighbours of a 3-D block
  struct Box {
    T* data    = nullptr;                   ///< the box's contiguous values
    long first = 0;                         ///< the box's first index in the launch
    Kokkos::Array<int, D> begin{}, size{};  ///< in the padded allocation's coordinates
  };
  PaddedView field;
  Kokkos::Array<Box, most> boxes;
  int count   = 0;
  long total  = 0;      ///< points of all boxes
  bool unpack = false;  ///< buffers to the field (else the field to buffers)

  void add(T* data, const Kokkos::Array<int, D>& begin, const Kokkos::Array<int, D>& size) {
    if (count == most) fail("DistributedPlan", "more than ", most, " boxes in one copy (internal)");
    boxes[count] = Box{data, total, begin, size};
    long points  = 1;
    for (int k = 0; k < D; ++k) points *= size[k];
    total += points;
    ++count;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    int m = 0;
    while (m + 1 < count && boxes[m + 1].first <= i) ++m;
    const Box& b = boxes[m];
    long r       = i - b.first;
    Kokkos::Array<int, D> c;
    for (int k = D - 1; k >= 0; --k) c[k] = b.begin[k] + static_cast<int>(r % b.size[k]), r /= b.size[k];
    T& value = element<D>(field, c);
    if (unpack) value = b.data[i - b.first];
    else b.data[i - b.first] = value;
  }
  template <class ExecSpace>
  void run(const ExecSpace& space) const {
    if (count == 0) return;
    // Light-weight: the boxes travel in the kernel's parameters, not through constant
    // memory (whose launches wait on the host for the one before).
    static_assert(sizeof(BoxCopies) < 4096, "the halo copies must fit the launch parameters");
    using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>,
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>;
    Kokkos::parallel_for("sparstencil::halo_copies", Policy(space, 0, total), *this);
  }
};

}  // namespace impl

}  // namespace sparstencil
