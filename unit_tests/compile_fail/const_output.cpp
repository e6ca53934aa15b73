// The output View is read-only.
#include <SparStencil.hpp>
void f(Kokkos::View<double**> in, Kokkos::View<const double**> out) {
  sparstencil::apply(sparstencil::presets::heat_2d(), in, out);
}
int main() {}
