// Kokkos dispatch to the dense matrix-core executor: half_t (f16), float (tf32 on NVIDIA,
// f16/bf16 operands) and double (f64) Views in the device's memory space (CudaSpace, or
// HIPSpace where Kokkos has HIP), LayoutLeft and LayoutRight, through
// sparstencil::apply/iterate with the backend named, under every boundary, against the
// double reference within the matrix step's bound; float Views stay off it unless it is
// named or other operands are allowed. Skips, saying why, without a GPU the executor runs
// on through Kokkos (NVIDIA compute capability 8.0+, AMD gfx90a); where the executor is not built,
// forcing it is a clear error.
#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

#if defined(SPARSTENCIL_DENSE_DISPATCH)
using dense::DeviceMemory;
using dense::DeviceSpace;

#if defined(KOKKOS_ENABLE_CUDA)
constexpr bool nvidia = true;
#else
constexpr bool nvidia = false;
#endif
/// Skips, saying why, where the trait says the device cannot run the dense backend.
#define SKIP_WITHOUT_DENSE_DISPATCH()                                     \
  do {                                                                    \
    if (const auto why = dense::KokkosBackend::cannot_run(DeviceSpace())) \
      GTEST_SKIP() << "dense dispatch test skipped: " << *why;            \
  } while (0)

/// What float Views are multiplied as where nothing else is asked: tf32 on NVIDIA; AMD's
/// MFMA has none, so f16 operands there.
constexpr Precision plain_float_operands = nvidia ? Precision::f32 : Precision::f16;

template <class T>
constexpr Precision operands = std::is_same_v<T, double>  ? Precision::f64
                               : std::is_same_v<T, float> ? Precision::tf32
                                                          : Precision::f16;

/// One apply with the dense backend named; float Views as `float_operands` where that is
/// f16 or bf16 (read from the float grids), else as tf32.
template <class T, class Layout, int D>
void expect_dense_apply(const Stencil<D>& stencil, Boundary boundary, const std::array<int, D>& e,
                        Precision float_operands = Precision::f32) {
  using View = GridView<T, D, Layout, DeviceMemory>;
  View in = make_view<View>("in", e), out = make_view<View>("out", e);
  fill_random<D>(in, 5);
  fill_random<D>(out, 6);
  const HostGrid<D> input = to_grid<D>(in), before = to_grid<D>(out);
  Options options{boundary, "dense"};
  options.float_operands = float_operands;
  const RunReport report = apply(DeviceSpace(), stencil, in, out, options);
  Kokkos::fence();
  EXPECT_EQ(report.executor, "dense") << stencil.name();
  const bool float_grids =
      std::is_same_v<T, float> && (float_operands == Precision::f16 || float_operands == Precision::bf16);
  const Precision operated = float_grids ? float_operands : operands<T>;
  HostGrid<D> expected = before, magnitude = abs(before);
  reference_apply(stencil, input, expected, boundary);
  reference_apply(abs_weights(stencil), abs(input), magnitude, boundary);
  const ErrorBound bound = matrix_step_error_bound(operated, stencil.size(), float_grids);
  for (double& v : magnitude.values) v = bound.factor * v + bound.floor;
  EXPECT_TRUE(within_bound(to_grid<D>(out), expected, magnitude, 1.0))
      << stencil.name() << " " << to_string(boundary) << " " << to_string(operated) << (float_grids ? " on float" : "");
}

TEST(DenseDispatch, PresetsBothLayoutsEveryBoundary) {
  SKIP_WITHOUT_DENSE_DISPATCH();
  for (Boundary b : {Boundary::periodic, Boundary::interior, Boundary::fixed_rim}) {
    for (const char* name : {"heat2d", "box2d49p"}) {
      const Stencil<2> s = as<2>(presets::by_name(name));
      expect_dense_apply<Kokkos::Experimental::half_t, Kokkos::LayoutRight, 2>(s, b, {203, 517});
      expect_dense_apply<Kokkos::Experimental::half_t, Kokkos::LayoutLeft, 2>(s, b, {203, 517});
      expect_dense_apply<double, Kokkos::LayoutRight, 2>(s, b, {131, 263});
      expect_dense_apply<double, Kokkos::LayoutLeft, 2>(s, b, {131, 263});
      expect_dense_apply<float, Kokkos::LayoutRight, 2>(s, b, {157, 389}, plain_float_operands);
      expect_dense_apply<float, Kokkos::LayoutLeft, 2>(s, b, {157, 389}, plain_float_operands);
    }
    const Stencil<3> box = as<3>(presets::by_name("box3d27p"));
    expect_dense_apply<double, Kokkos::LayoutRight, 3>(box, b, {23, 29, 67});
    expect_dense_apply<Kokkos::Experimental::half_t, Kokkos::LayoutLeft, 3>(box, b, {23, 29, 67});
    expect_dense_apply<float, Kokkos::LayoutRight, 3>(box, b, {23, 29, 67}, plain_float_operands);
  }
}

/// tf32 rounds float inputs to 10 mantissa bits: float Views reach the dense executor only
/// where the user asks (the backend named, or Options::float_operands = tf32 and the
/// planner's choice: the 15 x 15 box, compute bound, goes to dense on the H100; the 3 x 3
/// box, memory bound, stays generic), never by default. AMD's MFMA has no tf32: naming
/// the backend there is an error naming it, and asking for tf32 leaves float Views on the
/// generic executor (more accurate than asked).
TEST(DenseDispatch, FloatViewsRunAsTf32OnlyWhereAsked) {
  SKIP_WITHOUT_DENSE_DISPATCH();
  using View = GridView<float, 2, Kokkos::LayoutRight, DeviceMemory>;
  View in("in", 2048, 2048), out("out", 2048, 2048);
  fill_random<2>(in, 3);
  const Stencil<2> box   = as<2>(presets::by_name("box2d49p"));
  const RunReport chosen = apply(DeviceSpace(), box, in, out, {Boundary::periodic});
  EXPECT_EQ(chosen.executor, "generic");  // the only backend at f32
  if constexpr (nvidia) {
    const RunReport named = apply(DeviceSpace(), box, in, out, {Boundary::periodic, "dense"});
    EXPECT_EQ(named.executor, "dense");
    EXPECT_NE(named.variant.find("tf32"), std::string::npos) << named.variant;
  } else {
    EXPECT_ERROR_MENTIONS(apply(DeviceSpace(), box, in, out, {Boundary::periodic, "dense"}), "dense", "no tf32");
  }
  Kokkos::fence();

  Options tf32;
  tf32.float_operands     = Precision::tf32;
  const Stencil<2> large  = as<2>(parse_stencil("box2d:r=7"));
  const HostGrid<2> input = to_grid<2>(in);
  // Asked for, tf32 operands make the dense backend bid (whether it wins this grid is the
  // cost model's close call: generic and dense lie within 10% here on an H200); named, it
  // runs them.
  const StencilPlan asked_plan(DeviceSpace(), large, in, out, tf32);
  bool dense_bids = false;
  for (const Bid& b : asked_plan.plan().bids) {
    dense_bids = dense_bids || (b.backend == "dense" && b.outcome != Bid::Outcome::cannot_run);
  }
  EXPECT_EQ(dense_bids, nvidia) << asked_plan.explain();
  Options tf32_dense    = tf32;
  tf32_dense.backend    = nvidia ? "dense" : "";
  const RunReport asked = apply(DeviceSpace(), large, in, out, tf32_dense);
  Kokkos::fence();
  EXPECT_EQ(asked.executor, nvidia ? "dense" : "generic") << asked.variant;
  if (nvidia) EXPECT_NE(asked.variant.find("tf32"), std::string::npos) << asked.variant;
  HostGrid<2> expected = input, magnitude = abs(input);
  reference_apply(large, input, expected, Boundary::periodic);
  reference_apply(abs_weights(large), abs(input), magnitude, Boundary::periodic);
  const ErrorBound bound = matrix_step_error_bound(Precision::tf32, large.size());
  for (double& v : magnitude.values) v = bound.factor * v + bound.floor;
  EXPECT_TRUE(within_bound(to_grid<2>(out), expected, magnitude, 1.0));
  EXPECT_EQ(apply(DeviceSpace(), as<2>(presets::by_name("box2d9p")), in, out, tf32).executor, "generic");
  Kokkos::fence();
}

/// float Views as f16 or bf16 operands where Options::float_operands asks: both layouts,
/// every boundary, the backend named or the planner's choice (the 15 x 15 box goes to
/// dense on the H100, the 3 x 3 box stays generic); the sparse executor, which reads only
/// 16-bit grids, is refused naming why.
TEST(DenseDispatch, FloatViewsAsSixteenBitOperandsWhereAsked) {
  SKIP_WITHOUT_DENSE_DISPATCH();
  for (Precision p : {Precision::f16, Precision::bf16}) {
    for (Boundary b : {Boundary::periodic, Boundary::interior, Boundary::fixed_rim}) {
      const Stencil<2> s = as<2>(presets::by_name(b == Boundary::interior ? "heat2d" : "box2d49p"));
      expect_dense_apply<float, Kokkos::LayoutRight, 2>(s, b, {157, 389}, p);
      expect_dense_apply<float, Kokkos::LayoutLeft, 2>(s, b, {157, 389}, p);
      expect_dense_apply<float, Kokkos::LayoutRight, 3>(as<3>(presets::by_name("heat3d")), b, {23, 29, 67}, p);
      // Rounded as loaded (its blocks would not hold the float copy beside the image).
      expect_dense_apply<float, Kokkos::LayoutLeft, 3>(as<3>(parse_stencil("box3d:r=3")), b, {19, 23, 41}, p);
    }
  }
  using View = GridView<float, 2, Kokkos::LayoutRight, DeviceMemory>;
  View in("in", 2048, 2048), out("out", 2048, 2048);
  fill_random<2>(in, 3);
  Options f16;
  f16.float_operands     = Precision::f16;
  const Stencil<2> large = as<2>(parse_stencil("box2d:r=7"));
  const RunReport chosen = apply(DeviceSpace(), large, in, out, f16);
  EXPECT_EQ(chosen.executor, "dense") << chosen.variant;
  EXPECT_EQ(apply(DeviceSpace(), as<2>(presets::by_name("box2d9p")), in, out, f16).executor, "generic");
  f16.backend = "cuda_sptc";
  EXPECT_ERROR_MENTIONS(apply(DeviceSpace(), large, in, out, f16), "cuda_sptc",
                        nvidia ? "as f16 operands" : "cannot run these Views");
  Kokkos::fence();
}

TEST(DenseDispatch, IterateRunsOnTheDenseExecutor) {
  SKIP_WITHOUT_DENSE_DISPATCH();
  using View         = GridView<double, 2, Kokkos::LayoutRight, DeviceMemory>;
  const Stencil<2> s = as<2>(presets::by_name("box2d9p"));
  View a("a", 64, 96), b("b", 64, 96);
  fill_random<2>(a, 9);
  const HostGrid<2> start = to_grid<2>(a);
  const RunReport report  = iterate(DeviceSpace(), s, a, b, 5, {Boundary::fixed_rim, "dense"});
  Kokkos::fence();
  EXPECT_EQ(report.executor, "dense");
  EXPECT_EQ(report.steps, 5);
  const HostGrid<2> expected = reference_iterate(s, start, 5, Boundary::fixed_rim);
  HostGrid<2> magnitude      = reference_iterate(abs_weights(s), abs(start), 5, Boundary::fixed_rim);
  const ErrorBound bound     = matrix_step_error_bound(Precision::f64, s.size());
  for (double& v : magnitude.values) v = 5 * (bound.factor * v + bound.floor);  // five steps' errors
  EXPECT_TRUE(within_bound(to_grid<2>(a), expected, magnitude, 1.0));
}

#else

TEST(DenseDispatch, ForcingWithoutTheExecutorIsAClearError) {
  using View = GridView<double, 2>;
  View in("in", 16, 16), out("out", 16, 16);
  EXPECT_ERROR_MENTIONS(apply(as<2>(presets::by_name("heat2d")), in, out, {Boundary::periodic, "dense"}),
                        "dense executor is not built");
  std::printf(
      "dense dispatch not built here (needs Kokkos with CUDA or HIP and the dense executor built for "
      "it): GPU dispatch tests run on those builds only\n");
}

#endif

}  // namespace
}  // namespace sparstencil::test
