// A 2-D acoustic wave through a velocity model (a coefficient field) with a reflecting
// wall, one FieldUpdate a step (docs/UPDATES.md).
//   wave [--n N] [--steps S] [--frames K] [--png FILE] [--gif FILE]
//   u_next = 2 u - u_prev + C(x) lap(u) + source,   C = (c dt / h)^2
// The top wall reflects (a rigid wall through the first row); the other sides hold 0
// outside and damp waves in a sponge layer so that they leave. A Ricker pulse starts
// below the wall; the model has a faster layer below and a slow disc.
#include <SparStencil.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "animation.hpp"
#include "heatmap_png.hpp"

namespace {

using Field = Kokkos::View<float**>;

/// The leapfrog update with the source and the sponge, in the accumulation type A.
struct Leapfrog {
  int n = 0, sponge = 0, source_i = 0, source_j = 0;
  double amplitude = 0;  ///< the source's value this step

  template <class A, std::size_t D>
  KOKKOS_INLINE_FUNCTION Kokkos::Array<A, 1> operator()(const Kokkos::Array<A, 1>& lap, const Kokkos::Array<A, 2>& c,
                                                        const Kokkos::Array<int, D>& x) const {
    A next = A(2) * c[0] - c[1] + lap[0];
    if (x[0] == source_i && x[1] == source_j) next += A(amplitude);
    // Depth into the sponge along the bottom, left and right sides (not the top wall).
    int edge = n - 1 - x[0];
    if (x[1] < edge) edge = x[1];
    if (n - 1 - x[1] < edge) edge = n - 1 - x[1];
    const int depth = sponge - edge;
    if (depth > 0) {
      const A s = A(depth) / A(sponge);
      next *= A(1) - A(0.08) * s * s;
    }
    return {next};
  }
};

/// The Ricker wavelet of peak frequency f (cycles a step) at step t, delayed 1.2 / f.
double ricker(double f, int t) {
  const double a = M_PI * f * (t - 1.2 / f), a2 = a * a;
  return (1 - 2 * a2) * std::exp(-a2);
}

/// (c dt / h)^2: c = 1 above 45% of the depth, 1.6 below, 0.6 in a disc; c dt / h = 0.45 at
/// c = 1.6 (stable: below 1 / sqrt(2)).
Field velocity_model(int n) {
  Field c2("C", n, n);
  auto h = Kokkos::create_mirror_view(c2);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      double c = i < 0.45 * n ? 1.0 : 1.6;
      if (std::hypot(i - 0.68 * n, j - 0.62 * n) < 0.12 * n) c = 0.6;
      const double courant = 0.45 * c / 1.6;
      h(i, j)              = static_cast<float>(courant * courant);
    }
  }
  Kokkos::deep_copy(c2, h);
  return c2;
}

sparstencil::Stencil<2> laplacian5() {
  return sparstencil::Stencil<2>({{{0, 0}, -4.0}, {{-1, 0}, 1.0}, {{1, 0}, 1.0}, {{0, -1}, 1.0}, {{0, 1}, 1.0}},
                                 "laplacian-5");
}

sparstencil::FaceConditions<2> walls() {
  using sparstencil::FaceCondition;
  return sparstencil::FaceConditions<2>(FaceCondition::dirichlet(0.0)).set(0, 0, FaceCondition::reflect());
}

struct Simulation {
  sparstencil::FieldUpdate<2, 1, float> update;
  Field prev, now, next, c2;
  Leapfrog leapfrog;
  int step_count = 0;
  explicit Simulation(int n)
      : update({sparstencil::StencilOn<2>(laplacian5(), 0).times_field(0)}, walls()),
        prev("u_prev", n, n),
        now("u", n, n),
        next("u_next", n, n),
        c2(velocity_model(n)) {
    update.coefficient_fields(c2);
    leapfrog.n = n, leapfrog.sponge = n / 12, leapfrog.source_i = n / 5, leapfrog.source_j = n / 2;
  }
  void step() {
    leapfrog.amplitude = ricker(0.012, step_count++);
    update.run(Kokkos::DefaultExecutionSpace(), sparstencil::fields(now, prev), sparstencil::fields(next), leapfrog);
    std::swap(prev, now);
    std::swap(now, next);
  }
};

sparstencil::HostGrid<2> host_grid(const Field& f) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  sparstencil::HostGrid<2> g({static_cast<int>(f.extent(0)), static_cast<int>(f.extent(1))});
  for (int i = 0; i < g.extents[0]; ++i)
    for (int j = 0; j < g.extents[1]; ++j) g({i, j}) = h(i, j);
  return g;
}

/// 150 steps at 64^2 (the pulse reaches the wall and the sponge) against the double
/// reference: leapfrog is neutrally stable, so float rounding grows about linearly.
bool check_against_reference() {
  const int n = 64, steps = 150;
  Simulation sim(n);
  sparstencil::UpdateShape<2> shape;
  shape.results = {sparstencil::StencilOn<2>(laplacian5(), 0).times_field(0)};
  sparstencil::ReferenceUpdateData<2> data;
  data.coefficient_fields = {host_grid(sim.c2)};
  std::vector<sparstencil::HostField<2>> state(2, sparstencil::HostField<2>({n, n})),
      next(1, sparstencil::HostField<2>({n, n}));
  for (int s = 0; s < steps; ++s) {
    const Leapfrog f = [&] {
      Leapfrog l  = sim.leapfrog;
      l.amplitude = ricker(0.012, s);
      return l;
    }();
    sparstencil::reference_update(
        shape, walls(), data, state, next,
        [&](const std::vector<double>& r, const std::vector<double>& c, const std::array<int, 2>& x) {
          return std::vector<double>{f(Kokkos::Array<double, 1>{r[0]}, Kokkos::Array<double, 2>{c[0], c[1]},
                                       Kokkos::Array<int, 2>{x[0], x[1]})[0]};
        });
    state = {next[0], state[0]};
    sim.step();
  }
  const auto got = host_grid(sim.now);
  double worst = 0, peak = 0;
  for (std::size_t k = 0; k < got.values.size(); ++k) {
    worst = std::max(worst, std::fabs(got.values[k] - state[0].grid.values[k]));
    peak  = std::max(peak, std::fabs(state[0].grid.values[k]));
  }
  // Per step at most (5 terms + 8) u_float of the largest value, times the steps taken.
  const double bound = steps * 13 * 0x1p-24 * std::max(peak, 1.0) * 4;
  std::printf("check: %d steps of %dx%d against the double reference: max |error| %.2e (bound %.2e, peak %.2f) %s\n",
              steps, n, n, worst, bound, peak, worst <= bound && peak > 0.01 ? "PASS" : "FAIL");
  return worst <= bound && peak > 0.01;
}

void write_u(const Field& u, int n, const std::string& path, int max_side = 1024) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  std::vector<double> values(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) values[static_cast<std::size_t>(i) * n + j] = h(i, j);
  double peak = 1e-6;
  for (double x : values) peak = std::max(peak, std::fabs(x));
  write_heatmap_png(path, values, n, n, -0.5 * peak, 0.5 * peak, max_side);
}

int run(const RunArguments& args) {
  if (!check_against_reference()) return 1;
  Simulation sim(args.n);
  FrameRecorder recorder(args);
  Kokkos::fence();
  const auto start = std::chrono::steady_clock::now();
  for (int s = 1; s <= args.steps; ++s) {
    sim.step();
    if (const std::string path = recorder.frame_for(s); !path.empty()) write_u(sim.now, args.n, path, 256);
  }
  Kokkos::fence();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("wave: %d steps of %d^2 (velocity model, reflecting top wall, sponge) on %s in %.2f s%s\n", args.steps,
              args.n, Kokkos::DefaultExecutionSpace::name(), seconds, args.frames ? " (frames included)" : "");
  write_u(sim.now, args.n, args.png);
  std::printf("wave: wrote %s\n", args.png.c_str());
  if (!args.gif.empty()) std::printf("wave: %s\n", recorder.finish().c_str());
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  RunArguments args;
  try {
    args = parse_run_arguments("wave", argc, argv, {512, 1400, 0, "wave.png", ""}, 64, 50, "wave field");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wave: %s\n", e.what());
    return 2;
  }
}
