// The matrix-core instructions the dense and sparse backends use, at their peak: every
// warp of a full device runs `chains` independent multiply-accumulate chains on register
// operands (no memory in the loop), CUDA events over back-to-back launches after a
// warm-up, the median of the repeats. Operands are nonzero; results are written out so
// nothing is optimised away. The cost model's dense rates (SparStencil_Device.cpp) and
// the dense acceptance's "measured reason" come from these figures.
//   sparstencil_bench_matrix_cores [--repeats 7]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

constexpr int chains = 8, iterations = 4096, block = 256;

/// One instruction: its registers a lane and one issue.
struct F16 {
  static constexpr const char* name = "mma.sync m16n8k16 f16 -> f32";
  static constexpr double flops     = 2.0 * 16 * 8 * 16;
  using Acc                         = float[4];
  __device__ static void run(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
struct BF16 {
  static constexpr const char* name = "mma.sync m16n8k16 bf16 -> f32";
  static constexpr double flops     = 2.0 * 16 * 8 * 16;
  __device__ static void run(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

struct TF32 {
  static constexpr const char* name = "mma.sync m16n8k8 tf32 -> f32";
  static constexpr double flops     = 2.0 * 16 * 8 * 8;
  __device__ static void run(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

template <class I>
__global__ void __launch_bounds__(block) half_peak(float* out) {
  // 1.0 and 0.5: f16 halves (0x3c00, 0x3800), bf16 halves (0x3f80, 0x3f00) or tf32 words
  // (0x3f800000, 0x3f000000): nonzero operands.
  const bool bf = std::is_same_v<I, BF16>, tf32 = std::is_same_v<I, TF32>;
  const unsigned one  = tf32 ? 0x3f800000u : bf ? 0x3f803f80u : 0x3c003c00u;
  const unsigned half = tf32 ? 0x3f000000u : bf ? 0x3f003f00u : 0x38003800u;
  unsigned a[4] = {one, half, one, half}, b[2] = {half, one};
  float c[chains][4];
  for (int j = 0; j < chains; ++j)
    for (int i = 0; i < 4; ++i) c[j][i] = static_cast<float>(threadIdx.x % 7 + j);
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < chains; ++j) I::run(c[j], a, b);
  }
  float sum = 0;
  for (int j = 0; j < chains; ++j) sum += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

/// f64 m M n8 k K: m8n8k4 (sm_80+) and, on sm_90, m16n8k4 and m16n8k16 (the larger DMMA shapes).
template <int M, int K>
__global__ void __launch_bounds__(block) double_peak(double* out) {
  constexpr int na = M * K / 32, nb = K / 4, nc = M * 8 / 32;
  double av[na], bv[nb], c[chains][nc];
  for (int i = 0; i < na; ++i) av[i] = 1.0 + 1e-3 * (threadIdx.x % 5 + i);
  for (int i = 0; i < nb; ++i) bv[i] = 0.5 - 1e-3 * (threadIdx.x % 3 + i);
  for (int j = 0; j < chains; ++j)
    for (int i = 0; i < nc; ++i) c[j][i] = 0.25 * (j + 1);
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < chains; ++j) {
      if constexpr (M == 8) {
        asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                     : "+d"(c[j][0]), "+d"(c[j][1])
                     : "d"(av[0]), "d"(bv[0]));
      } else if constexpr (K == 4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                     : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
                     : "d"(av[0]), "d"(av[1]), "d"(bv[0]));
#endif
      } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
            "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
            : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
            : "d"(av[0]), "d"(av[1]), "d"(av[2]), "d"(av[3]), "d"(av[4]), "d"(av[5]), "d"(av[6]), "d"(av[7]),
              "d"(bv[0]), "d"(bv[1]), "d"(bv[2]), "d"(bv[3]));
#endif
      }
    }
  }
  double sum = 0;
  for (int j = 0; j < chains; ++j)
    for (int i = 0; i < nc; ++i) sum += c[j][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <class Out, class Kernel>
void measure(const char* name, double flops_per_issue, Kernel kernel, int blocks, int repeats) {
  Out* out = nullptr;
  check(cudaMalloc(&out, sizeof(Out) * blocks * block), "cudaMalloc");
  for (int w = 0; w < 3; ++w) kernel<<<blocks, block>>>(out);
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> samples;
  constexpr int launches = 5;
  for (int r = 0; r < repeats; ++r) {
    check(cudaEventRecord(start), "cudaEventRecord");
    for (int l = 0; l < launches; ++l) kernel<<<blocks, block>>>(out);
    check(cudaGetLastError(), "launch");
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    samples.push_back(ms * 1e-3 / launches);
  }
  std::sort(samples.begin(), samples.end());
  Out first = 0;
  check(cudaMemcpy(&first, out, sizeof first, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  check(cudaFree(out), "cudaFree");
  const double warps = static_cast<double>(blocks) * block / 32;
  const double flops = warps * iterations * chains * flops_per_issue;
  std::printf("%-34s %8.1f TFLOP/s  (%d blocks x %d threads, %d chains, median of %d; a result %.4g)\n", name,
              flops / samples[samples.size() / 2] / 1e12, blocks, block, chains, repeats, static_cast<double>(first));
  if (first == 0) throw std::runtime_error("bench_matrix_cores: a zero result: the operands did not reach the output");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int repeats = 7;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
      else throw std::runtime_error("usage: sparstencil_bench_matrix_cores [--repeats N]");
    }
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    if (prop.major < 8) throw std::runtime_error("device 0 has no mma.sync of these shapes (compute capability 8.0+)");
    std::printf("%s, %d SMs, compute capability %d.%d\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor);
    const int blocks = prop.multiProcessorCount * 8;  // 64 warps an SM
    measure<float>(F16::name, F16::flops, half_peak<F16>, blocks, repeats);
    measure<float>(BF16::name, BF16::flops, half_peak<BF16>, blocks, repeats);
    measure<float>(TF32::name, TF32::flops, half_peak<TF32>, blocks, repeats);
    measure<double>("mma.sync m8n8k4 f64", 2.0 * 8 * 8 * 4, double_peak<8, 4>, blocks, repeats);
    if (prop.major >= 9) {
      measure<double>("mma.sync m16n8k4 f64 (sm_90)", 2.0 * 16 * 8 * 4, double_peak<16, 4>, blocks, repeats);
      measure<double>("mma.sync m16n8k16 f64 (sm_90)", 2.0 * 16 * 8 * 16, double_peak<16, 16>, blocks, repeats);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sparstencil_bench_matrix_cores: %s\n", e.what());
    return 1;
  }
}
