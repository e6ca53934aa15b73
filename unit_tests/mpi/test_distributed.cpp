// Grids decomposed over the ranks (src/mpi): every decomposition of the ranks over 1-D,
// 2-D and 3-D grids of odd extents that do not divide evenly, every boundary mode, fused
// and unfused, with and without overlap, both layouts, float, double and half: the
// gathered result equals the single-domain run of the same executor bit for bit. Errors
// found on one rank are errors on every rank. Run under mpirun with 1 to 4 ranks.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <random>

#include "SparStencil.hpp"
#include "SparStencil_Distributed.hpp"

namespace sparstencil::test {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

template <class T, int D>
using HostGlobal = GridView<T, D, Kokkos::LayoutRight, Kokkos::HostSpace>;

template <int D>
std::array<int, D> ints(const std::array<long, D>& e) {
  std::array<int, D> i{};
  for (int a = 0; a < D; ++a) i[a] = static_cast<int>(e[a]);
  return i;
}

/// The same random values on every rank (magnitudes 0.25 to 1, random sign: never zero).
template <class T, int D>
HostGlobal<T, D> random_global(const std::array<long, D>& extent, std::uint64_t seed) {
  auto v = make_view<HostGlobal<T, D>>("global", ints<D>(extent));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> m(0.25, 1.0);
  T* p = v.data();
  for (std::size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>((rng() & 1 ? -1.0 : 1.0) * m(rng));
  return v;
}

/// Every factorisation of `ranks` into D counts.
template <int D>
std::vector<std::array<int, D>> decompositions(int ranks) {
  std::vector<std::array<int, D>> all;
  std::array<int, D> d{};
  std::function<void(int, int)> place = [&](int a, int left) {
    if (a == D - 1) {
      d[a] = left;
      all.push_back(d);
      return;
    }
    for (int p = 1; p <= left; ++p) {
      if (left % p == 0) d[a] = p, place(a + 1, left / p);
    }
  };
  place(0, ranks);
  return all;
}

/// The steps on one domain, on the default execution space: the global field afterwards.
template <class T, int D, class Layout>
HostGlobal<T, D> single_domain(const Stencil<D>& stencil, const HostGlobal<T, D>& start, int steps,
                               const Options& options) {
  using View = GridView<T, D, Layout>;
  std::array<long, D> e{};
  for (int a = 0; a < D; ++a) e[a] = static_cast<long>(start.extent(a));
  View a = make_view<View>("a", ints<D>(e)), b = make_view<View>("b", ints<D>(e));
  auto host = Kokkos::create_mirror_view(a);
  Kokkos::deep_copy(host, start);  // host to host: layouts may differ
  Kokkos::deep_copy(a, host);
  Kokkos::deep_copy(b, host);  // the same rim in both (interior)
  sparstencil::iterate(stencil, a, b, steps, options);
  Kokkos::deep_copy(host, a);
  auto result = make_view<HostGlobal<T, D>>("single", ints<D>(e));
  Kokkos::deep_copy(result, host);
  return result;
}

struct Case {
  Boundary boundary = Boundary::periodic;
  int fusion = 1, steps = 5, extra_ghost = 0;
  bool overlap = true, peer_copies = true;
};

std::string describe(const Case& c) {
  return std::string(to_string(c.boundary)) + " fusion " + std::to_string(c.fusion) + " steps " +
         std::to_string(c.steps) + (c.overlap ? " overlapped" : " not overlapped") + " ghost +" +
         std::to_string(c.extra_ghost) + (c.peer_copies ? "" : " staged");
}

/// Runs one case on the world's ranks and on one domain; on rank 0, the two must agree in
/// every bit, and the steps must have changed the field.
template <class T, int D, class Layout = Kokkos::LayoutRight>
void check_case(const Stencil<D>& stencil, const std::array<long, D>& extent, const std::array<int, D>& ranks,
                const Case& c) {
  Options options;
  options.boundary = c.boundary;
  options.backend  = "generic";
  options.fusion   = c.fusion;
  const auto start = random_global<T, D>(extent, 7 + static_cast<std::uint64_t>(extent[0]));
  Domain<D> domain(MPI_COMM_WORLD, extent, c.boundary, ranks);
  int radius = 0;
  for (int a = 0; a < D; ++a) radius = std::max(radius, stencil.radius()[a]);
  const int ghost = c.fusion * radius + c.extra_ghost;
  DistributedField<T, D, Layout> a(domain, ghost, "a"), b(domain, ghost, "b");
  scatter(start, a);
  scatter(start, b);
  DistributedOptions distributed;
  distributed.overlap     = c.overlap;
  distributed.peer_copies = c.peer_copies;
  DistributedPlan plan(Kokkos::DefaultExecutionSpace(), stencil, a, b, options, distributed);
  // One step through apply (the result in b), more through iterate (in a).
  const RunReport report = c.steps == 1 ? plan.apply(a, b) : plan.iterate(a, b, c.steps);
  const auto gathered    = gather(c.steps == 1 ? b : a);
  if (domain.rank() != 0) return;
  const std::string what = stencil.name() + " " + impl::tuple_string(extent) + " over " + impl::tuple_string(ranks) +
                           " " + describe(c) + " " + typeid(T).name() + " " + typeid(Layout).name();
  EXPECT_EQ(report.executor, "generic") << what;
  EXPECT_EQ(report.steps, c.steps) << what;
  const auto expected = single_domain<T, D, Layout>(stencil, start, c.steps, options);
  long differing = 0, unchanged = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(&expected.data()[i], &gathered.data()[i], sizeof(T)) != 0) ++differing;
    if (std::memcmp(&start.data()[i], &gathered.data()[i], sizeof(T)) == 0) ++unchanged;
  }
  EXPECT_EQ(differing, 0) << what << ": " << differing << " of " << expected.size() << " points differ";
  EXPECT_LT(unchanged, static_cast<long>(expected.size()) / 2) << what << ": the steps left the field as it was";
}

/// Every decomposition of the world's ranks, boundary, fusion depth and overlap.
template <class T, int D, class Layout = Kokkos::LayoutRight>
void check_all(const Stencil<D>& stencil, const std::array<long, D>& extent, const std::vector<int>& fusions) {
  for (const auto& ranks : decompositions<D>(world_size())) {
    for (Boundary boundary : {Boundary::periodic, Boundary::interior, Boundary::fixed_rim}) {
      for (int fusion : fusions) {
        for (bool overlap : {true, false}) {
          Case c;
          c.boundary = boundary, c.fusion = fusion, c.overlap = overlap;
          c.steps = 2 * fusion + 1;  // full launches and a shorter one
          check_case<T, D, Layout>(stencil, extent, ranks, c);
        }
      }
    }
  }
}

/// A stencil of radius (2, 1), one-sided along axis 1, weights of both signs.
Stencil<2> lopsided() {
  return Stencil<2>({{{0, 0}, 0.31}, {{-2, 0}, -0.07}, {{1, 0}, 0.2}, {{0, 1}, 0.17}, {{-1, 1}, -0.05}, {{2, 1}, 0.11}},
                    "lopsided");
}

TEST(Distributed, OneDimensionEqualsOneDomainBitForBit) {
  check_all<float, 1>(presets::heat_1d(), {103}, {1, 3});
  check_all<double, 1>(presets::d1_5p(), {101}, {1, 2});
}

TEST(Distributed, TwoDimensionsEqualOneDomainBitForBit) {
  check_all<float, 2>(presets::heat_2d(), {37, 29}, {1, 3});
  check_all<double, 2, Kokkos::LayoutLeft>(presets::box_2d9p(), {31, 27}, {1, 2});
  check_all<float, 2, Kokkos::LayoutLeft>(lopsided(), {41, 23}, {1, 2});
}

TEST(Distributed, AxesWithoutRadiusAndSingleStepsEqualOneDomain) {
  // No halo along axis 0: its blocks exchange nothing across it.
  const Stencil<2> rows({{{0, -1}, 0.25}, {{0, 0}, 0.5}, {{0, 2}, 0.25}}, "rows");
  for (Boundary boundary : {Boundary::periodic, Boundary::interior, Boundary::fixed_rim}) {
    for (const auto& ranks : decompositions<2>(world_size())) {
      Case c;
      c.boundary = boundary, c.fusion = 2, c.steps = 5;
      check_case<float, 2>(rows, {29, 31}, ranks, c);
      c.fusion = 1, c.steps = 1;  // apply
      check_case<double, 2, Kokkos::LayoutLeft>(presets::box_2d9p(), {29, 31}, ranks, c);
    }
  }
}

TEST(Distributed, ThreeDimensionsEqualOneDomainBitForBit) {
  check_all<float, 3>(presets::heat_3d(), {17, 13, 15}, {1, 2});
  check_all<double, 3, Kokkos::LayoutLeft>(presets::box_3d27p(), {13, 15, 11}, {1});
}

TEST(Distributed, HalfPrecisionAndWideGhostsEqualOneDomain) {
  using half = Kokkos::Experimental::half_t;
  for (Boundary boundary : {Boundary::periodic, Boundary::interior, Boundary::fixed_rim}) {
    Case c;
    c.boundary = boundary, c.fusion = 2, c.steps = 4, c.extra_ghost = 3;
    check_case<half, 2>(presets::heat_2d(), {33, 35}, {0, 0}, c);
    c.fusion = 1, c.steps = 3, c.extra_ghost = 0;
    check_case<half, 3>(presets::heat_3d(), {11, 13, 9}, {0, 0, 0}, c);
  }
}

TEST(Distributed, PeerCopiesOffEqualOneDomain) {
  // On GPUs of one host with an MPI that cannot take device pointers, halos are peer
  // copies unless turned off (staged through the host): both give one domain's bits.
  for (Boundary boundary : {Boundary::periodic, Boundary::fixed_rim}) {
    Case c;
    c.boundary = boundary, c.fusion = 2, c.steps = 5, c.peer_copies = false;
    check_case<float, 2>(presets::box_2d9p(), {39, 33}, {0, 0}, c);
    check_case<float, 3>(presets::heat_3d(), {13, 11, 15}, {0, 0, 0}, c);
  }
}

TEST(Distributed, AutomaticDecompositionAndFusion) {
  for (Boundary boundary : {Boundary::periodic, Boundary::fixed_rim}) {
    Case c;
    c.boundary = boundary, c.fusion = 0, c.steps = 6, c.extra_ghost = 4;
    check_case<float, 2>(presets::box_2d9p(), {45, 39}, {0, 0}, c);
  }
}

TEST(Distributed, GatherScatterRoundTripAndBlocks) {
  const std::array<long, 3> extent{9, 14, 11};
  Domain<3> domain(MPI_COMM_WORLD, extent, Boundary::fixed_rim);
  long owned = 1, total = 0;
  for (int a = 0; a < 3; ++a) owned *= domain.block(a).size;
  MPI_Allreduce(&owned, &total, 1, MPI_LONG, MPI_SUM, domain.comm());
  EXPECT_EQ(total, 9 * 14 * 11);  // the blocks cover the grid once
  const auto start = random_global<double, 3>(extent, 3);
  DistributedField<double, 3, Kokkos::LayoutLeft> f(domain, 2);
  scatter(start, f);
  const auto back = gather(f);
  // Owned lines 128 bytes apart and on 16-byte boundaries (Kokkos aligns allocations to
  // at least 64 bytes): the matrix-core executors' aligned paths.
  const auto aligned = [](const auto& box, int contiguous) {
    using T = typename std::decay_t<decltype(box)>::value_type;
    bool ok = reinterpret_cast<std::uintptr_t>(box.data()) % 16 == 0;
    for (int a = 0; a < static_cast<int>(box.rank); ++a)
      ok = ok && (a == contiguous || box.stride(a) * sizeof(T) % 128 == 0);
    return ok;
  };
  EXPECT_TRUE(aligned(f.owned(), 0));
  DistributedField<Kokkos::Experimental::half_t, 3> h(domain, 3);
  EXPECT_TRUE(aligned(h.owned(), 2));
  EXPECT_TRUE(aligned(h.box({-3, -3, 0}, {2, 2, 2}), 2));
  if (domain.rank() == 0) {
    ASSERT_EQ(back.size(), start.size());
    EXPECT_EQ(std::memcmp(back.data(), start.data(), sizeof(double) * start.size()), 0);
  } else {
    EXPECT_EQ(back.size(), 0u);
  }
}

TEST(Distributed, ExplainNamesTheExchangeAndTimelineRecordsLaunches) {
  Domain<2> domain(MPI_COMM_WORLD, {64, 48}, Boundary::periodic);
  DistributedField<float, 2> a(domain, 2), b(domain, 2);
  scatter(random_global<float, 2>({64, 48}, 5), a);
  DistributedOptions d;
  d.record_timeline = true;
  Options o;
  o.fusion = 2;
  DistributedPlan plan(Kokkos::DefaultExecutionSpace(), presets::heat_2d(), a, b, o, d);
  EXPECT_NE(plan.explain().find("nothing planned yet"), std::string::npos);
  plan.iterate(a, b, 6);
  const std::string text = plan.explain();
  EXPECT_NE(text.find("Decomposition: (64,48)"), std::string::npos) << text;
  const std::string placement =
      "Placement: " + std::to_string(domain.ranks()) + (domain.ranks() == 1 ? " rank" : " ranks");
  EXPECT_NE(text.find(placement), std::string::npos) << text;
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible) {
    EXPECT_NE(text.find(" GPU"), std::string::npos) << text;  // the ranks' GPUs counted
  }
  // Periodic: a halo for every neighbour, sent to another rank or copied within this one.
  int messages = -1, local = 0;
  const std::size_t at = text.find("Exchange: ");
  ASSERT_NE(at, std::string::npos) << text;
  ASSERT_EQ(std::sscanf(text.c_str() + at, "Exchange: %d message", &messages), 1) << text;
  if (const std::size_t copies = text.find("(and "); copies != std::string::npos) {
    ASSERT_EQ(std::sscanf(text.c_str() + copies, "(and %d halo boxes copied within the rank)", &local), 1) << text;
  }
  EXPECT_EQ(messages + local, 8) << text;
  if (domain.ranks() == 1) EXPECT_EQ(local, 8) << text;
  EXPECT_NE(text.find("Weak scaling"), std::string::npos) << text;
  EXPECT_NE(text.find("runs while the halo is in flight"), std::string::npos) << text;  // it overlapped
  ASSERT_EQ(plan.timeline().size(), 4u);  // 2 + 2 + 1 + 1: an even launch count for 6 steps
  for (const LaunchTimeline& t : plan.timeline()) {
    EXPECT_LE(t.exchange_begin, t.exchange_end);
    EXPECT_GE(t.hidden_fraction(), 0.0);
    EXPECT_LE(t.hidden_fraction(), 1.0);
  }
}

/// `call` throws on every rank, each message containing `text`.
template <class Call>
void throws_everywhere(Call&& call, const std::string& text) {
  std::string message;
  try {
    call();
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(text), std::string::npos) << "rank " << world_rank() << ": '" << message << "'";
}

TEST(DistributedErrors, MismatchedDecompositionIsAnErrorOnEveryRank) {
  const long rows = world_rank() == world_size() - 1 ? 40 : 39;  // the last rank differs
  if (world_size() == 1) {
    SUCCEED() << "one rank: nothing to mismatch";
    return;
  }
  throws_everywhere(
      [&] {
        Domain<2> d(MPI_COMM_WORLD, {rows, 30}, Boundary::periodic);
      },
      "every rank must pass the same decomposition");
  const Boundary boundary = world_rank() == 0 ? Boundary::periodic : Boundary::interior;
  throws_everywhere([&] { Domain<1> d(MPI_COMM_WORLD, {50}, boundary); }, "every rank must pass the same");
}

TEST(DistributedErrors, BadPlansAndCallsAreErrorsOnEveryRank) {
  const int n = 8 * world_size() + 3;
  Domain<2> domain(MPI_COMM_WORLD, {n, 21}, Boundary::fixed_rim);
  DistributedField<float, 2> thin_a(domain, 1), thin_b(domain, 1);
  throws_everywhere(
      [&] {
        DistributedPlan p(Kokkos::DefaultExecutionSpace(), presets::box_2d49p(), thin_a, thin_b,
                          Options{Boundary::fixed_rim});
      },
      "must both hold the stencil's radius 3");
  throws_everywhere(
      [&] {
        DistributedPlan p(Kokkos::DefaultExecutionSpace(), presets::heat_2d(), thin_a, thin_b,
                          Options{Boundary::periodic});
      },
      "the domain's boundary applies at its global edges");
  DistributedField<float, 2> a(domain, 2), b(domain, 2);
  throws_everywhere(
      [&] {
        DistributedPlan p(Kokkos::DefaultExecutionSpace(), presets::heat_2d(), a, thin_b, Options{Boundary::fixed_rim});
      },
      "ghost widths differ");
  DistributedPlan plan(Kokkos::DefaultExecutionSpace(), presets::heat_2d(), a, b, Options{Boundary::fixed_rim});
  if (world_size() > 1) {
    throws_everywhere([&] { plan.iterate(a, b, world_rank() == 0 ? 3 : 4); }, "different step counts");
    throws_everywhere([&] { plan.iterate(a, world_rank() == 1 ? thin_b : b, 2); }, "rank 1: ");
  }
  throws_everywhere([&] { plan.iterate(a, a, 2); }, "a and b are the same field");
  throws_everywhere([&] { plan.iterate(a, b, -1); }, "step count -1 is negative");
  // Blocks thinner than the radius: a grid of as many rows as ranks, one row a block.
  if (world_size() > 1) {
    Domain<2> slim(MPI_COMM_WORLD, {world_size(), 30}, Boundary::periodic, {world_size(), 1});
    DistributedField<float, 2> s(slim, 3), t(slim, 3);
    throws_everywhere([&] { DistributedPlan p(Kokkos::DefaultExecutionSpace(), presets::box_2d49p(), s, t); },
                      "smallest block 1 along axis 0 must both hold the stencil's radius 3");
  }
}

}  // namespace
}  // namespace sparstencil::test
