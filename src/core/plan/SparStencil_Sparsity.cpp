#include "SparStencil_Sparsity.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/max_cardinality_matching.hpp>

namespace sparstencil {

std::vector<bool> nonzero_columns(const KernelMatrix& a) {
  std::vector<bool> used(a.cols, false);
  for (int r = 0; r < a.rows; ++r)
    for (int c = 0; c < a.cols; ++c) used[c] = used[c] || a.nonzero(r, c);
  return used;
}

int strided_swap_distance(int n, int r) {
  const int h = std::max((n + 1) / 2, 2 * r + 2);
  return h + h % 2;
}

namespace {

/// Adds the pair (u, v) to `order`, replacing a column that is zero everywhere by an
/// inserted zero column and dropping a pair of two such columns.
void add_pair(ColumnOrder& order, const std::vector<bool>& used, int u, int v) {
  const bool keep_u = u != zero_column && used[u];
  const bool keep_v = v != zero_column && used[v];
  if (!keep_u && !keep_v) return;
  order.columns.push_back(keep_u ? u : zero_column);
  order.columns.push_back(keep_v ? v : zero_column);
  order.zero_columns += (keep_u ? 0 : 1) + (keep_v ? 0 : 1);
}

template <int D>
void match_level(const PatchGeometry<D>& g, int axis, std::array<int, D> prefix, const std::vector<bool>& used,
                 ColumnOrder& order) {
  const int m = g.patch[axis];
  const int k = 2 * g.radius[axis] + 1;
  const int s = std::max(m / 2, k);
  // All columns of slice i of this block, row-major over the axes after `axis`.
  auto slice = [&](int i) {
    std::vector<int> columns;
    std::array<int, D> p = prefix;
    p[axis]              = i;
    int count            = 1;
    for (int a = axis + 1; a < D; ++a) count *= g.patch[a];
    for (int flat = 0; flat < count; ++flat) {
      for (int rest = flat, a = D - 1; a > axis; --a) {
        p[a] = rest % g.patch[a];
        rest /= g.patch[a];
      }
      columns.push_back(g.patch_index(p));
    }
    return columns;
  };
  std::vector<bool> matched(m, false);
  for (int i = 0; i < m; ++i) {
    if (matched[i] || i + s >= m) continue;
    matched[i] = matched[i + s] = true;
    const auto left = slice(i), right = slice(i + s);
    for (std::size_t j = 0; j < left.size(); ++j) add_pair(order, used, left[j], right[j]);
  }
  for (int i = 0; i < m; ++i) {
    if (matched[i]) continue;
    if (axis == D - 1) {
      std::array<int, D> p = prefix;
      p[axis]              = i;
      add_pair(order, used, g.patch_index(p), zero_column);
    } else {
      std::array<int, D> next = prefix;
      next[axis]              = i;
      match_level<D>(g, axis + 1, next, used, order);
    }
  }
}

}  // namespace

std::size_t KernelMatrix::nonzeros() const {
  return static_cast<std::size_t>(std::count_if(values.begin(), values.end(), [](double v) { return v != 0.0; }));
}

std::vector<std::vector<bool>> column_conflicts(const KernelMatrix& a) {
  std::vector<std::vector<bool>> conflict(a.cols, std::vector<bool>(a.cols, false));
  std::vector<int> row_columns;
  for (int r = 0; r < a.rows; ++r) {
    row_columns.clear();
    for (int c = 0; c < a.cols; ++c)
      if (a.nonzero(r, c)) row_columns.push_back(c);
    for (int i : row_columns)
      for (int j : row_columns) conflict[i][j] = conflict[i][j] || i != j;
  }
  return conflict;
}

ColumnOrder pair_columns_general(const KernelMatrix& a) {
  const std::vector<bool> used = nonzero_columns(a);
  std::vector<int> columns;  // the nonzero columns, as graph vertices 0..n-1
  for (int c = 0; c < a.cols; ++c)
    if (used[c]) columns.push_back(c);
  const auto conflict = column_conflicts(a);
  using Graph         = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  const int n         = static_cast<int>(columns.size());
  Graph graph(n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (!conflict[columns[i]][columns[j]]) boost::add_edge(i, j, graph);
  std::vector<boost::graph_traits<Graph>::vertex_descriptor> mate(n);
  boost::edmonds_maximum_cardinality_matching(graph, mate.data());
  ColumnOrder order;
  order.dropped_columns = a.cols - n;
  const auto none       = boost::graph_traits<Graph>::null_vertex();
  for (int i = 0; i < n; ++i) {
    if (mate[i] == none) {
      add_pair(order, used, columns[i], zero_column);
    } else if (static_cast<int>(mate[i]) > i) {
      add_pair(order, used, columns[i], columns[mate[i]]);
    }
  }
  return order;
}

template <int D>
ColumnOrder pair_columns_hierarchical(const KernelMatrix& a, const PatchGeometry<D>& geometry) {
  if (a.cols != geometry.patch_points()) {
    impl::fail("pair_columns_hierarchical", "matrix has ", a.cols, " columns but the patch has ",
               geometry.patch_points(), " points");
  }
  const std::vector<bool> used = nonzero_columns(a);
  ColumnOrder order;
  order.dropped_columns = static_cast<int>(std::count(used.begin(), used.end(), false));
  match_level<D>(geometry, 0, {}, used, order);
  return order;
}

template <int D>
ColumnOrder pair_columns_strided(const KernelMatrix& a, const PatchGeometry<D>& geometry) {
  for (int ax = 0; ax + 1 < D; ++ax) {
    if (geometry.tile[ax] != 1) {
      impl::fail("pair_columns_strided", "tile ", impl::tuple_string(geometry.tile),
                 " is not a row (extent 1 on every axis but the last)");
    }
  }
  if (a.cols != geometry.patch_points()) {
    impl::fail("pair_columns_strided", "matrix has ", a.cols, " columns but the patch has ", geometry.patch_points(),
               " points");
  }
  const std::vector<bool> used = nonzero_columns(a);
  const int n                  = geometry.patch[D - 1];
  const int r                  = geometry.radius[D - 1];
  const int h                  = strided_swap_distance(n, r);
  ColumnOrder order;
  order.dropped_columns = static_cast<int>(std::count(used.begin(), used.end(), false));
  const int rows        = a.cols / n;  // patch rows: every axis but the last
  for (int row = 0; row < rows; ++row) {
    auto column = [&](int position) {  // original column at a position, or zero_column
      const int c = position % 2 == 0 ? position : (position < h ? position + h : position - h);
      return c < n ? row * n + c : zero_column;
    };
    for (int p = 0; p < 2 * h; p += 2) add_pair(order, used, column(p), column(p + 1));
  }
  return order;
}

template ColumnOrder pair_columns_strided<1>(const KernelMatrix&, const PatchGeometry<1>&);
template ColumnOrder pair_columns_strided<2>(const KernelMatrix&, const PatchGeometry<2>&);
template ColumnOrder pair_columns_strided<3>(const KernelMatrix&, const PatchGeometry<3>&);

template ColumnOrder pair_columns_hierarchical<1>(const KernelMatrix&, const PatchGeometry<1>&);
template ColumnOrder pair_columns_hierarchical<2>(const KernelMatrix&, const PatchGeometry<2>&);
template ColumnOrder pair_columns_hierarchical<3>(const KernelMatrix&, const PatchGeometry<3>&);

void pad_columns(ColumnOrder& order, int k) {
  if (k < 2 || k % 2 != 0) impl::fail("pad_columns", "K = ", k, " must be even and at least 2");
  while (order.columns.size() % k != 0) {
    order.columns.push_back(zero_column);
    order.columns.push_back(zero_column);
    order.zero_columns += 2;
  }
}

void check_column_order(const KernelMatrix& a, const ColumnOrder& order) {
  const std::vector<bool> used = nonzero_columns(a);
  std::vector<int> seen(a.cols, 0);
  int zeros = 0;
  for (int c : order.columns) {
    if (c == zero_column) {
      ++zeros;
      continue;
    }
    if (c < 0 || c >= a.cols) throw std::logic_error("column order: index " + std::to_string(c) + " out of range");
    ++seen[c];
  }
  for (int c = 0; c < a.cols; ++c) {
    if (seen[c] != (used[c] ? 1 : 0)) {
      throw std::logic_error("column order: column " + std::to_string(c) + " listed " + std::to_string(seen[c]) +
                             " times, expected " + (used[c] ? "1" : "0"));
    }
  }
  if (order.columns.size() % 2 != 0) throw std::logic_error("column order: odd number of columns");
  if (zeros != order.zero_columns) throw std::logic_error("column order: zero-column count disagrees");
}

int max_nonzeros_per_group(const KernelMatrix& a, const ColumnOrder& order, int group) {
  int worst       = 0;
  const int count = static_cast<int>(order.columns.size());
  for (int r = 0; r < a.rows; ++r) {
    for (int start = 0; start < count; start += group) {
      int n = 0;
      for (int j = start; j < std::min(start + group, count); ++j) {
        const int c = order.columns[j];
        n += (c != zero_column && a.nonzero(r, c)) ? 1 : 0;
      }
      worst = std::max(worst, n);
    }
  }
  return worst;
}

}  // namespace sparstencil
