#pragma once
/// A grid decomposed into blocks over the ranks of an MPI communicator (docs/DISTRIBUTED.md).

#include <mpi.h>

#include <array>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "SparStencil_Domain.hpp"
#include "SparStencil_MpiCalls.hpp"
#include "SparStencil_StencilPlan.hpp"

namespace sparstencil {

/// A grid of `extent` points decomposed into blocks over the ranks of an MPI communicator,
/// as a Cartesian topology: the boundary's periodicity joins the ends of every axis. Copies
/// share the communicator, which is freed with the last copy (before MPI_Finalize).
template <int D>
class Domain {
  static_assert(D >= 1 && D <= 3, "sparstencil: a Domain has 1, 2 or 3 axes");

 public:
  /// Decomposes over the ranks of `comm`: `ranks_per_axis` entries > 0 are kept, zeros are
  /// chosen (process_grid). A communicator with a Cartesian topology of D axes is taken as
  /// it is (its counts and periodicity must agree with the arguments). Collective: every
  /// rank must pass the same arguments, and any mismatch is an error on every rank.
  Domain(MPI_Comm comm, const std::array<long, D>& extent, Boundary boundary,
         const std::array<int, D>& ranks_per_axis = {})
      : m_state(std::make_shared<State>()) {
    const char* function = "Domain";
    State& s             = *m_state;
    s.extent             = extent;
    s.boundary           = boundary;
    int rank = 0, size = 0;
    impl::check_mpi(MPI_Comm_rank(comm, &rank), function, "MPI_Comm_rank");
    impl::check_mpi(MPI_Comm_size(comm, &size), function, "MPI_Comm_size");
    // The same arguments on every rank.
    std::vector<long> mine;
    for (long e : extent) mine.push_back(e);
    mine.push_back(static_cast<long>(boundary));
    for (int p : ranks_per_axis) mine.push_back(p);
    std::vector<long> all(mine.size() * static_cast<std::size_t>(size));
    impl::check_mpi(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_LONG, all.data(),
                                  static_cast<int>(mine.size()), MPI_LONG, comm),
                    function, "MPI_Allgather");
    impl::on_every_rank(comm, function, [&] {
      const std::vector<long> first(all.begin(), all.begin() + static_cast<long>(mine.size()));
      if (first != mine) {
        impl::fail(function, "this rank asks for a grid of ", impl::tuple_string(extent), ", boundary ",
                   to_string(boundary), ", ranks per axis ", impl::tuple_string(ranks_per_axis),
                   " where rank 0 asks for ", impl::tuple_string(std::vector<long>(first.begin(), first.begin() + D)),
                   ", boundary ", to_string(static_cast<Boundary>(first[D])), ", ranks per axis ",
                   impl::tuple_string(std::vector<long>(first.begin() + D + 1, first.end())),
                   ": every rank must pass the same decomposition");
      }
      for (int a = 0; a < D; ++a) {
        if (extent[a] < 1) impl::fail(function, "extent ", impl::tuple_string(extent), " has an empty axis");
      }
    });
    int topology = MPI_UNDEFINED;
    impl::check_mpi(MPI_Topo_test(comm, &topology), function, "MPI_Topo_test");
    const bool periodic = boundary == Boundary::periodic;
    if (topology == MPI_CART) {
      int ndims = 0;
      impl::check_mpi(MPI_Cartdim_get(comm, &ndims), function, "MPI_Cartdim_get");
      std::array<int, 3> dims{}, periods{}, coords{};
      impl::on_every_rank(comm, function, [&] {
        if (ndims != D)
          impl::fail(function, "the communicator's Cartesian topology has ", ndims, " axes, the grid ", D);
        impl::check_mpi(MPI_Cart_get(comm, D, dims.data(), periods.data(), coords.data()), function, "MPI_Cart_get");
        for (int a = 0; a < D; ++a) {
          if ((periods[a] != 0) != periodic) {
            impl::fail(function, "the communicator's topology is ", periods[a] ? "" : "not ", "periodic along axis ", a,
                       " but the boundary is ", to_string(boundary));
          }
          if (ranks_per_axis[a] > 0 && ranks_per_axis[a] != dims[a]) {
            impl::fail(function, "ranks per axis ", impl::tuple_string(ranks_per_axis),
                       " differ from the communicator's topology");
          }
          s.dims[a] = dims[a];
        }
      });
      impl::check_mpi(MPI_Comm_dup(comm, &s.comm), function, "MPI_Comm_dup");
    } else {
      impl::on_every_rank(comm, function, [&] {
        const std::vector<int> dims = process_grid(size, std::vector<long>(extent.begin(), extent.end()),
                                                   std::vector<int>(ranks_per_axis.begin(), ranks_per_axis.end()));
        for (int a = 0; a < D; ++a) s.dims[a] = dims[a];
      });
      std::array<int, D> periods{};
      for (int a = 0; a < D; ++a) periods[a] = periodic ? 1 : 0;
      impl::check_mpi(MPI_Cart_create(comm, D, s.dims.data(), periods.data(), 0, &s.comm), function, "MPI_Cart_create");
    }
    impl::check_mpi(MPI_Comm_rank(s.comm, &s.rank), function, "MPI_Comm_rank");
    impl::check_mpi(MPI_Comm_size(s.comm, &s.size), function, "MPI_Comm_size");
    s.coords = coords_of(s.rank);
    impl::on_every_rank(s.comm, function, [&] {
      for (int a = 0; a < D; ++a) {
        if (s.extent[a] < s.dims[a]) {
          impl::fail(function, "axis ", a, " of ", s.extent[a], " points cannot make ", s.dims[a], " blocks");
        }
      }
    });
  }

  MPI_Comm comm() const { return m_state->comm; }
  int rank() const { return m_state->rank; }
  int ranks() const { return m_state->size; }
  Boundary boundary() const { return m_state->boundary; }
  const std::array<long, D>& extent() const { return m_state->extent; }
  /// Ranks along each axis.
  const std::array<int, D>& ranks_per_axis() const { return m_state->dims; }
  const std::array<int, D>& coords() const { return m_state->coords; }

  std::array<int, D> coords_of(int rank) const {
    std::array<int, D> c{};
    impl::check_mpi(MPI_Cart_coords(m_state->comm, rank, D, c.data()), "Domain", "MPI_Cart_coords");
    return c;
  }
  /// The block of `rank` (this rank's by default) along `axis`.
  BlockRange block(int axis) const {
    return block_range(m_state->extent[axis], m_state->dims[axis], m_state->coords[axis]);
  }
  BlockRange block_of(int rank, int axis) const {
    return block_range(m_state->extent[axis], m_state->dims[axis], coords_of(rank)[axis]);
  }
  /// The smallest block any rank holds along `axis`.
  long smallest_block(int axis) const { return m_state->extent[axis] / m_state->dims[axis]; }

  /// The rank in `direction` (entries -1, 0, 1 for the first D axes), or MPI_PROC_NULL past
  /// a global edge that is not periodic.
  int neighbour(const std::array<int, 3>& direction) const {
    std::array<int, D> c = m_state->coords;
    for (int a = 0; a < D; ++a) {
      c[a] += direction[a];
      if (c[a] < 0 || c[a] >= m_state->dims[a]) {
        if (m_state->boundary != Boundary::periodic) return MPI_PROC_NULL;
        c[a] = (c[a] + m_state->dims[a]) % m_state->dims[a];
      }
    }
    int r = MPI_PROC_NULL;
    impl::check_mpi(MPI_Cart_rank(m_state->comm, c.data(), &r), "Domain", "MPI_Cart_rank");
    return r;
  }
  /// Whether this block has a neighbour (a rank, maybe itself) on `side` (-1, +1) of `axis`.
  bool has_neighbour(int axis, int side) const {
    std::array<int, 3> d{};
    d[axis] = side;
    return neighbour(d) != MPI_PROC_NULL;
  }

  bool same_as(const Domain& other) const { return m_state == other.m_state; }

 private:
  struct State {
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0, size = 1;
    std::array<long, D> extent{};
    std::array<int, D> dims{}, coords{};
    Boundary boundary = Boundary::periodic;
    ~State() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
    }
  };
  std::shared_ptr<State> m_state;
};

}  // namespace sparstencil
