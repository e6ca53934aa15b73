// A 3-D stencil on 2-D Views.
#include <SparStencil.hpp>
void f(Kokkos::View<double**> in, Kokkos::View<double**> out) {
  sparstencil::apply(sparstencil::presets::heat_3d(), in, out);
}
int main() {}
