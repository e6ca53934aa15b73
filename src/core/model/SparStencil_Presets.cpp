#include "SparStencil_Presets.hpp"

#include <cctype>
#include <string>

namespace sparstencil::presets {
namespace {

/// Terms of a symmetric 1-D kernel laid along `axis`, centre excluded.
template <int D>
void add_axis_arms(std::vector<Term<D>>& terms, int axis, const std::vector<double>& arm) {
  for (int d = 1; d <= static_cast<int>(arm.size()); ++d) {
    Offset<D> plus{}, minus{};
    plus[axis]  = d;
    minus[axis] = -d;
    terms.push_back({plus, arm[d - 1]});
    terms.push_back({minus, arm[d - 1]});
  }
}

/// FTCS step u + nu * L u for an axis-separable second-difference L with centre c and
/// arms (a1, a2, ...): centre 1 + D nu c, arms nu * a_k.
template <int D>
Stencil<D> ftcs_star(double nu, double centre, const std::vector<double>& arm, std::string name) {
  std::vector<Term<D>> terms{{Offset<D>{}, 1.0 + D * nu * centre}};
  std::vector<double> scaled;
  for (double a : arm) scaled.push_back(nu * a);
  for (int axis = 0; axis < D; ++axis) add_axis_arms<D>(terms, axis, scaled);
  return Stencil<D>(std::move(terms), std::move(name));
}

/// Tensor product of a 1-D kernel (indices -r..r) with itself along every axis.
template <int D>
Stencil<D> tensor_box(const std::vector<double>& kernel, std::string name) {
  const int side = static_cast<int>(kernel.size());
  const int r    = side / 2;
  int count      = 1;
  for (int a = 0; a < D; ++a) count *= side;
  std::vector<Term<D>> terms;
  for (int flat = 0; flat < count; ++flat) {
    Offset<D> o{};
    double w = 1.0;
    int rest = flat;
    for (int a = D - 1; a >= 0; --a) {
      o[a] = rest % side - r;
      w *= kernel[rest % side];
      rest /= side;
    }
    terms.push_back({o, w});
  }
  return Stencil<D>(std::move(terms), std::move(name));
}

}  // namespace

std::string canonical(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

Stencil<1> heat_1d() { return ftcs_star<1>(0.25, -2.0, {1.0}, "Heat-1D"); }
Stencil<1> d1_5p() { return ftcs_star<1>(0.25, -30.0 / 12, {16.0 / 12, -1.0 / 12}, "1D5P"); }
Stencil<2> heat_2d() { return ftcs_star<2>(0.125, -2.0, {1.0}, "Heat-2D"); }
Stencil<2> box_2d9p() { return tensor_box<2>({0.25, 0.5, 0.25}, "Box-2D9P"); }
Stencil<2> star_2d13p() { return ftcs_star<2>(0.1, -49.0 / 18, {1.5, -0.15, 1.0 / 90}, "Star-2D13P"); }
Stencil<2> box_2d49p() {
  const double b = 1.0 / 64;
  return tensor_box<2>({b, 6 * b, 15 * b, 20 * b, 15 * b, 6 * b, b}, "Box-2D49P");
}
Stencil<3> heat_3d() { return ftcs_star<3>(0.125, -2.0, {1.0}, "Heat-3D"); }
Stencil<3> box_3d27p() { return tensor_box<3>({0.25, 0.5, 0.25}, "Box-3D27P"); }

std::vector<AnyStencil> standard_set() {
  return {heat_1d(), d1_5p(), heat_2d(), box_2d9p(), star_2d13p(), box_2d49p(), heat_3d(), box_3d27p()};
}

const std::vector<std::string_view>& names() {
  static const std::vector<std::string_view> list{"heat1d",    "1d5p",     "heat2d", "box2d9p",
                                                  "star2d13p", "box2d49p", "heat3d", "box3d27p"};
  return list;
}

std::optional<AnyStencil> lookup(std::string_view name) {
  const std::string key = canonical(name);
  const auto& list      = names();
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (key == list[i]) return standard_set()[i];
  }
  return std::nullopt;
}

AnyStencil by_name(std::string_view name) {
  if (auto preset = lookup(name)) return *preset;
  std::string known;
  for (auto n : names()) known += (known.empty() ? "" : ", ") + std::string(n);
  impl::fail("presets::by_name", "unknown preset '", name, "' (known: ", known, ")");
}

}  // namespace sparstencil::presets
