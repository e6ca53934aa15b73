#pragma once
/// The interior on CPU threads (the hardware-cached variant on host spaces, where a team is
/// one thread): a tile is walked as V rows along k = 0 at a time (and, in 3-D, row by row
/// along k = 1), each row in blocks of W adjacent values along the contiguous axis, whose
/// V x W sums live in registers. Every input value a block needs is loaded once as a run of
/// W values (one vector load where the compiler vectorises, checked by timing:
/// perf_tests/RESULTS.md) and added to each of the V outputs it feeds. Terms are added in
/// the order the other kernels add them (accumulate, SparStencil_GenericKernels.hpp), so a
/// point's bits do not depend on which kernel computed it.
#include <Kokkos_Core.hpp>

#include <type_traits>

#include "SparStencil_GenericShapes.hpp"
#include "SparStencil_Precision.hpp"

namespace sparstencil::impl {

/// Values a host block holds along the contiguous axis: 64 bytes of sums (one AVX-512
/// register, two AVX2 ones).
template <class Acc>
inline constexpr int host_columns = static_cast<int>(64 / sizeof(Acc));

/// Rows of sums a host block holds at most: eight where AVX-512's 32 vector registers hold
/// them (eight independent FMA chains, as two FMA ports of four cycles' latency need: four
/// bind a compute-bound shape at half the FMA rate), four elsewhere.
#if defined(__AVX512F__)
inline constexpr int host_sum_rows = 8;
#else
inline constexpr int host_sum_rows = 4;
#endif

template <class Shape>
struct IsRuntimeShape : std::false_type {};
template <int D, class Acc, class MemorySpace>
struct IsRuntimeShape<RuntimeShape<D, Acc, MemorySpace>> : std::true_type {};

/// W sums as one value: a GCC/Clang vector of 64 bytes where the host compiler has them
/// (lowered to the widest registers the target has: one zmm with AVX-512, two ymm with
/// AVX2, four xmm with SSE2), so that a block's sums are vector arithmetic whatever the
/// vectoriser decides; elsewhere an array looped over.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
template <class Acc>
struct HostSums;
template <>
struct HostSums<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct HostSums<double> {
  typedef double type __attribute__((vector_size(64)));
};
template <class Acc>
using host_sums_t = typename HostSums<Acc>::type;

/// W values from `p` (unit stride) into `x` (no vector passed or returned by value: its ABI
/// would depend on the target's vector width, -Wpsabi).
template <class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void load_sums(host_sums_t<Acc>& x, const T* p) {
  constexpr int W = host_columns<Acc>;
  if constexpr (std::is_same_v<T, Acc>) {
    __builtin_memcpy(&x, p, sizeof(x));
  } else {
    Acc values[W];
    for (int w = 0; w < W; ++w) values[w] = static_cast<Acc>(p[w]);
    __builtin_memcpy(&x, values, sizeof(x));
  }
}
/// The W sums stored at `to`, `of` apart.
template <class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_sums(T* to, long of, const host_sums_t<Acc>& sums) {
  constexpr int W = host_columns<Acc>;
  Acc values[W];
  __builtin_memcpy(values, &sums, sizeof(values));
  if (of == 1 && std::is_same_v<T, Acc>) {
    __builtin_memcpy(to, values, sizeof(values));
  } else {
    for (int w = 0; w < W; ++w) to[w * of] = static_cast<T>(values[w]);
  }
}
#else
template <class Acc>
struct HostSumsArray {
  Acc v[host_columns<Acc>];
  KOKKOS_FORCEINLINE_FUNCTION HostSumsArray& operator+=(const HostSumsArray& o) {
    for (int w = 0; w < host_columns<Acc>; ++w) v[w] += o.v[w];
    return *this;
  }
  friend KOKKOS_FORCEINLINE_FUNCTION HostSumsArray operator*(Acc a, HostSumsArray x) {
    for (int w = 0; w < host_columns<Acc>; ++w) x.v[w] *= a;
    return x;
  }
};
template <class Acc>
using host_sums_t = HostSumsArray<Acc>;
template <class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void load_sums(host_sums_t<Acc>& x, const T* p) {
  for (int w = 0; w < host_columns<Acc>; ++w) x.v[w] = static_cast<Acc>(p[w]);
}
template <class Acc, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_sums(T* to, long of, const host_sums_t<Acc>& sums) {
  for (int w = 0; w < host_columns<Acc>; ++w) to[w * of] = static_cast<T>(sums.v[w]);
}
#endif

/// V blocks of W outputs: rows base + v * stride[0], columns base + w (the contiguous
/// axis has unit stride). Fixed shapes unrolled, run-time ones looped over their terms.
/// Each lane adds its terms as `acc += weight * x` in the other kernels' order.
template <int V, class Acc, class Shape, class T>
KOKKOS_FORCEINLINE_FUNCTION void accumulate_columns(const Shape& shape, const T* src, long base,
                                                    const Kokkos::Array<long, Shape::rank>& stride,
                                                    host_sums_t<Acc> (&acc)[V],
                                                    const Kokkos::Array<int, Shape::rank>& axis) {
  if constexpr (IsRuntimeShape<Shape>::value) {
    const int terms = static_cast<int>(shape.weights.extent(0));
    for (int t = 0; t < terms; ++t) {
      long offset = base;
      for (int k = 0; k < Shape::rank; ++k) offset += shape.offsets(t, axis[k]) * stride[k];
      const Acc weight = shape.weights(t);
      SPARSTENCIL_UNROLL
      for (int v = 0; v < V; ++v) {
        host_sums_t<Acc> x;
        load_sums<Acc>(x, src + offset + v * stride[0]);
        acc[v] += weight * x;
      }
    }
  } else {
    (void)axis;
    constexpr int R = Shape::radius;
    const T* p      = src + base;
    const long s0   = stride[0];
    const long s1   = Shape::rank == 3 ? stride[1] : 0;
    SPARSTENCIL_UNROLL
    for (int j = 0; j < V + 2 * R; ++j) {
      SPARSTENCIL_UNROLL
      for (int u = 0; u < Shape::rest_count; ++u) {
        bool needed = false;
        SPARSTENCIL_UNROLL
        for (int v = 0; v < V; ++v) needed = needed || Shape::has(j - R - v, u);
        if (!needed) continue;
        long offset = (j - R) * s0;
        if constexpr (Shape::rank == 2) offset += Shape::rest_offset(u, 1);
        if constexpr (Shape::rank == 3) offset += Shape::rest_offset(u, 1) * s1 + Shape::rest_offset(u, 2);
        host_sums_t<Acc> x;
        load_sums<Acc>(x, p + offset);
        SPARSTENCIL_UNROLL
        for (int v = 0; v < V; ++v) {
          if (Shape::has(j - R - v, u)) acc[v] += shape.weights[(j - v) * Shape::rest_count + u] * x;
        }
      }
    }
  }
}

}  // namespace sparstencil::impl
