// The MPI tests' main: MPI, then Kokkos, then GoogleTest on every rank. Every rank runs
// every test (they are collective); rank 0 prints the usual report, the others only their
// failures, and the program fails where any rank failed.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <gtest/gtest.h>

namespace {
/// Prints a rank's failed assertions, prefixed with the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : m_rank(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", m_rank, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
    }
  }

 private:
  int m_rank;
};
}  // namespace

int main(int argc, char* argv[]) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  Kokkos::initialize(argc, argv);
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  Kokkos::finalize();
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any && !failed) std::fprintf(stderr, "a test failed on another rank (its lines above)\n");
  MPI_Finalize();
  return any;
}
