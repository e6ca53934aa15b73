// Gray-Scott reaction-diffusion: two coupled fields, a nonlinear reaction, closed walls,
// one fused FieldUpdate a step (docs/UPDATES.md).
//   gray_scott [--n N] [--steps S] [--frames K] [--png FILE] [--gif FILE]
//   du/dt = Du lap(u) - u v^2 + F (1 - u),   dv/dt = Dv lap(v) + u v^2 - (F + k) v
// with the 9-point Laplacian, zero-gradient (neumann) walls, and F, k in the "coral"
// regime. Checks a short run against the double reference first, then writes the final v
// field as a PNG and, with --frames and --gif, K frames joined into an animation.
#include <SparStencil.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "animation.hpp"
#include "heatmap_png.hpp"

namespace {

using Field         = Kokkos::View<float**>;
constexpr double du = 1.0, dv = 0.5, feed = 0.0545, kill = 0.062;

/// The reaction, in the accumulation type A (float on the device, double in the check).
struct Reaction {
  template <class A>
  KOKKOS_INLINE_FUNCTION Kokkos::Array<A, 2> operator()(const Kokkos::Array<A, 2>& lap,
                                                        const Kokkos::Array<A, 2>& c) const {
    const A uvv = c[0] * c[1] * c[1];
    return {c[0] + A(du) * lap[0] - uvv + A(feed) * (A(1) - c[0]), c[1] + A(dv) * lap[1] + uvv - A(feed + kill) * c[1]};
  }
};

sparstencil::Stencil<2> laplacian9() {
  std::vector<sparstencil::Term<2>> terms;
  for (int i = -1; i <= 1; ++i)
    for (int j = -1; j <= 1; ++j) terms.push_back({{i, j}, i == 0 && j == 0 ? -1.0 : (i == 0 || j == 0 ? 0.2 : 0.05)});
  return sparstencil::Stencil<2>(terms, "laplacian-9");
}

/// u = 1, v = 0, with a few seeded squares of v and a little noise.
void seed(const Field& u, const Field& v, int n, std::uint64_t s) {
  auto hu = Kokkos::create_mirror_view(u), hv = Kokkos::create_mirror_view(v);
  std::mt19937_64 rng(s);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      hu(i, j) = static_cast<float>(1.0 - 0.02 * unit(rng)), hv(i, j) = static_cast<float>(0.02 * unit(rng));
  const int side = std::max(3, n / 24);
  for (int k = 0; k < 12; ++k) {
    const int i0 = static_cast<int>(unit(rng) * (n - side)), j0 = static_cast<int>(unit(rng) * (n - side));
    for (int i = i0; i < i0 + side; ++i)
      for (int j = j0; j < j0 + side; ++j) hu(i, j) = 0.5f, hv(i, j) = 0.25f;
  }
  Kokkos::deep_copy(u, hu);
  Kokkos::deep_copy(v, hv);
}

sparstencil::HostField<2> host_field(const Field& f) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  sparstencil::HostField<2> g({static_cast<int>(f.extent(0)), static_cast<int>(f.extent(1))});
  for (int i = 0; i < g.grid.extents[0]; ++i)
    for (int j = 0; j < g.grid.extents[1]; ++j) g.at({i, j}) = h(i, j);
  return g;
}

/// Steps a pair of fields, swapping buffers.
struct Simulation {
  sparstencil::FieldUpdate<2, 2, float> update;
  Field u, v, u2, v2;
  Simulation(int rows, int cols)
      : update({sparstencil::StencilOn<2>(laplacian9(), 0), sparstencil::StencilOn<2>(laplacian9(), 1)},
               sparstencil::FaceConditions<2>(sparstencil::FaceCondition::neumann())),
        u("u", rows, cols),
        v("v", rows, cols),
        u2("u2", rows, cols),
        v2("v2", rows, cols) {}
  void step() {
    update.run(Kokkos::DefaultExecutionSpace(), sparstencil::fields(u, v), sparstencil::fields(u2, v2), Reaction{});
    std::swap(u, u2);
    std::swap(v, v2);
  }
};

/// 40 steps on an odd 97 x 83 grid against the double reference; float rounding grows
/// by at most the per-step bound (docs/PRECISION.md) a step.
bool check_against_reference() {
  const int rows = 97, cols = 83, steps = 40;
  Simulation sim(rows, cols);
  seed(sim.u, sim.v, std::min(rows, cols), 5);
  std::vector<sparstencil::HostField<2>> state{host_field(sim.u), host_field(sim.v)}, next = state;
  for (int s = 0; s < steps; ++s) sim.step();
  sparstencil::UpdateShape<2> shape;
  shape.results = {sparstencil::StencilOn<2>(laplacian9(), 0), sparstencil::StencilOn<2>(laplacian9(), 1)};
  for (int s = 0; s < steps; ++s) {
    sparstencil::reference_update(
        shape, sim.update.faces(), {}, state, next,
        [](const std::vector<double>& r, const std::vector<double>& c, const std::array<int, 2>&) {
          const auto o = Reaction{}(Kokkos::Array<double, 2>{r[0], r[1]}, Kokkos::Array<double, 2>{c[0], c[1]});
          return std::vector<double>{o[0], o[1]};
        });
    std::swap(state, next);
  }
  const auto got_u = host_field(sim.u), got_v = host_field(sim.v);
  // Values stay within [0, 1.5]; each step adds at most (9 terms + 8) u_float of it.
  const double bound = steps * 17 * 0x1p-24 * 1.5 * 4;
  double worst       = 0;
  for (std::size_t k = 0; k < got_u.grid.values.size(); ++k) {
    worst = std::max({worst, std::fabs(got_u.grid.values[k] - state[0].grid.values[k]),
                      std::fabs(got_v.grid.values[k] - state[1].grid.values[k])});
  }
  std::printf("check: %d steps of %dx%d against the double reference: max |error| %.2e (bound %.2e) %s\n", steps, rows,
              cols, worst, bound, worst <= bound ? "PASS" : "FAIL");
  return worst <= bound;
}

void write_v(const Field& v, int n, const std::string& path, int max_side = 1024) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::vector<double> values(static_cast<std::size_t>(n) * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) values[static_cast<std::size_t>(i) * n + j] = h(i, j);
  write_heatmap_png(path, values, n, n, 0.0, 0.4, max_side);
}

int run(const RunArguments& args) {
  if (!check_against_reference()) return 1;
  Simulation sim(args.n, args.n);
  seed(sim.u, sim.v, args.n, 1);
  FrameRecorder recorder(args);
  Kokkos::fence();
  const auto start = std::chrono::steady_clock::now();
  for (int s = 1; s <= args.steps; ++s) {
    sim.step();
    if (const std::string path = recorder.frame_for(s); !path.empty()) write_v(sim.v, args.n, path, 256);
  }
  Kokkos::fence();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "gray_scott: %d steps of %d^2 (2 fields, 9-point Laplacians, neumann walls) on %s in %.2f s: %.2f Gpoint "
      "updates/s%s\n",
      args.steps, args.n, Kokkos::DefaultExecutionSpace::name(), seconds,
      double(args.n) * args.n * args.steps / seconds / 1e9, args.frames ? " (frames included)" : "");
  write_v(sim.v, args.n, args.png);
  std::printf("gray_scott: wrote %s\n", args.png.c_str());
  if (!args.gif.empty()) std::printf("gray_scott: %s\n", recorder.finish().c_str());
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  RunArguments args;
  try {
    args = parse_run_arguments("gray_scott", argc, argv, {384, 6000, 0, "gray_scott.png", ""}, 16, 40, "v field");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gray_scott: %s\n", e.what());
    return 2;
  }
}
