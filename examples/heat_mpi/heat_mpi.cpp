// 2-D heat diffusion on a plate decomposed over MPI ranks (src/mpi, docs/DISTRIBUTED.md):
//   mpirun -np 4 heat_mpi [--n N] [--steps S] [--fusion T] [--png FILE]
// A plate with a hot wall held at its top edge (fixed_rim) and hot discs inside; each rank
// steps its block, halos exchanged every T fused steps. Rank 0 prints the plan with its
// exchange, gathers the plate, checks it against the same steps on one domain (equal bit
// for bit) and writes the image.
#include <SparStencil.hpp>
#include <SparStencil_Distributed.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "heatmap_png.hpp"

namespace {

struct Arguments {
  int n = 512, steps = 2000, fusion = 4;
  std::string png = "heat_mpi.png";
};

Arguments parse_arguments(int argc, char* argv[]) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;
    if (flag == "--help" || flag == "-h") {
      std::printf(
          "usage: mpirun -np R heat_mpi [--n N] [--steps S] [--fusion T] [--png FILE]\n"
          "  --n N       plate of N x N floats, 16 <= N <= 65536 (default 512)\n"
          "  --steps S   time steps, 1 <= S <= 100000 (default 2000)\n"
          "  --fusion T  steps a launch and between exchanges, 1 <= T <= 8 (default 4)\n"
          "  --png FILE  image of the gathered plate (default heat_mpi.png)\n");
      std::exit(0);
    }
    if (i + 1 >= argc) throw std::runtime_error("heat_mpi: " + flag + " needs a value");
    const std::string value = argv[++i];
    auto number             = [&](int lowest, int highest) {
      char* end    = nullptr;
      const long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v < lowest || v > highest) {
        throw std::runtime_error("heat_mpi: " + flag + " expects an integer from " + std::to_string(lowest) + " to " +
                                             std::to_string(highest) + ", got '" + value + "'");
      }
      return static_cast<int>(v);
    };
    if (flag == "--n") args.n = number(16, 65536);
    else if (flag == "--steps") args.steps = number(1, 100000);
    else if (flag == "--fusion") args.fusion = number(1, 8);
    else if (flag == "--png") args.png = value;
    else throw std::runtime_error("heat_mpi: unknown option '" + flag + "' (try --help)");
  }
  return args;
}

/// Temperature at global point (i, j): the top wall at 1, three hot discs, the rest cold.
float initial_temperature(int i, int j, int n) {
  if (i == 0) return 1.0f;
  const double discs[3][3] = {{0.3, 0.3, 0.08}, {0.6, 0.7, 0.05}, {0.75, 0.25, 0.03}};
  for (const auto& d : discs) {
    const double y = i / double(n) - d[0], x = j / double(n) - d[1];
    if (x * x + y * y < d[2] * d[2]) return 1.0f;
  }
  return 0.0f;
}

using Global = sparstencil::GridView<float, 2, Kokkos::LayoutRight, Kokkos::HostSpace>;

Global initial_plate(int n) {
  Global g("plate", n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) g(i, j) = initial_temperature(i, j, n);
  }
  return g;
}

int run(const Arguments& args) {
  using namespace sparstencil;
  const auto stencil = presets::heat_2d();
  Options options;
  options.boundary = Boundary::fixed_rim;
  // The one-domain check compares bits: the same executor and kernel variant everywhere
  // (tuning could pick another variant for a block than for the whole plate).
  options.backend                 = "generic";
  options.generic.tuning.autotune = false;
  options.fusion                  = args.fusion;

  Domain<2> domain(MPI_COMM_WORLD, {args.n, args.n}, options.boundary);
  DistributedField<float, 2> a(domain, args.fusion, "a"), b(domain, args.fusion, "b");
  const Global plate = initial_plate(args.n);  // every rank takes its block of it
  scatter(plate, a);
  scatter(plate, b);
  DistributedPlan plan(Kokkos::DefaultExecutionSpace(), stencil, a, b, options);
  MPI_Barrier(domain.comm());
  const auto start       = std::chrono::steady_clock::now();
  const RunReport report = plan.iterate(a, b, args.steps);
  MPI_Barrier(domain.comm());
  const double seconds   = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string text = plan.explain();
  const Global gathered  = gather(a);
  if (domain.rank() != 0) return 0;

  std::printf("heat_mpi: %d x %d plate over %d ranks %s, %d steps, %d a launch (%s, %s)\n", args.n, args.n,
              domain.ranks(), impl::tuple_string(domain.ranks_per_axis()).c_str(), args.steps, report.steps_per_launch,
              report.executor.c_str(), report.execution_space.c_str());
  std::printf("%s", text.c_str());
  std::printf("  %-16s %.3f s (%.2f GStencil/s over all ranks)\n", "time", seconds,
              double(args.n) * args.n * args.steps / seconds / 1e9);

  // The same steps on one domain: the gathered plate must equal it bit for bit.
  using View = GridView<float, 2>;
  View x("x", args.n, args.n), y("y", args.n, args.n);
  Kokkos::deep_copy(x, plate);
  Kokkos::deep_copy(y, plate);
  sparstencil::iterate(stencil, x, y, args.steps, options);
  auto single    = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  long differing = 0;
  std::vector<double> values(static_cast<std::size_t>(args.n) * args.n);
  for (int i = 0; i < args.n; ++i) {
    for (int j = 0; j < args.n; ++j) {
      if (std::memcmp(&single(i, j), &gathered(i, j), sizeof(float)) != 0) ++differing;
      values[static_cast<std::size_t>(i) * args.n + j] = gathered(i, j);
    }
  }
  std::printf("  %-16s %s (%ld of %ld points differ from one domain)\n", "check", differing == 0 ? "PASS" : "FAIL",
              differing, long(args.n) * args.n);
  write_heatmap_png(args.png, values, args.n, args.n, 0.0, 1.0);
  std::printf("  %-16s %s\n", "image", args.png.c_str());
  return differing == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const Arguments args = parse_arguments(argc, argv);
    Kokkos::initialize(argc, argv);
    try {
      status = run(args);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      status = 1;
    }
    Kokkos::finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
