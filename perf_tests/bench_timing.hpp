#pragma once
// Device time per launch for the Kokkos benchmarks: CUDA events around back-to-back
// launches where Kokkos has CUDA (a fence and the host's clock elsewhere), after a
// warm-up; the median of the repeats.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sparstencil::bench {

inline double median(std::vector<double> v) {
  if (v.empty()) throw std::runtime_error("bench: the median of no samples");
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Seconds per launch: `launch(k)` for k = 0, 1, ... back to back on the default
/// execution space, `launches` a sample, `repeats` samples, after 10 launches of warm-up.
inline double seconds_per_launch(const std::function<void(int)>& launch, int launches, int repeats) {
  using Space = Kokkos::DefaultExecutionSpace;
  for (int k = 0; k < 10; ++k) launch(k);
  Kokkos::fence();
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
#if defined(KOKKOS_ENABLE_CUDA)
    auto check = [](cudaError_t status, const char* call) {
      if (status != cudaSuccess)
        throw std::runtime_error(std::string("bench: ") + call + ": " + cudaGetErrorString(status));
    };
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    check(cudaEventRecord(start, Space().cuda_stream()), "cudaEventRecord");
    for (int k = 0; k < launches; ++k) launch(k);
    check(cudaEventRecord(stop, Space().cuda_stream()), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "a launch (cudaEventSynchronize)");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    samples.push_back(ms * 1e-3 / launches);
#else
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < launches; ++k) launch(k);
    Kokkos::fence();
    samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / launches);
#endif
  }
  return median(samples);
}

}  // namespace sparstencil::bench
