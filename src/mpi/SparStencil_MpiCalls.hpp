#pragma once
/// MPI calls as the distributed front-end makes them (docs/DISTRIBUTED.md): each checked,
/// errors agreed on by every rank (any rank's error is thrown on all of them, naming the
/// ranks), values sent as their bytes with counts checked against MPI's int limit.

#include <mpi.h>

#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "SparStencil_Error.hpp"

namespace sparstencil {
namespace impl {

inline void check_mpi(int code, const char* function, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail(function, call, " failed: ", std::string(text, static_cast<std::size_t>(length)));
}

/// Every rank's verdict on a step all ranks take together: where any rank's `local_error`
/// is not empty, every rank throws one error naming each failing rank and its message.
inline void agree(MPI_Comm comm, const char* function, const std::string& local_error) {
  int bad = local_error.empty() ? 0 : 1, any = 0;
  check_mpi(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm), function, "MPI_Allreduce");
  if (!any) return;
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
  const int length = static_cast<int>(local_error.size());
  std::vector<int> lengths(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm), function, "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < ranks; ++r) offsets[r] = total, total += lengths[r];
  std::string all(static_cast<std::size_t>(total), ' ');
  check_mpi(
      MPI_Allgatherv(local_error.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm),
      function, "MPI_Allgatherv");
  std::string message;
  int failing = 0;
  for (int r = 0; r < ranks; ++r) {
    if (lengths[r] == 0) continue;
    if (++failing > 4) continue;  // the first few name the problem
    message += (message.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": " +
               all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r]));
  }
  if (failing > 4) message += "; and " + std::to_string(failing - 4) + " more ranks";
  fail(function, "failed on ", failing, " of ", ranks, " ranks: ", message);
}

/// Runs `check` on this rank and agrees with every rank on the outcome (agree()).
template <class Check>
void on_every_rank(MPI_Comm comm, const char* function, Check&& check) {
  std::string error;
  try {
    check();
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "an exception without a message";
  }
  agree(comm, function, error);
}

/// An MPI type of one T (T's bytes as they are), made once, so counts are elements.
template <class T>
MPI_Datatype element_type() {
  static const MPI_Datatype type = [] {
    MPI_Datatype t;
    MPI_Type_contiguous(static_cast<int>(sizeof(T)), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
  }();
  return type;
}

inline int element_count(const char* function, long count) {
  if (count > INT_MAX) fail(function, "a message of ", count, " values exceeds MPI's count limit (2^31 - 1)");
  return static_cast<int>(count);
}

}  // namespace impl

}  // namespace sparstencil
