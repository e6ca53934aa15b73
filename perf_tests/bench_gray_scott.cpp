// A fused multi-field update against a copy of the same fields and a straightforward
// Kokkos implementation, in one run (docs/UPDATES.md):
//   sparstencil_bench_gray_scott [--n 8192] [--launches 100] [--repeats 7] [--stream-rows 16]
// Gray-Scott reaction-diffusion, float, zero-gradient (neumann) walls: two fields in, two
// out, a 5-point Laplacian of each and a nonlinear reaction. One update moves 16 bytes a
// point at the least (read u and v, write both); the copy moves the same 16.
// - copy: one parallel_for copying u, v into their next buffers, and Kokkos::deep_copy of
//   each; the faster is the roofline;
// - fused: sparstencil::FieldUpdate, one pass;
// - straightforward: one parallel_for per Laplacian into scratch fields, then one for the
//   update (40 bytes a point).
// Device time per launch: bench_timing.hpp.
#include <SparStencil.hpp>

#include "bench_timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using sparstencil::bench::seconds_per_launch;

using Space = Kokkos::DefaultExecutionSpace;
using Field = Kokkos::View<float**, Kokkos::LayoutRight, Space::memory_space>;
/// One work item a point, consecutive items on consecutive addresses (coalesced).
using Points = Kokkos::RangePolicy<Space, Kokkos::IndexType<long>>;

constexpr float du = 0.16f, dv = 0.08f, feed = 0.035f, kill = 0.065f;

struct Reaction {
  KOKKOS_INLINE_FUNCTION Kokkos::Array<float, 2> operator()(const Kokkos::Array<float, 2>& lap,
                                                            const Kokkos::Array<float, 2>& c) const {
    const float uvv = c[0] * c[1] * c[1];
    return {c[0] + du * lap[0] - uvv + feed * (1.0f - c[0]), c[1] + dv * lap[1] + uvv - (feed + kill) * c[1]};
  }
};

void fill(const Field& f, std::uint64_t seed, float lo, float hi) {
  auto host = Kokkos::create_mirror_view(f);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(lo, hi);
  for (std::size_t i = 0; i < host.extent(0); ++i)
    for (std::size_t j = 0; j < host.extent(1); ++j) host(i, j) = value(rng);
  Kokkos::deep_copy(f, host);
}

void copy_fields(const Field& a, const Field& b, const Field& c, const Field& d) {
  const long m = static_cast<long>(a.extent(1));
  Kokkos::parallel_for(
      "copy", Points(0, m * static_cast<long>(a.extent(0))), KOKKOS_LAMBDA(long k) {
        const int i = static_cast<int>(k / m), j = static_cast<int>(k - i * m);
        c(i, j) = a(i, j);
        d(i, j) = b(i, j);
      });
}

// What a user writes without the library: a Laplacian kernel per field (zero gradient:
// the neighbour past a wall is the point itself), then the update.
void laplacian_of(const Field& f, const Field& out) {
  const int n = static_cast<int>(f.extent(0)), m = static_cast<int>(f.extent(1));
  Kokkos::parallel_for(
      "laplacian", Points(0, static_cast<long>(n) * m), KOKKOS_LAMBDA(long k) {
        const int i = static_cast<int>(k / m), j = static_cast<int>(k - static_cast<long>(i) * m);
        const int im = i > 0 ? i - 1 : 0, ip = i < n - 1 ? i + 1 : n - 1;
        const int jm = j > 0 ? j - 1 : 0, jp = j < m - 1 ? j + 1 : m - 1;
        out(i, j) = f(im, j) + f(ip, j) + f(i, jm) + f(i, jp) - 4.0f * f(i, j);
      });
}

void reaction(const Field& lap_u, const Field& lap_v, const Field& a, const Field& b, const Field& c, const Field& d) {
  const long m = static_cast<long>(a.extent(1));
  Kokkos::parallel_for(
      "reaction", Points(0, m * static_cast<long>(a.extent(0))), KOKKOS_LAMBDA(long k) {
        const int i = static_cast<int>(k / m), j = static_cast<int>(k - i * m);
        const auto o = Reaction{}({lap_u(i, j), lap_v(i, j)}, {a(i, j), b(i, j)});
        c(i, j)      = o[0];
        d(i, j)      = o[1];
      });
}

int run(int n, int launches, int repeats, int stream_rows) {
  Field u("u", n, n), v("v", n, n), u2("u2", n, n), v2("v2", n, n), lu("lap_u", n, n), lv("lap_v", n, n);
  fill(u, 1, 0.2f, 1.0f);
  fill(v, 2, 0.05f, 0.5f);
  const double points = static_cast<double>(n) * n;

  const auto copy = [&](int k) {
    if (k % 2) copy_fields(u2, v2, u, v);
    else copy_fields(u, v, u2, v2);
  };
  const auto deep_copy = [&](int k) {
    Kokkos::deep_copy(Space(), k % 2 ? u : u2, k % 2 ? u2 : u);
    Kokkos::deep_copy(Space(), k % 2 ? v : v2, k % 2 ? v2 : v);
  };

  sparstencil::Stencil<2> laplacian({{{0, 0}, -4.0}, {{-1, 0}, 1.0}, {{1, 0}, 1.0}, {{0, -1}, 1.0}, {{0, 1}, 1.0}},
                                    "laplacian");
  sparstencil::FieldUpdate<2, 2, float> update(
      {sparstencil::StencilOn<2>(laplacian, 0), sparstencil::StencilOn<2>(laplacian, 1)},
      sparstencil::FaceConditions<2>(sparstencil::FaceCondition::neumann()));
  update.stream_rows(stream_rows);
  const auto fused = [&](int k) {
    if (k % 2) update.run(Space(), sparstencil::fields(u2, v2), sparstencil::fields(u, v), Reaction{});
    else update.run(Space(), sparstencil::fields(u, v), sparstencil::fields(u2, v2), Reaction{});
  };

  const auto straightforward = [&](int k) {
    const Field a = k % 2 ? u2 : u, b = k % 2 ? v2 : v, c = k % 2 ? u : u2, d = k % 2 ? v : v2;
    laplacian_of(a, lu);
    laplacian_of(b, lv);
    reaction(lu, lv, a, b, c, d);
  };

  // Both forms of one update agree (float: a few units in the last place).
  fused(0);
  auto fused_u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u2);
  straightforward(0);
  auto plain_u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u2);
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) worst = std::max(worst, std::fabs(double(fused_u(i, j)) - plain_u(i, j)));
  const bool agree = worst <= 1e-5;

  const double t_kernel_copy = seconds_per_launch(copy, launches, repeats);
  const double t_deep_copy   = seconds_per_launch(deep_copy, launches, repeats);
  const double t_copy        = std::min(t_kernel_copy, t_deep_copy);  // the faster copy is the roofline
  const double t_fused       = seconds_per_launch(fused, launches, repeats);
  const double t_plain       = seconds_per_launch(straightforward, launches, repeats);
  const double copy_gbs      = 16 * points / t_copy / 1e9;
  std::printf("gray-scott float %d^2, %s, %d launches x %d repeats (median), stream rows %d\n", n, Space::name(),
              launches, repeats, stream_rows);
  std::printf(
      "  copy of both fields     %9.3f ms  %7.1f GB/s (16 bytes a point; parallel_for %.1f, deep_copy %.1f GB/s)\n",
      t_copy * 1e3, copy_gbs, 16 * points / t_kernel_copy / 1e9, 16 * points / t_deep_copy / 1e9);
  std::printf("  fused FieldUpdate       %9.3f ms  %7.1f GB/s  %5.1f%% of the copy  %7.2f Gpoints/s\n", t_fused * 1e3,
              16 * points / t_fused / 1e9, 100 * t_copy / t_fused, points / t_fused / 1e9);
  std::printf("  straightforward Kokkos  %9.3f ms  %7.1f GB/s  (3 parallel_for, 40 bytes a point)\n", t_plain * 1e3,
              40 * points / t_plain / 1e9);
  std::printf("  fused speed-up over straightforward: %.2fx\n", t_plain / t_fused);
  std::printf("  fused and straightforward agree: %s (max |diff| %.2e)\n", agree ? "PASS" : "FAIL", worst);
  return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  int n = 8192, launches = 100, repeats = 7, stream_rows = 16;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag.rfind("--kokkos-", 0) == 0) continue;
      if (i + 1 >= argc) throw std::runtime_error("bench_gray_scott: " + flag + " needs a value");
      const int value = std::stoi(argv[++i]);
      if (flag == "--n") n = value;
      else if (flag == "--launches") launches = value;
      else if (flag == "--repeats") repeats = value;
      else if (flag == "--stream-rows") stream_rows = value;
      else throw std::runtime_error("bench_gray_scott: unknown option '" + flag + "'");
    }
    if (n < 8 || launches < 1 || repeats < 1)
      throw std::runtime_error("bench_gray_scott: --n >= 8, --launches and --repeats >= 1");
    return run(n, launches, repeats, stream_rows);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
