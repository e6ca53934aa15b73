// Compute-bound single steps on the plain cores against the device's FMA peak, in one run:
//   sparstencil_bench_compute_bound [--launches 20] [--repeats 7] [--small] [--dense]
// - peak: a microbenchmark of independent FMA chains (eight a thread, every thread of a
//   full grid; on host spaces twelve chains of 64-byte vectors a thread), float and
//   double: the FMAs a second the device issues at best;
// - the generic executor's single step (StencilPlan::apply, periodic, autotuned) of the
//   15 x 15 and 7 x 7 boxes at 10240^2 and the 5 x 5 x 5 box at 512^3 (96^2 / 48^3 with --small), float
//   and double, random weights and data: GStencil/s and FMAs a second (one an output
//   point and term) as a share of the peak of the same precision.
// - with --dense instead (a build with the dense executor on CUDA): the dense matrix-core
//   backend beside the generic executor in the same run on the boxes the plain cores are compute
//   bound on: the 15 x 15 box in half, float (tf32 operands) and double, Box-2D49P and the
//   7 x 7 x 7 box in float and double (and the memory-bound 3 x 3 box in half and float, for
//   the cost model); float read as f16 operands (Options::float_operands) on the 15 x 15,
//   7 x 7, 3 x 3 and 7 x 7 x 7 boxes, and as bf16 on the 15 x 15 box.
// Device time per launch: bench_timing.hpp.
#include <SparStencil.hpp>

#include <cmath>
#include <cstdio>
#include <type_traits>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.hpp"

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using sparstencil::bench::seconds_per_launch;

/// Eight independent chains a = a * b + c a thread; the sums are stored so none is dropped.
template <class T>
struct FmaChains {
  static constexpr int chains = 8;
  Kokkos::View<T*, Space::memory_space> out;
  T b, c;
  int iterations;
  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    T a[chains];
    for (int k = 0; k < chains; ++k) a[k] = static_cast<T>(i % 1024 + k) * static_cast<T>(1e-3);
    for (int n = 0; n < iterations; ++n) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll
#endif
      for (int k = 0; k < chains; ++k) a[k] = a[k] * b + c;
    }
    T sum = 0;
    for (int k = 0; k < chains; ++k) sum += a[k];
    out(i) = sum;
  }
};

/// On host spaces: twelve independent chains of 64-byte vectors a thread (GCC/Clang vector
/// types, lowered to the widest registers the target has), enough to cover an FMA unit's
/// latency on two ports; a scalar chain would measure the latency, not the peak.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)
#define SPARSTENCIL_BENCH_HOST_FMA_CHAINS 1
template <class T>
struct HostFmaChains {
  static constexpr int chains = 12;
  static constexpr int lanes  = static_cast<int>(64 / sizeof(T));
  typedef T Vector __attribute__((vector_size(64)));
  Kokkos::View<T*, Space::memory_space> out;
  T b, c;
  int iterations;
  void operator()(const long i) const {
    Vector a[chains];
    for (int k = 0; k < chains; ++k) {
      for (int w = 0; w < lanes; ++w) a[k][w] = static_cast<T>((i + k + w) % 1024) * static_cast<T>(1e-3);
    }
    const Vector vb = a[0] * T(0) + b, vc = a[0] * T(0) + c;
    for (int n = 0; n < iterations; ++n) {
#pragma GCC unroll 12
      for (int k = 0; k < chains; ++k) a[k] = a[k] * vb + vc;
    }
    T sum = 0;
    for (int k = 0; k < chains; ++k) {
      for (int w = 0; w < lanes; ++w) sum += a[k][w];
    }
    out(i) = sum;
  }
};
#endif

/// FMAs a second of `kernel` run over `items` work items, each of `fmas` FMAs; its sums
/// checked, so that none was optimised away.
template <class Kernel>
double fmas_per_second(const Kernel& kernel, long items, double fmas, int repeats) {
  const double seconds = seconds_per_launch(
      [&](int) {
        Kokkos::parallel_for("sparstencil::bench::fma_chains",
                             Kokkos::RangePolicy<Space, Kokkos::IndexType<long>>(0, items), kernel);
      },
      3, repeats);
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), kernel.out);
  if (!(host(items - 1) > 0)) throw std::runtime_error("bench_compute_bound: the FMA chains gave no sum");
  return static_cast<double>(items) * fmas / seconds;
}

/// FMAs a second at best in T.
template <class T>
double fma_peak(bool small, int repeats) {
#if defined(SPARSTENCIL_BENCH_HOST_FMA_CHAINS)
  if constexpr (std::is_same_v<Space, Kokkos::DefaultHostExecutionSpace>) {
    const long items     = 16L * Space().concurrency();  // a few an OpenMP thread
    const int iterations = small ? 1 << 12 : 1 << 18;
    HostFmaChains<T> kernel{Kokkos::View<T*, Space::memory_space>("fma sums", items), T(0.999), T(1e-4), iterations};
    return fmas_per_second(kernel, items, static_cast<double>(iterations) * kernel.chains * kernel.lanes, repeats);
  }
#endif
  const long threads   = small ? 1L << 12 : 1L << 22;  // 4M threads: every SM full many times
  const int iterations = small ? 64 : 2048;
  FmaChains<T> kernel{Kokkos::View<T*, Space::memory_space>("fma sums", threads), T(0.999), T(1e-4), iterations};
  return fmas_per_second(kernel, threads, static_cast<double>(iterations) * FmaChains<T>::chains, repeats);
}

/// A box of radius r with random weights (sum near 1).
template <int D>
sparstencil::Stencil<D> random_box(int r, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<sparstencil::Term<D>> terms = sparstencil::box<D>(r).terms();
  for (auto& t : terms) t.weight = u(rng) / static_cast<double>(terms.size());
  return sparstencil::Stencil<D>(std::move(terms), "box" + std::to_string(D) + "d:r=" + std::to_string(r) + " random");
}

/// GStencil/s of the box on `backend`; the FMA share printed where `peak` is given; the
/// step's output copied to `result` where given.
template <class T, int D>
double run_box(int r, long n, int launches, int repeats, double peak, const char* type,
               const std::string& backend = "generic", std::vector<double>* result = nullptr,
               sparstencil::Precision float_operands = sparstencil::Precision::f32) {
  using View = sparstencil::GridView<T, D>;
  std::array<int, D> extent;
  extent.fill(static_cast<int>(n));
  View in  = sparstencil::make_view<View>("in", extent);
  View out = sparstencil::make_view<View>("out", extent);
  {
    auto host = Kokkos::create_mirror_view(in);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    T* data = host.data();
    for (std::size_t i = 0; i < host.span(); ++i) data[i] = static_cast<T>(static_cast<float>(u(rng)));
    Kokkos::deep_copy(in, host);
  }
  const sparstencil::Stencil<D> stencil = random_box<D>(r, 3);
  sparstencil::Options options;
  options.backend        = backend;
  options.boundary       = sparstencil::Boundary::periodic;
  options.float_operands = float_operands;
  sparstencil::StencilPlan plan(Space(), stencil, in, out, options);
  plan.apply(in, out);  // autotuned on the first call
  Kokkos::fence();
  const double seconds = seconds_per_launch([&](int) { plan.apply(in, out); }, launches, repeats);
  double points        = 1;
  for (int a = 0; a < D; ++a) points *= static_cast<double>(n);
  const double rate = points / seconds;
  const double fmas = rate * static_cast<double>(stencil.terms().size());
  std::string shape = std::to_string(2 * r + 1);
  for (int a = 1; a < D; ++a) shape += " x " + std::to_string(2 * r + 1);
  std::printf("%-6s %s box, %ld^%d, %s: %.3f ms, %.1f GStencil/s, %.2f TFMA/s", type, shape.c_str(), n, D,
              backend.c_str(), 1e3 * seconds, rate / 1e9, fmas / 1e12);
  if (peak > 0) std::printf(" = %.1f%% of the FMA peak", 100 * fmas / peak);
  std::printf("  [%s]\n", plan.report().variant.c_str());
  if (result) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    result->assign(host.span(), 0.0);
    for (std::size_t i = 0; i < host.span(); ++i)
      (*result)[i] = static_cast<double>(static_cast<float>(host.data()[i]));
  }
  return rate / 1e9;
}

/// The dense backend against the generic executor on one box, in the same run, and their
/// outputs against each other: |dense - generic| within the operands' rounding (2^-9 for
/// half and float: weights and sums rounded to f16, or weights and inputs to tf32 or f16,
/// inputs in [-1, 1] and the weights' sum below 1.5; 2^-6 for bf16 operands; 2^-40 for
/// double). float Views go to dense as tf32, or as `floats` (f16, bf16) where given.
/// Throws where they differ by more.
template <class T, int D>
void dense_against_generic(int r, long n, int launches, int repeats, const char* type,
                           sparstencil::Precision floats = sparstencil::Precision::f32) {
  std::vector<double> from_generic, from_dense;
  const double generic = run_box<T, D>(r, n, launches, repeats, 0, type, "generic", &from_generic);
  const double dense   = run_box<T, D>(r, n, launches, repeats, 0, type, "dense", &from_dense, floats);
  double most          = 0;
  for (std::size_t i = 0; i < from_dense.size(); ++i) most = std::max(most, std::fabs(from_dense[i] - from_generic[i]));
  const double bound = std::is_same_v<T, double> ? 0x1p-40 : floats == sparstencil::Precision::bf16 ? 0x1p-6 : 0x1p-9;
  std::printf("%-6s radius %d box %ld^%d: dense / generic = %.2f, max |dense - generic| %.3g (bound %.3g): %s\n", type,
              r, n, D, dense / generic, most, bound, most <= bound ? "PASS" : "FAIL");
  if (!(most <= bound)) throw std::runtime_error("bench_compute_bound: the dense and generic outputs differ");
}

int run(int argc, char* argv[]) {
  int launches = 20, repeats = 7;
  bool small = false, dense = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;
    if (flag == "--small" || flag == "--dense") {
      (flag == "--small" ? small : dense) = true;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error("bench_compute_bound: " + flag + " needs a value");
    const int value = std::stoi(argv[++i]);
    if (value < 1) throw std::runtime_error("bench_compute_bound: " + flag + " must be at least 1");
    if (flag == "--launches") launches = value;
    else if (flag == "--repeats") repeats = value;
    else throw std::runtime_error("bench_compute_bound: unknown option '" + flag + "'");
  }
  if (dense) {  // the dense backend's comparisons alone
    using Half = Kokkos::Experimental::half_t;
    dense_against_generic<Half, 2>(1, small ? 96 : 10240, launches, repeats, "half");  // memory bound
    dense_against_generic<Half, 2>(7, small ? 96 : 10240, launches, repeats, "half");
    dense_against_generic<float, 2>(1, small ? 96 : 10240, launches, repeats, "float");  // memory bound
    dense_against_generic<float, 2>(7, small ? 96 : 10240, launches, repeats, "float");
    dense_against_generic<float, 2>(3, small ? 96 : 10240, launches, repeats, "float");
    dense_against_generic<float, 3>(3, small ? 48 : 512, launches, repeats, "float");
    dense_against_generic<double, 2>(7, small ? 96 : 10240, launches, repeats, "double");
    dense_against_generic<double, 2>(3, small ? 96 : 10240, launches, repeats, "double");
    dense_against_generic<double, 3>(3, small ? 48 : 512, launches, repeats, "double");
    using sparstencil::Precision;
    dense_against_generic<float, 2>(7, small ? 96 : 10240, launches, repeats, "f-f16", Precision::f16);
    dense_against_generic<float, 2>(3, small ? 96 : 10240, launches, repeats, "f-f16", Precision::f16);
    dense_against_generic<float, 2>(1, small ? 96 : 10240, launches, repeats, "f-f16", Precision::f16);
    dense_against_generic<float, 3>(3, small ? 48 : 512, launches, repeats, "f-f16", Precision::f16);
    dense_against_generic<float, 2>(7, small ? 96 : 10240, launches, repeats, "f-bf16", Precision::bf16);
    return 0;
  }
  const double peak_f = fma_peak<float>(small, repeats), peak_d = fma_peak<double>(small, repeats);
  std::printf("FMA peak on %s: float %.2f TFMA/s (%.1f TFLOP/s), double %.2f TFMA/s (%.1f TFLOP/s)\n", Space::name(),
              peak_f / 1e12, 2 * peak_f / 1e12, peak_d / 1e12, 2 * peak_d / 1e12);
  run_box<float, 2>(7, small ? 96 : 10240, launches, repeats, peak_f, "float");
  run_box<double, 2>(7, small ? 96 : 10240, launches, repeats, peak_d, "double");
  run_box<float, 2>(3, small ? 96 : 10240, launches, repeats, peak_f, "float");  // Box-2D49P's shape
  run_box<double, 2>(3, small ? 96 : 10240, launches, repeats, peak_d, "double");
  run_box<float, 3>(2, small ? 48 : 512, launches, repeats, peak_f, "float");
  run_box<double, 3>(2, small ? 48 : 512, launches, repeats, peak_d, "double");
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
