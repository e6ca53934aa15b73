// float in, double out.
#include <SparStencil.hpp>
void f(Kokkos::View<float**> in, Kokkos::View<double**> out) {
  sparstencil::apply(sparstencil::presets::heat_2d(), in, out);
}
int main() {}
