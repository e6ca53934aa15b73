#pragma once
/// The double-precision reference of field updates (SparStencil_UpdateModel.hpp) under face
/// conditions (SparStencil_FaceConditions.hpp): plain host loops that follow the documented
/// definitions point by point, independent of the Kokkos kernel's code.
#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "SparStencil_FaceConditions.hpp"
#include "SparStencil_Reference.hpp"
#include "SparStencil_UpdateModel.hpp"

namespace sparstencil {

/// A host field with `ghost` layers on each side of each axis: `grid` holds the padded
/// array; grid points are (x_a + ghost_a).
template <int D>
struct HostField {
  HostGrid<D> grid;
  std::array<int, D> ghost{};

  HostField() = default;
  HostField(const std::array<int, D>& extents, const std::array<int, D>& ghosts = {}) : ghost(ghosts) {
    std::array<int, D> padded{};
    for (int a = 0; a < D; ++a) padded[a] = extents[a] + 2 * ghosts[a];
    grid = HostGrid<D>(padded);
  }
  std::array<int, D> extents() const {
    std::array<int, D> e{};
    for (int a = 0; a < D; ++a) e[a] = grid.extents[a] - 2 * ghost[a];
    return e;
  }
  /// A point of the grid or its halo (x_a from -ghost_a to extent_a + ghost_a - 1).
  double& at(const std::array<int, D>& x) { return grid(padded(x)); }
  double at(const std::array<int, D>& x) const { return grid(padded(x)); }

 private:
  std::array<int, D> padded(std::array<int, D> x) const {
    for (int a = 0; a < D; ++a) x[a] += ghost[a];
    return x;
  }
};

/// Everything a reference update reads besides its inputs.
template <int D>
struct ReferenceUpdateData {
  std::vector<HostGrid<D>> coefficient_fields;
  std::array<std::vector<std::vector<double>>, D> axis_factors;
  /// Per face [axis][side], the dirichlet values where the face takes them from a grid (the
  /// grid's extents, 1 along the face's axis).
  std::array<std::array<std::optional<HostGrid<D>>, 2>, D> dirichlet_values;
};

/// The value an update reads at `j` (inside the grid or not) of field `f`.
template <int D>
double reference_read(const HostField<D>& f, const FaceConditions<D>& faces, const ReferenceUpdateData<D>& data,
                      const std::array<int, D>& j) {
  const std::array<int, D> n = f.extents();
  std::array<int, D> k       = j;
  int dirichlet_axis = -1, dirichlet_side = 0;
  for (int a = 0; a < D; ++a) {
    if (j[a] >= 0 && j[a] < n[a]) continue;
    const int side = j[a] < 0 ? 0 : 1;
    switch (faces.face(a, side).rule) {
      case FaceRule::periodic: k[a] = ((j[a] % n[a]) + n[a]) % n[a]; break;
      case FaceRule::neumann: k[a] = side == 0 ? -1 - j[a] : 2 * n[a] - 1 - j[a]; break;
      case FaceRule::reflect: k[a] = side == 0 ? -j[a] : 2 * (n[a] - 1) - j[a]; break;
      case FaceRule::ghost: break;
      case FaceRule::dirichlet:
        if (dirichlet_axis < 0) dirichlet_axis = a, dirichlet_side = side;
        break;
    }
  }
  if (dirichlet_axis >= 0) {
    const auto& grid = data.dirichlet_values[dirichlet_axis][dirichlet_side];
    if (!grid) return faces.face(dirichlet_axis, dirichlet_side).value;
    std::array<int, D> p{};
    for (int a = 0; a < D; ++a) p[a] = a == dirichlet_axis ? 0 : std::min(std::max(k[a], 0), n[a] - 1);
    return (*grid)(p);
  }
  return f.at(k);
}

/// The pointwise function: (stencil results, the inputs' centre values, the point) to one
/// value per output.
template <int D>
using ReferencePointwise = std::function<std::vector<double>(const std::vector<double>&, const std::vector<double>&,
                                                             const std::array<int, D>&)>;

/// One update of every grid point of `outputs` (their halos untouched); `pointwise` is
/// callable as a ReferencePointwise<D>.
template <int D, class Pointwise>
void reference_update(const UpdateShape<D>& shape, const FaceConditions<D>& faces, const ReferenceUpdateData<D>& data,
                      const std::vector<HostField<D>>& inputs, std::vector<HostField<D>>& outputs,
                      const Pointwise& pointwise) {
  SPARSTENCIL_ASSERT(!inputs.empty() && !outputs.empty());
  const std::array<int, D> n = inputs[0].extents();
  const HostGrid<D> shape_grid(n);
  std::vector<double> results(shape.results.size()), centres(inputs.size());
  for (std::size_t flat = 0; flat < shape_grid.values.size(); ++flat) {
    const std::array<int, D> x = shape_grid.point(flat);
    for (std::size_t k = 0; k < shape.results.size(); ++k) {
      const StencilOn<D>& s = shape.results[k];
      double sum            = 0.0;
      for (std::size_t t = 0; t < s.stencil().size(); ++t) {
        const Term<D>& term     = s.stencil().terms()[t];
        const Coefficient<D>& c = s.coefficients()[t];
        double weight           = term.weight;
        if (c.field >= 0) weight *= data.coefficient_fields[c.field](x);
        for (int a = 0; a < D; ++a) {
          if (c.axis_factor[a] >= 0) weight *= data.axis_factors[a][c.axis_factor[a]][x[a]];
        }
        std::array<int, D> j{};
        for (int a = 0; a < D; ++a) j[a] = x[a] + term.offset[a];
        sum += weight * reference_read<D>(inputs[s.input()], faces, data, j);
      }
      results[k] = sum;
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) centres[i] = inputs[i].at(x);
    const std::vector<double> values = pointwise(results, centres, x);
    SPARSTENCIL_ASSERT(values.size() == outputs.size());
    for (std::size_t o = 0; o < outputs.size(); ++o) outputs[o].at(x) = values[o];
  }
}

}  // namespace sparstencil
