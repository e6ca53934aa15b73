// Uses the installed headers, library and catalogue: one step checked against the reference.
#include <SparStencil.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const auto stencil = sparstencil::presets::box_2d9p();
  Kokkos::View<double**> in("in", 33, 17), out("out", 33, 17);
  auto host_in = Kokkos::create_mirror_view(in);
  sparstencil::HostGrid<2> grid({33, 17});
  for (int i = 0; i < 33; ++i)
    for (int j = 0; j < 17; ++j) grid({i, j}) = host_in(i, j) = std::sin(0.3 * i + 0.7 * j) + 2.0;
  Kokkos::deep_copy(in, host_in);
  sparstencil::apply(stencil, in, out, {sparstencil::Boundary::periodic});
  auto host_out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  sparstencil::HostGrid<2> expected({33, 17});
  sparstencil::reference_apply(stencil, grid, expected, sparstencil::Boundary::periodic);
  double worst = 0;
  for (int i = 0; i < 33; ++i)
    for (int j = 0; j < 17; ++j) worst = std::fmax(worst, std::fabs(host_out(i, j) - expected({i, j})));
  const auto catalogue = sparstencil::load_catalogue(sparstencil::reference_catalogue_path());
  std::printf("consumer: max error %.3g, %zu catalogue stencils\n", worst, catalogue.size());
  if (worst > 1e-14 || catalogue.empty()) return 1;
  std::printf("consumer: ok\n");
  return 0;
}
