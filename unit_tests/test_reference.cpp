// The reference itself, checked by hand on tiny grids: it is what everything else trusts.
#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

TEST(Reference, OneDimensionalByHandForEachBoundary) {
  const Stencil<1> s({{{-1}, 1.0}, {{0}, 10.0}, {{1}, 100.0}});
  HostGrid<1> in({5});
  in.values = {1, 2, 3, 4, 5};
  HostGrid<1> out({5}, -7.0);
  reference_apply(s, in, out, Boundary::interior);
  EXPECT_EQ(out.values, (std::vector<double>{-7, 321, 432, 543, -7}));
  reference_apply(s, in, out, Boundary::periodic);
  EXPECT_EQ(out.values, (std::vector<double>{215, 321, 432, 543, 154}));
  HostGrid<1> fixed({5}, -7.0);
  reference_apply(s, in, fixed, Boundary::fixed_rim);
  EXPECT_EQ(fixed.values, (std::vector<double>{1, 321, 432, 543, 5}));
}

TEST(Reference, TwoDimensionalAxesAndWrap) {
  // out(i, j) = in(i - 1, j) + 1000 * in(i, j + 2): axis 0 then axis 1, both wrapping.
  const Stencil<2> s({{{-1, 0}, 1.0}, {{0, 2}, 1000.0}});
  HostGrid<2> in({3, 5});
  for (std::size_t k = 0; k < in.values.size(); ++k) in.values[k] = static_cast<double>(k);
  HostGrid<2> out({3, 5});
  reference_apply(s, in, out, Boundary::periodic);
  EXPECT_EQ(out({0, 0}), in({2, 0}) + 1000 * in({0, 2}));
  EXPECT_EQ(out({1, 4}), in({0, 4}) + 1000 * in({1, 1}));
  EXPECT_EQ(out({2, 3}), in({1, 3}) + 1000 * in({2, 0}));
  // Interior with radius (1, 2): only (1, 2) of a 3 x 5 grid.
  HostGrid<2> interior({3, 5}, -1.0);
  reference_apply(s, in, interior, Boundary::interior);
  EXPECT_EQ(interior({1, 2}), in({0, 2}) + 1000 * in({1, 4}));
  EXPECT_EQ(std::count(interior.values.begin(), interior.values.end(), -1.0), 14);
}

}  // namespace
}  // namespace sparstencil::test
