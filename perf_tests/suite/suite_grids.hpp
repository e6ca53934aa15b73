#pragma once
// Grids for the benchmark suite: storage formats, random fills (never zeros), rotating
// input sets, windows copied to the host for the accuracy check, and the timer.
#include <Kokkos_Core.hpp>

#include <SparStencil.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace sparstencil::bench {

/// How grid values are stored. f16 is Kokkos' half_t (only where it is 16 bits), bf16 the
/// top half of a float (sparse executor only).
enum class Storage { f16, bf16, f32, f64 };

inline const char* to_string(Storage s) {
  switch (s) {
    case Storage::f16: return "f16";
    case Storage::bf16: return "bf16";
    case Storage::f32: return "f32";
    default: return "f64";
  }
}
inline int storage_bytes(Storage s) { return s == Storage::f64 ? 8 : s == Storage::f32 ? 4 : 2; }

using Bytes = Kokkos::View<unsigned char*>;

namespace detail {
KOKKOS_INLINE_FUNCTION float random_value(long i, unsigned seed) {
  unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
  h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
  return (0.25f + 0.75f * static_cast<float>(h & 0xFFFFFF) / 16777216.0f) * ((h >> 31) ? -1.0f : 1.0f);
}
KOKKOS_INLINE_FUNCTION std::uint16_t bf16_bits(float v) {  // round to nearest even
  std::uint32_t bits = 0;
  memcpy(&bits, &v, 4);
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}
KOKKOS_INLINE_FUNCTION double load(const unsigned char* p, Storage s, long i) {
  switch (s) {
    case Storage::f16: return static_cast<float>(reinterpret_cast<const Kokkos::Experimental::half_t*>(p)[i]);
    case Storage::bf16: {
      const std::uint32_t bits = static_cast<std::uint32_t>(reinterpret_cast<const std::uint16_t*>(p)[i]) << 16;
      float v                  = 0;
      memcpy(&v, &bits, 4);
      return v;
    }
    case Storage::f32: return reinterpret_cast<const float*>(p)[i];
    default: return reinterpret_cast<const double*>(p)[i];
  }
}
}  // namespace detail

/// `inputs` grids of random values (each its own seed, never overwritten by a timed run,
/// so values stay bounded whatever the stencil's gain) and two outputs. Enough inputs
/// rotate that together they are at least four times `cache_bytes`, so no timed run reads
/// what an earlier one left in the cache.
struct GridSet {
  Storage storage;
  std::vector<long> extents;
  long points = 1;
  std::vector<Bytes> inputs, outputs;

  GridSet(Storage s, const std::vector<long>& e, std::size_t cache_bytes) : storage(s), extents(e) {
    for (long n : e) points *= n;
    const std::size_t bytes = static_cast<std::size_t>(points) * storage_bytes(s);
    const std::size_t count = std::clamp<std::size_t>((4 * cache_bytes + bytes - 1) / bytes, 2, 8);
    for (std::size_t g = 0; g < count + 2; ++g) {
      Bytes b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "suite grid"), bytes);
      fill(b, 1234u + 7919u * static_cast<unsigned>(g));
      (g < count ? inputs : outputs).push_back(b);
    }
    Kokkos::fence();
  }
  void fill(const Bytes& b, unsigned seed) const {
    const Storage s = storage;
    Kokkos::parallel_for(
        "suite fill", points, KOKKOS_LAMBDA(long i) {
          const float v    = detail::random_value(i, seed);
          unsigned char* p = b.data();
          if (s == Storage::f16)
            reinterpret_cast<Kokkos::Experimental::half_t*>(p)[i] = Kokkos::Experimental::half_t(v);
          else if (s == Storage::bf16) reinterpret_cast<std::uint16_t*>(p)[i] = detail::bf16_bits(v);
          else if (s == Storage::f32) reinterpret_cast<float*>(p)[i] = v;
          else reinterpret_cast<double*>(p)[i] = v;
        });
  }
  /// Run i reads input i mod inputs and writes output i mod 2.
  const void* in(int i) const { return inputs[i % inputs.size()].data(); }
  void* out(int i) const { return outputs[i % 2].data(); }
};

/// The values of a box of the grid (origin per axis, wrapped periodically; extents per
/// axis), as doubles on the host, row-major.
inline std::vector<double> window(const void* grid, Storage storage, const std::vector<long>& extents,
                                  const std::vector<long>& origin, const std::vector<long>& size) {
  const int D = static_cast<int>(extents.size());
  Kokkos::Array<long, 3> e{1, 1, 1}, o{0, 0, 0}, w{1, 1, 1};
  long n = 1;
  for (int a = 0; a < D; ++a) {
    e[3 - D + a] = extents[a];
    o[3 - D + a] = origin[a];
    w[3 - D + a] = size[a];
    n *= size[a];
  }
  Kokkos::View<double*> values("suite window", n);
  const auto* p = static_cast<const unsigned char*>(grid);
  Kokkos::parallel_for(
      "suite window", n, KOKKOS_LAMBDA(long flat) {
        long i[3], rest = flat;
        for (int a = 2; a >= 0; --a) {
          i[a] = ((o[a] + rest % w[a]) % e[a] + e[a]) % e[a];
          rest /= w[a];
        }
        values(flat) = detail::load(p, storage, (i[0] * e[1] + i[1]) * e[2] + i[2]);
      });
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
  return std::vector<double>(host.data(), host.data() + n);
}

/// Median seconds of `run(i)` over `repeats` timed runs after `warmup` untimed ones:
/// CUDA events on the default instance's stream on GPUs, fenced wall time on hosts.
template <class Run>
double median_seconds(int warmup, int repeats, Run&& run) {
  Kokkos::Timer warming;
  for (int i = 0; i < warmup; ++i) {
    run(i);
    if (i == 0) {
      Kokkos::fence();
      if (warming.seconds() > 0.05) break;  // a slow case is warm after one run
    }
  }
  Kokkos::fence();
  std::vector<double> seconds;
#if defined(KOKKOS_ENABLE_CUDA)
  const cudaStream_t stream = Kokkos::DefaultExecutionSpace().cuda_stream();
  cudaEvent_t start, stop;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    throw std::runtime_error("median_seconds: cudaEventCreate failed");
  }
  for (int i = 0; i < repeats; ++i) {
    cudaEventRecord(start, stream);
    run(warmup + i);
    cudaEventRecord(stop, stream);
    const cudaError_t status = cudaEventSynchronize(stop);
    float ms                 = 0;
    if (status != cudaSuccess || cudaEventElapsedTime(&ms, start, stop) != cudaSuccess) {
      throw std::runtime_error(std::string("median_seconds: ") + cudaGetErrorString(status));
    }
    seconds.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
#else
  for (int i = 0; i < repeats; ++i) {
    Kokkos::Timer timer;
    run(warmup + i);
    Kokkos::fence();
    seconds.push_back(timer.seconds());
  }
#endif
  std::nth_element(seconds.begin(), seconds.begin() + repeats / 2, seconds.end());
  return seconds[repeats / 2];
}

}  // namespace sparstencil::bench
