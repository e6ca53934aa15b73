// Integer grids are not supported.
#include <SparStencil.hpp>
void f(Kokkos::View<int**> in, Kokkos::View<int**> out) {
  sparstencil::apply(sparstencil::presets::heat_2d(), in, out);
}
int main() {}
