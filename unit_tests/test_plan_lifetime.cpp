// A plan's life: moved-from plans refuse to run, naming the move; a run's launches are held
// in constant memory whatever the step count (copies are compile errors: compile_fail/;
// plans outliving Kokkos::finalize: plan_after_finalize.cpp).
#include <climits>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
using V2    = Kokkos::View<double**, Space::memory_space>;

/// Every launch's steps, in order.
std::vector<int> expanded(const LaunchSteps& s) {
  std::vector<int> all;
  for (std::size_t n = 0; n < s.size(); ++n) all.push_back(s[n]);
  return all;
}

/// Expects `out` to hold one step of heat_2d on `start` under the periodic boundary.
void expect_heat_step(const HostGrid<2>& start, const V2& out) {
  const Stencil<2> s   = presets::heat_2d();
  HostGrid<2> expected = start, magnitude = abs(start);
  reference_apply(s, start, expected, Boundary::periodic);
  reference_apply(abs_weights(s), abs(start), magnitude, Boundary::periodic);
  EXPECT_TRUE(within_bound(to_grid<2>(out), expected, magnitude, step_error_factor<double>(s.size())));
}

TEST(PlanLifetime, AMovedFromPlanRefusesToRunAndTheMovedToOneRuns) {
  V2 in("in", 33, 47), out("out", 33, 47);
  fill_random<2>(in, 11);
  fill_random<2>(out, 12);
  const HostGrid<2> start = to_grid<2>(in);
  StencilPlan plan(Space(), presets::heat_2d(), in, out, Options{Boundary::periodic});
  StencilPlan moved(std::move(plan));
  EXPECT_ERROR_MENTIONS(plan.apply(in, out), "StencilPlan::apply", "moved from");
  EXPECT_ERROR_MENTIONS(plan.iterate(in, out, 2), "iterate", "moved from");
  EXPECT_ERROR_MENTIONS(plan.launch_steps(3, in, out), "launch_steps", "moved from");
  EXPECT_ERROR_MENTIONS(plan.launch(in, out, 1), "StencilPlan::launch", "moved from");
  EXPECT_ERROR_MENTIONS((void)plan.explain(), "moved from");
  EXPECT_ERROR_MENTIONS((void)plan.report(), "moved from");
  moved.apply(in, out);
  Space().fence();
  expect_heat_step(start, out);

  // Move-assigned, back into the moved-from plan: it runs again, the other refuses.
  plan = std::move(moved);
  EXPECT_ERROR_MENTIONS(moved.apply(in, out), "moved from");
  Kokkos::deep_copy(out, 0.5);
  plan.apply(in, out);
  Space().fence();
  expect_heat_step(start, out);
  EXPECT_EQ(plan.report().steps, 1);
}

TEST(PlanLifetime, PlansMoveIntoContainers) {
  V2 in("in", 21, 25), out("out", 21, 25);
  fill_random<2>(in, 13);
  const HostGrid<2> start = to_grid<2>(in);
  std::vector<StencilPlan<Space, V2>> plans;
  for (int k = 0; k < 5; ++k) plans.emplace_back(Space(), presets::heat_2d(), in, out, Options{Boundary::periodic});
  for (const auto& p : plans) {
    Kokkos::deep_copy(out, 0.25);
    p.apply(in, out);
    Space().fence();
    expect_heat_step(start, out);
  }
}

TEST(PlanLifetime, LaunchStepsSplitLikeIterate) {
  V2 a("a", 64, 64), b("b", 64, 64);
  fill_random<2>(a, 14);
  for (int fusion : {1, 2, 3, 4}) {
    Options options{Boundary::periodic, "generic"};
    options.fusion = fusion;
    StencilPlan plan(Space(), presets::heat_2d(), a, b, options);
    for (int steps = 1; steps <= 13; ++steps) {
      const LaunchSteps launches = plan.launch_steps(steps, a, b);
      const std::vector<int> all = expanded(launches);
      long sum                   = 0;
      for (int n : all) {
        EXPECT_GE(n, 1);
        EXPECT_LE(n, fusion);
        sum += n;
      }
      EXPECT_EQ(sum, steps) << fusion << " a launch";
      // The launch count has the steps' parity: iterate swaps the handles exactly when odd.
      EXPECT_EQ(static_cast<int>(all.size()) % 2, steps % 2) << steps << " steps, " << fusion << " a launch";
      EXPECT_LE(launches.rest.size(), 8u);
      EXPECT_EQ(launches.most(), *std::max_element(all.begin(), all.end()));
    }
    if (plan.launch_steps(2 * fusion, a, b).most() != fusion) continue;  // the backend runs fewer a launch
    if (fusion == 3) {
      EXPECT_EQ(expanded(plan.launch_steps(7, a, b)), (std::vector<int>{3, 3, 1}));
      EXPECT_EQ(expanded(plan.launch_steps(6, a, b)), (std::vector<int>{3, 3}));
      EXPECT_EQ(expanded(plan.launch_steps(5, a, b)), (std::vector<int>{3, 1, 1}));  // 3 + 2 would swap twice
    }
    if (fusion == 4) {
      EXPECT_EQ(expanded(plan.launch_steps(6, a, b)), (std::vector<int>{4, 2}));
      EXPECT_EQ(expanded(plan.launch_steps(4, a, b)), (std::vector<int>{3, 1}));
      EXPECT_EQ(expanded(plan.launch_steps(8, a, b)), (std::vector<int>{4, 4}));
    }
  }
}

TEST(PlanLifetime, AnyStepCountIsScheduledInConstantMemory) {
  V2 a("a", 40, 40), b("b", 40, 40);
  fill_random<2>(a, 15);
  for (int fusion : {1, 4}) {
    Options options{Boundary::periodic, "generic"};
    options.fusion = fusion;
    StencilPlan plan(Space(), presets::heat_2d(), a, b, options);
    for (int steps : {INT_MAX, INT_MAX - 1, 20'000'000, 999'999'999}) {
      const LaunchSteps launches = plan.launch_steps(steps, a, b);
      EXPECT_LE(launches.rest.size(), 8u) << steps;
      long long sum = static_cast<long long>(launches.depth) * launches.repeats;
      for (int n : launches.rest) sum += n;
      EXPECT_EQ(sum, steps);
      EXPECT_EQ(static_cast<long long>(launches.size()) % 2, steps % 2) << steps;
    }
  }
}

TEST(PlanLifetime, IterateTakesOnlyThePlansViews) {
  V2 a("a", 30, 30), b("b", 30, 30), other("other", 30, 31);
  fill_random<2>(a, 16);
  Kokkos::deep_copy(b, a);
  StencilPlan plan(Space(), presets::heat_2d(), a, b, Options{Boundary::periodic});
  EXPECT_ERROR_MENTIONS(plan.iterate(a, other, 2), "iterate", "extents");
  const RunReport r = plan.iterate(a, b, 3);
  EXPECT_EQ(r.steps, 3);
}

}  // namespace
}  // namespace sparstencil::test
