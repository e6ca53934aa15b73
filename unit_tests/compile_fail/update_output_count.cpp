// The pointwise function returns one value for two output fields.
#include <SparStencil.hpp>
struct OneValue {
  KOKKOS_INLINE_FUNCTION Kokkos::Array<float, 1> operator()(const Kokkos::Array<float, 1>& s,
                                                            const Kokkos::Array<float, 1>&) const {
    return s;
  }
};
void f(Kokkos::View<float**> in, Kokkos::View<float**> a, Kokkos::View<float**> b) {
  sparstencil::FieldUpdate<2, 1, float> update({sparstencil::StencilOn<2>(sparstencil::presets::heat_2d(), 0)});
  update.run(Kokkos::DefaultExecutionSpace(), sparstencil::fields(in), sparstencil::fields(a, b), OneValue{});
}
int main() {}
