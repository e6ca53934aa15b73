// Layout morphing and sparsity conversion: A' computes the stencil on a tile; every
// column order is valid, 1:2 and 2:4; the general matching is minimal (brute force on
// small matrices) and the hierarchical one matches it on staircase (box) inputs.
#include <functional>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

/// Tile shapes exercised until the planner's own candidate list exists.
template <int D>
std::vector<TileShape<D>> tiles() {
  if constexpr (D == 1) return {{8}, {16}, {32}, {64}};
  else if constexpr (D == 2) return {{1, 8}, {2, 8}, {4, 4}, {4, 8}, {8, 8}, {2, 16}};
  else return {{1, 2, 8}, {2, 2, 4}, {2, 4, 4}, {4, 4, 4}};
}

/// Patches above this size are not planned (the tile matrix would not fit a kernel's
/// registers); they are skipped here too.
constexpr int max_test_patch_points = 512;

/// A' x patch must equal the reference's interior result on a grid that is the patch.
template <int D>
void expect_morph_computes_stencil(const Stencil<D>& s, const typename Stencil<D>::index_type& tile,
                                   std::mt19937_64& rng) {
  const KernelMatrix a = morph(s, tile);
  const PatchGeometry<D> g(tile, s.radius());
  ASSERT_EQ(a.rows, g.tile_points());
  ASSERT_EQ(a.cols, g.patch_points());
  HostGrid<D> patch(g.patch);
  std::uniform_real_distribution<double> value(-1, 1);
  for (double& v : patch.values) v = value(rng);
  HostGrid<D> out(g.patch);
  reference_apply(s, patch, out, Boundary::interior);
  for (int row = 0; row < a.rows; ++row) {
    double sum = 0;
    for (int c = 0; c < a.cols; ++c) sum += a(row, c) * patch.values[c];
    std::array<int, D> t{};
    for (int rest = row, ax = D - 1; ax >= 0; --ax) {
      t[ax] = rest % tile[ax] + s.radius()[ax];
      rest /= tile[ax];
    }
    ASSERT_NEAR(sum, out(t), 1e-12) << s.name() << " tile row " << row;
  }
}

/// Both orders are valid, 1:2 and 2:4; the general one never needs more zero columns;
/// padding to K keeps them so.
template <int D>
void expect_valid_orders(const Stencil<D>& s, const typename Stencil<D>::index_type& tile) {
  const KernelMatrix a = morph(s, tile);
  const PatchGeometry<D> g(tile, s.radius());
  ColumnOrder general = pair_columns_general(a), staircase = pair_columns_hierarchical(a, g);
  for (ColumnOrder* order : {&general, &staircase}) {
    ASSERT_NO_THROW(check_column_order(a, *order)) << s.name();
    EXPECT_LE(max_nonzeros_per_group(a, *order, 2), 1) << s.name() << " " << impl::tuple_string(tile);
    EXPECT_LE(max_nonzeros_per_group(a, *order, 4), 2) << s.name() << " " << impl::tuple_string(tile);
  }
  EXPECT_LE(general.zero_columns, staircase.zero_columns) << s.name() << " " << impl::tuple_string(tile);
  pad_columns(general, 32);
  EXPECT_EQ(general.columns.size() % 32, 0u);
  ASSERT_NO_THROW(check_column_order(a, general));
  EXPECT_LE(max_nonzeros_per_group(a, general, 4), 2);
}

template <int D>
bool fits(const Stencil<D>& s, const typename Stencil<D>::index_type& tile) {
  return PatchGeometry<D>(tile, s.radius()).patch_points() <= max_test_patch_points;
}

TEST(Morph, Heat1DByHand) {
  const KernelMatrix a = morph(presets::heat_1d(), TileShape<1>{4});
  ASSERT_EQ(a.rows, 4);
  ASSERT_EQ(a.cols, 6);
  for (int t = 0; t < 4; ++t) {
    for (int p = 0; p < 6; ++p) {
      const double expected = p == t + 1 ? 0.5 : (p == t || p == t + 2) ? 0.25 : 0.0;
      EXPECT_EQ(a(t, p), expected) << t << "," << p;
    }
  }
  EXPECT_EQ(a.nonzeros(), 12u);
}

TEST(Morph, ComputesTheStencilOnEveryPresetAndTile) {
  std::mt19937_64 rng(5);
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (const auto& tile : tiles<D>()) expect_morph_computes_stencil(s, tile, rng);
        },
        any);
  }
}

TEST(Sparsity, PresetsAndCatalogueGiveValidTwoFourOrders) {
  std::vector<AnyStencil> all = presets::standard_set();
  for (const auto& entry : load_catalogue(reference_catalogue_path())) all.push_back(entry.stencil);
  int checked = 0;
  for (const AnyStencil& any : all) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (const auto& tile : tiles<D>()) {
            if (!fits(s, tile)) continue;
            expect_valid_orders(s, tile);
            ++checked;
          }
        },
        any);
  }
  EXPECT_GT(checked, 300);
}

TEST(Sparsity, RandomStencilsGiveValidTwoFourOrders) {
  // 3 x 170 random stencils, radius 1 to 4, every tile shape that fits; A' also checked
  // against the reference.
  std::mt19937_64 rng(31);
  std::uniform_int_distribution<int> radius(1, 4);
  int checked = 0;
  auto run    = [&](const auto& s) {
    constexpr int D = std::decay_t<decltype(s)>::rank;
    for (const auto& tile : tiles<D>()) {
      if (!fits(s, tile)) continue;
      expect_morph_computes_stencil(s, tile, rng);
      expect_valid_orders(s, tile);
      ++checked;
    }
  };
  for (int i = 0; i < 170; ++i) {
    run(random_stencil<1>(rng, radius(rng)));
    run(random_stencil<2>(rng, radius(rng)));
    run(random_stencil<3>(rng, radius(rng)));
  }
  EXPECT_GT(checked, 1500);
}

/// Fewest zero columns over all pairings of the nonzero columns (exhaustive).
int brute_force_zero_columns(const std::vector<std::vector<bool>>& conflict, std::vector<int> columns) {
  if (columns.empty()) return 0;
  const int first = columns.front();
  columns.erase(columns.begin());
  int best = 1 + brute_force_zero_columns(conflict, columns);  // `first` with a zero column
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (conflict[first][columns[j]]) continue;
    std::vector<int> rest = columns;
    rest.erase(rest.begin() + j);
    best = std::min(best, brute_force_zero_columns(conflict, rest));
  }
  return best;
}

TEST(Sparsity, GeneralMatchingIsMinimalOnSmallMatrices) {
  std::mt19937_64 rng(77);
  std::uniform_int_distribution<int> cols(2, 12), rows(1, 10);
  std::uniform_real_distribution<double> fill(0, 1);
  for (int trial = 0; trial < 400; ++trial) {
    KernelMatrix a(rows(rng), cols(rng));
    const double density = 0.1 + 0.5 * fill(rng);
    for (double& v : a.values) v = fill(rng) < density ? 1.0 + fill(rng) : 0.0;
    const ColumnOrder order = pair_columns_general(a);
    ASSERT_NO_THROW(check_column_order(a, order));
    ASSERT_LE(max_nonzeros_per_group(a, order, 2), 1);
    std::vector<int> nonzero;
    for (int c = 0; c < a.cols; ++c) {
      bool any = false;
      for (int r = 0; r < a.rows; ++r) any = any || a.nonzero(r, c);
      if (any) nonzero.push_back(c);
    }
    EXPECT_EQ(order.zero_columns, brute_force_zero_columns(column_conflicts(a), nonzero)) << "trial " << trial;
    EXPECT_EQ(order.dropped_columns, a.cols - static_cast<int>(nonzero.size()));
  }
}

TEST(Sparsity, HierarchicalMatchingEqualsGeneralOnStaircaseInputs) {
  // Box stencils (full staircases in every axis) of radius 1-3 in 1-3 dimensions.
  int compared = 0;
  auto compare = [&](const auto& s) {
    constexpr int D = std::decay_t<decltype(s)>::rank;
    for (const auto& tile : tiles<D>()) {
      if (!fits(s, tile)) continue;
      const KernelMatrix a = morph(s, tile);
      const auto staircase = pair_columns_hierarchical(a, PatchGeometry<D>(tile, s.radius()));
      EXPECT_EQ(staircase.zero_columns, pair_columns_general(a).zero_columns)
          << s.name() << " tile " << impl::tuple_string(tile);
      ++compared;
    }
  };
  for (int r = 1; r <= 3; ++r) {
    compare(box<1>(r));
    compare(box<2>(r));
    compare(box<3>(r));
  }
  compare(presets::box_2d49p());
  compare(presets::box_3d27p());
  EXPECT_GT(compared, 20);
}

TEST(Sparsity, StarCornersAreDroppedNotPadded) {
  // Star-2D13P on a 4x4 tile: the 10x10 patch's corner blocks are never read.
  const KernelMatrix a = morph(presets::star_2d13p(), TileShape<2>{4, 4});
  const ColumnOrder o  = pair_columns_general(a);
  EXPECT_EQ(o.dropped_columns, 4 * 9);
  EXPECT_EQ(static_cast<int>(o.columns.size()) - o.zero_columns, 100 - 36);
}

TEST(Sparsity, CheckersCatchViolations) {
  KernelMatrix dense(2, 4);
  for (double& v : dense.values) v = 1.0;
  ColumnOrder naive;
  naive.columns = {0, 1, 2, 3};
  EXPECT_EQ(max_nonzeros_per_group(dense, naive, 2), 2);  // not 1:2
  EXPECT_EQ(max_nonzeros_per_group(dense, naive, 4), 4);  // not 2:4
  ColumnOrder repeated;
  repeated.columns = {0, 1, 1, 2};
  EXPECT_THROW(check_column_order(dense, repeated), std::logic_error);  // 1 twice, 3 missing
  ColumnOrder odd;
  odd.columns      = {0, 1, 2, 3, zero_column};
  odd.zero_columns = 1;
  EXPECT_THROW(check_column_order(dense, odd), std::logic_error);
  // Every column of a dense matrix conflicts with every other: all need a zero partner.
  EXPECT_EQ(pair_columns_general(dense).zero_columns, 4);
}

TEST(Sparsity, Errors) {
  ColumnOrder o;
  EXPECT_ERROR_MENTIONS(pad_columns(o, 3), "K = 3");
  const KernelMatrix a = morph(presets::heat_2d(), TileShape<2>{2, 8});
  EXPECT_ERROR_MENTIONS(pair_columns_hierarchical(a, PatchGeometry<2>({4, 4}, {1, 1})), "36 points");
  EXPECT_ERROR_MENTIONS(PatchGeometry<2>({0, 4}, {1, 1}), "tile extent 0");
}

}  // namespace
}  // namespace sparstencil::test

namespace sparstencil::test {
namespace {

TEST(StridedSwapping, ValidOnRowTilesForAnyStencil) {
  std::vector<AnyStencil> all = presets::standard_set();
  for (const auto& entry : load_catalogue(reference_catalogue_path())) all.push_back(entry.stencil);
  std::mt19937_64 rng(8);
  for (int i = 0; i < 60; ++i) {
    all.push_back(random_stencil<1>(rng, 1 + i % 4));
    all.push_back(random_stencil<2>(rng, 1 + i % 4));
    all.push_back(random_stencil<3>(rng, 1 + i % 4));
  }
  int checked = 0;
  for (const AnyStencil& any : all) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (int length : {8, 16, 32}) {
            typename Stencil<D>::index_type tile;
            tile.fill(1);
            tile[D - 1] = length;
            if (!fits(s, tile)) continue;
            const KernelMatrix a = morph(s, tile);
            const ColumnOrder o  = pair_columns_strided(a, PatchGeometry<D>(tile, s.radius()));
            ASSERT_NO_THROW(check_column_order(a, o)) << s.name();
            EXPECT_LE(max_nonzeros_per_group(a, o, 2), 1) << s.name() << " row of " << length;
            EXPECT_GE(o.zero_columns, pair_columns_general(a).zero_columns) << s.name();  // Edmonds is minimal
            ++checked;
          }
        },
        any);
  }
  EXPECT_GT(checked, 400);
}

TEST(StridedSwapping, SpiderBox15x15RowOf16) {
  // SPIDER's Box-2D7R: rows of 16 outputs, 30 columns per stencil row padded to 32; odd
  // positions below 16 hold column p + 16, odd positions from 16 hold p - 16.
  const auto s         = box<2>(7);
  const KernelMatrix a = morph(s, {1, 16});
  const ColumnOrder o  = pair_columns_strided(a, PatchGeometry<2>({1, 16}, s.radius()));
  EXPECT_EQ(o.columns.size(), 15u * 32u);
  EXPECT_EQ(o.zero_columns, 15 * 2);
  const std::vector<int> first_row{0,  17, 2,  19, 4,  21, 6,  23, 8,  25, 10, 27, 12, 29, 14,          zero_column,
                                   16, 1,  18, 3,  20, 5,  22, 7,  24, 9,  26, 11, 28, 13, zero_column, 15};
  EXPECT_EQ(std::vector<int>(o.columns.begin(), o.columns.begin() + 32), first_row);
  EXPECT_LE(max_nonzeros_per_group(a, o, 4), 2);
  // The planner reaches the same K when strided swapping is asked for (gather form), and
  // so does its row-run plan, interleaving every image row's pairs 16 apart (a block of 32
  // values per tile); split by tap parity instead, a row costs two chunks.
  PlanRequest r;
  r.stencil = s;
  r.grid    = {10240, 10240};
  r.pairing = Pairing::strided_swapping;
  EXPECT_EQ(cuda_sptc::make_sparse_plan(r, {1, 16}).order.columns.size(), 480u);
  r.pairing       = Pairing::best;
  const Plan runs = cuda_sptc::make_sparse_plan(r, {1, 16});
  EXPECT_EQ(runs.order.columns.size(), 480u);
  EXPECT_EQ(runs.pairing, "row runs, pairs interleaved 16 apart");
  r.pairing = Pairing::parity_split;
  EXPECT_EQ(cuda_sptc::make_sparse_plan(r, {1, 16}).order.columns.size(), 960u);
  r.pairing = Pairing::best;
  EXPECT_EQ(make_plan(r).backend, "cuda_sptc");
  EXPECT_ERROR_MENTIONS(pair_columns_strided(morph(s, {2, 8}), PatchGeometry<2>({2, 8}, s.radius())), "is not a row");
}

}  // namespace
}  // namespace sparstencil::test
