// iterate on Views of another layout than the plan's.
#include <SparStencil.hpp>
void f(Kokkos::View<double**, Kokkos::LayoutRight> in, Kokkos::View<double**, Kokkos::LayoutRight> out,
       Kokkos::View<double**, Kokkos::LayoutLeft> a, Kokkos::View<double**, Kokkos::LayoutLeft> b) {
  sparstencil::StencilPlan plan(Kokkos::DefaultExecutionSpace(), sparstencil::presets::heat_2d(), in, out);
  plan.iterate(a, b, 4);
}
int main() {}
