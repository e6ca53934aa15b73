// A decomposed grid's launches timed rank by rank (src/mpi): how much of each halo
// exchange the interior's computation hides, the rate over all ranks, and whether the
// gathered result equals one domain's bit for bit. Run under mpirun:
//   mpirun -np 2 sparstencil_bench_distributed [--n 8192] [--steps 200] [--fusion 1]
//       [--boundary fixed_rim] [--repeats 5] [--check]
// Each rank holds an n x n block (the global grid is ranks*n x n, cut along axis 0).
#include <SparStencil.hpp>
#include <SparStencil_Distributed.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Arguments {
  int n = 8192, steps = 200, fusion = 1, repeats = 5;
  sparstencil::Boundary boundary = sparstencil::Boundary::fixed_rim;
  bool check = false;
};

Arguments parse(int argc, char* argv[]) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;
    if (flag == "--check") {
      a.check = true;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error("bench_distributed: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--n") a.n = std::stoi(value);
    else if (flag == "--steps") a.steps = std::stoi(value);
    else if (flag == "--fusion") a.fusion = std::stoi(value);
    else if (flag == "--repeats") a.repeats = std::stoi(value);
    else if (flag == "--boundary") a.boundary = sparstencil::boundary_from_string(value);
    else throw std::runtime_error("bench_distributed: unknown option '" + flag + "'");
  }
  if (a.n < 16 || a.steps < 1 || a.fusion < 1 || a.repeats < 1) throw std::runtime_error("bench_distributed: bad value");
  return a;
}

int run(const Arguments& args) {
  using namespace sparstencil;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const long rows = static_cast<long>(args.n) * ranks;
  Options options;
  options.boundary = args.boundary;
  options.backend  = "generic";
  options.fusion   = args.fusion;
  // One variant everywhere (no tuning per box): the one-domain check compares bits.
  if (args.check) options.tuning.autotune = false;
  Domain<2> domain(MPI_COMM_WORLD, {rows, args.n}, args.boundary, {ranks, 1});
  const int radius = 1;  // Heat-2D
  DistributedField<float, 2> a(domain, args.fusion * radius, "a"), b(domain, args.fusion * radius, "b");
  GridView<float, 2, Kokkos::LayoutRight, Kokkos::HostSpace> start("start", rows, args.n);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(0.25f, 1.0f);
  for (long i = 0; i < rows; ++i) {
    for (int j = 0; j < args.n; ++j) start(i, j) = (rng() & 1 ? -1.0f : 1.0f) * u(rng);
  }
  scatter(start, a);
  scatter(start, b);
  DistributedOptions d;
  d.record_timeline = true;
  DistributedPlan plan(Kokkos::DefaultExecutionSpace(), presets::heat_2d(), a, b, options, d);

  if (args.check) {
    plan.iterate(a, b, args.steps);
    const auto gathered = gather(a);
    if (domain.rank() == 0) {
      GridView<float, 2> x("x", rows, args.n), y("y", rows, args.n);
      Kokkos::deep_copy(x, start);
      Kokkos::deep_copy(y, start);
      sparstencil::iterate(presets::heat_2d(), x, y, args.steps, options);
      auto single = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
      long differing = 0;
      for (std::size_t i = 0; i < single.size(); ++i) {
        if (std::memcmp(single.data() + i, gathered.data() + i, sizeof(float)) != 0) ++differing;
      }
      std::printf("check: %d ranks, %ld x %d, %d steps, fusion %d, %s: %ld of %zu points differ from one domain: %s\n",
                  ranks, rows, args.n, args.steps, args.fusion, to_string(args.boundary), differing, single.size(),
                  differing == 0 ? "PASS" : "FAIL");
    }
    return 0;
  }

  plan.iterate(a, b, std::min(args.steps, 20));  // warm-up: plans built, memory touched
  std::vector<double> walls, hidden, exchange, inner;
  for (int r = 0; r < args.repeats; ++r) {
    MPI_Barrier(domain.comm());
    const auto t0 = std::chrono::steady_clock::now();
    plan.iterate(a, b, args.steps);
    MPI_Barrier(domain.comm());
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    for (const LaunchTimeline& t : plan.timeline()) {
      hidden.push_back(t.hidden_fraction());
      exchange.push_back(t.exchange_end - t.exchange_begin);
      inner.push_back(t.inner_end - t.inner_begin);
    }
  }
  // Every rank's medians, printed by rank 0.
  const double mine[4] = {median(hidden), median(exchange), median(inner), median(walls)};
  std::vector<double> all(4 * static_cast<std::size_t>(ranks));
  MPI_Gather(mine, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, 0, domain.comm());
  const std::string text = plan.explain();
  if (domain.rank() == 0) {
    std::printf("%s", text.c_str());
    for (int r = 0; r < ranks; ++r) {
      const double* m = &all[4 * static_cast<std::size_t>(r)];
      std::printf("rank %d: exchange hidden %.1f%% (median over %zu launches), exchange %.1f us, interior %.1f us\n", r,
                  100 * m[0], hidden.size(), 1e6 * m[1], 1e6 * m[2]);
    }
    const double wall = all[3];
    std::printf("distributed: %d ranks, %ld x %d float Heat-2D %s, fusion %d, %d steps: %.3f ms, %.1f GStencil/s "
                "over all ranks (median of %d)\n",
                ranks, rows, args.n, to_string(args.boundary), args.fusion, args.steps, 1e3 * wall,
                double(rows) * args.n * args.steps / wall / 1e9, args.repeats);
  }
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int status = 0;
  Kokkos::initialize(argc, argv);
  try {
    status = run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    status = 1;
  }
  Kokkos::finalize();
  MPI_Finalize();
  return status;
}
