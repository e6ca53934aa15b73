// Kokkos dispatch to the CUDA sparse executor: half_t Views in CudaSpace, LayoutLeft and
// LayoutRight, go through sparstencil::apply/iterate to cuda_sptc when the planner picks
// it (Box-2D49P at these sizes) or when forced, and match the double reference within the
// tensor-core bound. Skips, saying why, without Kokkos CUDA, the executor or a GPU of
// compute capability 8.0+; where the executor is not built, forcing it is a clear error.
#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_CUDA_SPTC)
#define SKIP_WITHOUT_SPARSE_DISPATCH()                                                                    \
  do {                                                                                                    \
    if (cuda_sptc::device_count() == 0 || !cuda_sptc::has_sparse_tensor_cores(cuda_sptc::device_info(0))) \
      GTEST_SKIP() << "no CUDA device of compute capability 8.0+: sparse dispatch test skipped";          \
  } while (0)

template <class Layout>
void expect_sparse_apply(const Stencil<2>& stencil, Boundary boundary, const std::string& choice,
                         const std::array<int, 2>& e = {203, 517}) {
  using View = GridView<Kokkos::Experimental::half_t, 2, Layout, Kokkos::CudaSpace>;
  View in = make_view<View>("in", e), out = make_view<View>("out", e);
  fill_random<2>(in, 5);
  fill_random<2>(out, 6);
  const HostGrid<2> input = to_grid<2>(in), before = to_grid<2>(out);
  const RunReport report = apply(Kokkos::Cuda(), stencil, in, out, {boundary, choice});
  Kokkos::fence();
  EXPECT_EQ(report.executor, "cuda_sptc") << stencil.name();
  HostGrid<2> expected = before, magnitude = abs(before);
  reference_apply(stencil, input, expected, boundary);
  reference_apply(abs_weights(stencil), abs(input), magnitude, boundary);
  const cuda_sptc::ErrorBound bound = cuda_sptc::step_error_bound(Precision::f16, stencil.size());
  for (double& v : magnitude.values) v = bound.factor * v + bound.floor;
  EXPECT_TRUE(within_bound(to_grid<2>(out), expected, magnitude, 1.0)) << stencil.name() << " " << to_string(boundary);
}

TEST(SparseDispatch, PlannerPicksSparseForBox2D49P) {
  SKIP_WITHOUT_SPARSE_DISPATCH();
  const Stencil<2> s = as<2>(presets::by_name("box2d49p"));
  // At walls a sparse step is two launches (the wall kernel beside the sparse one): on
  // grids so small that a launch is the whole cost the planner takes the dense executor's
  // single launch, so the walls are asked on a grid launches do not dominate, of rows
  // whole 16-byte units (measured there on the H200: sparse 33 us a step, dense 57,
  // generic 49; perf_tests/RESULTS.md).
  // Rows of whole 16-byte units in both layouts (others go to the generic executor).
  const std::array<int, 2> small = {208, 520}, large = {3000, 4096};
  for (Boundary b : {Boundary::periodic, Boundary::interior, Boundary::fixed_rim}) {
    const std::array<int, 2>& e = b == Boundary::periodic ? small : large;
    expect_sparse_apply<Kokkos::LayoutRight>(s, b, "", e);
    expect_sparse_apply<Kokkos::LayoutLeft>(s, b, "", e);
  }
}

TEST(SparseDispatch, ForcedSparseForEveryPreset2D) {
  SKIP_WITHOUT_SPARSE_DISPATCH();
  for (const char* name : {"heat2d", "box2d9p", "star2d13p", "box2d49p"}) {
    const Stencil<2> s = as<2>(presets::by_name(name));
    expect_sparse_apply<Kokkos::LayoutRight>(s, Boundary::periodic, "cuda_sptc");
    expect_sparse_apply<Kokkos::LayoutLeft>(s, Boundary::fixed_rim, "cuda_sptc");
  }
}

TEST(SparseDispatch, IterateRunsOnTheSparseExecutor) {
  SKIP_WITHOUT_SPARSE_DISPATCH();
  using View         = GridView<Kokkos::Experimental::half_t, 2, Kokkos::LayoutRight, Kokkos::CudaSpace>;
  const Stencil<2> s = as<2>(presets::by_name("heat2d"));
  View a("a", 64, 96), b("b", 64, 96);
  fill_random<2>(a, 9);
  const HostGrid<2> start = to_grid<2>(a);
  const RunReport report  = iterate(Kokkos::Cuda(), s, a, b, 3, {Boundary::periodic, "cuda_sptc"});
  Kokkos::fence();
  EXPECT_EQ(report.executor, "cuda_sptc");
  EXPECT_EQ(report.steps, 3);
  const HostGrid<2> expected        = reference_iterate(s, start, 3, Boundary::periodic);
  HostGrid<2> magnitude             = reference_iterate(abs_weights(s), abs(start), 3, Boundary::periodic);
  const cuda_sptc::ErrorBound bound = cuda_sptc::step_error_bound(Precision::f16, s.size());
  for (double& v : magnitude.values) v = 3 * (bound.factor * v + bound.floor);  // three steps' errors
  EXPECT_TRUE(within_bound(to_grid<2>(a), expected, magnitude, 1.0));
}

// iterate with one step a launch: the leading runs of 16 launches replayed from a CUDA
// graph recorded on the first call (and replayed again on the second), the rest launched;
// the same bits as launching every step, and within the reference's bound. Odd step
// counts too (the handles end swapped either way).
TEST(SparseDispatch, RecordedIterateEqualsLaunchedSteps) {
  SKIP_WITHOUT_SPARSE_DISPATCH();
  using View         = GridView<Kokkos::Experimental::half_t, 2, Kokkos::LayoutRight, Kokkos::CudaSpace>;
  const Stencil<2> s = as<2>(presets::by_name("heat2d"));
  for (int steps : {40, 37}) {
    HostGrid<2> results[2];
    for (bool graphs : {false, true}) {
      View a("a", 96, 160), b("b", 96, 160);
      fill_random<2>(a, 31);
      Kokkos::deep_copy(b, a);
      const HostGrid<2> start = to_grid<2>(a);
      Options options{Boundary::periodic, "cuda_sptc"};
      options.fusion      = 1;
      options.cuda_graphs = graphs;
      StencilPlan plan(Kokkos::Cuda(), s, a, b, options);
      plan.iterate(a, b, steps);
      const RunReport report = plan.iterate(a, b, steps);
      Kokkos::fence();
      EXPECT_EQ(report.executor, "cuda_sptc");
      results[graphs]                   = to_grid<2>(a);
      const HostGrid<2> expected        = reference_iterate(s, start, 2 * steps, Boundary::periodic);
      HostGrid<2> magnitude             = reference_iterate(abs_weights(s), abs(start), 2 * steps, Boundary::periodic);
      const cuda_sptc::ErrorBound bound = cuda_sptc::step_error_bound(Precision::f16, s.size());
      for (double& v : magnitude.values) v = 2 * steps * (bound.factor * v + bound.floor);
      EXPECT_TRUE(within_bound(results[graphs], expected, magnitude, 1.0)) << steps << " steps, graphs " << graphs;
    }
    EXPECT_EQ(results[0].values, results[1].values) << steps << " steps";
  }
  // apply: the step recorded per (in, out) and replayed equals the launched one.
  HostGrid<2> applied[2];
  for (bool graphs : {false, true}) {
    View in("in", 96, 160), out("out", 96, 160);
    fill_random<2>(in, 32);
    Options options{Boundary::periodic, "cuda_sptc"};
    options.cuda_graphs = graphs;
    const StencilPlan plan(Kokkos::Cuda(), s, in, out, options);
    plan.apply(in, out);  // recorded (graphs), then replayed
    plan.apply(in, out);
    Kokkos::fence();
    applied[graphs] = to_grid<2>(out);
  }
  EXPECT_EQ(applied[0].values, applied[1].values);
}

// Options::fusion = 0 (the default): the planner picks the steps a launch. Box-2D9P on
// half_t is predicted fastest fused on tensor cores, under fixed_rim too (the wall kernel
// steps the band along the walls). Heat-2D on float, fused by temporal blocking (forced).
// Every result is checked against the double reference over all steps: a launch's fused
// bound, and t single steps' in the band.
TEST(SparseDispatch, AutomaticFusionFollowsThePlanner) {
  SKIP_WITHOUT_SPARSE_DISPATCH();
  const int steps = 6;
  {
    using View         = GridView<Kokkos::Experimental::half_t, 2, Kokkos::LayoutRight, Kokkos::CudaSpace>;
    const Stencil<2> s = as<2>(presets::by_name("box2d9p"));
    for (Boundary boundary : {Boundary::periodic, Boundary::fixed_rim}) {
      View a("a", 2048, 2048), b("b", 2048, 2048);
      fill_random<2>(a, 21);
      Kokkos::deep_copy(b, a);
      const HostGrid<2> start = to_grid<2>(a);
      const RunReport report  = iterate(Kokkos::Cuda(), s, a, b, steps, {boundary});
      Kokkos::fence();
      EXPECT_EQ(report.executor, "cuda_sptc") << to_string(boundary);
      EXPECT_GT(report.steps_per_launch, 1) << to_string(boundary);
      const int t = report.steps_per_launch, launches = (steps + t - 1) / t;
      const HostGrid<2> expected        = reference_iterate(s, start, steps, boundary);
      HostGrid<2> magnitude             = reference_iterate(abs_weights(s), abs(start), steps, boundary);
      const cuda_sptc::ErrorBound bound = cuda_sptc::step_error_bound(Precision::f16, fuse(s, t).size());
      const cuda_sptc::ErrorBound one   = cuda_sptc::step_error_bound(Precision::f16, s.size());
      for (double& v : magnitude.values)
        v = launches * (bound.factor * v + bound.floor) + steps * (one.factor * v + one.floor);
      EXPECT_TRUE(within_bound(to_grid<2>(a), expected, magnitude, 1.0))
          << to_string(boundary) << ", " << t << " steps a launch on " << report.executor;
    }
  }
  {
    using View         = GridView<float, 2, Kokkos::LayoutLeft, Kokkos::CudaSpace>;
    const Stencil<2> s = as<2>(presets::by_name("heat2d"));
    View a("a", 2048, 2048), b("b", 2048, 2048);
    fill_random<2>(a, 22);
    Kokkos::deep_copy(b, a);
    const HostGrid<2> start = to_grid<2>(a);
    Options options{Boundary::periodic};
    options.fusion         = 3;  // the planner keeps float steps unfused: temporal blocking forced
    const RunReport report = iterate(Kokkos::Cuda(), s, a, b, steps, options);
    Kokkos::fence();
    EXPECT_EQ(report.executor, "generic");
    EXPECT_EQ(report.steps_per_launch, 3);
    EXPECT_NE(report.variant.find("temporal blocking"), std::string::npos) << report.variant;
    const HostGrid<2> expected  = reference_iterate(s, start, steps, Boundary::periodic);
    const HostGrid<2> magnitude = reference_iterate(abs_weights(s), abs(start), steps, Boundary::periodic);
    EXPECT_TRUE(within_bound(to_grid<2>(a), expected, magnitude, steps * step_error_factor<float>(s.size())));
  }
}

TEST(SparseDispatch, DoubleViewsCannotBeForced) {
  SKIP_WITHOUT_SPARSE_DISPATCH();
  using View = GridView<double, 2, Kokkos::LayoutRight, Kokkos::CudaSpace>;
  View in("in", 32, 32), out("out", 32, 32);
  EXPECT_ERROR_MENTIONS(
      apply(Kokkos::Cuda(), as<2>(presets::by_name("heat2d")), in, out, {Boundary::periodic, "cuda_sptc"}), "half_t",
      "float");
}

#else

TEST(SparseDispatch, ForcingWithoutTheExecutorIsAClearError) {
  using View = GridView<float, 2>;
  View in("in", 16, 16), out("out", 16, 16);
  EXPECT_ERROR_MENTIONS(apply(as<2>(presets::by_name("heat2d")), in, out, {Boundary::periodic, "cuda_sptc"}),
                        "sparse executor is not built");
  std::printf(
      "sparse dispatch not built here (needs Kokkos with CUDA and the CUDA executor): GPU dispatch tests "
      "run on CUDA builds only\n");
}

#endif

}  // namespace
}  // namespace sparstencil::test
