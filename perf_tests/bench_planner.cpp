// Planning time: make_plan for every stencil of the catalogue and the presets, at the
// papers' sizes (1D 10,240,000; 2D 10240^2; 3D 512^3), f16 on the H100 description.
// The target is under 10 ms per stencil; the "worst ms" line after the table says where
// the slowest stands.
//
// --fusion-sweep: instead, every fusion depth from 1 to 8 of those stencils and of the
// kinds the catalogue holds back (3-D boxes of radius 1-4, 2-D and 3-D stars of radius
// 1-8), f16 and f64, periodic and fixed_rim, on the H200 description: each plan's CPU time
// and peak heap, against the targets of 1 s and 200 MB (depths past the supported radius
// are refused, and timed as such).
//
// --first-call: what the first iterate with automatic fusion costs before its launches:
// the CPU time of planning every depth it weighs on the H200 description (1 to 8) for the
// deepest stencils, and, on the default execution space, a plan's construction and first
// iterate against a later iterate, without wisdom and with it loaded from a file
// (SparStencil_Wisdom.hpp). `--first-call N` sets the grid's edge (default 128).
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cstring>
#include <new>

#include "SparStencil_Backends.hpp"
#include "SparStencil_Catalogue.hpp"
#include "SparStencil_Parse.hpp"
#include "SparStencil_Presets.hpp"
#include "SparStencil_StencilPlan.hpp"
#include "SparStencil_Wisdom.hpp"

namespace {
// Heap in use and its peak, for the sweep's memory figure.
std::atomic<long> heap_now{0}, heap_peak{0};
}  // namespace

// The heap is counted by replacing the global allocation functions: not where nvcc compiles
// this file (CUDA builds), which takes them for device functions too, where they cannot
// throw. The sweep is a measurement of the host's planner: run it on a host build.
#if !defined(__CUDACC__)
constexpr bool heap_counted = true;
void* operator new(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  const long now = heap_now += static_cast<long>(malloc_usable_size(p));
  long peak      = heap_peak.load();
  while (now > peak && !heap_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}
void operator delete(void* p) noexcept {
  if (p) heap_now -= static_cast<long>(malloc_usable_size(p));
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
#else
constexpr bool heap_counted = false;
#endif

namespace {

double worst_ms = 0;
std::string worst_name;

sparstencil::PlanRequest request_for(const sparstencil::AnyStencil& s) {
  sparstencil::PlanRequest r;
  r.stencil = s;
  switch (sparstencil::dimension(s)) {
    case 1: r.grid = {10240000}; break;
    case 2: r.grid = {10240, 10240}; break;
    default: r.grid = {512, 512, 512};
  }
  return r;
}

void plan(benchmark::State& state, const sparstencil::PlanRequest& request, const std::string& name) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(sparstencil::make_plan(request));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ms > worst_ms) worst_ms = ms, worst_name = name;
  }
}

int fusion_sweep(const std::vector<std::pair<std::string, sparstencil::AnyStencil>>& stencils) {
  using namespace sparstencil;
  std::vector<std::pair<std::string, AnyStencil>> all = stencils;
  for (int r = 1; r <= 4; ++r)
    all.emplace_back("box3d:r=" + std::to_string(r), parse_stencil("box3d:r=" + std::to_string(r)));
  for (int r = 1; r <= 8; ++r) {
    for (const char* kind : {"star2d", "star3d"}) {
      const std::string text = std::string(kind) + ":r=" + std::to_string(r);
      all.emplace_back(text, parse_stencil(text));
    }
  }
  double worst_seconds = 0, worst_mb = 0, total_seconds = 0;
  std::string worst_time_case, worst_memory_case;
  long plans = 0, refused = 0;
  for (const auto& [name, stencil] : all) {
    double stencil_worst = 0, stencil_mb = 0;
    for (int depth = 1; depth <= 8; ++depth) {
      for (Precision precision : {Precision::f16, Precision::f64}) {
        for (Boundary boundary : {Boundary::periodic, Boundary::fixed_rim}) {
          PlanRequest r            = request_for(stencil);
          r.device                 = "h200";
          r.steps                  = depth;
          r.precision              = precision;
          r.boundary               = boundary;
          heap_peak                = heap_now.load();
          const long before        = heap_now.load();
          const std::clock_t start = std::clock();
          try {
            benchmark::DoNotOptimize(make_plan(r));
            ++plans;
          } catch (const std::runtime_error&) {
            ++refused;  // fused radius past the supported one, or a grid too small for it
          }
          const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
          const double mb      = static_cast<double>(heap_peak.load() - before) / (1024.0 * 1024.0);
          total_seconds += seconds;
          const std::string at =
              name + " x" + std::to_string(depth) + " " + to_string(precision) + " " + to_string(boundary);
          if (seconds > worst_seconds) worst_seconds = seconds, worst_time_case = at;
          if (mb > worst_mb) worst_mb = mb, worst_memory_case = at;
          stencil_worst = std::max(stencil_worst, seconds);
          stencil_mb    = std::max(stencil_mb, mb);
        }
      }
    }
    std::printf("%-34s worst %8.4f s CPU, peak heap %7.1f MB\n", name.c_str(), stencil_worst, stencil_mb);
  }
  if (!heap_counted) std::printf("(peak heap not counted in a CUDA build: 0 MB below is no measurement)\n");
  const bool met = worst_seconds < 1.0 && worst_mb < 200.0 && heap_counted;
  std::printf("fusion sweep: %ld plans, %ld refused, %.1f s CPU in all\n", plans, refused, total_seconds);
  std::printf("worst CPU: %.3f s (%s); worst peak heap: %.1f MB (%s); targets < 1 s, < 200 MB: %s\n", worst_seconds,
              worst_time_case.c_str(), worst_mb, worst_memory_case.c_str(), met ? "met" : "MISSED");
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int first_call(int n) {
  using namespace sparstencil;
  std::printf("planning iterate's automatic fusion weighs (depths 1-8, h200, f32, 512^3, periodic):\n");
  for (const char* text : {"box3d:r=4", "star3d:r=8", "box3d:r=3", "star3d:r=4"}) {
    PlanRequest r;
    r.stencil   = parse_stencil(text);
    r.grid      = {512, 512, 512};
    r.device    = "h200";
    r.precision = Precision::f32;
    forget_wisdom();
    std::clock_t start = std::clock();
    int planned        = 0;
    for (int depth = 1; depth <= 8; ++depth) {
      r.steps = depth;
      try {
        benchmark::DoNotOptimize(impl::wise_plan(r));
        ++planned;
      } catch (const std::runtime_error&) {  // past the supported radius
      }
    }
    const double planning   = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    const std::string saved = wisdom_to_json();
    forget_wisdom();
    start = std::clock();
    wisdom_from_json(saved);  // every plan verified
    std::printf("  %-12s %d depths planned: %.3f s CPU; loading them as wisdom (%.1f MB): %.3f s CPU\n", text, planned,
                planning, static_cast<double>(saved.size()) / (1024.0 * 1024.0),
                static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC);
  }
  forget_wisdom();
  using Space     = Kokkos::DefaultExecutionSpace;
  using View3     = Kokkos::View<float***, Space::memory_space>;
  const int steps = 8;  // n = 128: 2 M points, timed by the tuner (Options::generic.tuning.min_points)
  View3 a("a", n, n, n), b("b", n, n, n);
  Kokkos::Random_XorShift64_Pool<Space> pool(5);
  Kokkos::fill_random(a, pool, 1.0f);
  Kokkos::deep_copy(b, a);
  const std::string path = "sparstencil_bench_first_call.wisdom";
  std::printf("first iterate of %d steps on %s, %d^3 float, automatic fusion (a later iterate's time subtracted):\n",
              steps, Space::name(), n);
  for (const char* text : {"heat3d", "star3d:r=4", "star3d:r=8", "box3d:r=4"}) {
    const AnyStencil stencil = parse_stencil(text);
    double overhead[2] = {0, 0}, load_seconds = 0;
    for (int with_wisdom = 0; with_wisdom < 2; ++with_wisdom) {
      forget_wisdom();
      auto start = std::chrono::steady_clock::now();
      if (with_wisdom) {
        load_wisdom(path);
        load_seconds = seconds_since(start);
      }
      StencilPlan plan(Space(), stencil, a, b, Options{Boundary::periodic});
      plan.iterate(a, b, steps);
      Space().fence();
      const double first = seconds_since(start);
      start              = std::chrono::steady_clock::now();
      plan.iterate(a, b, steps);
      Space().fence();
      overhead[with_wisdom] = first - seconds_since(start);
      if (!with_wisdom) save_wisdom(path);
    }
    std::printf("  %-12s without wisdom %.3f s, with it %.3f s (loading %.3f s of it)\n", text, overhead[0],
                overhead[1], load_seconds);
  }
  std::remove(path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc > 1 && std::strcmp(argv[1], "--first-call") == 0) {
    const Kokkos::ScopeGuard kokkos(argc, argv);
    const int n = argc > 2 ? std::atoi(argv[2]) : 128;
    if (n < 16 || n > 1024) {
      std::fprintf(stderr, "bench_planner: --first-call [N]: N (the grid's edge) must be 16 to 1024\n");
      return 2;
    }
    return first_call(n);
  }
  std::vector<std::pair<std::string, sparstencil::AnyStencil>> all;
  for (const auto& s : sparstencil::presets::standard_set()) all.emplace_back(sparstencil::name(s), s);
  for (const auto& e : sparstencil::load_catalogue(sparstencil::reference_catalogue_path()))
    all.emplace_back(e.name, e.stencil);
  if (argc > 1 && std::strcmp(argv[1], "--fusion-sweep") == 0) return fusion_sweep(all);
  for (const auto& [name, stencil] : all) {
    const auto request = request_for(stencil);
    benchmark::RegisterBenchmark(("plan/" + name).c_str(), [request, name = name](benchmark::State& st) {
      plan(st, request, name);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("worst ms: %.3f (%s), target < 10 ms: %s\n", worst_ms, worst_name.c_str(),
              worst_ms < 10.0 ? "met" : "MISSED");
  return 0;
}
