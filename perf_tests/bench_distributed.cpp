// A decomposed grid's launches timed rank by rank (src/mpi): how much of each halo
// exchange the interior's computation hides, the rate over all ranks and per rank (weak
// scaling: run with 1 rank, then with several, at the same --n), and whether the gathered
// result equals one domain's. Run under mpirun:
//   mpirun -np 2 sparstencil_bench_distributed [--stencil heat2d] [--precision float]
//       [--n 8192] [--steps 200] [--fusion 1] [--boundary fixed_rim] [--backend generic]
//       [--repeats 5] [--staged] [--check] [--plain]
// Each rank holds an n^D block (2-D or 3-D presets, half or float) (the global grid is ranks*n along axis 0, n along
// the others); --backend auto lets the planner choose; --staged turns peer copies between the GPUs of a host off
// (DistributedOptions::peer_copies); --plain times the library's plain StencilPlan on one contiguous grid of the global
// extents instead (one rank: the rate a single-GPU user gets, beside the distributed plan's on the same block).
#include <SparStencil.hpp>
#include <SparStencil_Distributed.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Arguments {
  std::string stencil = "heat2d", precision = "float", backend = "generic";
  int n = 8192, steps = 200, fusion = 1, repeats = 5;
  sparstencil::Boundary boundary = sparstencil::Boundary::fixed_rim;
  bool check = false, staged = false, plain = false;
};

Arguments parse(int argc, char* argv[]) {
  Arguments a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--kokkos-", 0) == 0) continue;
    if (flag == "--check" || flag == "--staged" || flag == "--plain") {
      (flag == "--check" ? a.check : flag == "--staged" ? a.staged : a.plain) = true;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error("bench_distributed: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--n") a.n = std::stoi(value);
    else if (flag == "--steps") a.steps = std::stoi(value);
    else if (flag == "--fusion") a.fusion = std::stoi(value);
    else if (flag == "--repeats") a.repeats = std::stoi(value);
    else if (flag == "--boundary") a.boundary = sparstencil::boundary_from_string(value);
    else if (flag == "--stencil") a.stencil = value;
    else if (flag == "--precision") a.precision = value;
    else if (flag == "--backend") a.backend = value == "auto" ? "" : value;
    else throw std::runtime_error("bench_distributed: unknown option '" + flag + "'");
  }
  if (a.n < 16 || a.steps < 1 || a.fusion < 1 || a.repeats < 1)
    throw std::runtime_error("bench_distributed: bad value");
  return a;
}

/// A value for each global point, the same whichever rank or domain computes it:
/// magnitudes 0.25 to 1, random signs (never zero).
KOKKOS_INLINE_FUNCTION double start_value(long index) {
  unsigned long h = static_cast<unsigned long>(index) * 0x9E3779B97F4A7C15ul + 0x632BE59BD9B4E019ul;
  h ^= h >> 31, h *= 0xBF58476D1CE4E5B9ul, h ^= h >> 29;
  const double m = 0.25 + 0.75 * static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
  return (h & 1) ? -m : m;
}

/// Fills points [0, size) of `box` (coordinates offset by `origin` in a grid of `global`
/// extents) with start_value of their global index.
template <int D, class View>
void fill(const View& box, const std::array<long, D>& origin, const std::array<long, D>& global) {
  using T          = typename View::non_const_value_type;
  const long total = static_cast<long>(box.size());
  Kokkos::Array<long, 3> size{}, at{}, extent{};
  for (int k = 0; k < D; ++k) size[k] = static_cast<long>(box.extent(k)), at[k] = origin[k], extent[k] = global[k];
  Kokkos::parallel_for(
      "bench_distributed::fill", Kokkos::RangePolicy<Kokkos::IndexType<long>>(0, total), KOKKOS_LAMBDA(const long i) {
        long r = i, index = 0, stride = 1;
        Kokkos::Array<long, 3> c{};
        for (int k = D - 1; k >= 0; --k) c[k] = r % size[k], r /= size[k];
        for (int k = D - 1; k >= 0; --k) index += (c[k] + at[k]) * stride, stride *= extent[k];
        const View& out = box;  // captured here: nvcc cannot capture inside if constexpr
        const T value   = static_cast<T>(start_value(index));
        if constexpr (D == 2) out(c[0], c[1]) = value;
        else out(c[0], c[1], c[2]) = value;
      });
  Kokkos::fence();
}

/// The plain StencilPlan on one contiguous grid of `global` extents, timed as the
/// distributed runs are (the median wall time of `repeats` iterates).
template <class T, int D>
int run_plain(const Arguments& args, const sparstencil::Stencil<D>& stencil, const std::array<long, D>& global,
              const sparstencil::Options& options, const std::string& what) {
  using namespace sparstencil;
  std::array<int, D> e{};
  long points = 1;
  for (int k = 0; k < D; ++k) e[k] = static_cast<int>(global[k]), points *= global[k];
  auto x = make_view<GridView<T, D>>("x", e), y = make_view<GridView<T, D>>("y", e);
  fill<D>(x, {}, global);
  fill<D>(y, {}, global);
  const Kokkos::DefaultExecutionSpace space;
  StencilPlan plan(space, stencil, x, y, options);
  plan.iterate(x, y, std::min(args.steps, 20));
  space.fence();
  std::vector<double> walls;
  RunReport report;
  for (int r = 0; r < args.repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    report        = plan.iterate(x, y, args.steps);
    space.fence();
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double wall = median(walls), rate = double(points) * args.steps / wall / 1e9;
  std::printf("plain: %s, executor %s: %.3f ms, %.1f GStencil/s (median of %d)\n", what.c_str(),
              report.executor.c_str(), 1e3 * wall, rate, args.repeats);
  return 0;
}

template <class T, int D>
int run(const Arguments& args, const sparstencil::Stencil<D>& stencil) {
  using namespace sparstencil;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::array<long, D> global{};
  std::array<int, D> split{};
  for (int k = 0; k < D; ++k) global[k] = args.n, split[k] = 1;
  global[0] *= ranks, split[0] = ranks;
  Options options;
  options.boundary = args.boundary;
  options.backend  = args.backend;
  options.fusion   = args.fusion;
  // One variant everywhere (no tuning per box): the one-domain check compares bits.
  if (args.check) options.generic.tuning.autotune = false;
  if (args.plain) {
    if (ranks != 1) throw std::runtime_error("bench_distributed: --plain runs on one rank");
    return run_plain<T, D>(args, stencil, global, options,
                           "1 rank, " + impl::tuple_string(global) + " " + args.precision + " " + stencil.name() + " " +
                               to_string(args.boundary) + ", fusion " + std::to_string(args.fusion) + ", " +
                               std::to_string(args.steps) + " steps");
  }
  Domain<D> domain(MPI_COMM_WORLD, global, args.boundary, split);
  int radius = 0;
  for (int k = 0; k < D; ++k) radius = std::max(radius, stencil.radius()[k]);
  DistributedField<T, D> a(domain, args.fusion * radius, "a"), b(domain, args.fusion * radius, "b");
  std::array<long, D> origin{};
  for (int k = 0; k < D; ++k) origin[k] = domain.block(k).begin;
  fill<D>(a.owned(), origin, global);
  fill<D>(b.owned(), origin, global);
  DistributedOptions d;
  d.record_timeline = true;
  d.peer_copies     = !args.staged;
  DistributedPlan plan(Kokkos::DefaultExecutionSpace(), stencil, a, b, options, d);
  long points = 1;
  for (int k = 0; k < D; ++k) points *= global[k];
  const std::string what = std::to_string(ranks) + " ranks, " + impl::tuple_string(global) + " " + args.precision +
                           " " + stencil.name() + " " + to_string(args.boundary) + ", fusion " +
                           std::to_string(args.fusion) + ", " + std::to_string(args.steps) + " steps";

  if (args.check) {
    const RunReport report = plan.iterate(a, b, args.steps);
    const auto gathered    = gather(a);
    if (domain.rank() == 0) {
      std::array<int, D> e{};
      for (int k = 0; k < D; ++k) e[k] = static_cast<int>(global[k]);
      auto x = make_view<GridView<T, D>>("x", e), y = make_view<GridView<T, D>>("y", e);
      fill<D>(x, {}, global);
      fill<D>(y, {}, global);
      Options same = options;  // the executor the ranks ran (the planner may choose another for one domain)
      same.backend = report.executor;
      const RunReport single_report = sparstencil::iterate(stencil, x, y, args.steps, same);
      auto single                   = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
      long differing                = 0;
      double largest                = 0;
      for (std::size_t i = 0; i < single.size(); ++i) {
        if (std::memcmp(single.data() + i, gathered.data() + i, sizeof(T)) == 0) continue;
        ++differing;
        largest = std::max(largest, std::abs(static_cast<double>(single.data()[i]) - double(gathered.data()[i])));
      }
      std::printf(
          "check: %s; executors %s (ranks) and %s (one domain): %ld of %zu points differ from one domain "
          "(largest difference %.3g): %s\n",
          what.c_str(), report.executor.c_str(), single_report.executor.c_str(), differing, single.size(), largest,
          differing == 0 ? "PASS" : "FAIL");
      return differing == 0 ? 0 : 2;
    }
    return 0;
  }

  plan.iterate(a, b, std::min(args.steps, 20));  // warm-up: plans built, memory touched
  std::vector<double> walls, hidden, exchange, inner;
  RunReport report;
  for (int r = 0; r < args.repeats; ++r) {
    MPI_Barrier(domain.comm());
    const auto t0 = std::chrono::steady_clock::now();
    report        = plan.iterate(a, b, args.steps);
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
    const double wall = all[3], rate = double(points) * args.steps / wall / 1e9;
    std::printf("distributed: %s, executor %s: %.3f ms, %.1f GStencil/s over all ranks, %.1f a rank (median of %d)\n",
                what.c_str(), report.executor.c_str(), 1e3 * wall, rate, rate / ranks, args.repeats);
  }
  return 0;
}

// 2-D and 3-D, half and float: the instantiations kept few (each compiles every kernel of
// its type and rank).
template <class T>
int run_dims(const Arguments& args, const sparstencil::AnyStencil& stencil) {
  switch (sparstencil::dimension(stencil)) {
    case 2: return run<T, 2>(args, sparstencil::as<2>(stencil));
    case 3: return run<T, 3>(args, sparstencil::as<3>(stencil));
    default:
      throw std::runtime_error("bench_distributed: --stencil must be a 2-D or 3-D preset, not '" + args.stencil + "'");
  }
}

int run(const Arguments& args) {
  const sparstencil::AnyStencil stencil = sparstencil::presets::by_name(args.stencil);
  if (args.precision == "float") return run_dims<float>(args, stencil);
  if (args.precision == "half") return run_dims<Kokkos::Experimental::half_t>(args, stencil);
  throw std::runtime_error("bench_distributed: --precision must be half or float, not '" + args.precision + "'");
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
