// Host work per call: what an application's time loop pays on the host before each launch.
//   sparstencil_bench_calls [--calls N] [--repeats R]
// For each backend this build runs on the default execution space (the generic executor;
// cuda_sptc on CUDA), on a 256^2 grid:
//   plan.apply      N calls of a StencilPlan's apply, the submit time (no fence) over N
//   apply           N one-off sparstencil::apply calls (the plan found in the call cache)
//   launch floor    cuda_sptc only: N raw SparseExecutor::apply calls (the kernel launch itself)
// and, on CUDA, iterate of 1000 steps on a 512^2 half_t grid: wall time per step (fence to
// fence) against the device time of one step (CUDA events around 1000 back-to-back
// launches of the same plan's apply), with and without CUDA graphs. Medians of R repeats.
// Inputs are random, never zeros.
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <SparStencil.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_CUDA_SPTC)
#define BENCH_HAS_SPARSE 1
#endif

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using Clock = std::chrono::steady_clock;

int calls   = 200;
int repeats = 31;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/// Median over repeats of the host time `calls` submissions take, per call (microseconds);
/// the device drains between repeats.
double submit_us(const std::function<void()>& submit) {
  for (int i = 0; i < 20; ++i) submit();  // warm-up
  Space().fence();
  std::vector<double> per_call;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) submit();
    const auto end = Clock::now();
    Space().fence();
    per_call.push_back(std::chrono::duration<double, std::micro>(end - start).count() / calls);
  }
  return median(per_call);
}

template <class T>
Kokkos::View<T**, Space> random_view(const char* label, int n, int m, std::uint64_t seed) {
  Kokkos::View<T**, Space> v(std::string(label), n, m);
  Kokkos::Random_XorShift64_Pool<Space> pool(seed);
  Kokkos::fill_random(v, pool, T(0.25), T(1.0));
  return v;
}

template <class T>
void host_time_per_call(const char* type, const std::string& backend,
                        sparstencil::Boundary boundary = sparstencil::Options().boundary) {
  auto in = random_view<T>("in", 256, 256, 1), out = random_view<T>("out", 256, 256, 2);
  const auto stencil = sparstencil::presets::heat_2d();
  sparstencil::Options options;
  options.backend  = backend;
  options.boundary = boundary;
  const sparstencil::StencilPlan plan(Space(), stencil, in, out, options);
  const double held    = submit_us([&] { plan.apply(in, out); });
  const double one_off = submit_us([&] { sparstencil::apply(Space(), stencil, in, out, options); });
  std::printf("%-10s %-6s 256^2 Heat-2D  plan.apply %6.2f us   apply %6.2f us   (%s; %s)\n", backend.c_str(), type,
              held, one_off, sparstencil::to_string(boundary), plan.report().variant.c_str());
#if defined(BENCH_HAS_SPARSE)
  if (backend == "cuda_sptc") {
    const sparstencil::cuda_sptc::SparseExecutor raw(plan.plan());
    const long strides[2] = {256, 1};
    const double floor = submit_us([&] { raw.apply(in.data(), strides, out.data(), strides, Space().cuda_stream()); });
    std::printf("%-10s %-6s 256^2 Heat-2D  launch floor (raw executor) %6.2f us\n", backend.c_str(), type, floor);
  }
#endif
}

#if defined(KOKKOS_ENABLE_CUDA)
__global__ void empty_kernel() {}

/// What launching costs on this machine whatever the library does: an empty kernel, the
/// same as a one-node CUDA graph, and an empty Kokkos parallel_for.
void launch_floors() {
  const cudaStream_t stream = Space().cuda_stream();
  const double raw          = submit_us([&] { empty_kernel<<<1, 32, 0, stream>>>(); });
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  empty_kernel<<<1, 32, 0, stream>>>();
  cudaStreamEndCapture(stream, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  const double one_node = submit_us([&] { cudaGraphLaunch(exec, stream); });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  const double kokkos = submit_us(
      [&] { Kokkos::parallel_for("empty", Kokkos::RangePolicy<Space>(Space(), 0, 1), KOKKOS_LAMBDA(int){}); });
  std::printf(
      "launch floors on this machine: empty kernel %.2f us, one-node CUDA graph %.2f us, empty Kokkos "
      "parallel_for %.2f us\n",
      raw, one_node, kokkos);
}
#endif

#if defined(BENCH_HAS_SPARSE)
/// Device time per launch of `launch`, CUDA events around 1000 back-to-back launches.
double device_us_per_launch(const std::function<void()>& launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 50; ++i) launch();
  std::vector<double> per;
  for (int r = 0; r < repeats; ++r) {
    cudaEventRecord(start, Space().cuda_stream());
    for (int i = 0; i < 1000; ++i) launch();
    cudaEventRecord(stop, Space().cuda_stream());
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    per.push_back(ms * 1e3 / 1000);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(per);
}

/// iterate of 1000 steps on 512^2 half_t: wall time per step against the device time of
/// one step of the same plan.
void iterate_wall_time(const char* stencil_name, int fusion, bool graphs) {
  using H = Kokkos::Experimental::half_t;
  auto a = random_view<H>("a", 512, 512, 3), b = random_view<H>("b", 512, 512, 4);
  const sparstencil::Stencil<2> stencil = sparstencil::as<2>(sparstencil::presets::by_name(stencil_name));
  sparstencil::Options options;
  options.fusion      = fusion;
  options.cuda_graphs = graphs;
  sparstencil::StencilPlan plan(Space(), stencil, a, b, options);
  plan.iterate(a, b, 1000);  // warm-up: plans the depths, records the graph
  Space().fence();
  std::vector<double> wall;
  sparstencil::RunReport report;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    report           = plan.iterate(a, b, 1000);
    Space().fence();
    wall.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() / 1000);
  }
  // The device time of one launch of the depth iterate ran, per original step.
  const int t                 = report.steps_per_launch;
  sparstencil::Options single = options;
  single.fusion               = t;
  sparstencil::StencilPlan depth_plan(Space(), stencil, a, b, single);
  const double device = device_us_per_launch([&] { depth_plan.iterate(a, b, t); }) / t;
  const double w      = median(wall);
  std::printf(
      "iterate    half   512^2 %-9s fusion %-4s %d a launch, graphs %-3s: wall %6.2f us/step, device "
      "%6.2f us/step, ratio %.2f (%s)\n",
      stencil_name, fusion == 0 ? "auto" : std::to_string(fusion).c_str(), t, graphs ? "on" : "off", w, device,
      w / device, report.executor.c_str());
}
#endif

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--calls" && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (arg == "--repeats" && i + 1 < argc) repeats = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: sparstencil_bench_calls [--calls N] [--repeats R]\n");
      return 2;
    }
  }
  if (calls < 1 || repeats < 1) {
    std::fprintf(stderr, "sparstencil_bench_calls: --calls and --repeats must be at least 1\n");
    return 2;
  }
  sparstencil::print_configuration(std::cout);
  std::printf("host time per call, median of %d repeats of %d calls (submit time over calls, no fence)\n", repeats,
              calls);
#if defined(KOKKOS_ENABLE_CUDA)
  launch_floors();
#endif
  host_time_per_call<float>("float", "generic");
  host_time_per_call<float>("float", "generic", sparstencil::Boundary::fixed_rim);
  host_time_per_call<double>("double", "generic");
#if defined(BENCH_HAS_SPARSE)
  host_time_per_call<Kokkos::Experimental::half_t>("half", "generic");
  host_time_per_call<Kokkos::Experimental::half_t>("half", "cuda_sptc");
  for (const char* name : {"heat2d", "box2d49p"}) {
    for (bool graphs : {true, false}) iterate_wall_time(name, 1, graphs);
    iterate_wall_time(name, 0, true);
  }
#endif
  return 0;
}
