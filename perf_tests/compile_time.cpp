// The compile-time probe (issue 59, perf_tests/RESULTS.md): what a user's translation unit
// costs when it makes one StencilPlan for float 2-D Views and one for half_t 3-D Views and
// calls apply and iterate on both. Built with the benchmarks and run as a smoke test (it
// checks its results against the double-precision reference); time its compilation with
// `scripts/compile_time.sh`.
#include <SparStencil.hpp>

#include <array>
#include <cmath>
#include <cstdio>

namespace {

using Half = Kokkos::Experimental::half_t;  // (not `half`: CUDA's cuda_fp16.h declares one)

/// The largest |out - reference| after one step then `steps` steps, on the host.
template <int D, class View>
double worst_error(const sparstencil::Stencil<D>& stencil, const View& start, const View& after,
                   sparstencil::Boundary boundary, int steps) {
  auto in  = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), start);
  auto out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), after);
  std::array<int, D> extent{};
  for (int a = 0; a < D; ++a) extent[a] = static_cast<int>(in.extent(a));
  sparstencil::HostGrid<D> grid(extent), next(extent);
  double worst = 0;
  if constexpr (D == 2) {
    for (int i = 0; i < extent[0]; ++i)
      for (int j = 0; j < extent[1]; ++j) grid({i, j}) = static_cast<double>(in(i, j));
    for (int s = 0; s < steps; ++s) sparstencil::reference_apply(stencil, grid, next, boundary), std::swap(grid, next);
    for (int i = 0; i < extent[0]; ++i)
      for (int j = 0; j < extent[1]; ++j)
        worst = std::max(worst, std::abs(static_cast<double>(out(i, j)) - grid({i, j})));
  } else {
    for (int i = 0; i < extent[0]; ++i)
      for (int j = 0; j < extent[1]; ++j)
        for (int k = 0; k < extent[2]; ++k) grid({i, j, k}) = static_cast<double>(in(i, j, k));
    for (int s = 0; s < steps; ++s) sparstencil::reference_apply(stencil, grid, next, boundary), std::swap(grid, next);
    for (int i = 0; i < extent[0]; ++i)
      for (int j = 0; j < extent[1]; ++j)
        for (int k = 0; k < extent[2]; ++k)
          worst = std::max(worst, std::abs(static_cast<double>(out(i, j, k)) - grid({i, j, k})));
  }
  return worst;
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  sparstencil::Options options;
  options.boundary = sparstencil::Boundary::periodic;
  bool ok          = true;
  {
    const int nx = 97, ny = 131;
    Kokkos::View<float**> a("a", nx, ny), b("b", nx, ny), start("start", nx, ny);
    Kokkos::parallel_for(
        "init", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {nx, ny}),
        KOKKOS_LAMBDA(int i, int j) { a(i, j) = float((i * 7919 + j * 104729) % 1009) / 997; });
    Kokkos::deep_copy(start, a);
    const auto heat = sparstencil::presets::heat_2d();
    sparstencil::StencilPlan plan(Kokkos::DefaultExecutionSpace(), heat, a, b, options);
    plan.apply(a, b);
    plan.iterate(b, a, 4);  // b holds five steps after it
    Kokkos::fence();
    const double worst = worst_error<2>(heat, start, b, options.boundary, 5);
    std::printf("float 2-D %s: 5 steps, max |out - reference| = %.2g\n", plan.report().executor.c_str(), worst);
    ok = ok && worst < 1e-5;
  }
  {
    const int n = 23;
    Kokkos::View<Half***> a("a", n, n + 2, n + 4), b("b", n, n + 2, n + 4), start("start", n, n + 2, n + 4);
    Kokkos::parallel_for(
        "init", Kokkos::MDRangePolicy<Kokkos::Rank<3>>({0, 0, 0}, {n, n + 2, n + 4}),
        KOKKOS_LAMBDA(int i, int j, int k) {
          a(i, j, k) = Half(float((i * 7919 + j * 104729 + k * 13) % 1009) / 599);
        });
    Kokkos::deep_copy(start, a);
    const auto heat = sparstencil::presets::heat_3d();
    sparstencil::StencilPlan plan(Kokkos::DefaultExecutionSpace(), heat, a, b, options);
    plan.apply(a, b);
    plan.iterate(b, a, 2);  // b holds three steps after it
    Kokkos::fence();
    const double worst = worst_error<3>(heat, start, b, options.boundary, 3);
    std::printf("half_t 3-D %s: 3 steps, max |out - reference| = %.2g\n", plan.report().executor.c_str(), worst);
    ok = ok && worst < 3 * 2.0 * std::ldexp(1.0, -11);  // three roundings to half_t of values below 2
  }
  std::printf("compile_time: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
