// Temporal fusion of the model: fuse(s, t) is the exact t-step composition.
#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

TEST(Fuse, Heat1DTwoStepsByHand) {
  const auto f = fuse(presets::heat_1d(), 2);  // (1 2 1)/4 convolved with itself
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f.weight({0}), 6.0 / 16);
  EXPECT_EQ(f.weight({-1}), 4.0 / 16);
  EXPECT_EQ(f.weight({2}), 1.0 / 16);
  EXPECT_EQ(f.radius()[0], 2);
}

TEST(Fuse, OneStepIsTheStencilItself) {
  for (const AnyStencil& s : presets::standard_set()) EXPECT_EQ(to_text(fuse(s, 1)), to_text(s));
}

TEST(Fuse, KeepsCancellingOffsetsAndGrowsRadius) {
  // (1, -1) on offsets (0, 1): squared gives 1, -2, 1 on 0, 1, 2; cubed reaches 3.
  const Stencil<1> diff({{{0}, 1.0}, {{1}, -1.0}});
  const auto sq = fuse(diff, 2);
  EXPECT_EQ(sq.weight({1}), -2.0);
  const Stencil<2> shear({{{1, 0}, 0.5}, {{-1, 0}, 0.5}});
  const auto f = fuse(shear, 2);  // offsets -2, 0, +2 only
  EXPECT_EQ(f.size(), 3u);
  EXPECT_EQ(f.radius(), (Offset<2>{2, 0}));
  EXPECT_EQ(fuse(presets::star_2d13p(), 3).radius(), (Offset<2>{9, 9}));
}

TEST(Fuse, MatchesRepeatedReferenceStepsOnPeriodicGrids) {
  // Composition of circulant operators is exact: fused and repeated steps agree to
  // double rounding on every point of a periodic grid.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> value(-1, 1);
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          std::array<int, D> extents;
          extents.fill(D == 1 ? 101 : D == 2 ? 31 : 13);
          HostGrid<D> in(extents);
          for (double& v : in.values) v = value(rng);
          for (int t : {2, 4}) {
            const HostGrid<D> repeated = reference_iterate(s, in, t, Boundary::periodic);
            HostGrid<D> fused(extents);
            reference_apply(fuse(s, t), in, fused, Boundary::periodic);
            const HostGrid<D> magnitude = reference_iterate(abs_weights(s), abs(in), t, Boundary::periodic);
            EXPECT_TRUE(within_bound(fused, repeated, magnitude, 1e-14)) << s.name() << " t=" << t;
          }
        },
        any);
  }
}

TEST(Fuse, Errors) {
  EXPECT_ERROR_MENTIONS(fuse(presets::heat_2d(), 0), "sparstencil::fuse", "step count 0");
  EXPECT_ERROR_MENTIONS(fuse(presets::box_2d49p(), 11), "radius 33", "supported radius 32");
  EXPECT_NO_THROW(fuse(presets::heat_1d(), max_supported_radius));
}

TEST(Fuse, OnePointStencilsFuseAnyStepCount) {
  // Radius 0 puts no bound on t: its weight is multiplied in place, exactly as the table did.
  const Stencil<2> half({{{0, 0}, 0.5}});
  EXPECT_EQ(fuse(half, 3).weight({0, 0}), 0.125);
  EXPECT_EQ(fuse(half, 2147483647).weight({0, 0}), 0.0);  // underflows, then stays 0
  EXPECT_EQ(fuse(Stencil<1>({{{0}, 1.0}}), 2147483647).weight({0}), 1.0);
  EXPECT_ERROR_MENTIONS(fuse(Stencil<1>({{{0}, 3.0}}), 1000), "sparstencil::fuse", "fusing 1000 steps", "overflows");
  EXPECT_ERROR_MENTIONS(fuse(presets::heat_1d(), 2000), "sparstencil::fuse", "radius 2000");
}

TEST(Fuse, IsFusionOf) {
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [](const auto& s) {
          EXPECT_TRUE(is_fusion_of(fuse(s, 3), s, 3)) << s.name();
          EXPECT_TRUE(is_fusion_of(s, s, 1)) << s.name();
          EXPECT_FALSE(is_fusion_of(fuse(s, 3), s, 2)) << s.name();
          EXPECT_FALSE(is_fusion_of(s, s, 0)) << s.name();
          auto terms = fuse(s, 2).terms();
          terms.front().weight *= 2;  // one weight off
          EXPECT_FALSE(is_fusion_of(std::decay_t<decltype(s)>(terms), s, 2)) << s.name();
        },
        any);
  }
  // A mismatch is found early, without fusing up to the supported radius's support.
  EXPECT_FALSE(is_fusion_of(box<3>(1), box<3>(1), 32));
}

}  // namespace
}  // namespace sparstencil::test
