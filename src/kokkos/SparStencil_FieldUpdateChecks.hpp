#pragma once
/// What FieldUpdate::run checks of the fields it is given, before anything launches: each
/// failure names the field and the values at fault.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "SparStencil_Error.hpp"
#include "SparStencil_FaceConditions.hpp"
#include "SparStencil_FieldList.hpp"
#include "SparStencil_Overlap.hpp"
#include "SparStencil_UpdateModel.hpp"
#include "SparStencil_ViewChecks.hpp"
#include "SparStencil_Views.hpp"

namespace sparstencil::impl {

/// Outputs (holding data: check) share no element with an input or another output (the library's
/// overlap test: element by element for equal strides, e.g. fields interleaved in one
/// allocation; by memory spans otherwise).
template <class VIn, int D, int NIn, class VOut, int NOut, class MemSpace>
void check_fields_distinct(const char* fn, const FieldList<VIn, D, NIn, MemSpace>& inputs,
                           const FieldList<VOut, D, NOut, MemSpace>& outputs) {
  auto shared = [](const auto& x, int i, const auto& y, int j) {  // each field's own padded shape
    long x_extent[D], y_extent[D];
    for (int a = 0; a < D; ++a) x_extent[a] = x.padded[i][a], y_extent[a] = y.padded[j][a];
    return grid_overlap(reinterpret_cast<std::uintptr_t>(x.refs[i].data), x.refs[i].stride.data(), x_extent,
                        reinterpret_cast<std::uintptr_t>(y.refs[j].data), y.refs[j].stride.data(), y_extent, D,
                        sizeof(VOut)) != Overlap::none;
  };
  for (int o = 0; o < NOut; ++o) {
    for (int i = 0; i < NIn; ++i) {
      if (shared(outputs, o, inputs, i)) {
        fail(fn, "output ", o, " ('", outputs.labels[o], "') and input ", i, " ('", inputs.labels[i],
             "') share memory: an update reads neighbours of every point, so it needs separate output buffers");
      }
    }
    for (int p = 0; p < o; ++p) {
      if (shared(outputs, p, outputs, o)) {
        fail(fn, "outputs ", p, " ('", outputs.labels[p], "') and ", o, " ('", outputs.labels[o], "') share memory");
      }
    }
  }
}

/// What FieldUpdate::run checks of its fields before a launch: every field holds data and
/// covers one grid; each axis is long enough for the face rules' mirrored or wrapped reads;
/// ghost faces have ghost layers at least the radius wide; coefficient fields, axis factors
/// and dirichlet values have the grid's extents; outputs share no memory with other fields.
template <int D, class T, class Layout, class MemSpace, class VIn, int NIn, class VOut, int NOut>
void check_update_fields(
    const char* fn, const UpdateShape<D>& update, const FaceConditions<D>& faces, const std::array<int, D>& radius,
    const std::vector<Kokkos::View<typename grid_data<const T, D>::type, Layout, MemSpace>>& fields,
    const std::array<std::vector<Kokkos::View<const T*, Layout, MemSpace>>, D>& factors,
    const std::array<std::array<Kokkos::View<typename grid_data<const T, D>::type, Layout, MemSpace>, 2>, D>& dirichlet,
    const FieldList<VIn, D, NIn, MemSpace>& inputs, const FieldList<VOut, D, NOut, MemSpace>& outputs) {
  using FieldView      = Kokkos::View<typename grid_data<const T, D>::type, Layout, MemSpace>;
  UpdateShape<D> shape = update;
  shape.inputs = NIn, shape.outputs = NOut;
  shape.validate(fn);
  for (int i = 0; i < NIn; ++i) {  // before the extents: a null View has extents 0
    if (!inputs.refs[i].data) fail(fn, "input ", i, " ('", inputs.labels[i], "') holds no data (a null pointer)");
  }
  for (int o = 0; o < NOut; ++o) {
    if (!outputs.refs[o].data) fail(fn, "output ", o, " ('", outputs.labels[o], "') holds no data (a null pointer)");
  }
  const std::array<int, D> n = outputs.extents[0];
  auto field_name            = [](const char* kind, int i, const std::string& label) {
    return std::string(kind) + " " + std::to_string(i) + (label.empty() ? "" : " ('" + label + "')");
  };
  auto same_extents = [&](const char* kind, int i, const std::string& label, const std::array<int, D>& e) {
    if (e != n) {
      fail(fn, field_name(kind, i, label), " has grid extents ", tuple_string(e), " but output 0 has ", tuple_string(n),
           ": every field of an update covers one grid");
    }
  };
  for (int i = 0; i < NIn; ++i) same_extents("input", i, inputs.labels[i], inputs.extents[i]);
  for (int o = 0; o < NOut; ++o) same_extents("output", o, outputs.labels[o], outputs.extents[o]);
  for (int a = 0; a < D; ++a) {
    // A read r past a face maps inside where the axis has r points (a wrap, or a mirror
    // about the face half a cell out: a one-cell slab under radius-1 neumann faces), r + 1
    // for a mirror about the end point (reflect).
    bool ghost = false;
    int needs  = 0;
    for (int s = 0; s < 2; ++s) {
      const FaceRule rule = faces.face(a, s).rule;
      ghost               = ghost || rule == FaceRule::ghost;
      if (rule == FaceRule::periodic || rule == FaceRule::neumann) needs = std::max(needs, radius[a]);
      if (rule == FaceRule::reflect) needs = std::max(needs, radius[a] + 1);
    }
    if (n[a] < needs) {
      fail(fn, "extent ", n[a], " along axis ", a, " is too small for the stencils' radius ", radius[a], " under ",
           faces.describe(), " (a mirrored or wrapped read needs at least ", needs, ")");
    }
    for (int i = 0; ghost && i < NIn; ++i) {
      if (inputs.refs[i].ghost[a] < radius[a]) {
        fail(fn, field_name("input", i, inputs.labels[i]), " has ", inputs.refs[i].ghost[a],
             " ghost layer(s) along axis ", a, ", fewer than the stencils' radius ", radius[a],
             " there: a ghost face reads the halo the application filled, at least the radius wide (with_ghosts)");
      }
    }
  }
  for (std::size_t c = 0; c < fields.size(); ++c) {
    for (int a = 0; a < D; ++a) {
      if (static_cast<int>(fields[c].extent(a)) != n[a]) {
        fail(fn, "coefficient field ", c, " ('", fields[c].label(), "') has extents ", extents_string(fields[c]),
             " but the grid is ", tuple_string(n));
      }
    }
  }
  for (int a = 0; a < D; ++a) {
    for (std::size_t c = 0; c < factors[a].size(); ++c) {
      if (static_cast<int>(factors[a][c].extent(0)) != n[a]) {
        fail(fn, "axis factor ", c, " of axis ", a, " ('", factors[a][c].label(), "') has ", factors[a][c].extent(0),
             " values but the grid has ", n[a], " points along axis ", a);
      }
    }
    for (int s = 0; s < 2; ++s) {
      const FieldView& v = dirichlet[a][s];
      for (int b = 0; v.data() && b < D; ++b) {
        if (static_cast<int>(v.extent(b)) != (b == a ? 1 : n[b])) {
          fail(fn, "the dirichlet values of face (axis ", a, ", side ", s, ") have extents ", extents_string(v),
               " but the grid is ", tuple_string(n), " (expected 1 along axis ", a, ")");
        }
      }
    }
  }
  check_fields_distinct(fn, inputs, outputs);
}

}  // namespace sparstencil::impl
