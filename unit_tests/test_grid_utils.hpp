#pragma once
// Test helpers that need no Kokkos (the CUDA executor's tests use them too): random
// grids and stencils (never zeros), the expected result of a plan with its precision-
// derived error bound, and the comparison.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include "SparStencil_Backends.hpp"
#include "SparStencil_CudaSptcModel.hpp"
#include "SparStencil_Emulator.hpp"
#include "SparStencil_Reference.hpp"
#include "SparStencil_RowRuns.hpp"

namespace sparstencil::test {

template <int D, class F>
void for_each_point(const std::array<int, D>& extents, F&& f) {
  const HostGrid<D> shape(extents);
  for (std::size_t flat = 0; flat < shape.values.size(); ++flat) f(shape.point(flat));
}

template <int D>
HostGrid<D> abs(HostGrid<D> g) {
  for (double& v : g.values) v = std::fabs(v);
  return g;
}

/// The stencil with |w| for every weight: applied to |in| it bounds the terms' magnitude.
template <int D>
Stencil<D> abs_weights(const Stencil<D>& s) {
  std::vector<Term<D>> terms = s.terms();
  for (Term<D>& t : terms) t.weight = std::fabs(t.weight);
  return Stencil<D>(terms, s.name());
}

/// Points to compare: all of them, or those at least `margin[a]` from both ends.
template <int D>
bool inside(const std::array<int, D>& extents, const std::array<int, D>& margin, const std::array<int, D>& i) {
  for (int a = 0; a < D; ++a) {
    if (i[a] < margin[a] || i[a] >= extents[a] - margin[a]) return false;
  }
  return true;
}

/// |got - expected| <= factor * magnitude at every point inside `margin` (docs/PRECISION.md).
template <int D>
::testing::AssertionResult within_bound(const HostGrid<D>& got, const HostGrid<D>& expected,
                                        const HostGrid<D>& magnitude, double factor,
                                        typename HostGrid<D>::index_type margin = {}) {
  std::size_t failures = 0, compared = 0;
  std::ostringstream detail;
  for (std::size_t flat = 0; flat < got.values.size(); ++flat) {
    if (!inside<D>(got.extents, margin, got.point(flat))) continue;
    ++compared;
    const double error = std::fabs(got.values[flat] - expected.values[flat]);
    const double bound = factor * magnitude.values[flat];
    if (!(error <= bound)) {
      if (failures < 5) {
        detail << "\n  at " << impl::tuple_string(got.point(flat)) << ": got " << got.values[flat] << ", expected "
               << expected.values[flat] << ", error " << error << " > bound " << bound;
      }
      ++failures;
    }
  }
  if (compared == 0) return ::testing::AssertionFailure() << "no point was compared";
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " of " << compared << " points outside the bound" << detail.str();
}

/// A random stencil: 1 to 12 distinct offsets (at most as many as exist) within `radius` on every axis (always
/// reaching it on axis 0), weights uniform in [-1, 1] scaled so that sum |w| = 1.
template <int D>
Stencil<D> random_stencil(std::mt19937_64& rng, int radius) {
  std::uniform_int_distribution<int> coordinate(-radius, radius);
  std::uniform_int_distribution<int> count(1, 12);
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  std::map<Offset<D>, double> terms;
  Offset<D> reach{};
  reach[0]     = std::bernoulli_distribution(0.5)(rng) ? radius : -radius;
  terms[reach] = weight(rng);
  int possible = 1;  // distinct offsets within the radius
  for (int a = 0; a < D; ++a) possible *= 2 * radius + 1;
  const int n = std::min(count(rng), possible);
  while (static_cast<int>(terms.size()) < n) {
    Offset<D> o;
    for (int a = 0; a < D; ++a) o[a] = coordinate(rng);
    terms[o] = weight(rng);
  }
  double total = 0;
  for (auto& [o, w] : terms) total += std::fabs(w);
  std::vector<Term<D>> list;
  for (auto& [o, w] : terms) list.push_back({o, w / total});
  return Stencil<D>(list, "random");
}

/// Every offset within `radius` on every axis (a full box), weights uniform in [-1, 1]
/// scaled so that sum |w| = 1.
template <int D>
Stencil<D> random_box(std::mt19937_64& rng, int radius) {
  std::uniform_real_distribution<double> weight(-1.0, 1.0);
  std::vector<Term<D>> terms;
  Offset<D> o{};
  o.fill(-radius);
  double total = 0;
  for (;;) {
    terms.push_back({o, weight(rng)});
    total += std::fabs(terms.back().weight);
    int a = D - 1;
    while (a >= 0 && o[a] == radius) o[a--] = -radius;
    if (a < 0) break;
    ++o[a];
  }
  for (Term<D>& t : terms) t.weight /= total;
  return Stencil<D>(terms, "box");
}

/// Grid values in [0.25, 1] with random sign, already representable in the storage format.
template <int D>
HostGrid<D> random_grid(const std::array<int, D>& extents, Precision p, std::uint64_t seed) {
  HostGrid<D> g(extents);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> magnitude(0.25, 1.0);
  std::bernoulli_distribution negative(0.5);
  for (double& v : g.values) {
    const double m = magnitude(rng);
    v              = p == Precision::tf32 ? static_cast<float>(negative(rng) ? -m : m)
                                          : cuda_sptc::emulation::stored_value(p, static_cast<float>(negative(rng) ? -m : m));
  }
  return g;
}

inline constexpr Precision sparse_precisions[] = {Precision::f16, Precision::bf16, Precision::tf32};
inline constexpr Boundary all_boundaries[]     = {Boundary::interior, Boundary::periodic, Boundary::fixed_rim};

/// Odd extents small enough for host emulation of every tile.
template <int D>
std::array<int, D> small_grid() {
  if constexpr (D == 1) return {157};
  else if constexpr (D == 2) return {19, 37};
  else return {11, 13, 17};
}

template <int D>
std::vector<int> radius_vector(const Stencil<D>& s) {
  return std::vector<int>(s.radius().begin(), s.radius().end());
}

template <int D>
typename Stencil<D>::index_type tile_of(const std::vector<int>& tile) {
  typename Stencil<D>::index_type t{};
  std::copy(tile.begin(), tile.end(), t.begin());
  return t;
}

/// A planning request for `stencil` on `grid` (the small grid unless given).
template <int D>
PlanRequest request_for(const Stencil<D>& s, Precision p, Boundary b, int steps = 1,
                        const std::array<int, D>& grid = small_grid<D>()) {
  PlanRequest r;
  r.stencil = s;
  r.grid.assign(grid.begin(), grid.end());
  r.precision = p;
  r.boundary  = b;
  r.steps     = steps;
  return r;
}

/// What a plan must produce from `in` over an output that held `before`: the double
/// reference of its original stencil (fused_steps steps), the allowed error per point
/// (docs/PRECISION.md: factor x sum |w||in| + floor; t single steps' in the band along
/// the walls where a fused sparse plan steps it), and the margin from the rim outside
/// which fused dense plans with non-periodic boundaries are exact.
template <int D>
struct SparseExpectation {
  HostGrid<D> expected, slack;
  std::array<int, D> margin{};
};

template <int D>
SparseExpectation<D> sparse_expectation(const Plan& plan, const HostGrid<D>& in, const HostGrid<D>& before) {
  const Stencil<D>& original = as<D>(plan.original);
  const Stencil<D>& applied  = as<D>(plan.stencil);
  SparseExpectation<D> e;
  e.expected = before;
  HostGrid<D> magnitude;
  if (plan.fused_steps == 1) {
    magnitude = abs(before);
    reference_apply(original, in, e.expected, plan.boundary);
    reference_apply(abs_weights(original), abs(in), magnitude, plan.boundary);
  } else {
    e.expected = reference_iterate(original, in, plan.fused_steps, plan.boundary);
    magnitude  = reference_iterate(abs_weights(original), abs(in), plan.fused_steps, plan.boundary);
  }
  const ErrorBound bound = matrix_step_error_bound(plan.precision, applied.size(), plan.float_grids);
  e.slack                = magnitude;
  for (double& v : e.slack.values) v = bound.factor * v + bound.floor;
  if (!plan.fusion_exact_everywhere()) {
    e.margin = applied.radius();
  } else if (plan.backend == "cuda_sptc" && plan.boundary != Boundary::periodic) {
    // The band along each wall runs t single steps (the sparse executor's wall kernel):
    // t times one step's bound there (docs/PRECISION.md).
    const ErrorBound one             = matrix_step_error_bound(plan.precision, original.size(), plan.float_grids);
    const int t                      = plan.fused_steps;
    const cuda_sptc::WallBands bands = cuda_sptc::wall_bands(plan);
    std::array<long, 3> extent{1, 1, 1}, x3{};
    for (int a = 0; a < D; ++a) extent[3 - D + a] = e.slack.extents[a];
    for (std::size_t flat = 0; flat < e.slack.values.size(); ++flat) {
      const auto x = e.slack.point(flat);
      for (int a = 0; a < D; ++a) x3[3 - D + a] = x[a];
      if (cuda_sptc::in_wall_band(bands, extent, x3)) {
        e.slack.values[flat] = t * (one.factor * magnitude.values[flat] + one.floor);
      }
      // interior: the rim of `out` is left as it was (the reference's buffers start as `in`).
      if (t > 1 && plan.boundary == Boundary::interior && !in_interior(original, e.slack.extents, x)) {
        e.expected.values[flat] = before.values[flat];
        e.slack.values[flat]    = 0;
      }
    }
  }
  return e;
}

}  // namespace sparstencil::test

/// Expects `statement` to throw std::runtime_error whose message contains every string given.
#define EXPECT_ERROR_MENTIONS(statement, ...)                                              \
  do {                                                                                     \
    try {                                                                                  \
      statement;                                                                           \
      ADD_FAILURE() << "no exception from: " #statement;                                   \
    } catch (const std::runtime_error& error_) {                                           \
      for (const std::string& part_ : std::initializer_list<std::string>{__VA_ARGS__}) {   \
        EXPECT_NE(std::string(error_.what()).find(part_), std::string::npos)               \
            << "message \"" << error_.what() << "\" does not mention \"" << part_ << "\""; \
      }                                                                                    \
    }                                                                                      \
  } while (0)
