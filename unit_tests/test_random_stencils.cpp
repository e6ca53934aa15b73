// Random stencils (dimension, offsets, weights of random sign and magnitude, fused or not,
// every boundary and precision) through the planner, the emulator (sparse plans) and the
// generic executor (Serial): every result within its documented bound, nothing crashes,
// and 16-bit plans that would overflow are refused or reported, never silent.
// SPARSTENCIL_RANDOM_CASES sets the count (default 10^4).
#include <cstdlib>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

struct Tally {
  int planned = 0, refused = 0, walls = 0, emulated = 0, executed = 0, outside = 0;
};

/// A random stencil: `terms` distinct offsets within `radius`, weights of random sign with
/// magnitudes spread over 10^-3 to 10^5.
template <int D>
Stencil<D> wild_stencil(std::mt19937_64& rng, int radius) {
  int offsets = 1;
  for (int a = 0; a < D; ++a) offsets *= 2 * radius + 1;
  std::uniform_int_distribution<int> offset(-radius, radius), count(1, std::min(offsets, 2 * D * radius + 3));
  std::uniform_real_distribution<double> exponent(-3.0, 5.0);
  std::bernoulli_distribution negative(0.5);
  std::map<typename Stencil<D>::index_type, double> terms;
  const int n = count(rng);
  while (static_cast<int>(terms.size()) < n) {
    typename Stencil<D>::index_type o{};
    for (int a = 0; a < D; ++a) o[a] = offset(rng);
    terms[o] = (negative(rng) ? -1 : 1) * std::pow(10.0, exponent(rng));
  }
  std::vector<Term<D>> list;
  for (const auto& [o, w] : terms) list.push_back({o, w});
  return Stencil<D>(list, "wild");
}

template <int D>
void one_case(std::mt19937_64& rng, Tally& tally) {
  const int radius                 = std::uniform_int_distribution<int>(1, D == 3 ? 1 : 2)(rng);
  const Stencil<D> stencil         = wild_stencil<D>(rng, radius);
  constexpr Precision precisions[] = {Precision::f16, Precision::bf16, Precision::tf32, Precision::f32, Precision::f64};
  const Precision precision        = precisions[rng() % 5];
  const Boundary boundary          = all_boundaries[rng() % 3];
  const int steps                  = rng() % 4 == 0 ? 2 : 1;
  std::array<int, D> grid{};
  for (int a = 0; a < D; ++a) grid[a] = 2 * steps * radius + 1 + static_cast<int>(rng() % (D == 3 ? 6 : 24));
  PlanRequest r     = request_for<D>(stencil, precision, boundary, steps, grid);
  r.input_magnitude = 1.0;
  // Half the tensor-core precisions' cases name the sparse backend: its plans emulated.
  const bool sparse_named = precision != Precision::f32 && precision != Precision::f64 && rng() % 2 == 0;
  if (sparse_named) r.backends = {"cuda_sptc"};
  const std::string label = to_text(AnyStencil(stencil)) + " " + to_string(precision) + " " + to_string(boundary) +
                            " t=" + std::to_string(steps) + " grid " + impl::tuple_string(grid);
  Plan plan;
  try {
    plan = make_plan(r);
  } catch (const std::runtime_error& e) {
    // Refused only for a value the precision cannot hold, or (the sparse backend named) a
    // fused launch under walls whose band the wall kernel's blocks cannot hold.
    const std::string what = e.what();
    const bool walls       = sparse_named && what.find("band along the walls") != std::string::npos;
    EXPECT_TRUE(what.find("exceeds") != std::string::npos || walls) << label << ": " << what;
    ++(walls ? tally.walls : tally.refused);
    return;
  }
  ++tally.planned;
  EXPECT_TRUE(plan.warnings.empty()) << label;
  // Inputs of magnitude at most input_magnitude (1), representable in the storage format.
  const HostGrid<D> in = random_grid<D>(grid, precision, rng()), before = random_grid<D>(grid, precision, rng());
  if (plan.backend == "cuda_sptc") {
    HostGrid<D> out = before;
    cuda_sptc::emulate(plan, in, out);
    const SparseExpectation<D> e = sparse_expectation(plan, in, before);
    const bool ok                = static_cast<bool>(within_bound(out, e.expected, e.slack, 1.0, e.margin));
    EXPECT_TRUE(ok) << label;
    tally.outside += !ok;
    ++tally.emulated;
    return;
  }
  // The generic executor: float sums for the 16- and 32-bit precisions, double for f64.
  auto run = [&](auto zero) {
    using T    = decltype(zero);
    using View = GridView<T, D, Kokkos::LayoutRight, Kokkos::HostSpace>;
    View a = make_view<View>("a", grid), b = make_view<View>("b", grid);
    for_each_point<D>(grid, [&](const std::array<int, D>& i) {
      impl::element<D>(a, to_kokkos<D>(i)) = static_cast<T>(in(i));
      impl::element<D>(b, to_kokkos<D>(i)) = static_cast<T>(steps == 1 ? before(i) : in(i));
    });
    Options options{boundary, "generic"};
    options.fusion = steps;
    StencilPlan<Kokkos::DefaultHostExecutionSpace, View> held(Kokkos::DefaultHostExecutionSpace(), stencil, a, b,
                                                              options);
    HostGrid<D> expected = before, magnitude = abs(before);
    if (steps == 1) {
      held.apply(a, b);
      reference_apply(stencil, in, expected, boundary);
      reference_apply(abs_weights(stencil), abs(in), magnitude, boundary);
    } else {
      held.iterate(a, b, steps);
      expected  = reference_iterate(stencil, in, steps, boundary);
      magnitude = reference_iterate(abs_weights(stencil), abs(in), steps, boundary);
    }
    const HostGrid<D> got = to_grid<D>(steps == 1 ? b : a);
    const bool ok =
        static_cast<bool>(within_bound(got, expected, magnitude, steps * step_error_factor<T>(stencil.size())));
    EXPECT_TRUE(ok) << label << " (generic)";
    tally.outside += !ok;
    ++tally.executed;
  };
  if (precision == Precision::f64) run(0.0);
  else run(0.0f);
}

TEST(RandomStencils, PlannedEmulatedAndRunWithinTheirBounds) {
  const char* setting = std::getenv("SPARSTENCIL_RANDOM_CASES");
  const int cases     = setting ? std::atoi(setting) : 10000;
  std::mt19937_64 rng(20261124);
  Tally tally;
  for (int c = 0; c < cases; ++c) {
    switch (c % 3) {
      case 0: one_case<1>(rng, tally); break;
      case 1: one_case<2>(rng, tally); break;
      default: one_case<3>(rng, tally);
    }
  }
  std::printf(
      "random stencils: %d cases, %d planned (%d emulated on the sparse plan, %d run on the generic "
      "executor), %d refused for values past the precision's range, %d fused sparse launches refused "
      "under walls, %d outside their bound\n",
      cases, tally.planned, tally.emulated, tally.executed, tally.refused, tally.walls, tally.outside);
  EXPECT_EQ(tally.outside, 0);
  EXPECT_EQ(tally.planned + tally.refused + tally.walls, cases);
  if (cases >= 100) {
    EXPECT_GT(tally.emulated, cases / 20);
    EXPECT_GT(tally.executed, cases / 20);
    EXPECT_GT(tally.refused, cases / 50);
  }
}

}  // namespace
}  // namespace sparstencil::test
