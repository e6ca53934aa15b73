// Temporal blocking on the plain cores against single steps, in one run (issue 25's cases,
// EBISU's kernels):
//   sparstencil_bench_temporal [--steps 120] [--repeats 5] [--small] [--case NAME] [--boundary B]
//                              [--fusion F] [--backend generic|auto|NAME] [--grid N0xN1[xN2]]
// Cases: heat2d-f32, heat2d-f64, box2d9-f64, box2d49-f64, star2d13-f64, heat3d-f32, box3d27-f32,
// heat3d-f64 and box3d27-f64 (LoRAStencil's and ConvStencil's 3-D kernels), and in half
// heat2d-f16, box2d9-f16 (issue 24's fused sparse plans at walls, with --backend auto or
// cuda_sptc) and box2d49-f16 (the sparse and dense executors' crossing) at 10240^2 / 512^3
// (96^2 / 40^3 with --small; --grid sets the extents of the cases of its dimension, the
// others are skipped), random data and the presets' weights. For each, the generic executor's (or the named backend's,
// or with auto the planner's) `iterate` of `steps` steps (a StencilPlan, fixed_rim by default) with every forced depth
// (Options::fusion 1 to 8, as far as it runs) and with the automatic one (fusion 0): GStencil/s per original step over
// the interior points ((n - 2r)^D a step, as EBISU counts), device time a step, the depth that ran and the variant.
// Device time per iterate: bench_timing.hpp (one iterate a launch, warm-up first, median of the repeats).
#include <SparStencil.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_timing.hpp"

namespace {

using Space = Kokkos::DefaultExecutionSpace;
using sparstencil::bench::seconds_per_launch;

struct Settings {
  int steps   = 120;
  int repeats = 5;
  bool small  = false;
  std::string only;
  int fusion                     = -1;         ///< only this depth (0: automatic); all by default
  std::string backend            = "generic";  ///< empty: the planner's choice
  sparstencil::Boundary boundary = sparstencil::Boundary::fixed_rim;
  std::vector<long> grid;  ///< extents for the cases of its dimension; empty: the defaults
};

template <class T, int D>
void run_case(const std::string& name, const sparstencil::Stencil<D>& stencil, long n, const Settings& s) {
  if (!s.only.empty() && s.only != name) return;
  if (!s.grid.empty() && s.grid.size() != D) return;
  using View = sparstencil::GridView<T, D>;
  std::array<int, D> extent;
  extent.fill(static_cast<int>(n));
  if (!s.grid.empty()) std::copy(s.grid.begin(), s.grid.end(), extent.begin());
  std::string shape = std::to_string(extent[0]);
  if (std::count(extent.begin(), extent.end(), extent[0]) == D) {
    shape += "^" + std::to_string(D);
  } else {
    for (int k = 1; k < D; ++k) shape += "x" + std::to_string(extent[k]);
  }
  View a = sparstencil::make_view<View>("a", extent), b = sparstencil::make_view<View>("b", extent);
  {
    auto host = Kokkos::create_mirror_view(a);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    T* data = host.data();
    for (std::size_t i = 0; i < host.span(); ++i) data[i] = static_cast<T>(u(rng));
    Kokkos::deep_copy(a, host);
    Kokkos::deep_copy(b, host);  // iterate's contract: both buffers share the rim
  }
  double interior = 1;
  for (int k = 0; k < D; ++k) interior *= static_cast<double>(extent[k] - 2 * stencil.radius()[k]);
  double single = 0;
  for (int fusion = 0; fusion <= 8; ++fusion) {
    if (s.fusion >= 0 && fusion != s.fusion) continue;
    sparstencil::Options options;
    options.backend  = s.backend;
    options.boundary = s.boundary;
    options.fusion   = fusion;
    sparstencil::RunReport report;
    double seconds = 0;
    try {
      sparstencil::StencilPlan plan(Space(), stencil, a, b, options);
      report  = plan.iterate(a, b, s.steps);  // tunes its launches on the first call
      seconds = seconds_per_launch([&](int) { plan.iterate(a, b, s.steps); }, 1, s.repeats);
    } catch (const std::exception& e) {
      std::printf("%-12s fusion %d: %s\n", name.c_str(), fusion, e.what());
      continue;
    }
    if (fusion > 1 && report.steps_per_launch < fusion) continue;  // runs as a shallower depth measured already
    const double rate = interior * s.steps / seconds / 1e9;
    if (fusion == 1) single = rate;
    std::printf("%-12s %s %s, %s: fusion %s -> %d steps a launch: %8.1f GStencil/s, %8.2f us a step", name.c_str(),
                sparstencil::to_string(s.boundary), shape.c_str(),
                sizeof(T) == 8   ? "f64"
                : sizeof(T) == 4 ? "f32"
                                 : "f16",
                fusion == 0 ? "auto" : std::to_string(fusion).c_str(), report.steps_per_launch, rate,
                seconds / s.steps * 1e6);
    if (single > 0 && fusion != 1) std::printf(" (%.2fx one step a launch)", rate / single);
    std::printf("  [%s: %s]\n", report.executor.c_str(), report.variant.c_str());
  }
}

int run(int argc, char* argv[]) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;
    if (flag == "--small") {
      s.small = true;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error("bench_temporal: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--case") {
      s.only = value;
    } else if (flag == "--boundary") {
      s.boundary = sparstencil::boundary_from_string(value);
    } else if (flag == "--backend") {
      s.backend = value == "auto" ? "" : value;
    } else if (flag == "--fusion") {
      s.fusion = std::stoi(value);
      if (s.fusion < 0 || s.fusion > 8) throw std::runtime_error("bench_temporal: --fusion must be 0 to 8");
    } else if (flag == "--grid") {
      s.grid = sparstencil::parse_extents(value);
      if (s.grid.size() < 2) {
        throw std::runtime_error("bench_temporal: --grid wants two or three extents, not '" + value + "'");
      }
    } else if (flag == "--steps" || flag == "--repeats") {
      const int v = std::stoi(value);
      if (v < 1) throw std::runtime_error("bench_temporal: " + flag + " must be at least 1");
      (flag == "--steps" ? s.steps : s.repeats) = v;
    } else {
      throw std::runtime_error("bench_temporal: unknown option '" + flag + "'");
    }
  }
  const long n2 = s.small ? 96 : 10240, n3 = s.small ? 40 : 512;
  namespace presets = sparstencil::presets;
  run_case<float, 2>("heat2d-f32", presets::heat_2d(), n2, s);
  run_case<double, 2>("heat2d-f64", presets::heat_2d(), n2, s);
  run_case<double, 2>("box2d9-f64", presets::box_2d9p(), n2, s);
  run_case<double, 2>("box2d49-f64", presets::box_2d49p(), n2, s);
  run_case<double, 2>("star2d13-f64", presets::star_2d13p(), n2, s);
  run_case<float, 3>("heat3d-f32", presets::heat_3d(), n3, s);
  run_case<float, 3>("box3d27-f32", presets::box_3d27p(), n3, s);
  run_case<double, 3>("heat3d-f64", presets::heat_3d(), n3, s);
  run_case<double, 3>("box3d27-f64", presets::box_3d27p(), n3, s);
  using Half = Kokkos::Experimental::half_t;
  run_case<Half, 2>("heat2d-f16", presets::heat_2d(), n2, s);
  run_case<Half, 2>("box2d9-f16", presets::box_2d9p(), n2, s);
  run_case<Half, 2>("box2d49-f16", presets::box_2d49p(), n2, s);
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
