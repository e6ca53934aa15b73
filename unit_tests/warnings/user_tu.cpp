// A user's translation unit, compiled with -Wall -Wextra -Wpedantic -Werror and the
// library's headers included as ordinary (not system) headers: plans, iterate, field
// updates with ghosted and plain fields (contiguous and strided), face conditions, the catalogue, explain. It must
// compile without a warning; it runs as a smoke test too.
#include <SparStencil.hpp>

#include <cstdio>

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;
  using F2    = Kokkos::View<float**, Space::memory_space>;
  using H3    = Kokkos::View<Kokkos::Experimental::half_t***, Space::memory_space>;
  F2 a("a", 40, 56), b("b", 40, 56);
  Kokkos::deep_copy(a, 1.0f);
  Kokkos::deep_copy(b, 1.0f);
  sparstencil::Options periodic, fixed_rim;
  periodic.boundary  = sparstencil::Boundary::periodic;
  fixed_rim.boundary = sparstencil::Boundary::fixed_rim;
  sparstencil::StencilPlan plan(Space(), sparstencil::presets::box_2d9p(), a, b, periodic);
  plan.apply(a, b);
  const sparstencil::RunReport report = plan.iterate(a, b, 5);
  H3 c("c", 12, 14, 16), d("d", 12, 14, 16);
  Kokkos::deep_copy(c, Kokkos::Experimental::half_t(0.5f));
  sparstencil::StencilPlan plan3(Space(), sparstencil::presets::heat_3d(), c, d, fixed_rim);
  plan3.apply(c, d);

  // Field updates: a ghosted input and a plain output; neumann and dirichlet faces.
  using G2 = sparstencil::GridView<double, 2>;
  G2 padded("padded", 34, 26), next("next", 32, 24);
  Kokkos::deep_copy(padded, 2.0);
  const sparstencil::FaceConditions<2> ghosts(sparstencil::FaceCondition::ghost());
  sparstencil::apply(Space(), sparstencil::with_ghosts(padded, 1), next, sparstencil::presets::heat_2d(), ghosts);
  // ... and strided boxes of padded blocks, as a distributed field's box() gives them:
  // the ghosted box in, the owned box out (g++ 12 warned -Warray-bounds in fields() here).
  using S3 = Kokkos::View<float***, Kokkos::LayoutStride, Space::memory_space>;
  Kokkos::View<float***, Space::memory_space> block("block", 22, 20, 36), block_next("block_next", 22, 20, 36);
  Kokkos::deep_copy(block, 0.25f);
  const auto range = [](int lo, int hi) { return Kokkos::pair<int, int>(lo, hi); };
  const S3 halo_box(block, range(0, 22), range(0, 20), range(6, 30));
  const S3 owned_box(block_next, range(2, 20), range(2, 18), range(8, 28));
  sparstencil::apply(Space(), sparstencil::with_ghosts(halo_box, 2), owned_box, sparstencil::presets::heat_3d(),
                     sparstencil::FaceConditions<3>(sparstencil::FaceCondition::ghost()));
  G2 u("u", 32, 24), w("w", 32, 24);
  Kokkos::deep_copy(u, 3.0);
  sparstencil::FaceConditions<2> faces(sparstencil::FaceCondition::neumann());
  faces.set(0, 1, sparstencil::FaceCondition::dirichlet(1.0));
  sparstencil::FieldUpdate<2, 1, double> update({sparstencil::StencilOn<2>(sparstencil::presets::heat_2d(), 0)}, faces);
  update.run(
      Space(), sparstencil::fields(u), sparstencil::fields(w),
      KOKKOS_LAMBDA(const Kokkos::Array<double, 1>& s, const Kokkos::Array<double, 1>& centre) {
        return Kokkos::Array<double, 1>{{centre[0] + 0.1 * s[0]}};
      });
  Space().fence();
  const std::string text = plan.explain();
  std::printf("user_tu: %s, %d steps, %zu characters of explain: ok\n", report.executor.c_str(), report.steps,
              text.size());
  return 0;
}
