// The SparStencil API in one screen: one Heat-2D step on the default execution space.
#include <SparStencil.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const int nx = 512, ny = 384;
  Kokkos::View<float**> in("in", nx, ny), out("out", nx, ny);
  Kokkos::parallel_for(
      "init", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {nx, ny}),
      KOKKOS_LAMBDA(int i, int j) { in(i, j) = float(1 + (i * 7 + j * 3) % 11); });

  const auto heat = sparstencil::presets::heat_2d();  // or sparstencil::parse_stencil("heat2d")
  sparstencil::Options options;
  options.boundary  = sparstencil::Boundary::periodic;
  const auto report = sparstencil::apply(heat, in, out, options);
  Kokkos::fence();

  // Compare with the double-precision reference on the host.
  auto host_in  = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in);
  auto host_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  sparstencil::HostGrid<2> grid({nx, ny}), expected({nx, ny});
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j) grid({i, j}) = host_in(i, j);
  sparstencil::reference_apply(heat, grid, expected, options.boundary);
  double worst = 0;
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j) worst = std::max(worst, std::abs(host_out(i, j) - expected({i, j})));
  std::printf("%s on %s: max |out - reference| = %.2g\n", report.executor.c_str(), report.execution_space.c_str(),
              worst);
  return worst < 1e-5 ? 0 : 1;
}
