// The stencil model: validation, radius, presets and builders.
#include <climits>
#include <numeric>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

double weight_sum(const AnyStencil& s) {
  return std::visit(
      [](const auto& st) {
        double sum = 0;
        for (const auto& t : st.terms()) sum += t.weight;
        return sum;
      },
      s);
}

TEST(Stencil, RejectsEmpty) {
  EXPECT_ERROR_MENTIONS(Stencil<2>({}), "sparstencil::Stencil", "empty");
  EXPECT_ERROR_MENTIONS(make_stencil({}, {}), "make_stencil", "empty");
}

TEST(Stencil, RejectsDuplicateOffsets) {
  EXPECT_ERROR_MENTIONS(Stencil<2>({{{1, 0}, 0.5}, {{0, 0}, 0.2}, {{1, 0}, 0.3}}), "duplicate offset", "(1,0)");
}

TEST(Stencil, RejectsNonFiniteWeights) {
  EXPECT_ERROR_MENTIONS(Stencil<1>({{{0}, 1.0}, {{1}, std::nan("")}}), "non-finite", "(1)");
  EXPECT_ERROR_MENTIONS(Stencil<3>({{{0, 0, 1}, HUGE_VAL}}), "non-finite", "(0,0,1)", "inf");
}

TEST(Stencil, RejectsOffsetsBeyondSupportedRadius) {
  EXPECT_ERROR_MENTIONS(Stencil<2>({{{0, max_supported_radius + 1}, 1.0}}), "beyond the supported radius",
                        std::to_string(max_supported_radius), "axis 1");
  EXPECT_NO_THROW(Stencil<2>({{{0, -max_supported_radius}, 1.0}}));
  // The most negative int has no absolute value (std::abs was undefined there).
  EXPECT_ERROR_MENTIONS(Stencil<1>({{{INT_MIN}, 1.0}}), "beyond the supported radius", "axis 0");
}

TEST(Stencil, RejectsMixedDimensions) {
  EXPECT_ERROR_MENTIONS(make_stencil({{0, 0}, {1, 0, 0}}, {0.5, 0.5}), "mixed dimensions", "term 1", "(1,0,0)");
  EXPECT_ERROR_MENTIONS(make_stencil({{0, 0, 0, 0}}, {1.0}), "4 coordinates");
  EXPECT_ERROR_MENTIONS(make_stencil({{0}, {1}}, {1.0}), "2 offsets but 1 weights");
}

TEST(Stencil, RadiusPerAxisAndWeightLookup) {
  const Stencil<3> s({{{2, 0, 0}, 0.25}, {{0, -3, 1}, 0.5}, {{0, 0, 0}, 0.25}});
  EXPECT_EQ(s.radius(), (Offset<3>{2, 3, 1}));
  EXPECT_EQ(s.max_radius(), 3);
  EXPECT_EQ(s.weight({0, -3, 1}), 0.5);
  EXPECT_EQ(s.weight({1, 1, 1}), 0.0);
  EXPECT_EQ(s.terms().front().offset, (Offset<3>{0, -3, 1}));  // sorted
  EXPECT_EQ(as<3>(AnyStencil(s)).size(), 3u);
  EXPECT_ERROR_MENTIONS(as<2>(AnyStencil(s)), "is 3-D, expected 2-D");
}

TEST(Presets, PointCountsRadiiAndUnitWeightSum) {
  const std::vector<std::pair<int, int>> expected{{3, 1}, {5, 2}, {5, 1}, {9, 1}, {13, 3}, {49, 3}, {7, 1}, {27, 1}};
  const std::vector<int> dims{1, 1, 2, 2, 2, 2, 3, 3};
  const auto set = presets::standard_set();
  ASSERT_EQ(set.size(), 8u);
  for (std::size_t i = 0; i < set.size(); ++i) {
    EXPECT_EQ(dimension(set[i]), dims[i]) << name(set[i]);
    std::visit(
        [&](const auto& s) {
          EXPECT_EQ(static_cast<int>(s.size()), expected[i].first) << s.name();
          EXPECT_EQ(s.max_radius(), expected[i].second) << s.name();
        },
        set[i]);
    EXPECT_NEAR(weight_sum(set[i]), 1.0, 1e-14) << name(set[i]);  // diffusion/smoothing steps
  }
}

TEST(Presets, DocumentedWeights) {
  EXPECT_EQ(presets::heat_1d().weight({0}), 0.5);
  EXPECT_EQ(presets::heat_1d().weight({-1}), 0.25);
  EXPECT_DOUBLE_EQ(presets::d1_5p().weight({0}), 0.375);
  EXPECT_DOUBLE_EQ(presets::d1_5p().weight({2}), -1.0 / 48);
  EXPECT_EQ(presets::heat_2d().weight({0, 0}), 0.5);
  EXPECT_EQ(presets::heat_2d().weight({0, 1}), 0.125);
  EXPECT_EQ(presets::box_2d9p().weight({1, -1}), 1.0 / 16);
  EXPECT_DOUBLE_EQ(presets::star_2d13p().weight({0, 0}), 1 - 0.2 * 49 / 18);
  EXPECT_DOUBLE_EQ(presets::star_2d13p().weight({-3, 0}), 0.1 / 90);
  EXPECT_EQ(presets::box_2d49p().weight({0, 0}), 400.0 / 4096);
  EXPECT_EQ(presets::heat_3d().weight({0, 0, 0}), 0.25);
  EXPECT_EQ(presets::box_3d27p().weight({1, 1, 1}), 1.0 / 64);
}

TEST(Presets, Box2D49PIsBox2D9PFusedThreeTimes) {
  const auto fused = fuse(presets::box_2d9p(), 3);
  const auto b49   = presets::box_2d49p();
  ASSERT_EQ(fused.size(), b49.size());
  for (const auto& t : b49.terms()) EXPECT_DOUBLE_EQ(fused.weight(t.offset), t.weight);
}

TEST(Presets, ByNameAcceptsCanonicalAndDisplayNames) {
  EXPECT_EQ(name(presets::by_name("box2d49p")), "Box-2D49P");
  EXPECT_EQ(name(presets::by_name("Heat-3D")), "Heat-3D");
  EXPECT_EQ(name(presets::by_name("1D5P")), "1D5P");
  EXPECT_ERROR_MENTIONS(presets::by_name("heat4d"), "unknown preset", "heat4d", "box3d27p");
}

TEST(Builders, StarAndBoxShapes) {
  EXPECT_EQ(star<1>(3).size(), 7u);
  EXPECT_EQ(star<2>(2).size(), 9u);
  EXPECT_EQ(star<3>(4).size(), 25u);
  EXPECT_EQ(box<2>(3).size(), 49u);
  EXPECT_EQ(box<3>(2).size(), 125u);
  EXPECT_EQ(star<3>(2).radius(), (Offset<3>{2, 2, 2}));
  EXPECT_EQ(box<2>(1).weight({-1, 1}), 1.0 / 9);
  EXPECT_NEAR(weight_sum(box(3, 2)), 1.0, 1e-14);
  EXPECT_EQ(star<2>(1).weight({1, 1}), 0.0);  // no diagonals in a star
  EXPECT_EQ(dimension(star(3, 1)), 3);
  EXPECT_ERROR_MENTIONS(star<2>(0), "radius 0");
  EXPECT_ERROR_MENTIONS(box<1>(max_supported_radius + 1), "radius");
  EXPECT_ERROR_MENTIONS(box(4, 1), "dimension 4");
}

}  // namespace
}  // namespace sparstencil::test
