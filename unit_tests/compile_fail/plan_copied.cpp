// A plan copied: it owns device tables, so it moves and does not copy.
#include <SparStencil.hpp>
void f(Kokkos::View<double**> in, Kokkos::View<double**> out) {
  const sparstencil::StencilPlan plan(Kokkos::DefaultExecutionSpace(), sparstencil::presets::heat_2d(), in, out);
  auto copy = plan;
  copy.apply(in, out);
}
int main() {}
