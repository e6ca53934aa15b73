// Benchmarks of the generic executor on the standard benchmark set.
//   sparstencil_bench_generic [--sizes=paper|small] [--variant=CACHING,FAST,SECOND,OUTPUTS[,COLUMNS]] [--extent3d=N]
//                             [Google Benchmark flags]
// paper sizes (the papers' problem sizes): 1D 10,240,000 points, 2D 10240 x 10240, 3D 512^3;
// small sizes fit a CPU run in seconds. Default: paper on GPU execution spaces, small on host.
// Inputs are random (never zeros); the first step (which tunes the kernel on large grids) is
// a warm-up; each sample times 10 steps of iterate with one fence (manual time); counters: GStencil/s (points / median
// step time / 1e9), the bytes each point moves (one read, one write), and against the copy measured in the same run
// (Copy/<type>, 2-D size: the faster of deep_copy and a STREAM-like loop): the single-step roofline and its %.
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <benchmark/benchmark.h>

#include <SparStencil.hpp>

#include "bench_sizes.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <cstring>
#include <vector>
#include <string>

namespace {

bool paper_sizes = !std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;
/// --variant=CACHING,FAST,SECOND,OUTPUTS[,COLUMNS] (CACHING: hardware, scratch or
/// streaming; COLUMNS: streaming's outputs per thread along the contiguous axis) forces
/// one variant instead of the tuned one.
std::optional<sparstencil::GenericConfig> forced_variant;

sparstencil::GenericConfig parse_variant(const std::string& text) {
  sparstencil::GenericConfig c;
  char caching[16] = {};
  const int fields = std::sscanf(text.c_str(), "%15[a-z],%d,%d,%d,%d", caching, &c.threads_fast, &c.threads_second,
                                 &c.outputs, &c.columns);
  if (fields != 4 && fields != 5) {
    throw std::runtime_error("--variant=" + text + ": expected CACHING,FAST,SECOND,OUTPUTS[,COLUMNS]");
  }
  const std::string name = caching;
  if (name == "hardware") c.caching = sparstencil::GenericCaching::hardware;
  else if (name == "scratch") c.caching = sparstencil::GenericCaching::scratch;
  else if (name == "streaming") c.caching = sparstencil::GenericCaching::streaming;
  else throw std::runtime_error("--variant: unknown caching '" + name + "' (hardware, scratch, streaming)");
  return c;
}

/// --extent3d=N: 3-D grids of N^3 points instead of the sizes' (other widths than 512, whose
/// planes and rows are powers of two apart).
int extent3d = 0;

template <int D>
std::array<int, D> extents() {
  const std::vector<long> e = sparstencil::bench::problem_extents(D, paper_sizes);
  std::array<int, D> out{};
  for (int a = 0; a < D; ++a) out[a] = D == 3 && extent3d > 0 ? extent3d : static_cast<int>(e[a]);
  return out;
}

/// Device-to-device copy bandwidth (bytes read + written per second), measured in the same
/// run by the Copy benchmarks, which run first; 0 until then.
template <class T>
double copy_bytes_per_second = 0;

template <class T>
void run_copy(benchmark::State& state) {
  using View   = sparstencil::GridView<T, 2>;
  const auto e = extents<2>();
  View in = sparstencil::make_view<View>("in", e), out = sparstencil::make_view<View>("out", e);
  Kokkos::Random_XorShift64_Pool<> pool(777);
  Kokkos::fill_random(in, pool, T(0.25), T(1.0));
  // Two copies of the same bytes, alternated: Kokkos' deep_copy and a STREAM-like loop
  // (one parallel_for of out[i] = in[i], which compilers vectorise); the faster median is
  // the roofline (deep_copy on a host space is no STREAM copy: perf_tests/RESULTS.md).
  const T* from = in.data();
  T* to         = out.data();
  auto loop     = [&] {
    Kokkos::parallel_for(
            "sparstencil::bench::stream_copy",
            Kokkos::RangePolicy<Kokkos::DefaultExecutionSpace, Kokkos::IndexType<long>>(0, static_cast<long>(in.span())),
            KOKKOS_LAMBDA(const long i) { to[i] = from[i]; });
  };
  Kokkos::deep_copy(out, in);  // warm-up
  loop();
  Kokkos::fence();
  std::vector<double> deep, stream;
  for (auto _ : state) {
    Kokkos::Timer timer;
    Kokkos::deep_copy(out, in);
    Kokkos::fence();
    deep.push_back(timer.seconds());
    timer.reset();
    loop();
    Kokkos::fence();
    stream.push_back(timer.seconds());
    state.SetIterationTime(deep.back() + stream.back());
  }
  const double bytes = 2.0 * in.span() * sizeof(T);
  auto rate          = [bytes](std::vector<double>& s) {
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    return bytes / s[s.size() / 2];
  };
  const double deep_rate = rate(deep), stream_rate = rate(stream);
  copy_bytes_per_second<T>           = std::max(deep_rate, stream_rate);
  state.counters["TB/s"]             = copy_bytes_per_second<T> / 1e12;
  state.counters["deep_copy TB/s"]   = deep_rate / 1e12;
  state.counters["stream copy TB/s"] = stream_rate / 1e12;
  state.SetLabel(Kokkos::DefaultExecutionSpace::name());
}

template <class T, int D>
void run_generic(benchmark::State& state, const sparstencil::Stencil<D>& stencil) {
  using View   = sparstencil::GridView<T, D>;
  const auto e = extents<D>();
  View a = sparstencil::make_view<View>("a", e), b = sparstencil::make_view<View>("b", e);
  Kokkos::Random_XorShift64_Pool<> pool(12345);
  Kokkos::fill_random(a, pool, T(0.25), T(1.0));
  Kokkos::fill_random(b, pool, T(0.25), T(1.0));
  sparstencil::Options options;
  options.boundary        = sparstencil::Boundary::periodic;
  options.backend         = "generic";
  options.generic.variant = forced_variant;
  // Warm-up; on a large grid this first step also runs the autotuning pass.
  sparstencil::RunReport report;
  try {
    report = sparstencil::iterate(stencil, a, b, 1, options);
  } catch (const std::runtime_error& e) {
    state.SkipWithError(e.what());
    return;
  }
  Kokkos::fence();
  // Samples of `batch` steps, as an application runs them: one fence per sample.
  constexpr int batch = 10;
  std::vector<double> seconds;
  for (auto _ : state) {
    Kokkos::Timer timer;
    sparstencil::iterate(stencil, a, b, batch, options);
    Kokkos::fence();
    seconds.push_back(timer.seconds() / batch);
    state.SetIterationTime(seconds.back());
  }
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  double points = 1;
  for (int n : e) points *= n;
  // Median step time, so one slow outlier does not move the figure.
  state.counters["GStencil/s"]  = points / seconds[seconds.size() / 2] / 1e9;
  state.counters["bytes/point"] = 2.0 * sizeof(T);
  if (copy_bytes_per_second < T >> 0) {
    // Single-step roofline: every point read once and written once at copy bandwidth.
    const double roofline                 = copy_bytes_per_second<T> / (2.0 * sizeof(T)) / 1e9;
    state.counters["roofline GStencil/s"] = roofline;
    state.counters["% roofline"]          = 100.0 * state.counters["GStencil/s"] / roofline;
  }
  state.SetLabel(std::string(Kokkos::DefaultExecutionSpace::name()) + " generic: " + report.variant);
}

/// The baseline a Kokkos user writes by hand: one MDRangePolicy loop over the interior,
/// the stencil's N terms a compile-time array (unrolled), no tiling of its own.
template <class T, int D, int N>
struct PlainLoop {
  using View = sparstencil::GridView<T, D>;
  using Acc  = std::conditional_t<std::is_same_v<T, double>, double, float>;
  View in, out;
  Kokkos::Array<Kokkos::Array<int, D>, N> offset;
  Kokkos::Array<Acc, N> weight;
  KOKKOS_INLINE_FUNCTION void operator()(int i, int j) const {
    if constexpr (D == 2) {
      Acc sum = 0;
      for (int t = 0; t < N; ++t) sum += weight[t] * static_cast<Acc>(in(i + offset[t][0], j + offset[t][1]));
      out(i, j) = static_cast<T>(sum);
    }
  }
  KOKKOS_INLINE_FUNCTION void operator()(int i, int j, int k) const {
    if constexpr (D == 3) {
      Acc sum = 0;
      for (int t = 0; t < N; ++t) {
        sum += weight[t] * static_cast<Acc>(in(i + offset[t][0], j + offset[t][1], k + offset[t][2]));
      }
      out(i, j, k) = static_cast<T>(sum);
    }
  }
};

template <class T, int D, int N>
void run_loop(benchmark::State& state, const sparstencil::Stencil<D>& stencil) {
  using Loop   = PlainLoop<T, D, N>;
  const auto e = extents<D>();
  Loop loop;
  loop.in  = sparstencil::make_view<typename Loop::View>("in", e);
  loop.out = sparstencil::make_view<typename Loop::View>("out", e);
  Kokkos::Random_XorShift64_Pool<> pool(12345);
  Kokkos::fill_random(loop.in, pool, T(0.25), T(1.0));
  for (int t = 0; t < N; ++t) {
    for (int a = 0; a < D; ++a) loop.offset[t][a] = stencil.terms()[t].offset[a];
    loop.weight[t] = static_cast<typename Loop::Acc>(stencil.terms()[t].weight);
  }
  Kokkos::Array<std::int64_t, D> lo, hi;
  double points = 1;
  for (int a = 0; a < D; ++a) {
    lo[a] = stencil.radius()[a];
    hi[a] = e[a] - stencil.radius()[a];
    points *= static_cast<double>(hi[a] - lo[a]);
  }
  Kokkos::MDRangePolicy<Kokkos::Rank<D>> policy(lo, hi);
  auto step = [&] {
    Kokkos::parallel_for("plain loop", policy, loop);
    std::swap(loop.in, loop.out);
  };
  step();
  Kokkos::fence();
  constexpr int batch = 10;
  std::vector<double> seconds;
  for (auto _ : state) {
    Kokkos::Timer timer;
    for (int n = 0; n < batch; ++n) step();
    Kokkos::fence();
    seconds.push_back(timer.seconds() / batch);
    state.SetIterationTime(seconds.back());
  }
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  state.counters["GStencil/s"] = points / seconds[seconds.size() / 2] / 1e9;
  if (copy_bytes_per_second < T >> 0) {
    const double roofline        = copy_bytes_per_second<T> / (2.0 * sizeof(T)) / 1e9;
    state.counters["% roofline"] = 100.0 * state.counters["GStencil/s"] / roofline;
  }
  state.SetLabel("plain MDRangePolicy loop, interior points");
}

/// Registers the plain loop for a 2-D or 3-D stencil of a term count it is compiled for.
template <class T, int D, int N, int... More>
void register_loop(const std::string& label, const sparstencil::Stencil<D>& s) {
  if (static_cast<int>(s.size()) == N) {
    benchmark::RegisterBenchmark(label.c_str(), [s](benchmark::State& st) { run_loop<T, D, N>(st, s); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  } else if constexpr (sizeof...(More) > 0) {
    register_loop<T, D, More...>(label, s);
  }
}

template <class T>
void register_all(const char* type_name) {
  benchmark::RegisterBenchmark((std::string("Copy/") + type_name).c_str(), run_copy<T>)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  for (const sparstencil::AnyStencil& preset : sparstencil::presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          const std::string label = s.name() + "/" + type_name;
          benchmark::RegisterBenchmark(
              label.c_str(), [s](benchmark::State& st) { run_generic<T, std::decay_t<decltype(s)>::rank>(st, s); })
              ->UseManualTime()
              ->Unit(benchmark::kMillisecond);
          constexpr int D = std::decay_t<decltype(s)>::rank;
          if constexpr (D >= 2) register_loop<T, D, 5, 7, 9, 13, 25, 27, 49, 125, 225>("Loop/" + label, s);
        },
        preset);
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  // Our own flag first; Google Benchmark rejects flags it does not know.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sizes=paper") == 0) paper_sizes = true;
    else if (std::strcmp(argv[i], "--sizes=small") == 0) paper_sizes = false;
    else if (std::strncmp(argv[i], "--variant=", 10) == 0) forced_variant = parse_variant(argv[i] + 10);
    else if (std::strncmp(argv[i], "--extent3d=", 11) == 0) {
      extent3d = std::atoi(argv[i] + 11);
      if (extent3d < 3) {
        std::fprintf(stderr, "%s: expected a 3-D extent of at least 3\n", argv[i]);
        return 1;
      }
    } else argv[kept++] = argv[i];
  }
  argc = kept;
  if (sparstencil::has_distinct_half) register_all<Kokkos::Experimental::half_t>("half");
  register_all<float>("float");
  register_all<double>("double");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
