// A rank that dies in the middle of a run: the last rank exits (status 3) where the others
// enter a distributed iterate and wait for it. The MPI runtime must end the job with an
// error; expect_failure.cmake checks that it does within its time limit.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib>

#include "SparStencil.hpp"
#include "SparStencil_Distributed.hpp"

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  Kokkos::initialize(argc, argv);
  {
    using namespace sparstencil;
    Domain<2> domain(MPI_COMM_WORLD, {64, 64}, Boundary::periodic);
    DistributedField<float, 2> a(domain, 1), b(domain, 1);
    Kokkos::deep_copy(a.padded(), 1.0f);
    DistributedPlan plan(Kokkos::DefaultExecutionSpace(), presets::heat_2d(), a, b);
    if (domain.rank() == domain.ranks() - 1) {
      std::fprintf(stderr, "rank %d stops here, the others in iterate\n", domain.rank());
      std::exit(3);
    }
    plan.iterate(a, b, 1000000);
  }
  Kokkos::finalize();
  MPI_Finalize();
  return 0;
}
