#pragma once
/// A View's element at a multi-index of its rank, for kernels written once for 1-3 D (the
/// generic executor's rim kernel, the distributed plans' halo packing).
#include <Kokkos_Core.hpp>

namespace sparstencil::impl {

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

}  // namespace sparstencil::impl
