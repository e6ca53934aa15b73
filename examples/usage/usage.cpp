// The README's usage example, built and run by the tests so that it keeps compiling.
#include <SparStencil.hpp>

#include <cstdio>
#include <iostream>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  Kokkos::View<float**> a("a", 1024, 1024), b("b", 1024, 1024);
  Kokkos::deep_copy(a, 1.0f);  // ... fill a ...
  Kokkos::deep_copy(b, a);

  auto heat = sparstencil::presets::heat_2d();  // or parse_stencil("box2d:r=3"),
                                                // or Stencil<2>({{{0,0},0.5}, ...})
  sparstencil::Options options;
  options.boundary = sparstencil::Boundary::fixed_rim;  // interior | periodic | fixed_rim

  sparstencil::StencilPlan plan(Kokkos::DefaultExecutionSpace(), heat, a, b, options);
  plan.apply(a, b);                       // one step: b = heat(a)
  auto report = plan.iterate(a, b, 100);  // 100 steps; result in a
  Kokkos::fence();
  std::printf("%s on %s\n", report.executor.c_str(), report.execution_space.c_str());
  std::cout << plan.explain();  // every backend's bid, and the winner

  sparstencil::apply(heat, a, b, options);  // one-off calls: the plan is cached
  sparstencil::iterate(sparstencil::parse_stencil("heat2d"), a, b, 10, options);
  auto fused = sparstencil::fuse(heat, 4);  // 4 steps as one (radius 4)
  std::printf("fused: radius %d, %zu points\n", sparstencil::radius(fused)[0], sparstencil::term_count(fused));
}
