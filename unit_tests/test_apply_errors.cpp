// Every run-time validation of the front-end: the message names the problem.
#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

using Space = Kokkos::DefaultExecutionSpace;
using V2    = Kokkos::View<double**, Space::memory_space>;
using V3    = Kokkos::View<double***, Space::memory_space>;
using V1    = Kokkos::View<float*, Space::memory_space>;

TEST(ApplyErrors, ExtentsDiffer) {
  V2 in("in", 1024, 24), out("out", 1024, 20);
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out), "sparstencil::apply",
                        "in and out extents differ: (1024,24) vs (1024,20)");
}

TEST(ApplyErrors, ExtentTooSmallForRadius) {
  V2 in("in", 40, 6), out("out", 40, 6);
  EXPECT_ERROR_MENTIONS(apply(presets::box_2d49p(), in, out), "extent 6 along axis 1", "radius 3", "needs at least 7");
  V1 a("a", 0), b("b", 0);
  EXPECT_ERROR_MENTIONS(apply(presets::heat_1d(), a, b), "extent 0 along axis 0");
}

TEST(ApplyErrors, InAndOutShareMemory) {
  V2 in("field", 16, 16);
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, in), "overlap in memory", "'field'");
  // Overlapping windows of one allocation are refused too.
  V2 big("big", 16, 32);
  auto left  = Kokkos::subview(big, Kokkos::ALL, Kokkos::make_pair(0, 20));
  auto right = Kokkos::subview(big, Kokkos::ALL, Kokkos::make_pair(12, 32));
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), left, right), "overlap in memory");
  // A const view of the same data is the same memory.
  Kokkos::View<const double**, Space::memory_space> view_const = in;
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), view_const, in), "overlap in memory");
}

// Overlap is decided element by element: two interleaved components of one allocation
// share no element and run; a window shifted by one element shares many and is refused.
TEST(ApplyErrors, DisjointStridedComponentsRunOverlappingOnesDoNot) {
  using V3 = Kokkos::View<double***, Kokkos::LayoutRight, Space::memory_space>;
  V3 both("both", 24, 20, 2);
  const auto first  = Kokkos::subview(both, Kokkos::ALL, Kokkos::ALL, 0);
  const auto second = Kokkos::subview(both, Kokkos::ALL, Kokkos::ALL, 1);
  fill_random<2>(first, 7);
  fill_random<2>(second, 8);
  const HostGrid<2> input = to_grid<2>(first), before = to_grid<2>(second);
  EXPECT_NO_THROW(apply(presets::box_2d9p(), first, second, {Boundary::periodic}));
  Space().fence();
  HostGrid<2> expected = before, magnitude = abs(before);
  reference_apply(presets::box_2d9p(), input, expected, Boundary::periodic);
  reference_apply(abs_weights(presets::box_2d9p()), abs(input), magnitude, Boundary::periodic);
  EXPECT_TRUE(within_bound(to_grid<2>(second), expected, magnitude, step_error_factor<double>(9)));
  EXPECT_EQ(to_grid<2>(first).values, input.values);  // the other component untouched
  // Rows shifted by one element in a padded allocation: shared elements, refused.
  // (LayoutRight: the rows are the contiguous axis whatever the space's default layout.)
  Kokkos::View<double**, Kokkos::LayoutRight, Space::memory_space> padded("padded", 16, 33);
  const auto rows  = Kokkos::subview(padded, Kokkos::ALL, Kokkos::make_pair(0, 32));
  const auto later = Kokkos::subview(padded, Kokkos::ALL, Kokkos::make_pair(1, 33));
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), rows, later), "overlap in memory", "share elements");
  // Different strides over meeting ranges cannot be ruled out: refused, saying so.
  Kokkos::View<double**, Kokkos::LayoutLeft, Space::memory_space> left(padded.data(), 16, 32);
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), rows, left), "may overlap", "strides differ");
}

TEST(ApplyErrors, NullViewsAreClearErrors) {
  V2 in("in", 8, 8);
  const V2 null_out;
  const V2 unmanaged(static_cast<double*>(nullptr), 8, 8);
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, unmanaged), "out View", "holds no data");
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, null_out), "extents differ");
}

TEST(ApplyErrors, IterateChecksToo) {
  V2 a("a", 8, 8), b("b", 8, 9);
  EXPECT_ERROR_MENTIONS(iterate(presets::heat_2d(), a, b, 3), "sparstencil::iterate", "extents differ");
  V2 c("c", 8, 8);
  EXPECT_ERROR_MENTIONS(iterate(presets::heat_2d(), a, c, -1), "step count -1 is negative");
  EXPECT_ERROR_MENTIONS(iterate(presets::heat_2d(), a, a, 2), "overlap in memory");
}

TEST(ApplyErrors, RunTimeStencilDimensionMustMatchRank) {
  V2 in("in", 8, 8), out("out", 8, 8);
  const AnyStencil heat3d = presets::heat_3d();
  EXPECT_ERROR_MENTIONS(apply(Space(), heat3d, in, out), "'Heat-3D' is 3-D but the Views have rank 2");
  EXPECT_ERROR_MENTIONS(iterate(Space(), heat3d, in, out, 2), "sparstencil::iterate", "rank 2");
  EXPECT_NO_THROW(apply(Space(), parse_stencil("heat2d"), in, out));
}

TEST(ApplyErrors, ForcedGenericVariantIsChecked) {
  V2 in("in", 16, 16), out("out", 16, 16);
  Options options{Boundary::periodic, "generic"};
  options.generic.variant = GenericConfig{GenericCaching::hardware, 64, 4, 3};
  if (sparstencil::impl::runs_on_host<Space>()) {
    // A host tile is a loop nest on one thread: rows in blocks, not a team of threads.
    EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "3 outputs (rows of a host tile",
                          "must be 1, 2 or a multiple of 4 up to 4096");
    options.generic.variant = GenericConfig{GenericCaching::hardware, 512, 256, 4};
    EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "a host tile of 512 x 256",
                          "at most 65536 points across");
    options.generic.variant = GenericConfig{GenericCaching::hardware, 64, 4, 8192};
    EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "8192 outputs");
    options.generic.variant = GenericConfig{GenericCaching::hardware, 64, 32, 64};
    EXPECT_NO_THROW(apply(presets::heat_2d(), in, out, options));
  } else {
    EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "outputs per thread 3 must be 1, 2, 4 or 8");
    options.generic.variant = GenericConfig{GenericCaching::hardware, 64, 32, 4};
    EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "64 x 32 threads per team", "at most 256");
  }
  options.generic.variant = GenericConfig{GenericCaching::scratch, 64, 4, 3};
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "outputs per thread 3 must be 1, 2, 4 or 8");
  options.generic.variant = GenericConfig{GenericCaching::scratch, 64, 32, 4};
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "64 x 32 threads per team", "at most 256");
  options.generic.variant = GenericConfig{GenericCaching::streaming, 64, 1, 128, 3};
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "streaming 3 columns per thread",
                        "must be 1, 2 or 4");
  options.generic.variant = GenericConfig{GenericCaching::hardware, 64, 4, 4, 2};
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, options), "2 columns per thread", "only streaming");
  V3 in3("in", 8, 8, 8), out3("out", 8, 8, 8);
  options.generic.variant = GenericConfig{GenericCaching::streaming, 32, 8, 64, 4};
  EXPECT_ERROR_MENTIONS(apply(presets::heat_3d(), in3, out3, options), "4 columns per thread", "2-D only");
  options.generic.variant = GenericConfig{GenericCaching::streaming, 32, 16, 64, 2};
  EXPECT_ERROR_MENTIONS(apply(presets::heat_3d(), in3, out3, options), "32 x 16 threads per team", "at most 256");
}

TEST(ApplyErrors, FusionIsChecked) {
  V2 a("a", 16, 16), b("b", 16, 16);
  Options options;
  options.fusion = -1;
  EXPECT_ERROR_MENTIONS(iterate(presets::heat_2d(), a, b, 4, options), "fusion -1 must be 0 (automatic)");
  // Fused dense launches under walls, and fused sparse ones whose band along the walls the
  // wall kernel's blocks cannot hold: refused by the backend's model, naming why.
  PlanRequest r;
  r.stencil  = presets::heat_2d();
  r.grid     = {16, 16};
  r.steps    = 2;
  r.boundary = Boundary::fixed_rim;
  r.backends = {"dense"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "need a periodic boundary", "fixed_rim");
  r.stencil  = box<3>(4);
  r.grid     = {64, 64, 64};
  r.steps    = 3;
  r.backends = {"cuda_sptc"};
  EXPECT_ERROR_MENTIONS(make_plan(r), "band along the walls", "shared memory");
}

TEST(ApplyErrors, UnknownOrUnbuiltBackendsAreClearErrors) {
  V2 a("a", 16, 16), b("b", 16, 16);
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), a, b, Options{Boundary::periodic, "fastest"}),
                        "apply:", "unknown backend 'fastest'", "generic", "cuda_sptc");
#if !defined(KOKKOS_ENABLE_CUDA)
  EXPECT_ERROR_MENTIONS(iterate(presets::heat_2d(), a, b, 2, Options{Boundary::periodic, "cuda_sptc"}),
                        "iterate:", "backend cuda_sptc cannot run these Views");
#endif
}

// The range check reaches Kokkos Views: float weights near 1e300 are refused, or with
// allow_overflow reported in the run's report.
TEST(ApplyErrors, ValuesPastThePrecisionsRangeAreRefusedOrReported) {
  using F2 = Kokkos::View<float**, Space::memory_space>;
  F2 in("in", 16, 16), out("out", 16, 16);
  const Stencil<2> huge({{{0, 0}, 1e300}, {{1, 0}, -1.0}});
  EXPECT_ERROR_MENTIONS(apply(huge, in, out), "apply", "1e+300", "f32");
  Options allowed;
  allowed.allow_overflow = true;
  const RunReport report = apply(huge, in, out, allowed);
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_NE(report.warnings.front().find("1e+300"), std::string::npos);
  Options large_inputs;
  large_inputs.input_magnitude = 1e38;  // x the heat stencil's sum of |weights| (1) still fits float
  EXPECT_NO_THROW(apply(presets::heat_2d(), in, out, large_inputs));
  large_inputs.input_magnitude = 1e39;
  EXPECT_ERROR_MENTIONS(apply(presets::heat_2d(), in, out, large_inputs), "input magnitude 1e+39");
}

// Options::float_operands takes f32, tf32, f16 or bf16; f64 names the problem. Where no
// matrix-core backend runs these Views (host builds), the others leave float Views on the
// generic executor, bit for bit (inputs past f16's range too: it sums them in f32).
TEST(ApplyErrors, FloatOperandsAreChecked) {
  using F2 = Kokkos::View<float**, Space::memory_space>;
  F2 in("in", 37, 53), out("out", 37, 53), same("same", 37, 53);
  fill_random<2>(in, 4);
  Options options;
  options.float_operands = Precision::f64;
  EXPECT_ERROR_MENTIONS(iterate(presets::box_2d9p(), in, out, 2, options), "iterate:", "float_operands f64");
  options.float_operands = Precision::f16;
  options.backend        = "cuda_sptc";
  EXPECT_ERROR_MENTIONS(apply(presets::box_2d9p(), in, out, options), "apply:", "cuda_sptc");
  options.backend.clear();
#if !defined(KOKKOS_ENABLE_CUDA)
  apply(presets::box_2d9p(), in, same);
  for (Precision p : {Precision::tf32, Precision::f16, Precision::bf16}) {
    options.float_operands  = p;
    options.input_magnitude = p == Precision::f16 ? 1e5 : 1.0;
    EXPECT_EQ(apply(presets::box_2d9p(), in, out, options).executor, "generic") << to_string(p);
    EXPECT_EQ(to_grid<2>(out).values, to_grid<2>(same).values) << to_string(p);
  }
#endif
}

TEST(ApplyErrors, NothingIsWrittenWhenValidationFails) {
  V2 in("in", 16, 16), out("out", 16, 5);
  fill_random<2>(in, 1);
  fill_random<2>(out, 2);
  const HostGrid<2> before = to_grid<2>(out);
  EXPECT_THROW(apply(presets::box_2d49p(), in, out), std::runtime_error);
  EXPECT_EQ(to_grid<2>(out).values, before.values);
}

}  // namespace
}  // namespace sparstencil::test
