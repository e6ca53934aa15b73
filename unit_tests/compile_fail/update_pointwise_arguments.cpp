// The pointwise function takes the results alone, not (results, centres).
#include <SparStencil.hpp>
struct ResultsOnly {
  KOKKOS_INLINE_FUNCTION Kokkos::Array<float, 1> operator()(const Kokkos::Array<float, 1>& s) const { return s; }
};
void f(Kokkos::View<float**> in, Kokkos::View<float**> out) {
  sparstencil::FieldUpdate<2, 1, float> update({sparstencil::StencilOn<2>(sparstencil::presets::heat_2d(), 0)});
  update.run(Kokkos::DefaultExecutionSpace(), sparstencil::fields(in), sparstencil::fields(out), ResultsOnly{});
}
int main() {}
