// Plans a user holds (StencilPlan), the one-off calls' exact-key cache, the profiling
// regions kokkos-tools see, and the configuration report.
#include <sstream>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
using V2    = Kokkos::View<double**, Space::memory_space>;
using F2    = Kokkos::View<float**, Space::memory_space>;

/// Expects `out` to be one step of `s` on `in` within float's bound.
template <class View>
void expect_step(const Stencil<2>& s, const HostGrid<2>& in, const View& out, Boundary b, const HostGrid<2>& before) {
  HostGrid<2> expected = before, magnitude = abs(before);
  reference_apply(s, in, expected, b);
  reference_apply(abs_weights(s), abs(in), magnitude, b);
  EXPECT_TRUE(within_bound(to_grid<2>(out), expected, magnitude, step_error_factor<float>(s.size())));
}

TEST(StencilPlan, AppliesAndIteratesLikeTheFreeFunctions) {
  const Stencil<2> s = presets::box_2d9p();
  for (Boundary b : all_boundaries) {
    F2 in("in", 37, 53), out("out", 37, 53);
    fill_random<2>(in, 1);
    fill_random<2>(out, 2);
    const HostGrid<2> start = to_grid<2>(in), before = to_grid<2>(out);
    const StencilPlan plan(Space(), s, in, out, Options{b});
    const RunReport& report = plan.apply(in, out);
    Space().fence();
    EXPECT_EQ(report.executor, plan.plan().backend);
    EXPECT_EQ(report.steps, 1);
    EXPECT_EQ(report.boundary, b);
    EXPECT_EQ(report.precision, plan.plan().precision);
    expect_step(s, start, out, b, before);
    // The same plan on other Views of the same extents.
    F2 in2("in2", 37, 53), out2("out2", 37, 53);
    fill_random<2>(in2, 3);
    fill_random<2>(out2, 4);
    const HostGrid<2> start2 = to_grid<2>(in2), before2 = to_grid<2>(out2);
    plan.apply(in2, out2);
    Space().fence();
    expect_step(s, start2, out2, b, before2);
  }
  // iterate through a plan: 7 steps end in a, against the reference.
  F2 a("a", 41, 29), b("b", 41, 29);
  fill_random<2>(a, 5);
  Kokkos::deep_copy(b, a);
  const HostGrid<2> start = to_grid<2>(a);
  StencilPlan plan(Space(), s, a, b, Options{Boundary::fixed_rim});
  const RunReport report = plan.iterate(a, b, 7);
  Space().fence();
  EXPECT_EQ(report.steps, 7);
  const HostGrid<2> expected  = reference_iterate(s, start, 7, Boundary::fixed_rim);
  const HostGrid<2> magnitude = reference_iterate(abs_weights(s), abs(start), 7, Boundary::fixed_rim);
  EXPECT_TRUE(within_bound(to_grid<2>(a), expected, magnitude, 7 * step_error_factor<float>(s.size())));
  EXPECT_EQ(plan.iterate(a, b, 0).steps, 0);
}

// The README's "or parse_stencil(...)": a stencil parsed at run time goes through the
// same calls as a preset (a plan, one-off apply and iterate, fuse), with the same results.
TEST(StencilPlan, ParsedStencilsGoThroughTheReadmesCalls) {
  const AnyStencil parsed = parse_stencil("box2d:r=3");
  const Stencil<2>& s     = as<2>(parsed);
  F2 a("a", 33, 45), b("b", 33, 45);
  fill_random<2>(a, 11);
  fill_random<2>(b, 12);
  const HostGrid<2> start = to_grid<2>(a), before = to_grid<2>(b);
  const Options options{Boundary::fixed_rim};
  StencilPlan plan(Space(), parsed, a, b, options);
  plan.apply(a, b);
  Space().fence();
  expect_step(s, start, b, Boundary::fixed_rim, before);
  Kokkos::deep_copy(b, a);
  EXPECT_EQ(plan.iterate(a, b, 2).steps, 2);
  EXPECT_EQ(apply(parsed, a, b, options).steps, 1);
  EXPECT_EQ(iterate(parsed, a, b, 3, options).steps, 3);
  Space().fence();
  // a holds 2 + 3 steps from the start (apply's step went to b, and iterate began from a).
  const HostGrid<2> expected  = reference_iterate(s, start, 5, Boundary::fixed_rim);
  const HostGrid<2> magnitude = reference_iterate(abs_weights(s), abs(start), 5, Boundary::fixed_rim);
  EXPECT_TRUE(within_bound(to_grid<2>(a), expected, magnitude, 5 * step_error_factor<float>(s.size())));
  const auto fused = fuse(parsed, 4);
  EXPECT_EQ(radius(fused), (std::vector<int>{12, 12}));
  EXPECT_EQ(term_count(fused), 25u * 25u);
}

// On CUDA, apply records a generic step of two kernels (interior and rim) once as a CUDA
// graph and replays it, and iterate replays recorded runs of launches: the results equal
// those of launching every kernel, bit for bit, and the reference within float's bound.
TEST(StencilPlan, RecordedGenericStepsEqualLaunchedOnes) {
#if !defined(KOKKOS_ENABLE_CUDA)
  GTEST_SKIP() << "needs Kokkos with CUDA (CUDA graphs); this Kokkos runs on " << Space::name();
#else
  using V = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::CudaSpace>;
  for (const Stencil<2>& s : {presets::heat_2d(), presets::box_2d49p()}) {
    for (Boundary b : all_boundaries) {
      HostGrid<2> applied[2], iterated[2];
      for (bool graphs : {false, true}) {
        V in("in", 67, 131), out("out", 67, 131);
        fill_random<2>(in, 41);
        fill_random<2>(out, 42);
        const HostGrid<2> start = to_grid<2>(in), before = to_grid<2>(out);
        Options options{b, "generic"};
        options.cuda_graphs = graphs;
        options.fusion      = 1;
        StencilPlan plan(Kokkos::Cuda(), s, in, out, options);
        plan.apply(in, out);  // recorded (graphs), then replayed
        plan.apply(in, out);  // replayed
        Kokkos::fence();
        expect_step(s, start, out, b, before);
        applied[graphs] = to_grid<2>(out);
        V a = in, c = out;
        Kokkos::deep_copy(c, a);
        plan.iterate(a, c, 37);
        Kokkos::fence();
        const HostGrid<2> expected  = reference_iterate(s, start, 37, b);
        const HostGrid<2> magnitude = reference_iterate(abs_weights(s), abs(start), 37, b);
        EXPECT_TRUE(within_bound(to_grid<2>(a), expected, magnitude, 37 * step_error_factor<float>(s.size())))
            << s.name() << " " << to_string(b) << " graphs " << graphs;
        iterated[graphs] = to_grid<2>(a);
      }
      EXPECT_EQ(applied[0].values, applied[1].values) << s.name() << " " << to_string(b);
      EXPECT_EQ(iterated[0].values, iterated[1].values) << s.name() << " " << to_string(b);
    }
  }
#endif
}

TEST(StencilPlan, ExplainsEveryBid) {
  V2 in("in", 64, 64), out("out", 64, 64);
  const StencilPlan plan(Space(), presets::heat_2d(), in, out);
  const std::string text = plan.explain();
  for (const char* part : {"backend", "generic", "bids", "chosen", "cuda_sptc", "cannot run"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " missing from:\n" << text;
  }
  EXPECT_EQ(plan.plan().backend, "generic");  // double Views: no sparse form
}

TEST(StencilPlan, ViewsOtherThanItsOwnAreClearErrors) {
  V2 in("in", 32, 24), out("out", 32, 24);
  const StencilPlan plan(Space(), presets::heat_2d(), in, out);
  V2 wide("wide", 32, 25), other("other", 32, 25);
  EXPECT_ERROR_MENTIONS(plan.apply(wide, other), "StencilPlan::apply", "extents (32,25)", "made for (32,24)");
  EXPECT_ERROR_MENTIONS(plan.apply(in, in), "overlap in memory");
  // Strided Views: the plan holds the strides it was made for. (LayoutRight: every other
  // column block is strided whatever the space's default layout.)
  using S2 = Kokkos::View<double**, Kokkos::LayoutStride, Space::memory_space>;
  using R2 = Kokkos::View<double**, Kokkos::LayoutRight, Space::memory_space>;
  R2 big("big", 32, 48), big2("big2", 32, 48), right_in("right_in", 32, 24), right_out("right_out", 32, 24);
  const S2 every_other_in  = Kokkos::subview(big, Kokkos::ALL, Kokkos::make_pair(0, 24));
  const S2 every_other_out = Kokkos::subview(big2, Kokkos::ALL, Kokkos::make_pair(0, 24));
  const StencilPlan<Space, S2, S2> strided(Space(), presets::heat_2d(), every_other_in, every_other_out);
  const S2 dense_in = right_in, dense_out = right_out;
  EXPECT_ERROR_MENTIONS(strided.apply(dense_in, dense_out), "strides", "made for");
  // A dimension other than the Views' rank.
  EXPECT_ERROR_MENTIONS((StencilPlan<Space, V2>(Space(), AnyStencil(presets::heat_3d()), in, out)), "3-D", "rank 2");
}

TEST(StencilPlan, OneOffCallsAreKeyedByExactWeights) {
  // Stencils of the same offsets applied alternately through the one-off call: each
  // result is its own stencil's.
  F2 in("in", 40, 40), out("out", 40, 40);
  fill_random<2>(in, 11);
  const HostGrid<2> start = to_grid<2>(in);
  const Stencil<2> a({{{0, 0}, 0.5}, {{1, 0}, 0.25}, {{-1, 0}, 0.25}});
  const Stencil<2> b({{{0, 0}, 0.5}, {{1, 0}, 0.25}, {{-1, 0}, -0.75}});
  for (int round = 0; round < 2; ++round) {
    for (const Stencil<2>* s : {&a, &b}) {
      fill_random<2>(out, 12);
      const HostGrid<2> before = to_grid<2>(out);
      apply(*s, in, out, Options{Boundary::periodic});
      Space().fence();
      expect_step(*s, start, out, Boundary::periodic, before);
    }
  }
  // A weight one bit away, or -0.0 for 0.0, is another problem with a plan of its own;
  // the same terms again find the same plan.
  const Stencil<2> c({{{0, 0}, 0.5}, {{1, 0}, 0.25}, {{-1, 0}, std::nextafter(0.25, 1.0)}});
  const Stencil<2> zero({{{0, 0}, 0.5}, {{1, 0}, 0.0}}), negative_zero({{{0, 0}, 0.5}, {{1, 0}, -0.0}});
  auto plan_of = [&](const Stencil<2>& s) { return &impl::cached_plan("apply", Space(), s, in, out, Options{}); };
  EXPECT_NE(plan_of(a), plan_of(c));
  EXPECT_NE(plan_of(zero), plan_of(negative_zero));
  EXPECT_EQ(plan_of(a), plan_of(Stencil<2>(a.terms(), "another name")));
  Options fixed;
  fixed.boundary = Boundary::fixed_rim;
  EXPECT_NE(plan_of(a), &impl::cached_plan("apply", Space(), a, in, out, fixed));
}

TEST(StencilPlan, RowAlignmentOfTheViews) {
  // The largest power of two (16 at most) every row start of both Views lies on: rows of
  // float of 1000 values are whole 16-byte units, of 1001 values 4-byte ones; a subview
  // one value in starts on 4 bytes; LayoutLeft rows run along the first axis (the default
  // layout of device Views).
  using R2 = Kokkos::View<float**, Kokkos::LayoutRight, Space::memory_space>;
  using L2 = Kokkos::View<float**, Kokkos::LayoutLeft, Space::memory_space>;
  R2 whole("whole", 7, 1000), odd("odd", 7, 1001);
  EXPECT_EQ(impl::row_alignment(whole, whole), 16);
  EXPECT_EQ(impl::row_alignment(whole, odd), 4);
  auto columns = [](const R2& v, int first, int count) {
    return Kokkos::subview(v, Kokkos::make_pair(0, 7), Kokkos::make_pair(first, first + count));
  };
  EXPECT_EQ(impl::row_alignment(columns(whole, 1, 998), columns(whole, 1, 998)), 4);
  EXPECT_EQ(impl::row_alignment(columns(whole, 2, 996), columns(whole, 2, 996)), 8);
  L2 left("left", 1000, 7), left_odd("left_odd", 1002, 7), short_rows("short_rows", 7, 1000);
  EXPECT_EQ(impl::row_alignment(left, left), 16);
  EXPECT_EQ(impl::row_alignment(left, left_odd), 8);
  EXPECT_EQ(impl::row_alignment(short_rows, short_rows), 4);  // rows of 7 floats
  // The plans say so, and a one-off call on other Views of other alignment is another problem.
  const Stencil<2> s = presets::heat_2d();
  R2 in("in", 7, 1000), odd_in("odd_in", 7, 1001);
  EXPECT_EQ(StencilPlan(Space(), s, odd_in, odd).plan().row_alignment, 4);
  EXPECT_EQ(StencilPlan(Space(), s, in, whole).plan().row_alignment, 16);
  auto& aligned = impl::cached_plan("apply", Space(), s, columns(in, 0, 998), columns(whole, 0, 998), Options{});
  auto& shifted = impl::cached_plan("apply", Space(), s, columns(in, 1, 998), columns(whole, 1, 998), Options{});
  EXPECT_NE(&aligned, &shifted);
  EXPECT_EQ(aligned.plan().row_alignment, 16);
  EXPECT_EQ(shifted.plan().row_alignment, 4);
}

// A kokkos-tools style tool: the region callbacks record what SparStencil opens and closes.
std::vector<std::string> pushed;
int open_regions = 0;
void on_push(const char* name) {
  pushed.emplace_back(name);
  ++open_regions;
}
void on_pop() { --open_regions; }

TEST(StencilPlan, ProfilingRegionsNameTheBackendAndClose) {
  pushed.clear();
  open_regions = 0;
  Kokkos::Tools::Experimental::set_push_region_callback(on_push);
  Kokkos::Tools::Experimental::set_pop_region_callback(on_pop);
  F2 a("a", 48, 48), b("b", 48, 48);
  fill_random<2>(a, 21);
  apply(presets::heat_2d(), a, b);
  iterate(presets::heat_2d(), a, b, 3);
  const StencilPlan plan(Space(), presets::heat_2d(), a, b);
  plan.apply(a, b);
  // A region is closed when an exception leaves it.
  try {
    const impl::ProfilingRegion region("sparstencil::test[throws]");
    throw std::runtime_error("inside a region");
  } catch (const std::runtime_error&) {
  }
  Space().fence();
  Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
  Kokkos::Tools::Experimental::set_pop_region_callback(nullptr);
  EXPECT_EQ(open_regions, 0);
  const auto seen = [](const std::string& name) { return std::count(pushed.begin(), pushed.end(), name); };
  EXPECT_EQ(seen("sparstencil::apply[generic]"), 2);
  EXPECT_EQ(seen("sparstencil::iterate[generic]"), 1);
  EXPECT_EQ(seen("sparstencil::test[throws]"), 1);
}

TEST(StencilPlan, ConfigurationNamesBackendsAndKokkos) {
  std::ostringstream out;
  print_configuration(out);
  const std::string text = out.str();
  for (const char* part :
       {"SparStencil " SPARSTENCIL_VERSION_STRING, "generic", "cuda_sptc", "Kokkos ", Space::name(), "device: "}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << " missing from:\n" << text;
  }
  EXPECT_GE(SPARSTENCIL_VERSION, 100);
#if !defined(KOKKOS_ENABLE_CUDA)
  // No line calls an executor Views cannot reach here plainly "built".
  EXPECT_EQ(text.find("executor: built\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("(CUDA): built\n"), std::string::npos) << text;
#endif
}

}  // namespace
}  // namespace sparstencil::test
