// SparStencil demo: 2-D heat diffusion on the default Kokkos execution space.
// Prints what ran and how fast, checks a small run against the double-precision
// reference, and writes the final temperature field as a PNG image.
//   heat2d [--n N] [--steps S] [--png FILE]
#include <SparStencil.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "heatmap_png.hpp"

namespace {

using Field = Kokkos::View<float**>;

struct Arguments {
  int n           = 1024;
  int steps       = 500;
  std::string png = "heat2d.png";
};

constexpr int max_number = 1 << 20;

/// Fails now, not after the simulation, when `path` cannot be written.
void check_writable(const std::string& path) {
  const bool existed = std::filesystem::exists(path);
  std::FILE* probe   = std::fopen(path.c_str(), "ab");  // "ab": leaves what is there untouched
  if (!probe) {
    throw std::runtime_error("heat2d: cannot write the image '" + path + "': " + std::strerror(errno));
  }
  std::fclose(probe);
  if (!existed) std::remove(path.c_str());
}

Arguments parse_arguments(int argc, char* argv[]) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;  // Kokkos' own (--kokkos-num-threads=4)
    if (flag == "--help" || flag == "-h") {
      std::printf(
          "usage: heat2d [--n N] [--steps S] [--png FILE] [--kokkos-...]\n"
          "  --n N       grid of N x N floats, 16 <= N <= %d (default 1024)\n"
          "  --steps S   time steps, 1 <= S <= %d (default 500)\n"
          "  --png FILE  image of the final field (default heat2d.png)\n"
          "  Kokkos' options: --kokkos-help\n",
          max_number, max_number);
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::runtime_error("heat2d: " + flag + " needs a value");
    const std::string value = argv[++i];
    auto number             = [&](int lowest) {
      char* end    = nullptr;
      const long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v < lowest || v > max_number) {
        throw std::runtime_error("heat2d: " + flag + " expects an integer from " + std::to_string(lowest) + " to " +
                                             std::to_string(max_number) + ", got '" + value + "'");
      }
      return static_cast<int>(v);
    };
    if (flag == "--n") args.n = number(16);
    else if (flag == "--steps") args.steps = number(1);
    else if (flag == "--png") args.png = value;
    else throw std::runtime_error("heat2d: unknown option '" + flag + "' (try --help)");
  }
  return args;
}

/// Hot discs of 1-3% of the plate's width on a cold plate, plus a little noise so the
/// data is never trivial. 500 steps spread heat over about 11 cells (sqrt(0.25 * steps)).
Field initial_field(int n, std::uint64_t seed) {
  auto host = Kokkos::create_mirror_view(Field("T0", n, n));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  struct Disc {
    double x, y, r, t;
  };
  std::vector<Disc> discs;
  for (int k = 0; k < 40; ++k) discs.push_back({unit(rng), unit(rng), 0.01 + 0.02 * unit(rng), 0.3 + 0.7 * unit(rng)});
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) host(i, j) = static_cast<float>(0.05 * unit(rng));
  for (const Disc& d : discs) {  // visit each disc's bounding box only
    const int i0 = std::max(1, int((d.x - d.r) * n)), i1 = std::min(n - 1, int((d.x + d.r) * n) + 1);
    const int j0 = std::max(1, int((d.y - d.r) * n)), j1 = std::min(n - 1, int((d.y + d.r) * n) + 1);
    for (int i = i0; i < i1; ++i)
      for (int j = j0; j < j1; ++j)
        if (std::hypot((i + 0.5) / n - d.x, (j + 0.5) / n - d.y) < d.r) host(i, j) += static_cast<float>(d.t);
  }
  for (int k = 0; k < n; ++k) host(0, k) = host(n - 1, k) = host(k, 0) = host(k, n - 1) = 0.0f;  // rim held at 0
  Field field("T", n, n);
  Kokkos::deep_copy(field, host);
  return field;
}

sparstencil::HostGrid<2> to_grid(const Field& field) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), field);
  sparstencil::HostGrid<2> grid({static_cast<int>(field.extent(0)), static_cast<int>(field.extent(1))});
  for (int i = 0; i < grid.extents[0]; ++i)
    for (int j = 0; j < grid.extents[1]; ++j) grid({i, j}) = host(i, j);
  return grid;
}

/// Runs `steps` steps on a small grid and compares with the reference within the
/// documented float bound (docs/PRECISION.md). Returns true when every point is inside.
bool check_against_reference(const sparstencil::Stencil<2>& heat, sparstencil::Options options) {
  const int n = 129, steps = 25;
  Field a = initial_field(n, 7), b("b", n, n);
  Kokkos::deep_copy(b, a);
  const auto start = to_grid(a);
  sparstencil::iterate(heat, a, b, steps, options);
  const auto got      = to_grid(a);
  const auto expected = sparstencil::reference_iterate(heat, start, steps, options.boundary);
  const double factor = steps * sparstencil::step_error_factor<float>(heat.size());
  double worst = 0, worst_bound = 0;
  bool pass = true;
  for (std::size_t k = 0; k < got.values.size(); ++k) {
    const double error = std::abs(got.values[k] - expected.values[k]);
    const double bound = factor * std::abs(expected.values[k]) + 1e-30;  // weights >= 0: |W|^t|u| = W^t u
    pass               = pass && error <= bound;
    if (error > worst) worst = error, worst_bound = bound;
  }
  std::printf("  %-16s %dx%d, %d steps vs double reference: max error %.2e (bound there %.2e)  %s\n", "check", n, n,
              steps, worst, worst_bound, pass ? "PASS" : "FAIL");
  return pass;
}

}  // namespace

int main(int argc, char* argv[]) {
  Arguments args;
  try {  // before Kokkos starts: its own help would come first, and a bad --png only at the end
    args = parse_arguments(argc, argv);
    check_writable(args.png);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const auto heat = sparstencil::presets::heat_2d();
    sparstencil::Options options;
    options.boundary = sparstencil::Boundary::fixed_rim;

    Field a = initial_field(args.n, 1), b("T_next", args.n, args.n);
    Kokkos::deep_copy(b, a);
    {  // warm-up on copies: first touch, kernel load, the fused launches' one-time tuning
      Field wa("warm_a", args.n, args.n), wb("warm_b", args.n, args.n);
      Kokkos::deep_copy(wa, a);
      Kokkos::deep_copy(wb, a);
      sparstencil::iterate(heat, wa, wb, std::min(args.steps, 8), options);
      Kokkos::fence();
    }
    Kokkos::deep_copy(b, a);

    Kokkos::Timer timer;
    const auto report = sparstencil::iterate(heat, a, b, args.steps, options);
    Kokkos::fence();
    const double seconds = timer.seconds();
    const double updates = double(args.n) * args.n * args.steps;

    std::printf("SparStencil heat2d demo\n");
    std::printf("  %-16s %s\n", "execution space", report.execution_space.c_str());
    std::printf("  %-16s %s\n", "executor", report.executor.c_str());
    std::printf("  %-16s %s, %zu points, weights centre 0.5 / neighbours 0.125\n", "stencil", heat.name().c_str(),
                heat.size());
    std::printf("  %-16s %d x %d float, boundary %s\n", "grid", args.n, args.n,
                sparstencil::to_string(options.boundary));
    std::printf("  %-16s %d, %d a launch%s%s\n", "steps", args.steps, report.steps_per_launch,
                report.variant.empty() ? "" : ": ", report.variant.c_str());
    std::printf("  %-16s %.4f s\n", "time", seconds);
    std::printf("  %-16s %.3f GStencil/s\n", "throughput", updates / seconds / 1e9);
    const bool pass = check_against_reference(heat, options);

    const auto field     = to_grid(a);
    const double hottest = *std::max_element(field.values.begin(), field.values.end());
    write_heatmap_png(args.png, field.values, args.n, args.n, 0.0, hottest);
    std::printf("  %-16s %s\n", "image", args.png.c_str());
    return pass ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
