// Field updates (docs/UPDATES.md) against the double reference: every face rule on every
// face, odd grids, both layouts, half/float/double; coupled fields sharing loads, a
// nonlinear pointwise function, coefficient fields and axis factors, ghost layers; and
// the errors that bad input gets.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

template <class T, class L>
struct UpdateConfig {
  using value_type = T;
  using layout     = L;
};

template <class Config>
class FieldUpdateTest : public ::testing::Test {};

using UpdateConfigs =
    ::testing::Types<UpdateConfig<float, Kokkos::LayoutRight>, UpdateConfig<double, Kokkos::LayoutLeft>,
                     UpdateConfig<Kokkos::Experimental::half_t, Kokkos::LayoutRight>,
                     UpdateConfig<float, Kokkos::LayoutLeft>, UpdateConfig<double, Kokkos::LayoutRight>,
                     UpdateConfig<Kokkos::Experimental::half_t, Kokkos::LayoutLeft>>;
TYPED_TEST_SUITE(FieldUpdateTest, UpdateConfigs);

// Pointwise functions, written once for the device (A = the accumulator type) and the
// reference (A = double); each has a magnitude form bounding its rounding errors.
struct Identity {
  template <class A>
  KOKKOS_INLINE_FUNCTION Kokkos::Array<A, 1> operator()(const Kokkos::Array<A, 1>& s,
                                                        const Kokkos::Array<A, 1>&) const {
    return s;
  }
};

/// Two fields coupled by a nonlinear term, the third result sharing the first one's input.
struct Coupled {
  template <class A>
  KOKKOS_INLINE_FUNCTION Kokkos::Array<A, 2> operator()(const Kokkos::Array<A, 3>& s,
                                                        const Kokkos::Array<A, 2>& c) const {
    return {c[0] + A(0.25) * (s[0] - c[0] * c[1] * c[1]), c[1] + A(0.25) * (s[1] + s[2] * c[0])};
  }
  static std::vector<double> magnitude(const std::vector<double>& m, const std::vector<double>& c) {
    return {c[0] + 0.25 * (m[0] + c[0] * c[1] * c[1]), c[1] + 0.25 * (m[1] + m[2] * c[0])};
  }
};

/// Reads the point it is at.
struct WithPoint {
  template <class A, std::size_t D>
  KOKKOS_INLINE_FUNCTION Kokkos::Array<A, 1> operator()(const Kokkos::Array<A, 1>& s, const Kokkos::Array<A, 1>& c,
                                                        const Kokkos::Array<int, D>& x) const {
    return {s[0] + c[0] * A(x[0] + 2 * x[D - 1]) / A(64)};
  }
};

template <int D>
struct Case {
  std::array<int, D> extents{};
  FaceConditions<D> faces;
  std::array<int, D> ghost{};  ///< of every input and output
  bool dirichlet_view[D][2] = {};
  int coefficient_fields    = 0;
  std::array<int, D> axis_factors{};
};

template <class T, class L, int D>
using DeviceGrid = GridView<T, D, L>;

template <class T, class L, int D>
DeviceGrid<T, L, D> padded_random(const std::string& label, const std::array<int, D>& extents,
                                  const std::array<int, D>& ghost, std::uint64_t seed) {
  std::array<int, D> e{};
  for (int a = 0; a < D; ++a) e[a] = extents[a] + 2 * ghost[a];
  auto v = make_view<DeviceGrid<T, L, D>>(label, e);
  fill_random<D>(v, seed);
  return v;
}

template <int D>
HostField<D> host_field(const HostGrid<D>& padded, const std::array<int, D>& ghost) {
  HostField<D> f;
  f.grid  = padded;
  f.ghost = ghost;
  return f;
}

template <int D>
ReferencePointwise<D> host_pointwise(
    std::function<std::vector<double>(const std::vector<double>&, const std::vector<double>&,
                                      const std::array<int, D>&)>
        f) {
  return f;
}

/// Runs `update` of case `c` on random fields and checks every output against the reference
/// within the precision-derived bound, and the outputs' halos untouched.
template <class T, class L, int D, int NRes, int NIn, int NOut, class F>
void check_update(const Case<D>& c, const std::array<StencilOn<D>, NRes>& results, const F& pointwise,
                  const ReferencePointwise<D>& reference, const ReferencePointwise<D>& magnitude, std::uint64_t seed,
                  int stream_rows = 16) {
  using Acc = accumulator_t<T>;
  SCOPED_TRACE("extents " + impl::tuple_string(c.extents) + ", faces " + c.faces.describe() + ", ghost " +
               impl::tuple_string(c.ghost) + ", stream rows " + std::to_string(stream_rows));
  FieldUpdate<D, NRes, T> update(results, c.faces);
  update.stream_rows(stream_rows);
  std::array<DeviceGrid<T, L, D>, NIn> in;
  std::array<DeviceGrid<T, L, D>, NOut> out;
  std::vector<HostField<D>> host_in, abs_in, expected(NOut), bound_of(NOut);
  for (int i = 0; i < NIn; ++i) {
    in[i] = padded_random<T, L, D>("in" + std::to_string(i), c.extents, c.ghost, seed + i);
    host_in.push_back(host_field<D>(to_grid<D>(in[i]), c.ghost));
    abs_in.push_back(host_field<D>(abs(host_in.back().grid), c.ghost));
  }
  std::vector<HostGrid<D>> before(NOut);
  for (int o = 0; o < NOut; ++o) {
    out[o]      = padded_random<T, L, D>("out" + std::to_string(o), c.extents, c.ghost, seed + 100 + o);
    before[o]   = to_grid<D>(out[o]);
    expected[o] = host_field<D>(before[o], c.ghost);
    bound_of[o] = expected[o];
  }
  ReferenceUpdateData<D> data, abs_data;
  std::vector<typename FieldUpdate<D, NRes, T>::FieldView> coefficient_views;
  for (int k = 0; k < c.coefficient_fields; ++k) {
    auto v = padded_random<T, L, D>("coefficient" + std::to_string(k), c.extents, {}, seed + 200 + k);
    coefficient_views.push_back(v);
    data.coefficient_fields.push_back(to_grid<D>(v));
    abs_data.coefficient_fields.push_back(abs(data.coefficient_fields.back()));
  }
  update.coefficient_fields(coefficient_views);
  for (int a = 0; a < D; ++a) {
    std::vector<typename FieldUpdate<D, NRes, T>::CoefficientView> factors;
    for (int k = 0; k < c.axis_factors[a]; ++k) {
      auto v = padded_random<T, L, 1>("factor", {c.extents[a]}, {}, seed + 300 + 10 * a + k);
      factors.push_back(v);
      const HostGrid<1> g = to_grid<1>(v);
      data.axis_factors[a].push_back(g.values);
      abs_data.axis_factors[a].push_back(abs(g).values);
    }
    update.axis_factors(a, factors);
    for (int s = 0; s < 2; ++s) {
      if (!c.dirichlet_view[a][s]) continue;
      std::array<int, D> e = c.extents;
      e[a]                 = 1;
      auto v               = padded_random<T, L, D>("dirichlet", e, {}, seed + 400 + 2 * a + s);
      update.dirichlet_values(a, s, v);
      data.dirichlet_values[a][s]     = to_grid<D>(v);
      abs_data.dirichlet_values[a][s] = abs(to_grid<D>(v));
    }
  }
  std::array<StencilOn<D>, NRes> abs_results = results;
  for (int k = 0; k < NRes; ++k) {
    StencilOn<D> s(abs_weights(results[k].stencil()), results[k].input());
    for (std::size_t t = 0; t < s.stencil().size(); ++t) {
      const Coefficient<D>& co = results[k].coefficients()[t];
      if (co.field >= 0) s.term_times_field(s.stencil().terms()[t].offset, co.field);
      for (int a = 0; a < D; ++a) {
        if (co.axis_factor[a] >= 0) s.term_times_axis_factor(s.stencil().terms()[t].offset, a, co.axis_factor[a]);
      }
    }
    abs_results[k] = s;
  }
  FaceConditions<D> abs_faces = c.faces;
  for (int a = 0; a < D; ++a) {
    for (int s = 0; s < 2; ++s) {
      FaceCondition f = c.faces.face(a, s);
      f.value         = std::fabs(f.value);
      abs_faces.set(a, s, f);
    }
  }

  auto in_list  = std::apply([&](const auto&... v) { return fields(with_ghosts(v, c.ghost)...); }, in);
  auto out_list = std::apply([&](const auto&... v) { return fields(with_ghosts(v, c.ghost)...); }, out);
  update.run(Kokkos::DefaultExecutionSpace(), in_list, out_list, pointwise);
  Kokkos::fence();

  UpdateShape<D> shape, abs_shape;
  shape.results.assign(results.begin(), results.end());
  abs_shape.results.assign(abs_results.begin(), abs_results.end());
  reference_update(shape, c.faces, data, host_in, expected, reference);
  reference_update(abs_shape, abs_faces, abs_data, abs_in, bound_of, magnitude);
  std::size_t terms = 1;
  for (const auto& r : results) terms = std::max(terms, r.stencil().size());
  const double factor = (static_cast<double>(terms) + 8.0) * unit_roundoff<Acc>();
  for (int o = 0; o < NOut; ++o) {
    const HostGrid<D> got = to_grid<D>(out[o]);
    std::size_t failures  = 0;
    for (std::size_t flat = 0; flat < got.values.size(); ++flat) {
      std::array<int, D> x = got.point(flat);
      bool halo            = false;
      for (int a = 0; a < D; ++a) halo = halo || x[a] < c.ghost[a] || x[a] >= c.extents[a] + c.ghost[a];
      if (halo) {
        if (got.values[flat] != before[o].values[flat] && failures++ < 5) {
          ADD_FAILURE() << "output " << o << " halo point " << impl::tuple_string(x) << " changed";
        }
        continue;
      }
      const double want  = expected[o].grid.values[flat];
      const double bound = factor * bound_of[o].grid.values[flat] + 2.0 * unit_roundoff<T>() * std::fabs(want);
      if (!(std::fabs(got.values[flat] - want) <= bound) && failures++ < 5) {
        ADD_FAILURE() << "output " << o << " at " << impl::tuple_string(x) << ": got " << got.values[flat]
                      << ", expected " << want << " (bound " << bound << ")";
      }
    }
    EXPECT_EQ(failures, 0u) << "output " << o;
  }
}

template <int D>
FaceCondition random_face(std::mt19937_64& rng, bool allow_ghost) {
  std::uniform_int_distribution<int> pick(0, allow_ghost ? 4 : 3);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  switch (pick(rng)) {
    case 0: return FaceCondition::neumann();
    case 1: return FaceCondition::reflect();
    case 2:
    case 3: return FaceCondition::dirichlet(value(rng));
    default: return FaceCondition::ghost();
  }
}

/// Random faces per axis (periodic, or each side its own rule), dirichlet faces half the
/// time from a View, ghost layers where a face needs them (sometimes wider).
template <int D>
Case<D> random_case(std::mt19937_64& rng, const std::array<int, D>& radius, bool allow_ghost = true) {
  Case<D> c;
  std::uniform_int_distribution<int> extra(0, D == 3 ? 4 : 9);
  std::bernoulli_distribution coin(0.5);
  for (int a = 0; a < D; ++a) {
    c.extents[a] = radius[a] + 1 + extra(rng) | 1;  // odd
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
      c.faces.set(a, FaceCondition::periodic());
    } else {
      for (int s = 0; s < 2; ++s) {
        const FaceCondition f = random_face<D>(rng, allow_ghost);
        c.faces.set(a, s, f);
        c.dirichlet_view[a][s] = f.rule == FaceRule::dirichlet && coin(rng);
      }
    }
    if (c.faces.face(a, 0).rule == FaceRule::ghost || c.faces.face(a, 1).rule == FaceRule::ghost) {
      c.ghost[a] = radius[a] + (coin(rng) ? 1 : 0);
    }
  }
  return c;
}

template <class T, class L, int D>
void random_single_field_cases(int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int n = 0; n < count; ++n) {
    const Stencil<D> stencil = random_stencil<D>(rng, 1 + n % 2);
    const Case<D> c          = random_case<D>(rng, stencil.radius());
    SCOPED_TRACE("case " + std::to_string(n) + ", " + std::to_string(stencil.size()) + " terms");
    const auto identity = [](const std::vector<double>& s, const std::vector<double>&, const std::array<int, D>&) {
      return s;
    };
    check_update<T, L, D, 1, 1, 1>(c, {StencilOn<D>(stencil, 0)}, Identity{}, identity, identity, seed + 1000 * n);
  }
}

TYPED_TEST(FieldUpdateTest, EveryFaceRuleOnRandomStencils) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  random_single_field_cases<T, L, 1>(24, 11);
  random_single_field_cases<T, L, 2>(24, 12);
  random_single_field_cases<T, L, 3>(10, 13);
}

TYPED_TEST(FieldUpdateTest, EveryRuleOnEveryFaceOfPresets) {
  using T             = typename TypeParam::value_type;
  using L             = typename TypeParam::layout;
  const auto identity = [](const std::vector<double>& s, const std::vector<double>&, const std::array<int, 2>&) {
    return s;
  };
  const FaceCondition rules[] = {FaceCondition::neumann(), FaceCondition::reflect(), FaceCondition::dirichlet(0.75),
                                 FaceCondition::ghost()};
  for (const Stencil<2>& s : {presets::heat_2d(), presets::box_2d9p(), presets::star_2d13p()}) {
    for (int a = 0; a < 2; ++a) {
      for (int side = 0; side < 2; ++side) {
        for (const FaceCondition& rule : rules) {
          Case<2> c;
          c.extents = {2 * s.radius()[0] + 6, 2 * s.radius()[1] + 4};  // odd and even
          c.faces   = FaceConditions<2>(FaceCondition::neumann());
          c.faces.set(a, side, rule);
          if (rule.rule == FaceRule::ghost) c.ghost[a] = s.radius()[a];
          check_update<T, L, 2, 1, 1, 1>(c, {StencilOn<2>(s, 0)}, Identity{}, identity, identity, 7 + a + side);
        }
      }
    }
    Case<2> periodic;
    periodic.extents = {2 * s.radius()[0] + 5, 2 * s.radius()[1] + 7};
    check_update<T, L, 2, 1, 1, 1>(periodic, {StencilOn<2>(s, 0)}, Identity{}, identity, identity, 99);
  }
}

/// Slabs as thin as each rule allows: r points across under wrapped and half-cell mirrored
/// faces (a one-cell slab under radius-1 neumann faces), r + 1 under reflect, along every
/// axis.
TYPED_TEST(FieldUpdateTest, SlabsAsThinAsTheFaceRulesAllow) {
  using T             = typename TypeParam::value_type;
  using L             = typename TypeParam::layout;
  const auto identity = [](const std::vector<double>& s, const std::vector<double>&, const std::array<int, 3>&) {
    return s;
  };
  const Stencil<3> star_r2({{{0, 0, 0}, -2.0},
                            {{-2, 0, 0}, 0.5},
                            {{2, 0, 0}, 0.5},
                            {{0, -1, 0}, 0.75},
                            {{0, 1, 0}, 0.25},
                            {{0, 0, -1}, 0.5},
                            {{0, 0, 2}, 0.5}},
                           "uneven star");
  for (const Stencil<3>& s : {presets::heat_3d(), presets::box_3d27p(), star_r2}) {
    for (const FaceCondition& rule : {FaceCondition::neumann(), FaceCondition::periodic(), FaceCondition::reflect()}) {
      for (int a = 0; a < 3; ++a) {
        Case<3> c;
        c.extents    = {7, 6, 9};
        c.extents[a] = s.radius()[a] + (rule.rule == FaceRule::reflect ? 1 : 0);
        if (c.extents[a] == 0) continue;  // no reach along this axis
        c.faces = FaceConditions<3>(rule);
        SCOPED_TRACE(s.name() + " under " + c.faces.describe() + ", axis " + std::to_string(a));
        check_update<T, L, 3, 1, 1, 1>(c, {StencilOn<3>(s, 0)}, Identity{}, identity, identity, 70 + a);
      }
    }
  }
}

/// The streaming pass (inside points walked along the slowest axis, the frame around them
/// point by point) for every window it has and stencils past them, walks of every length
/// against the grid's rows (0: no streaming), odd extents, ghost faces among the rules.
template <class T, class L>
void streaming_cases() {
  std::mt19937_64 rng(41);
  const auto identity2 = [](const std::vector<double>& s, const std::vector<double>&, const std::array<int, 2>&) {
    return s;
  };
  const auto identity3 = [](const std::vector<double>& s, const std::vector<double>&, const std::array<int, 3>&) {
    return s;
  };
  // Stencils along one axis: no reach along the other, the window's is 1 all the same.
  const Stencil<2> along_0({{{-1, 0}, 0.25}, {{0, 0}, 0.5}, {{1, 0}, 0.25}}, "along axis 0");
  const Stencil<2> along_1({{{0, -1}, 0.25}, {{0, 0}, 0.5}, {{0, 1}, 0.25}}, "along axis 1");
  // A radius-2 star (the 5 x 2 star window) and a 3 x 5 box (5 x 1 along one layout's
  // streaming axis, 3 x 2 along the other's).
  const Stencil<2> star_9p({{{0, 0}, -5.0},
                            {{-1, 0}, 1.0},
                            {{1, 0}, 1.0},
                            {{0, -1}, 1.0},
                            {{0, 1}, 1.0},
                            {{-2, 0}, 0.25},
                            {{2, 0}, 0.25},
                            {{0, -2}, 0.25},
                            {{0, 2}, 0.25}},
                           "star 9 points");
  std::vector<Term<2>> wide;
  for (int i = -1; i <= 1; ++i) {
    for (int j = -2; j <= 2; ++j) wide.push_back({{i, j}, 0.1 + 0.01 * (5 * i + j)});
  }
  const Stencil<2> box_3x5(wide, "box 3 x 5");
  std::vector<Stencil<2>> planar = {presets::heat_2d(),
                                    presets::box_2d9p(),
                                    presets::star_2d13p(),
                                    presets::box_2d49p(),
                                    along_0,
                                    along_1,
                                    star_9p,
                                    box_3x5};
  for (int k = 0; k < 4; ++k) planar.push_back(random_stencil<2>(rng, 1 + k % 2));
  std::vector<Stencil<3>> solid = {presets::heat_3d(), presets::box_3d27p(), random_stencil<3>(rng, 1)};
  for (const int rows : {1, 2, 3, 5, 16, 0, std::numeric_limits<int>::max()}) {
    for (const Stencil<2>& s : planar) {
      Case<2> c = random_case<2>(rng, s.radius());
      c.extents = {2 * s.radius()[0] + 19, 2 * s.radius()[1] + 14};
      SCOPED_TRACE(s.name());
      const std::uint64_t seed = 50 + static_cast<std::uint64_t>(rows);
      check_update<T, L, 2, 1, 1, 1>(c, {StencilOn<2>(s, 0)}, Identity{}, identity2, identity2, seed, rows);
    }
    for (const Stencil<3>& s : solid) {
      Case<3> c = random_case<3>(rng, s.radius());
      c.extents = {2 * s.radius()[0] + 7, 2 * s.radius()[1] + 4, 2 * s.radius()[2] + 9};
      SCOPED_TRACE(s.name());
      const std::uint64_t seed = 60 + static_cast<std::uint64_t>(rows);
      check_update<T, L, 3, 1, 1, 1>(c, {StencilOn<3>(s, 0)}, Identity{}, identity3, identity3, seed, rows);
    }
  }
}

TYPED_TEST(FieldUpdateTest, StreamingPassForEveryWindowAndWalkLength) {
  streaming_cases<typename TypeParam::value_type, typename TypeParam::layout>();
}

template <class T, class L, int D>
void coupled_cases(int count, std::uint64_t seed, bool coefficients) {
  std::mt19937_64 rng(seed);
  const auto reference = [](const std::vector<double>& s, const std::vector<double>& c, const std::array<int, D>&) {
    Kokkos::Array<double, 3> r{s[0], s[1], s[2]};
    const auto o = Coupled{}(r, Kokkos::Array<double, 2>{c[0], c[1]});
    return std::vector<double>{o[0], o[1]};
  };
  const auto magnitude = [](const std::vector<double>& s, const std::vector<double>& c, const std::array<int, D>&) {
    return Coupled::magnitude(s, c);
  };
  for (int n = 0; n < count; ++n) {
    const Stencil<D> a = random_stencil<D>(rng, 1 + n % 2), b = random_stencil<D>(rng, 1),
                     shared             = random_stencil<D>(rng, 1);
    std::array<StencilOn<D>, 3> results = {StencilOn<D>(a, 0), StencilOn<D>(b, 1), StencilOn<D>(shared, 0)};
    std::array<int, D> radius{};
    for (int x = 0; x < D; ++x) radius[x] = std::max({a.radius()[x], b.radius()[x], shared.radius()[x]});
    Case<D> c = random_case<D>(rng, radius);
    if (coefficients) {
      // Every term of result 0 times field 0; one term of result 1 times field 1 and
      // every term of it times a factor along axis 0; result 2 times factors on the last axis.
      results[0].times_field(0);
      results[1].term_times_field(b.terms().front().offset, 1).times_axis_factor(0, 0);
      results[2].times_axis_factor(D - 1, n % 2);
      c.coefficient_fields  = 2;
      c.axis_factors[0]     = std::max(c.axis_factors[0], 1);
      c.axis_factors[D - 1] = std::max(c.axis_factors[D - 1], 2);
    }
    SCOPED_TRACE("coupled case " + std::to_string(n));
    check_update<T, L, D, 3, 2, 2>(c, results, Coupled{}, reference, magnitude, seed + 1000 * n);
  }
}

TYPED_TEST(FieldUpdateTest, CoupledFieldsWithANonlinearUpdate) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  coupled_cases<T, L, 1>(8, 21, false);
  coupled_cases<T, L, 2>(12, 22, false);
  coupled_cases<T, L, 3>(6, 23, false);
}

TYPED_TEST(FieldUpdateTest, CoefficientFieldsAndAxisFactors) {
  using T = typename TypeParam::value_type;
  using L = typename TypeParam::layout;
  coupled_cases<T, L, 1>(8, 31, true);
  coupled_cases<T, L, 2>(12, 32, true);
  coupled_cases<T, L, 3>(6, 33, true);
}

template <class T, class L>
void with_point_case() {
  const Stencil<2> s = presets::box_2d9p();
  Case<2> c;
  c.extents            = {13, 21};
  c.faces              = FaceConditions<2>(FaceCondition::reflect());
  const auto reference = [](const std::vector<double>& r, const std::vector<double>& ce, const std::array<int, 2>& x) {
    return std::vector<double>{r[0] + ce[0] * (x[0] + 2 * x[1]) / 64.0};
  };
  const auto magnitude = [](const std::vector<double>& r, const std::vector<double>& ce, const std::array<int, 2>& x) {
    return std::vector<double>{r[0] + ce[0] * (x[0] + 2 * x[1]) / 64.0};
  };
  check_update<T, L, 2, 1, 1, 1>(c, {StencilOn<2>(s, 0)}, WithPoint{}, reference, magnitude, 41);
}

TYPED_TEST(FieldUpdateTest, PointwiseFunctionSeesThePoint) {
  with_point_case<typename TypeParam::value_type, typename TypeParam::layout>();
}

/// sparstencil::apply with face conditions equals the update it stands for, and a plain
/// View works where no face reads a halo.
template <class T, class L>
void apply_case() {
  using View                    = DeviceGrid<T, L, 2>;
  const Stencil<2> s            = presets::heat_2d();
  const FaceConditions<2> faces = FaceConditions<2>(FaceCondition::neumann())
                                      .set(1, 1, FaceCondition::dirichlet(0.5))
                                      .set(1, 0, FaceCondition::reflect());
  View in = padded_random<T, L, 2>("in", {17, 11}, {}, 5), out("out", 17, 11);
  apply(Kokkos::DefaultExecutionSpace(), in, out, s, faces);
  Kokkos::fence();
  UpdateShape<2> shape;
  shape.results.push_back(StencilOn<2>(s, 0));
  std::vector<HostField<2>> expected{HostField<2>({17, 11})};
  reference_update(
      shape, faces, {}, {host_field<2>(to_grid<2>(in), {})}, expected,
      [](const std::vector<double>& r, const std::vector<double>&, const std::array<int, 2>&) { return r; });
  const HostGrid<2> got = to_grid<2>(out);
  for (std::size_t i = 0; i < got.values.size(); ++i) {
    EXPECT_NEAR(got.values[i], expected[0].grid.values[i],
                8 * unit_roundoff<accumulator_t<T>>() * 2 + 2 * unit_roundoff<T>())
        << impl::tuple_string(got.point(i));
  }
}

TYPED_TEST(FieldUpdateTest, ApplyWithFaceConditions) {
  apply_case<typename TypeParam::value_type, typename TypeParam::layout>();
}

// What the rules mean, checked without the reference: zero-gradient walls conserve what a
// conservative diffusion stencil moves; a dirichlet face is the value outside the grid.
TEST(FieldUpdate, NeumannWallsConserveTheSumUnderDiffusion) {
  using View            = GridView<double, 2>;
  View u                = padded_random<double, Kokkos::LayoutRight, 2>("u", {31, 19}, {}, 3), v("v", 31, 19);
  const Stencil<2> heat = presets::heat_2d();
  apply(Kokkos::DefaultExecutionSpace(), u, v, heat, FaceConditions<2>(FaceCondition::neumann()));
  Kokkos::fence();
  double before = 0, after = 0;
  for (double x : to_grid<2>(u).values) before += x;
  for (double x : to_grid<2>(v).values) after += x;
  EXPECT_NEAR(after, before, 1e-12);
  // Heat-2D's weights sum to 1 and move mass between neighbours: reflect walls do not conserve.
  apply(Kokkos::DefaultExecutionSpace(), u, v, heat, FaceConditions<2>(FaceCondition::reflect()));
  Kokkos::fence();
  after = 0;
  for (double x : to_grid<2>(v).values) after += x;
  EXPECT_GT(std::fabs(after - before), 1e-6);
}

TEST(FieldUpdate, DirichletFaceIsTheValueOutside) {
  using View = GridView<double, 1>;
  View u     = padded_random<double, Kokkos::LayoutRight, 1>("u", {9}, {}, 4), v("v", 9);
  const Stencil<1> s({{{-1}, 0.25}, {{0}, 0.5}, {{1}, 0.125}});
  apply(Kokkos::DefaultExecutionSpace(), u, v, s,
        FaceConditions<1>().set(0, 0, FaceCondition::dirichlet(3.0)).set(0, 1, FaceCondition::dirichlet(-2.0)));
  Kokkos::fence();
  const HostGrid<1> in = to_grid<1>(u), out = to_grid<1>(v);
  EXPECT_DOUBLE_EQ(out.values[0], 0.25 * 3.0 + 0.5 * in.values[0] + 0.125 * in.values[1]);
  EXPECT_DOUBLE_EQ(out.values[8], 0.25 * in.values[7] + 0.5 * in.values[8] + 0.125 * -2.0);
  EXPECT_DOUBLE_EQ(out.values[4], 0.25 * in.values[3] + 0.5 * in.values[4] + 0.125 * in.values[5]);
}

// Bad input: an error naming the problem.
template <class F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

struct Average {
  template <class A>
  KOKKOS_INLINE_FUNCTION Kokkos::Array<A, 1> operator()(const Kokkos::Array<A, 1>& s,
                                                        const Kokkos::Array<A, 2>& c) const {
    return {s[0] + c[1]};
  }
};

struct Twice {
  KOKKOS_INLINE_FUNCTION Kokkos::Array<float, 2> operator()(const Kokkos::Array<float, 1>& s,
                                                            const Kokkos::Array<float, 1>&) const {
    return {s[0], s[0]};
  }
};

struct TimesFour {
  KOKKOS_INLINE_FUNCTION Kokkos::Array<float, 1> operator()(const Kokkos::Array<float, 1>& s,
                                                            const Kokkos::Array<float, 1>&) const {
    return {s[0] * 4.0f};
  }
};

TEST(FieldUpdate, BadInputIsNamed) {
  using View            = GridView<float, 2>;
  const Stencil<2> heat = presets::heat_2d();
  const Stencil<2> wide = presets::star_2d13p();
  View u("u", 15, 13), v("v", 15, 13), w("w", 15, 13), small("small", 15, 12), padded("padded", 17, 15);
  Kokkos::deep_copy(u, 1.0f);
  Kokkos::deep_copy(v, 1.0f);
  Kokkos::deep_copy(padded, 1.0f);
  const Kokkos::DefaultExecutionSpace space;
  const FaceConditions<2> neumann(FaceCondition::neumann());

  // A coefficient field of the wrong extents.
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(heat, 0).times_field(0)}, neumann);
        up.coefficient_fields(small);
        up.run(space, fields(u), fields(w), Identity{});
      },
      "coefficient field 0 ('small') has extents (15,12) but the grid is (15,13)");
  // A coefficient named but not given.
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(heat, 0).times_field(1)}, neumann);
        up.coefficient_fields(u);
        up.run(space, fields(v), fields(w), Identity{});
      },
      "uses coefficient field 1 but the update has 1 coefficient field");
  // An axis factor of the wrong length.
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(heat, 0).times_axis_factor(1, 0)}, neumann);
        up.axis_factors(1, Kokkos::View<float*>("f", 15));
        up.run(space, fields(u), fields(w), Identity{});
      },
      "axis factor 0 of axis 1 ('f') has 15 values but the grid has 13 points along axis 1");
  // Ghost layers thinner than the radius at a ghost face.
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(wide, 0)}, FaceConditions<2>(FaceCondition::ghost()));
        up.run(space, fields(with_ghosts(padded, 1)), fields(w), Identity{});
      },
      "input 0 ('padded') has 1 ghost layer(s) along axis 0, fewer than the stencils' radius 3");
  // A ghost face on a View without a halo.
  expect_error(
      [&] { apply(space, u, w, heat, FaceConditions<2>(FaceCondition::neumann()).set(1, 0, FaceCondition::ghost())); },
      "has 0 ghost layer(s) along axis 1");
  // One periodic face.
  expect_error(
      [&] {
        FieldUpdate<2, 1, float>({StencilOn<2>(heat, 0)},
                                 FaceConditions<2>(FaceCondition::neumann()).set(0, 1, FaceCondition::periodic()));
      },
      "axis 0 has a periodic face and a neumann face");
  // Fields of different grids, an output that is an input, outputs that share memory.
  expect_error([&] { apply(space, u, small, heat, neumann); },
               "input 0 ('u') has grid extents (15,13) but output 0 has (15,12)");
  expect_error([&] { apply(space, u, u, heat, neumann); }, "output 0 ('u') and input 0 ('u') share memory");
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(heat, 0)}, neumann);
        up.run(space, fields(u), fields(w, w), Twice{});
      },
      "outputs 0 ('w') and 1 ('w') share memory");
  // A result reading an input the update is not given.
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(heat, 1)}, neumann);
        up.run(space, fields(u), fields(w), Identity{});
      },
      "stencil result 0 ('Heat-2D') reads input 1 but the update has 1 input field");
  // Dirichlet values: on a face that is not dirichlet, or of the wrong extents.
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(heat, 0)}, neumann);
        up.dirichlet_values(0, 1, View("d", 1, 13));
      },
      "face (axis 0, side 1) is neumann, not dirichlet");
  expect_error(
      [&] {
        FieldUpdate<2, 1, float> up({StencilOn<2>(heat, 0)}, FaceConditions<2>(FaceCondition::dirichlet()));
        up.dirichlet_values(0, 1, View("d", 1, 12));
        up.run(space, fields(u), fields(w), Identity{});
      },
      "the dirichlet values of face (axis 0, side 1) have extents (1,12) but the grid is (15,13)");
  // A grid too small for a mirrored read, a face that does not exist, a term not in the stencil.
  expect_error([&] { apply(space, View("a", 2, 13), View("b", 2, 13), wide, neumann); },
               "extent 2 along axis 0 is too small for the stencils' radius 3");
  expect_error([&] { FaceConditions<2>().set(2, FaceCondition::neumann()); },
               "face (axis 2, side 0) does not exist in 2-D");
  expect_error([&] { StencilOn<2>(heat, 0).term_times_field({2, 2}, 0); }, "has no term at offset (2,2)");
  expect_error([&] { with_ghosts(u, 7); }, "ghost width 7 along axis 1 does not fit View 'u' of extents (15,13)");
  expect_error(
      [&] {
        FieldUpdate<2, 1, float>({StencilOn<2>(heat, 0)}, FaceConditions<2>(FaceCondition::dirichlet(std::nan(""))));
      },
      "is not finite");
  expect_error([&] { FieldUpdate<2, 1, float>({StencilOn<2>(heat, 0)}, neumann).stream_rows(-1); },
               "rows -1 is negative (0 turns the streaming pass off)");
  // A null output or input View: named as such, not as an extent mismatch.
  expect_error([&] { apply(space, u, View(), heat, neumann); }, "output 0 ('') holds no data");
  expect_error([&] { apply(space, View(), w, heat, neumann); }, "input 0 ('') holds no data");
  // Fields interleaved in one allocation share no element: accepted.
  Kokkos::View<float***, Kokkos::LayoutRight> packed("packed", 15, 13, 2);
  Kokkos::deep_copy(packed, 1.0f);
  apply(space, Kokkos::subview(packed, Kokkos::ALL, Kokkos::ALL, 0),
        Kokkos::subview(packed, Kokkos::ALL, Kokkos::ALL, 1), heat, neumann);
  Kokkos::fence();
  // Two inputs, one pointwise function using both centres: runs.
  FieldUpdate<2, 1, float> two({StencilOn<2>(heat, 0)}, neumann);
  two.run(space, fields(u, v), fields(w), Average{});
  Kokkos::fence();
  EXPECT_FLOAT_EQ(to_grid<2>(w)(std::array<int, 2>{3, 4}), 2.0f);
}

// Separate buffers placed side by side in memory, a ghosted input of a larger padded shape
// and a plain output of other strides, in either order: no shared element, so the update
// runs (and the result is the one of separate allocations); a buffer overlapping the
// other by one element is refused.
TEST(FieldUpdate, AdjacentBuffersAreNotMistakenForShared) {
  using Unmanaged = Kokkos::View<float**, Kokkos::LayoutRight, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int n0 = 9, n1 = 7, in_size = (n0 + 2) * (n1 + 2), out_size = n0 * n1;
  const Stencil<2> heat = presets::heat_2d();
  const FaceConditions<2> ghost_faces(FaceCondition::ghost());
  const Kokkos::DefaultExecutionSpace space;
  Kokkos::View<float**, Kokkos::LayoutRight> padded_copy("padded_copy", n0 + 2, n1 + 2), expected("expected", n0, n1);
  fill_random<2>(padded_copy, 71);
  apply(space, with_ghosts(padded_copy, 1), expected, heat, ghost_faces);
  for (bool output_first : {true, false}) {
    Kokkos::View<float*> buffer("buffer", in_size + out_size);
    float* base = buffer.data();
    Unmanaged in(output_first ? base + out_size : base, n0 + 2, n1 + 2);
    Unmanaged out(output_first ? base : base + in_size, n0, n1);
    Kokkos::deep_copy(in, padded_copy);
    apply(space, with_ghosts(in, 1), out, heat, ghost_faces);
    space.fence();
    EXPECT_EQ(to_grid<2>(out).values, to_grid<2>(expected).values) << (output_first ? "output first" : "input first");
    // One element further: the output's last element is the input's first.
    if (output_first) {
      Unmanaged touching(base + 1, n0, n1);
      expect_error([&] { apply(space, with_ghosts(in, 1), touching, heat, ghost_faces); }, "share memory");
    }
  }
}

/// half_t outputs past half's range are an error naming the output; where half_t is float
/// (host builds), a NaN is.
TEST(FieldUpdate, HalfOverflowIsAnError) {
  using H = Kokkos::Experimental::half_t;
  GridView<H, 2> u("u", 9, 9), w("w", 9, 9);
  Kokkos::deep_copy(u, has_distinct_half ? H(60000.0f) : H(std::nanf("")));
  FieldUpdate<2, 1, H> up({StencilOn<2>(presets::heat_2d(), 0)}, FaceConditions<2>(FaceCondition::neumann()));
  expect_error([&] { up.run(Kokkos::DefaultExecutionSpace(), fields(u), fields(w), TimesFour{}); },
               "half_t output 0 ('w') received a value that is not finite");
}

}  // namespace
}  // namespace sparstencil::test
