// The generic executor against the double-precision reference: every preset x boundary,
// random stencils, odd and prime extents, fused versus repeated steps, iterate versus
// repeated apply; typed over (execution space, scalar, layout).
#include "test_utils.hpp"

/// A test configuration; at global scope so that test names read
/// GenericExecutor.Test<Config<Kokkos::Serial, float, Kokkos::LayoutLeft>>.
template <class ExecSpace, class Scalar, class Layout>
struct Config {
  using exec_space = ExecSpace;
  using scalar     = Scalar;
  using layout     = Layout;
};

namespace sparstencil::test {
namespace {

template <class C>
class GenericExecutor : public ::testing::Test {
 public:
  using exec_space = typename C::exec_space;
  using T          = typename C::scalar;
  template <int D>
  using View = GridView<T, D, typename C::layout, typename exec_space::memory_space>;

  /// Odd and prime extents per dimension, large enough for radius 4 fused over 2 steps.
  template <int D>
  static std::array<int, D> grid_extents() {
    if constexpr (D == 1) return {1031};
    else if constexpr (D == 2) return {37, 53};
    else return {19, 23, 17};
  }

  /// One step from random `in` into random `out` checked against the reference.
  template <int D>
  RunReport check_step(const Stencil<D>& stencil, Boundary boundary, std::uint64_t seed,
                       std::array<int, D> extents           = grid_extents<D>(),
                       std::optional<GenericConfig> variant = std::nullopt) {
    View<D> in = make_view<View<D>, D>("in", extents), out = make_view<View<D>, D>("out", extents);
    fill_random<D>(in, seed);
    fill_random<D>(out, seed + 1);
    const HostGrid<D> before = to_grid<D>(out), input = to_grid<D>(in);
    Options options{boundary, "generic"};
    options.generic.variant = variant;
    const RunReport report  = apply(exec_space(), stencil, in, out, options);
    exec_space().fence();
    EXPECT_EQ(report.executor, "generic");
    HostGrid<D> expected = before, magnitude = abs(before);
    reference_apply(stencil, input, expected, boundary);
    reference_apply(abs_weights(stencil), abs(input), magnitude, boundary);
    EXPECT_TRUE(within_bound(to_grid<D>(out), expected, magnitude, step_error_factor<T>(stencil.size())))
        << stencil.name() << ", " << to_string(boundary) << ", extents " << impl::tuple_string(extents) << ", "
        << report.variant;
    return report;
  }

  /// The second buffer of an iterate: under interior a copy of the first (iterate's
  /// contract: both buffers share the rim); under fixed_rim and periodic other values, so
  /// the result holds only if every launch copies the rim (or wraps) as single steps do.
  template <int D>
  static void second_buffer(const View<D>& a, const View<D>& b, Boundary boundary, std::uint64_t seed) {
    if (boundary == Boundary::interior) Kokkos::deep_copy(b, a);
    else fill_random<D>(b, seed);
  }

  /// Every variant the tuner may pick on a GPU or a host, for dimension D; on a GPU space
  /// not the host tiles a GPU team cannot be (more than 256 threads or 8 outputs).
  static std::vector<GenericConfig> all_variants(int dimension) {
    const bool host                = impl::runs_on_host<exec_space>();
    std::vector<GenericConfig> all = generic::candidates(dimension, true);
    for (const GenericConfig& c : generic::candidates(dimension, false)) {
      const bool team = c.threads_fast * c.threads_second <= 256 && c.outputs <= 8;
      if ((host || team) && std::find(all.begin(), all.end(), c) == all.end()) all.push_back(c);
    }
    return all;
  }
};

using Configs = ::testing::Types<
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
    Config<Kokkos::DefaultExecutionSpace, Kokkos::Experimental::half_t, Kokkos::LayoutLeft>,
    Config<Kokkos::DefaultExecutionSpace, Kokkos::Experimental::half_t, Kokkos::LayoutRight>,
    Config<Kokkos::DefaultExecutionSpace, float, Kokkos::LayoutLeft>,
    Config<Kokkos::DefaultExecutionSpace, double, Kokkos::LayoutRight>,
    Config<Kokkos::DefaultExecutionSpace, float, Kokkos::LayoutRight>,
    Config<Kokkos::DefaultExecutionSpace, double, Kokkos::LayoutLeft>,
#endif
    Config<Kokkos::DefaultHostExecutionSpace, float, Kokkos::LayoutLeft>,
    Config<Kokkos::DefaultHostExecutionSpace, float, Kokkos::LayoutRight>,
    Config<Kokkos::DefaultHostExecutionSpace, double, Kokkos::LayoutLeft>,
    Config<Kokkos::DefaultHostExecutionSpace, double, Kokkos::LayoutRight>>;

TYPED_TEST_SUITE(GenericExecutor, Configs);

constexpr Boundary all_boundaries[] = {Boundary::interior, Boundary::periodic, Boundary::fixed_rim};

/// Under Boundary::interior: every rim point of `after` equals `before` bit for bit and
/// some interior point changed. Returns the number of rim points.
std::size_t expect_rim_kept(const Stencil<2>& stencil, const std::array<int, 2>& extents, const HostGrid<2>& before,
                            const HostGrid<2>& after) {
  std::size_t rim = 0, changed = 0;
  for (std::size_t flat = 0; flat < after.values.size(); ++flat) {
    if (in_interior(stencil, extents, after.point(flat))) {
      changed += after.values[flat] != before.values[flat];
    } else {
      ++rim;
      EXPECT_EQ(after.values[flat], before.values[flat]) << impl::tuple_string(after.point(flat));
    }
  }
  EXPECT_GT(changed, 0u);
  return rim;
}

TYPED_TEST(GenericExecutor, EveryPresetAndBoundaryMatchesReference) {
  std::uint64_t seed = 1;
  for (const AnyStencil& preset : presets::standard_set()) {
    for (Boundary boundary : all_boundaries) {
      std::visit([&](const auto& s) { this->check_step(s, boundary, seed++); }, preset);
    }
  }
}

TYPED_TEST(GenericExecutor, EveryVariantMatchesReference) {
  // Each variant on the presets (kernels specialised for their shape) and on a random
  // stencil (run-time terms), on grids whose interiors split into partial tiles.
  std::mt19937_64 rng(77);
  std::uint64_t seed = 900;
  for (const AnyStencil& preset : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          std::array<int, D> extents{};
          if constexpr (D == 1) extents = {3001};
          else if constexpr (D == 2) extents = {131, 97};
          else extents = {37, 19, 45};
          const Stencil<D> random = random_stencil<D>(rng, 2);
          // A scratch tile or plane group with a wide halo or 8-byte values may not fit the
          // space's team scratch: then the variant is refused with the sizes named (the tuner
          // skips it), never run wrong.
          auto check_or_refused = [&](const Stencil<D>& stencil, Boundary boundary, const GenericConfig& variant) {
            try {
              this->template check_step<D>(stencil, boundary, seed++, extents, variant);
            } catch (const std::runtime_error& e) {
              EXPECT_NE(variant.caching, GenericCaching::hardware) << e.what();
              EXPECT_NE(std::string(e.what()).find("bytes of team scratch"), std::string::npos) << e.what();
            }
          };
          for (const GenericConfig& variant : TestFixture::all_variants(D)) {
            for (Boundary boundary : all_boundaries) check_or_refused(s, boundary, variant);
            check_or_refused(random, Boundary::periodic, variant);
          }
        },
        preset);
  }
}

TYPED_TEST(GenericExecutor, HostTilesOfManyRowsMatchReference) {
  // Host tiles walk their rows along the slowest axis host_sum_rows at a time, the rest of
  // a tile row by row: tiles taller than a block, of row counts that leave a remainder, on
  // grids of partial tiles, every boundary (the host rim kernel with them).
  if (!impl::runs_on_host<typename TestFixture::exec_space>()) GTEST_SKIP() << "host tiles run on host spaces only";
  std::mt19937_64 rng(31);
  std::uint64_t seed         = 4000;
  const GenericConfig tall[] = {{GenericCaching::hardware, 64, 4, 12},
                                {GenericCaching::hardware, 32, 3, 20},
                                {GenericCaching::hardware, 512, 8, 128},
                                {GenericCaching::hardware, 17, 2, 8}};
  for (const GenericConfig& variant : tall) {
    for (Boundary boundary : all_boundaries) {
      this->template check_step<2>(presets::box_2d49p(), boundary, seed++, {61, 83}, variant);
      this->template check_step<3>(presets::box_3d27p(), boundary, seed++, {29, 23, 41}, variant);
      this->template check_step<3>(presets::heat_3d(), boundary, seed++, {33, 7, 19}, variant);
    }
    this->template check_step<3>(random_stencil<3>(rng, 2), Boundary::periodic, seed++, {27, 21, 35}, variant);
    this->template check_step<2>(random_stencil<2>(rng, 3), Boundary::fixed_rim, seed++, {40, 71}, variant);
  }
}

TYPED_TEST(GenericExecutor, KernelsAreSpecialisedForPresetShapes) {
  std::mt19937_64 rng(5);
  EXPECT_NE(this->template check_step<2>(presets::box_2d9p(), Boundary::periodic, 1).variant.find("box r1 kernel"),
            std::string::npos);
  EXPECT_NE(this->template check_step<2>(presets::star_2d13p(), Boundary::periodic, 2).variant.find("star r3 kernel"),
            std::string::npos);
  EXPECT_NE(this->template check_step<3>(presets::box_3d27p(), Boundary::periodic, 3).variant.find("box r1 kernel"),
            std::string::npos);
  EXPECT_NE(this->template check_step<1>(presets::d1_5p(), Boundary::periodic, 4).variant.find("star r2 kernel"),
            std::string::npos);
  // A box of radius 2 in 2-D is not compiled in; a random stencil is no shape at all.
  EXPECT_NE(this->template check_step<2>(box<2>(2), Boundary::periodic, 5).variant.find("any kernel"),
            std::string::npos);
  EXPECT_NE(this->template check_step<2>(random_stencil<2>(rng, 1), Boundary::periodic, 6).variant.find("any kernel"),
            std::string::npos);
}

TYPED_TEST(GenericExecutor, ComputeBoundBoxesRunTheirStreamingKernels) {
  // The 15 x 15 and 5 x 5 x 5 boxes, random weights: compiled for the streaming variant on
  // GPUs (every streaming candidate, every boundary, odd grids of partial tiles); other
  // variants and host spaces run their terms as run-time data.
  const bool gpu = !impl::runs_on_host<typename TestFixture::exec_space>();
  std::mt19937_64 rng(31);
  std::uint64_t seed  = 4000;
  auto random_weights = [&](auto stencil) {
    using S    = decltype(stencil);
    auto terms = stencil.terms();
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (auto& t : terms) t.weight = u(rng) / static_cast<double>(terms.size());
    return S(std::move(terms), stencil.name() + " random");
  };
  using T = typename TestFixture::T;
  const GenericConfig hardware{GenericCaching::hardware, 64, 4, 4};
  // Every streaming candidate against the reference, and bit for bit against the hardware
  // variant's run-time terms: a point's terms are summed in one order in every kernel
  // (docs/DISTRIBUTED.md). Extents past a team's planes along every axis.
  auto each_streaming_variant = [&](const auto& stencil, const auto& extents, const char* shape) {
    constexpr int D = std::decay_t<decltype(stencil)>::rank;
    using View      = typename TestFixture::template View<D>;
    int ran         = 0;
    for (const GenericConfig& variant : generic::candidates(D, true)) {
      if (variant.caching != GenericCaching::streaming) continue;
      for (Boundary boundary : all_boundaries) {
        try {
          const RunReport r = this->template check_step<D>(stencil, boundary, seed++, extents, variant);
          EXPECT_NE(r.variant.find(gpu ? shape : "any kernel"), std::string::npos) << r.variant;
          ++ran;
        } catch (const std::runtime_error& e) {  // refused with the sizes named, never run wrong
          const std::string what = e.what();
          EXPECT_TRUE(what.find("bytes of team scratch") != std::string::npos ||
                      what.find("loads for each of the team's") != std::string::npos)
              << what;
          continue;
        }
        if (!gpu) return;  // hosts run every streaming candidate as the same hardware variant
        View in = make_view<View, D>("in", extents), streamed = make_view<View, D>("streamed", extents),
             plain = make_view<View, D>("plain", extents);
        fill_random<D>(in, seed++);
        Options options{boundary, "generic"};
        options.generic.variant = variant;
        apply(typename TestFixture::exec_space(), stencil, in, streamed, options);
        options.generic.variant = hardware;
        apply(typename TestFixture::exec_space(), stencil, in, plain, options);
        typename TestFixture::exec_space().fence();
        if (boundary == Boundary::interior) continue;  // both keep their own (random) rims
        const HostGrid<D> a = to_grid<D>(streamed), b = to_grid<D>(plain);
        std::size_t differ = 0;
        for (std::size_t i = 0; i < a.values.size(); ++i) differ += a.values[i] != b.values[i] ? 1 : 0;
        EXPECT_EQ(differ, 0u) << stencil.name() << ", " << to_string(boundary) << ", " << to_string(variant) << " ("
                              << sizeof(T) << "-byte values)";
      }
    }
    EXPECT_GT(ran, 0) << stencil.name() << ": no streaming variant ran";
  };
  const Stencil<2> box15 = random_weights(box<2>(7));
  const Stencil<3> box5  = random_weights(box<3>(2));
  each_streaming_variant(box15, std::array<int, 2>{301, 283}, "box r7 kernel");
  each_streaming_variant(box5, std::array<int, 3>{131, 17, 131}, "box r2 kernel");
  EXPECT_NE(
      this->template check_step<2>(box15, Boundary::periodic, seed++, {139, 101}, hardware).variant.find("any kernel"),
      std::string::npos);
}

TYPED_TEST(GenericExecutor, AutotuningPicksACandidateAndRemembersIt) {
  using exec_space = typename TestFixture::exec_space;
  using View       = typename TestFixture::template View<2>;
  const std::array<int, 2> extents{67, 45};
  View in = make_view<View>("in", extents), out = make_view<View>("out", extents);
  fill_random<2>(in, 8);
  Options options{Boundary::periodic, "generic"};
  options.generic.tuning.min_points = 0;  // tune even this small grid
  const RunReport first             = apply(exec_space(), presets::heat_2d(), in, out, options);
  const RunReport second            = apply(exec_space(), presets::heat_2d(), in, out, options);
  EXPECT_EQ(first.variant, second.variant);
  bool known = false;
  for (const GenericConfig& c : generic::candidates(2, !impl::runs_on_host<exec_space>())) {
    known = known || first.variant.rfind(to_string(c), 0) == 0;
  }
  EXPECT_TRUE(known) << first.variant;
  // The tuned step is still right.
  exec_space().fence();
  HostGrid<2> expected = to_grid<2>(out), magnitude = abs(expected);
  reference_apply(presets::heat_2d(), to_grid<2>(in), expected, Boundary::periodic);
  reference_apply(abs_weights(presets::heat_2d()), abs(to_grid<2>(in)), magnitude, Boundary::periodic);
  EXPECT_TRUE(within_bound(to_grid<2>(out), expected, magnitude,
                           step_error_factor<typename TestFixture::T>(presets::heat_2d().size())));
}

TYPED_TEST(GenericExecutor, OddAndPrimeExtentsDownToTheMinimum) {
  // Smallest legal extents (2r + 1) and awkward primes, in every dimension.
  const auto box2 = box<2>(2);
  for (Boundary boundary : all_boundaries) {
    this->template check_step<1>(presets::d1_5p(), boundary, 11, {5});
    this->template check_step<1>(presets::d1_5p(), boundary, 12, {7919});
    this->template check_step<2>(box2, boundary, 13, {5, 5});
    this->template check_step<2>(box2, boundary, 14, {5, 131});
    this->template check_step<2>(box2, boundary, 15, {97, 7});
    this->template check_step<3>(presets::heat_3d(), boundary, 16, {3, 3, 3});
    this->template check_step<3>(presets::box_3d27p(), boundary, 17, {3, 29, 5});
  }
}

TYPED_TEST(GenericExecutor, RandomStencilsMatchReference) {
  // 3 x 70 random stencils, radius 1 to 4 along the first axis, random boundary.
  std::mt19937_64 rng(2026);
  std::uniform_int_distribution<int> radius(1, 4), boundary(0, 2);
  for (int i = 0; i < 70; ++i) {
    const auto b = static_cast<Boundary>(boundary(rng));
    this->check_step(random_stencil<1>(rng, radius(rng)), b, 100 + i, {211});
    this->check_step(random_stencil<2>(rng, radius(rng)), b, 200 + i, {23, 31});
    this->check_step(random_stencil<3>(rng, radius(rng)), b, 300 + i, {11, 13, 9});
  }
}

TYPED_TEST(GenericExecutor, FusedStepsMatchRepeatedSteps) {
  // Periodic: fusion is exact everywhere. Fixed rim and interior: only at points at least
  // t * r from the rim, since the unfused steps hold or skip the rim in between.
  using T            = typename TestFixture::T;
  using exec_space   = typename TestFixture::exec_space;
  std::uint64_t seed = 500;
  for (const AnyStencil& preset : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D    = std::decay_t<decltype(s)>::rank;
          using View         = typename TestFixture::template View<D>;
          const auto extents = TestFixture::template grid_extents<D>();
          for (int t : {2, 3}) {
            const auto fused = fuse(s, t);
            for (Boundary boundary : all_boundaries) {
              View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
              View start = make_view<View>("start", extents), single = make_view<View>("single", extents);
              fill_random<D>(a, seed++);
              Kokkos::deep_copy(b, a);
              Kokkos::deep_copy(start, a);
              Kokkos::deep_copy(single, a);
              iterate(exec_space(), s, a, b, t, {boundary, "generic"});
              apply(exec_space(), fused, start, single, {boundary, "generic"});
              exec_space().fence();
              const HostGrid<D> magnitude = reference_iterate(abs_weights(s), abs(to_grid<D>(start)), t, boundary);
              const double factor         = t * step_error_factor<T>(s.size()) + step_error_factor<T>(fused.size());
              std::array<int, D> margin{};
              if (boundary != Boundary::periodic) margin = fused.radius();
              EXPECT_TRUE(within_bound(to_grid<D>(a), to_grid<D>(single), magnitude, factor, margin))
                  << s.name() << " fused over " << t << " steps, " << to_string(boundary);
            }
          }
        },
        preset);
  }
}

TYPED_TEST(GenericExecutor, IterateEqualsRepeatedApplyAndLeavesResultInA) {
  using exec_space   = typename TestFixture::exec_space;
  using View         = typename TestFixture::template View<2>;
  const auto stencil = presets::star_2d13p();
  const std::array<int, 2> extents{41, 29};
  for (int steps : {0, 1, 4, 5}) {
    for (Boundary boundary : all_boundaries) {
      View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
      View x = make_view<View>("x", extents), y = make_view<View>("y", extents);
      fill_random<2>(a, 40 + steps);
      // A second buffer of other values: iterate's launches after its first skip the
      // fixed rim's copy, the applies below each copy it.
      TestFixture::template second_buffer<2>(a, b, boundary, 50 + steps);
      Kokkos::deep_copy(x, a);
      Kokkos::deep_copy(y, b);
      const View original_a = a;
      Options options{boundary, "generic"};
      options.fusion         = 1;  // one launch a step (fused launches: TemporalBlocking*)
      const RunReport report = iterate(exec_space(), stencil, a, b, steps, options);
      EXPECT_EQ(report.steps, steps);
      for (int s = 0; s < steps; ++s) {
        apply(exec_space(), stencil, x, y, {boundary, "generic"});
        std::swap(x, y);
      }
      exec_space().fence();
      // Same kernel, same summation order: the results must be identical, not just close.
      EXPECT_EQ(to_grid<2>(a).values, to_grid<2>(x).values) << steps << " steps, " << to_string(boundary);
      EXPECT_EQ(a.data() == original_a.data(), steps % 2 == 0) << "handles swap on odd step counts";
    }
  }
}

TYPED_TEST(GenericExecutor, TemporalBlockingMatchesReference) {
  // iterate with t steps a launch (FusedKernel): every preset and a random stencil, the
  // three boundaries, depths whose halo exceeds a tile, step counts the depth does not
  // divide, every temporal variant a GPU or host may pick; against t reference steps
  // (the same bound as t unfused steps: values are rounded to T between steps).
  using T          = typename TestFixture::T;
  using exec_space = typename TestFixture::exec_space;
  std::mt19937_64 rng(31);
  std::uint64_t seed = 1200;
  for (const AnyStencil& preset : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          using View      = typename TestFixture::template View<D>;
          std::array<int, D> extents{};
          if constexpr (D == 1) extents = {1031};
          else if constexpr (D == 2) extents = {71, 53};
          else extents = {19, 23, 17};
          std::vector<GenericConfig> variants = generic::fused_candidates(D, true);
          for (const GenericConfig& c : generic::fused_candidates(D, false)) variants.push_back(c);
          const Stencil<D> random = random_stencil<D>(rng, 1);
          auto check              = [&](const Stencil<D>& stencil, Boundary boundary, int steps, int fusion,
                           std::optional<GenericConfig> variant) {
            View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
            fill_random<D>(a, seed++);
            TestFixture::template second_buffer<D>(a, b, boundary, seed++);
            const HostGrid<D> start = to_grid<D>(a);
            Options options{boundary, "generic"};
            options.fusion          = fusion;
            options.generic.variant = variant;
            RunReport report;
            try {
              report = iterate(exec_space(), stencil, a, b, steps, options);
            } catch (const std::runtime_error& e) {
              // A wide halo of 8-byte values may not fit a team's scratch: refused, naming it.
              EXPECT_NE(std::string(e.what()).find("bytes of team scratch"), std::string::npos) << e.what();
              return;
            }
            exec_space().fence();
            // Shallow depths always fit a tile's scratch; a deep one may run shallower launches.
            // Radius-1 halos of depth 4 fit every space's team scratch (GPU 3-D tiles of 8-byte
            // values only at depth 2); wider ones may run shallower.
            if (fusion <= 4 && stencil.max_radius() == 1 && (D < 3 || sizeof(T) < 8)) {
              EXPECT_EQ(report.steps_per_launch, std::min(fusion, steps)) << report.variant;
            }
            EXPECT_LE(report.steps_per_launch, std::min(fusion, steps));
            EXPECT_EQ(report.variant.find("temporal blocking") != std::string::npos, report.steps_per_launch > 1)
                << report.variant;
            const HostGrid<D> expected  = reference_iterate(stencil, start, steps, boundary);
            const HostGrid<D> magnitude = reference_iterate(abs_weights(stencil), abs(start), steps, boundary);
            EXPECT_TRUE(within_bound(to_grid<D>(a), expected, magnitude, steps * step_error_factor<T>(stencil.size())))
                << stencil.name() << ", " << to_string(boundary) << ", " << steps << " steps, " << fusion
                << " a launch, " << report.variant;
          };
          for (Boundary boundary : all_boundaries) {
            check(s, boundary, 3, 3, std::nullopt);
            check(s, boundary, 5, 2, std::nullopt);  // launches of 2, 2, 1
            check(random, boundary, 4, 4, std::nullopt);
          }
          if (s.max_radius() <= 2) check(s, Boundary::periodic, 7, 7, std::nullopt);  // a halo of 7 radii
          for (const GenericConfig& variant : variants) {
            check(s, Boundary::periodic, 2, 2, variant);
            check(s, Boundary::fixed_rim, 3, 3, variant);
          }
        },
        preset);
  }
}

TYPED_TEST(GenericExecutor, StreamingTemporalBlockingMatchesReference) {
  // StreamTemporalKernel on GPU teams (elsewhere, and for shapes it has no kernel for,
  // FusedKernel runs and the report says so): every 2-D and 3-D preset and a random
  // stencil, the three boundaries, every compiled depth and the depths between, odd and
  // prime extents cut into several tiles across and several chunks of planes (small teams,
  // 13 or 7 planes a team), against t reference steps within t steps' bound.
  using T            = typename TestFixture::T;
  using exec_space   = typename TestFixture::exec_space;
  constexpr bool gpu = !impl::runs_on_host<exec_space>();
  std::mt19937_64 rng(77);
  std::uint64_t seed = 5100;
  for (const AnyStencil& preset : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          if constexpr (D >= 2) {
            using View = typename TestFixture::template View<D>;
            std::array<int, D> extents{};
            if constexpr (D == 2) extents = {67, 101};
            else extents = {23, 19, 29};
            const GenericConfig variant = D == 2 ? GenericConfig{GenericCaching::streaming, 32, 1, 13}
                                                 : GenericConfig{GenericCaching::streaming, 16, 4, 7};
            auto check                  = [&](const Stencil<D>& stencil, Boundary boundary, int steps) {
              View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
              fill_random<D>(a, seed++);
              TestFixture::template second_buffer<D>(a, b, boundary, seed++);
              const HostGrid<D> start = to_grid<D>(a);
              Options options{boundary, "generic"};
              options.fusion          = steps;
              options.generic.variant = variant;
              // Compiled shapes stream on a GPU up to their deepest compiled depth, where the
              // halo leaves rows in the small 3-D team's span (8 rows: depth 3 at radius 1).
              const auto match    = impl::match_shape(stencil);
              const bool compiled = match && generic::stream_temporal_depth(D, *match) >= steps;
              const bool fits     = D == 2 || 2 * steps * stencil.max_radius() < 8;
              RunReport report;
              try {
                report = iterate(exec_space(), stencil, a, b, steps, options);
              } catch (const std::runtime_error& e) {
                // Elsewhere FusedKernel runs; a wide halo of 8-byte values may fit none of its
                // tiles: refused, naming it.
                EXPECT_FALSE(gpu && compiled && fits) << e.what();
                EXPECT_NE(std::string(e.what()).find("bytes of team scratch"), std::string::npos) << e.what();
                return;
              }
              exec_space().fence();
              EXPECT_EQ(report.steps_per_launch, steps) << report.variant;
              const bool streaming = report.variant.find("streaming") != std::string::npos;
              EXPECT_EQ(streaming, gpu && compiled && fits) << stencil.name() << ", " << report.variant;
              const HostGrid<D> expected  = reference_iterate(stencil, start, steps, boundary);
              const HostGrid<D> magnitude = reference_iterate(abs_weights(stencil), abs(start), steps, boundary);
              EXPECT_TRUE(
                                   within_bound(to_grid<D>(a), expected, magnitude, steps * step_error_factor<T>(stencil.size())))
                  << stencil.name() << ", " << to_string(boundary) << ", " << steps << " steps, " << report.variant;
            };
            const Stencil<D> random = random_stencil<D>(rng, 1);
            // One past the compiled depths in 2-D at radius 1.
            const int deepest = D == 2 && s.max_radius() == 1 ? generic::stream_temporal_depth(2, 1) + 1 : 3;
            for (Boundary boundary : all_boundaries) {
              for (int steps = 2; steps <= deepest; ++steps) check(s, boundary, steps);
              check(random, boundary, 2);
            }
          }
        },
        preset);
  }
}

TYPED_TEST(GenericExecutor, ExchangingTemporalBlockingMatchesReference) {
  // ExchangeTemporalKernel (CUDA, float, 3-D radius-1 stars and boxes): every
  // depth it compiles, the three boundaries, odd extents cut into partial tiles and chunks
  // of one plane, a grid of whole tiles in chunks of several planes, Heat-3D, Box-3D27P and
  // a star and a box of random weights; against t reference steps within t steps' bound.
  // iterate picks it where no variant is forced and the grid's tiles across all fit the
  // device at once (periodic: whole tiles across); elsewhere the other kernels run.
  using T             = typename TestFixture::T;
  using exec_space    = typename TestFixture::exec_space;
  using View          = typename TestFixture::template View<3>;
  int multiprocessors = 0;
#if defined(SPARSTENCIL_BLOCK_LAUNCH)
  if constexpr (std::is_same_v<exec_space, Kokkos::Cuda> && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    multiprocessors = static_cast<int>(impl::GenericExecutor<3, exec_space, T>::multiprocessors());
  }
#endif
  if (multiprocessors == 0 || generic::exchange_temporal_depth(sizeof(T), false) < 2) {
    GTEST_SKIP() << "the exchanging kernel runs CUDA Views of float only";
  }
  constexpr bool layout_right = std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>;
  std::mt19937_64 rng(4242);
  auto random_shape = [&](bool box) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<Term<3>> terms;
    double sum = 0;
    for (int a = -1; a <= 1; ++a) {
      for (int b = -1; b <= 1; ++b) {
        for (int c = -1; c <= 1; ++c) {
          if (!box && (a != 0) + (b != 0) + (c != 0) > 1) continue;
          terms.push_back({{a, b, c}, u(rng)});
          sum += std::abs(terms.back().weight);
        }
      }
    }
    for (Term<3>& t : terms) t.weight /= sum;  // values stay of the inputs' size over the steps
    return Stencil<3>(terms, box ? "random box r1" : "random star r1");
  };
  const Stencil<3> stencils[] = {presets::heat_3d(), presets::box_3d27p(), random_shape(false), random_shape(true)};
  std::uint64_t seed          = 9100;
  // `steps` a launch, `total` steps (launches after the first skip the fixed rim's copy).
  auto check = [&](const Stencil<3>& stencil, Boundary boundary, std::array<int, 3> extents, int steps, int total) {
    View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
    fill_random<3>(a, seed++);
    TestFixture::template second_buffer<3>(a, b, boundary, seed++);
    const HostGrid<3> start = to_grid<3>(a);
    Options options{boundary, "generic"};
    options.fusion         = steps;
    const RunReport report = iterate(exec_space(), stencil, a, b, total, options);
    exec_space().fence();
    const long n1 = extents[1], n2 = layout_right ? extents[2] : extents[0];
    const auto match     = impl::match_shape(stencil);
    const bool exchanges = generic::exchange_temporal_runs(n1, n2, boundary == Boundary::periodic, multiprocessors) &&
                           steps <= generic::exchange_temporal_depth(sizeof(T), match->kind == impl::ShapeKind::box);
    // Elsewhere the streaming kernel runs up to its own depth (4).
    EXPECT_EQ(report.steps_per_launch, exchanges ? steps : std::min(steps, 4)) << report.variant;
    EXPECT_EQ(report.variant.find("exchanging") != std::string::npos, exchanges)
        << impl::tuple_string(extents) << ", " << to_string(boundary) << ", " << report.variant;
    const HostGrid<3> expected  = reference_iterate(stencil, start, total, boundary);
    const HostGrid<3> magnitude = reference_iterate(abs_weights(stencil), abs(start), total, boundary);
    EXPECT_TRUE(within_bound(to_grid<3>(a), expected, magnitude, total * step_error_factor<T>(stencil.size())))
        << stencil.name() << ", " << to_string(boundary) << ", extents " << impl::tuple_string(extents) << ", " << total
        << " steps, " << steps << " a launch, " << report.variant;
  };
  for (const Stencil<3>& stencil : stencils) {
    const int deepest =
        generic::exchange_temporal_depth(sizeof(T), impl::match_shape(stencil)->kind == impl::ShapeKind::box);
    for (int steps = 2; steps <= deepest; ++steps) {
      // Two launches and a single step.
      check(stencil, Boundary::interior, {23, 45, 70}, steps, 2 * steps + 1);
      check(stencil, Boundary::fixed_rim, {23, 45, 70}, steps, 2 * steps + 1);
      check(stencil, Boundary::periodic, {64, 64, 64}, steps, 2 * steps + 1);
    }
  }
  for (int s = 0; s < 2; ++s) {
    for (Boundary boundary : all_boundaries) {
      // The deepest launch (chunks of several planes), and for the box one deeper, which
      // the streaming kernel runs.
      const int deepest = generic::exchange_temporal_depth(sizeof(T), s == 1);
      check(stencils[s], boundary, {100, 96, 192}, 2, 2);
      check(stencils[s], boundary, {100, 96, 192}, deepest, deepest);
      if (s == 1) check(stencils[s], boundary, {100, 96, 192}, deepest + 1, deepest + 1);
    }
  }
}

TYPED_TEST(GenericExecutor, StreamingTemporalBlockingTakesDeepTiles) {
  // Where Kokkos has CUDA the streaming temporal kernel runs as CUDA blocks, whose shared
  // memory passes a Kokkos team's 48 KiB of scratch: 3-D 32 x 32 spans at depth 4 take
  // 24-92 KiB (half, float, double). Elsewhere the same variant runs FusedKernel, or is
  // refused naming the scratch it needs. Against the reference steps, every boundary, two
  // plans of one kernel (the second with a smaller tile) run in turn.
  using T          = typename TestFixture::T;
  using exec_space = typename TestFixture::exec_space;
  using View       = typename TestFixture::template View<3>;
#if defined(KOKKOS_ENABLE_CUDA)
  constexpr bool blocks = std::is_same_v<exec_space, Kokkos::Cuda>;
#else
  constexpr bool blocks = false;
#endif
  const std::array<int, 3> extents{37, 71, 83};
  const GenericConfig variant{GenericCaching::streaming, 16, 16, 29};
  std::uint64_t seed = 7300;
  for (const AnyStencil& any : {AnyStencil(presets::heat_3d()), AnyStencil(presets::box_3d27p())}) {
    const Stencil<3>& stencil = std::get<Stencil<3>>(any);
    for (Boundary boundary : all_boundaries) {
      View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
      fill_random<3>(a, seed++);
      TestFixture::template second_buffer<3>(a, b, boundary, seed++);
      const HostGrid<3> start = to_grid<3>(a);
      Options options{boundary, "generic"};
      options.fusion          = 4;
      options.generic.variant = variant;
      RunReport report;
      try {
        report = iterate(exec_space(), stencil, a, b, 4, options);
      } catch (const std::runtime_error& e) {
        EXPECT_FALSE(blocks) << e.what();
        EXPECT_NE(std::string(e.what()).find("bytes of team scratch"), std::string::npos) << e.what();
        continue;
      }
      exec_space().fence();
      EXPECT_EQ(report.steps_per_launch, 4) << report.variant;
      EXPECT_EQ(report.variant.find("streaming 16x16") != std::string::npos, blocks) << report.variant;
      const HostGrid<3> expected  = reference_iterate(stencil, start, 4, boundary);
      const HostGrid<3> magnitude = reference_iterate(abs_weights(stencil), abs(start), 4, boundary);
      EXPECT_TRUE(within_bound(to_grid<3>(a), expected, magnitude, 4 * step_error_factor<T>(stencil.size())))
          << stencil.name() << ", " << to_string(boundary) << ", " << report.variant;
    }
  }
  // Two plans of one kernel, the second's tile smaller, each run after the other was made.
  View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
  fill_random<3>(a, seed++);
  Kokkos::deep_copy(b, a);
  Options large{Boundary::periodic, "generic"};
  large.fusion          = 4;
  large.generic.variant = variant;
  Options small         = large;
  small.generic.variant = GenericConfig{GenericCaching::streaming, 16, 8, 29};
  try {
    StencilPlan first(exec_space(), presets::heat_3d(), a, b, large);
    first.iterate(a, b, 4);
    StencilPlan second(exec_space(), presets::heat_3d(), a, b, small);
    second.iterate(a, b, 4);
    first.iterate(a, b, 4);
    exec_space().fence();
  } catch (const std::runtime_error& e) {
    EXPECT_FALSE(blocks) << e.what();
    EXPECT_NE(std::string(e.what()).find("bytes of team scratch"), std::string::npos) << e.what();
  }
}

TYPED_TEST(GenericExecutor, FusedIterateSwapsHandlesByStepParity) {
  using exec_space = typename TestFixture::exec_space;
  using View       = typename TestFixture::template View<2>;
  const std::array<int, 2> extents{33, 35};
  for (int steps : {2, 3, 4, 5, 7, 8}) {
    for (int fusion : {2, 3, 4}) {
      View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
      fill_random<2>(a, steps * 10 + fusion);
      Kokkos::deep_copy(b, a);
      const View original_a = a;
      Options options{Boundary::periodic, "generic"};
      options.fusion = fusion;
      iterate(exec_space(), presets::heat_2d(), a, b, steps, options);
      EXPECT_EQ(a.data() == original_a.data(), steps % 2 == 0) << steps << " steps, " << fusion << " a launch";
    }
  }
  // (The launch lists themselves: PlanLifetime.LaunchStepsSplitLikeIterate.)
}

TYPED_TEST(GenericExecutor, TemporalBlockingKeepsTheInteriorModesRim) {
  using exec_space   = typename TestFixture::exec_space;
  using View         = typename TestFixture::template View<2>;
  const auto stencil = presets::box_2d9p();
  const std::array<int, 2> extents{29, 41};
  View a = make_view<View>("a", extents), b = make_view<View>("b", extents);
  fill_random<2>(a, 8);
  Kokkos::deep_copy(b, a);
  const HostGrid<2> before = to_grid<2>(a);
  Options options{Boundary::interior, "generic"};
  options.fusion = 4;
  iterate(exec_space(), stencil, a, b, 4, options);
  exec_space().fence();
  expect_rim_kept(stencil, extents, before, to_grid<2>(a));
}

TYPED_TEST(GenericExecutor, InteriorModeLeavesRimBitForBit) {
  using exec_space   = typename TestFixture::exec_space;
  using View         = typename TestFixture::template View<2>;
  const auto stencil = presets::box_2d49p();
  const std::array<int, 2> extents{23, 19};
  View in = make_view<View>("in", extents), out = make_view<View>("out", extents);
  fill_random<2>(in, 3);
  fill_random<2>(out, 4);
  const HostGrid<2> before = to_grid<2>(out);
  apply(exec_space(), stencil, in, out, {Boundary::interior, "generic"});
  EXPECT_EQ(expect_rim_kept(stencil, extents, before, to_grid<2>(out)), 23u * 19u - 17u * 13u);
}

/// Strided Views: a padded LayoutStride allocation and a window of a larger View.
TYPED_TEST(GenericExecutor, StridedViewsMatchReference) {
  using exec_space   = typename TestFixture::exec_space;
  using T            = typename TestFixture::T;
  using Memory       = typename exec_space::memory_space;
  using Strided      = Kokkos::View<T**, Kokkos::LayoutStride, Memory>;
  using Whole        = typename TestFixture::template View<2>;
  const auto stencil = presets::box_2d9p();
  for (Boundary boundary : all_boundaries) {
    // Padded: 31 x 17 points, rows 40 apart, columns 2 apart (every other element).
    Strided in("in", Kokkos::LayoutStride(31, 40, 17, 2));
    Strided out("out", Kokkos::LayoutStride(31, 40, 17, 2));
    // Window: rows 3..36 and columns 5..28 of 40 x 33 Views.
    Whole big_in  = make_view<Whole>("big_in", std::array<int, 2>{40, 33}),
          big_out = make_view<Whole>("big_out", std::array<int, 2>{40, 33});
    auto win_in   = Kokkos::subview(big_in, Kokkos::make_pair(3, 37), Kokkos::make_pair(5, 29));
    auto win_out  = Kokkos::subview(big_out, Kokkos::make_pair(3, 37), Kokkos::make_pair(5, 29));
    fill_random<2>(in, 61);
    fill_random<2>(out, 62);
    fill_random<2>(big_in, 63);
    fill_random<2>(big_out, 64);
    const HostGrid<2> big_out_before = to_grid<2>(big_out);
    auto check                       = [&](const auto& vin, const auto& vout) {
      const HostGrid<2> input = to_grid<2>(vin), before = to_grid<2>(vout);
      apply(exec_space(), stencil, vin, vout, {boundary, "generic"});
      exec_space().fence();
      HostGrid<2> expected = before, magnitude = abs(before);
      reference_apply(stencil, input, expected, boundary);
      reference_apply(abs_weights(stencil), abs(input), magnitude, boundary);
      EXPECT_TRUE(within_bound(to_grid<2>(vout), expected, magnitude, step_error_factor<T>(stencil.size())))
          << to_string(boundary);
    };
    check(in, out);
    check(win_in, win_out);
    // Nothing outside the window was written.
    const HostGrid<2> big_after = to_grid<2>(big_out);
    for (std::size_t flat = 0; flat < big_after.values.size(); ++flat) {
      const auto p = big_after.point(flat);
      if (p[0] < 3 || p[0] >= 37 || p[1] < 5 || p[1] >= 29) {
        ASSERT_EQ(big_after.values[flat], big_out_before.values[flat]) << impl::tuple_string(p);
      }
    }
  }
}

TEST(HalfPrecision, DistinctHalfType) {
  if (!has_distinct_half) {
    GTEST_SKIP() << "Kokkos::Experimental::half_t is float in this Kokkos build (host-only); "
                    "half storage is tested where Kokkos has a 16-bit half_t (CUDA/HIP builds)";
  }
  EXPECT_EQ(sizeof(Kokkos::Experimental::half_t), 2u);
}

}  // namespace
}  // namespace sparstencil::test
