#pragma once
/// Where the ranks of a communicator run: hosts and GPUs (docs/DISTRIBUTED.md).

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "SparStencil_MpiCalls.hpp"

namespace sparstencil {
namespace impl {

/// Where each rank of a communicator runs: its host (ranks that share memory) and its GPU
/// (the device's PCI bus id on that host), numbered from 0 in rank order; GPU -1 for ranks
/// on host memory. Collective.
struct Placement {
  std::vector<int> host, gpu;  ///< by rank
  int hosts = 0, gpus = 0;

  static Placement of(MPI_Comm comm, int device) {
    const char* function = "DistributedPlan";
    int rank = 0, size = 0;
    check_mpi(MPI_Comm_rank(comm, &rank), function, "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), function, "MPI_Comm_size");
    MPI_Comm node = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), function,
              "MPI_Comm_split_type");
    int leader = rank;  // a host is named by its lowest rank
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node), function, "MPI_Allreduce");
    check_mpi(MPI_Comm_free(&node), function, "MPI_Comm_free");
    constexpr int id_length = 32;  // cudaDeviceGetPCIBusId's "dddd:bb:dd.f" and room to spare
    std::array<char, id_length> id{};
    if (device >= 0) {  // where the bus id is unknown, the device's number (no rank may throw alone here)
      const std::string number = "device " + std::to_string(device);
      std::copy(number.begin(), number.end(), id.begin());
#if defined(KOKKOS_ENABLE_CUDA)
      if (cudaDeviceGetPCIBusId(id.data(), id_length - 1, device) != cudaSuccess) cudaGetLastError();
#endif
    }
    std::vector<int> leaders(static_cast<std::size_t>(size));
    std::vector<char> ids(static_cast<std::size_t>(size) * id_length);
    check_mpi(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, comm), function, "MPI_Allgather");
    check_mpi(MPI_Allgather(id.data(), id_length, MPI_CHAR, ids.data(), id_length, MPI_CHAR, comm), function,
              "MPI_Allgather");
    Placement p;
    std::map<int, int> hosts;
    std::map<std::pair<int, std::string>, int> gpus;
    for (int r = 0; r < size; ++r) {
      const int h = hosts.emplace(leaders[r], static_cast<int>(hosts.size())).first->second;
      const std::string bus(&ids[static_cast<std::size_t>(r) * id_length]);
      p.host.push_back(h);
      p.gpu.push_back(bus.empty() ? -1
                                  : gpus.emplace(std::make_pair(h, bus), static_cast<int>(gpus.size())).first->second);
    }
    p.hosts = static_cast<int>(hosts.size());
    p.gpus  = static_cast<int>(gpus.size());
    return p;
  }

  /// One line for explain(): ranks, hosts, GPUs and how many ranks share one.
  std::string describe() const {
    const int ranks  = static_cast<int>(host.size());
    std::string text = "Placement: " + std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " on " +
                       std::to_string(hosts) + (hosts == 1 ? " host" : " hosts");
    if (gpus == 0) return text + ", host memory\n";
    std::vector<int> per_gpu(static_cast<std::size_t>(gpus));
    for (int g : gpu) ++per_gpu[static_cast<std::size_t>(g)];
    const int most = *std::max_element(per_gpu.begin(), per_gpu.end());
    text += ", " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
    if (most == 1) return text + ", one rank a GPU\n";
    return text + ", up to " + std::to_string(most) +
           " ranks sharing a GPU (time-sliced unless NVIDIA's MPS runs them together; one GPU a rank: "
           "Kokkos maps devices by local rank, docs/DISTRIBUTED.md)\n";
  }
};

}  // namespace impl

}  // namespace sparstencil
