// A plan made for LayoutRight Views applied to LayoutLeft ones.
#include <SparStencil.hpp>
void f(Kokkos::View<double**, Kokkos::LayoutRight> in, Kokkos::View<double**, Kokkos::LayoutRight> out,
       Kokkos::View<double**, Kokkos::LayoutLeft> left_in, Kokkos::View<double**, Kokkos::LayoutLeft> left_out) {
  const sparstencil::StencilPlan plan(Kokkos::DefaultExecutionSpace(), sparstencil::presets::heat_2d(), in, out);
  plan.apply(left_in, left_out);
}
int main() {}
