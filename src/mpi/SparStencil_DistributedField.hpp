#pragma once
/// A field decomposed over the ranks (docs/DISTRIBUTED.md): each rank's block in a padded
/// allocation, boxes of it, and the whole grid gathered to or scattered from one rank.

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <array>
#include <climits>
#include <string>
#include <type_traits>

#include "SparStencil_Decomposition.hpp"
#include "SparStencil_HaloBoxes.hpp"
#include "SparStencil_MpiCalls.hpp"
#include "SparStencil_Views.hpp"

namespace sparstencil {

/// One rank's block of a decomposed field in a padded allocation: `ghost_width` points on
/// each side of every axis for the halo (global edges that are not periodic leave theirs
/// unused). Views of boxes of it are LayoutStride subviews in the block's coordinates
/// (0 the block's first owned point, -ghost_width the first ghost).
template <class T, int D, class Layout = Kokkos::LayoutRight,
          class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedField {
 public:
  using value_type          = T;
  using padded_view         = GridView<T, D, Layout, MemSpace>;
  using box_view            = Kokkos::View<typename impl::grid_data<T, D>::type, Kokkos::LayoutStride, MemSpace>;
  using memory_space        = MemSpace;
  static constexpr int rank = D;

  DistributedField(const Domain<D>& domain, int ghost_width, const std::string& label = "field")
      : m_domain(domain), m_ghost(ghost_width) {
    std::array<long, D> padded{};
    impl::on_every_rank(domain.comm(), "DistributedField", [&] {
      if (ghost_width < 0) impl::fail("DistributedField", "ghost width ", ghost_width, " is negative");
      // Along the contiguous axis the owned points start, and every line of the padded
      // block starts, on a 128-byte boundary (a cache line): loads line up as on a plain
      // grid, and the matrix-core executors take their aligned paths (16 bytes).
      const int contiguous = std::is_same_v<Layout, Kokkos::LayoutLeft> ? 0 : D - 1;
      const long unit      = 128 % sizeof(T) == 0 ? static_cast<long>(128 / sizeof(T)) : 1;
      const auto round_up  = [&](long x) { return (x + unit - 1) / unit * unit; };
      for (int a = 0; a < D; ++a) {
        m_extent[a] = domain.block(a).size;
        m_origin[a] = a == contiguous ? round_up(ghost_width) : ghost_width;
        padded[a] =
            a == contiguous ? round_up(m_origin[a] + m_extent[a] + ghost_width) : m_extent[a] + 2L * ghost_width;
        if (padded[a] > INT_MAX) {
          impl::fail("DistributedField", "a padded block of ", padded[a], " points along axis ", a);
        }
      }
    });
    std::array<int, D> e{};
    for (int a = 0; a < D; ++a) e[a] = static_cast<int>(padded[a]);
    m_padded = make_view<padded_view>(label, e);
  }

  /// A new field shaped like `like` (same domain and ghost width); this rank alone.
  DistributedField(const DistributedField& like, const std::string& label)
      : m_domain(like.m_domain), m_ghost(like.m_ghost), m_extent(like.m_extent), m_origin(like.m_origin) {
    std::array<int, D> e{};
    for (int a = 0; a < D; ++a) e[a] = static_cast<int>(like.m_padded.extent(a));
    m_padded = make_view<padded_view>(label, e);
  }
  DistributedField(const DistributedField&)            = default;
  DistributedField& operator=(const DistributedField&) = default;

  const Domain<D>& domain() const { return m_domain; }
  int ghost_width() const { return m_ghost; }
  /// This rank's block extents (without ghosts).
  const std::array<long, D>& extent() const { return m_extent; }
  /// The padded allocation: block coordinate 0 along axis a is its index origin()[a]
  /// (the ghost width, more along the contiguous axis so that owned lines start aligned).
  const padded_view& padded() const { return m_padded; }
  const std::array<long, D>& origin() const { return m_origin; }
  /// Points [lo, hi) of the block's coordinates (from -ghost_width to extent + ghost_width).
  box_view box(const std::array<long, D>& lo, const std::array<long, D>& hi) const {
    std::array<long, D> begin{}, size{};
    for (int a = 0; a < D; ++a) {
      if (lo[a] < -m_ghost || hi[a] > m_extent[a] + m_ghost || lo[a] > hi[a]) {
        impl::fail("DistributedField::box", "box ", impl::tuple_string(lo), " to ", impl::tuple_string(hi),
                   " leaves the padded block (", -m_ghost, " to ", impl::tuple_string(m_extent), " + ", m_ghost, ")");
      }
      begin[a] = lo[a] + m_origin[a], size[a] = hi[a] - lo[a];
    }
    return impl::subbox<D>(m_padded, begin, size);
  }
  /// The points this rank owns.
  box_view owned() const { return box({}, m_extent); }

 private:
  Domain<D> m_domain;
  int m_ghost = 0;
  std::array<long, D> m_extent{}, m_origin{};
  padded_view m_padded;
};

namespace impl {
/// A field's padded block copied to the host (contiguous Views only cross memory spaces),
/// and the offsets of its owned points there.
template <class Field>
auto padded_on_host(const Field& f) {
  auto mirror = Kokkos::create_mirror_view(f.padded());
  Kokkos::deep_copy(mirror, f.padded());
  return mirror;
}
}  // namespace impl

/// The whole grid on `root` (a host View of the global extents; an empty View on the other
/// ranks). Collective.
template <class Field>
GridView<typename Field::value_type, Field::rank, Kokkos::LayoutRight, Kokkos::HostSpace> gather(const Field& f,
                                                                                                 int root = 0) {
  using T                 = typename Field::value_type;
  constexpr int D         = Field::rank;
  using Global            = GridView<T, D, Kokkos::LayoutRight, Kokkos::HostSpace>;
  const Domain<D>& domain = f.domain();
  const MPI_Comm comm     = domain.comm();
  std::vector<T> mine(
      static_cast<std::size_t>(std::accumulate(f.extent().begin(), f.extent().end(), 1L, std::multiplies<long>())));
  Kokkos::deep_copy(impl::packed<Kokkos::HostSpace, D>(mine.data(), f.extent()),
                    impl::subbox<D>(impl::padded_on_host(f), f.origin(), f.extent()));
  const int ranks = domain.ranks();
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks));
  long total = 0;
  for (int r = 0; r < ranks; ++r) {
    long n = 1;
    for (int a = 0; a < D; ++a) n *= domain.block_of(r, a).size;
    counts[r]  = impl::element_count("gather", n);
    offsets[r] = impl::element_count("gather", total);
    total += n;
  }
  std::vector<T> all(domain.rank() == root ? static_cast<std::size_t>(total) : 0);
  impl::check_mpi(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), impl::element_type<T>(), all.data(),
                              counts.data(), offsets.data(), impl::element_type<T>(), root, comm),
                  "gather", "MPI_Gatherv");
  if (domain.rank() != root) return Global();
  std::array<int, D> e{};
  for (int a = 0; a < D; ++a) e[a] = static_cast<int>(domain.extent()[a]);
  Global global = make_view<Global>("gathered", e);
  for (int r = 0; r < ranks; ++r) {
    std::array<long, D> begin{}, size{};
    for (int a = 0; a < D; ++a) begin[a] = domain.block_of(r, a).begin, size[a] = domain.block_of(r, a).size;
    Kokkos::deep_copy(impl::subbox<D>(global, begin, size),
                      impl::packed<Kokkos::HostSpace, D>(all.data() + offsets[r], size));
  }
  return global;
}

/// Sets each rank's owned points from `global`, a host View of the global extents read on
/// every rank (each copies its own block; no messages). Ghosts are left as they were.
template <class Field, class GlobalView>
void scatter(const GlobalView& global, Field& f) {
  constexpr int D         = Field::rank;
  const Domain<D>& domain = f.domain();
  impl::on_every_rank(domain.comm(), "scatter", [&] {
    for (int a = 0; a < D; ++a) {
      if (static_cast<long>(global.extent(a)) != domain.extent()[a]) {
        impl::fail("scatter", "a global View of extents ", impl::extents_string(global), " for a grid of ",
                   impl::tuple_string(domain.extent()));
      }
    }
  });
  std::array<long, D> begin{}, size{};
  for (int a = 0; a < D; ++a) begin[a] = domain.block(a).begin, size[a] = domain.block(a).size;
  auto mirror = impl::padded_on_host(f);
  Kokkos::deep_copy(impl::subbox<D>(mirror, f.origin(), size), impl::subbox<D>(global, begin, size));
  Kokkos::deep_copy(f.padded(), mirror);
}

}  // namespace sparstencil
