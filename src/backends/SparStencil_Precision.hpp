#pragma once
/// Precision rules shared by every executor and its tests (docs/PRECISION.md).
/// Storage follows the View; sums are accumulated in float for half_t and float and in
/// double for double, with the weights rounded once to the accumulation type.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace sparstencil {

/// True where Kokkos has a genuine 16-bit half_t (CUDA, HIP, SYCL builds); on host-only
/// Kokkos 3.4 builds half_t is an alias of float.
inline constexpr bool has_distinct_half = !std::is_same_v<Kokkos::Experimental::half_t, float>;

template <class T>
inline constexpr bool is_supported_scalar =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Kokkos::Experimental::half_t>;

/// The type sums are accumulated in.
template <class T>
using accumulator_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// Unit roundoff u (half an ulp of 1) of a storage or accumulation type.
template <class T>
constexpr double unit_roundoff() {
  if constexpr (std::is_same_v<T, double>) {
    return 0x1p-53;
  } else if constexpr (std::is_same_v<T, float>) {
    return 0x1p-24;
  } else {
    static_assert(std::is_same_v<T, Kokkos::Experimental::half_t>, "unsupported scalar type");
    return 0x1p-11;  // IEEE binary16: 11-bit significand
  }
}

/// Error bound factor for one step with `terms` terms in storage type T:
///   |computed - exact| <= step_error_factor<T>(n) * sum_k |w_k| |in(x + o_k)|
/// where `exact` is the double-precision result on the same (already rounded) input.
/// (n + 1) u_acc covers the weights' rounding and the n-term sum, u_T the final store;
/// one more u_acc absorbs second-order terms.
template <class T>
constexpr double step_error_factor(std::size_t terms) {
  return (static_cast<double>(terms) + 2.0) * unit_roundoff<accumulator_t<T>>() + unit_roundoff<T>();
}

}  // namespace sparstencil
