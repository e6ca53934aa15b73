#pragma once
/// Layout morphing (SparStencil §3.1, generalised to any offset pattern and 1-3 dims):
/// for an output tile of tile[0] x ... points and its input patch (the tile grown by the
/// stencil's radius on every side), the kernel matrix A' has one row per tile point and
/// one column per patch point, A'[t, p] = w(p - r - t) where p - r - t is a stencil offset
/// (points are multi-indices; r is the radius per axis). Then C = A' x B', column j of B'
/// being the patch of tile j: each input element of a tile's patch appears once.
/// Rows and columns are numbered row-major over their multi-indices (axis 0 slowest).
#include <array>
#include <cstddef>
#include <vector>

#include "SparStencil_Stencil.hpp"

namespace sparstencil {

/// Points of an output tile per axis.
template <int D>
using TileShape = std::array<int, D>;

/// The tile, the stencil's radius and the patch they imply.
template <int D>
struct PatchGeometry {
  TileShape<D> tile{};
  std::array<int, D> radius{};
  std::array<int, D> patch{};  ///< tile + 2 radius per axis

  PatchGeometry(const TileShape<D>& t, const std::array<int, D>& r) : tile(t), radius(r) {
    for (int a = 0; a < D; ++a) {
      if (t[a] < 1) impl::fail("PatchGeometry", "tile extent ", t[a], " along axis ", a, " must be at least 1");
      patch[a] = t[a] + 2 * r[a];
    }
  }
  int tile_points() const { return product(tile); }
  int patch_points() const { return product(patch); }
  /// Row-major flat index of a patch point.
  int patch_index(const std::array<int, D>& p) const {
    int flat = 0;
    for (int a = 0; a < D; ++a) flat = flat * patch[a] + p[a];
    return flat;
  }

 private:
  static int product(const std::array<int, D>& e) {
    int n = 1;
    for (int v : e) n *= v;
    return n;
  }
};

/// A dense matrix of weights, row-major. Exact zeros are structural zeros.
struct KernelMatrix {
  int rows = 0;
  int cols = 0;
  std::vector<double> values;

  KernelMatrix() = default;
  KernelMatrix(int r, int c) : rows(r), cols(c), values(static_cast<std::size_t>(r) * c, 0.0) {}
  double operator()(int r, int c) const { return values[static_cast<std::size_t>(r) * cols + c]; }
  double& operator()(int r, int c) { return values[static_cast<std::size_t>(r) * cols + c]; }
  bool nonzero(int r, int c) const { return (*this)(r, c) != 0.0; }
  std::size_t nonzeros() const;
};

/// A' of `stencil` for `tile` (see the file comment). Zero weights leave structural zeros.
template <int D>
KernelMatrix morph(const Stencil<D>& stencil, const typename Stencil<D>::index_type& tile) {
  const PatchGeometry<D> geometry(tile, stencil.radius());
  KernelMatrix a(geometry.tile_points(), geometry.patch_points());
  for (int row = 0; row < a.rows; ++row) {
    std::array<int, D> t{};
    for (int rest = row, ax = D - 1; ax >= 0; --ax) {
      t[ax] = rest % tile[ax];
      rest /= tile[ax];
    }
    for (const Term<D>& term : stencil.terms()) {
      std::array<int, D> p{};
      for (int ax = 0; ax < D; ++ax) p[ax] = t[ax] + term.offset[ax] + geometry.radius[ax];
      a(row, geometry.patch_index(p)) = term.weight;
    }
  }
  return a;
}

}  // namespace sparstencil
