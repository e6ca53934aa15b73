#pragma once
/// A grid decomposed into blocks, one a rank, and the model of its halo exchange: the
/// arithmetic of distributed plans, free of MPI and Kokkos (the front-end in src/mpi runs
/// it). docs/DISTRIBUTED.md says how the pieces fit.
#include <array>
#include <string>
#include <vector>

namespace sparstencil {

/// One axis' share of a block: points [begin, begin + size) of the global axis.
struct BlockRange {
  long begin = 0, size = 0;
};

/// The block of coordinate `coord` among `parts` blocks of an axis of n points: the first
/// n % parts blocks one point larger than the rest. Throws for parts < 1, a coordinate out
/// of range or more parts than points.
BlockRange block_range(long n, int parts, int coord);

/// Ranks per axis for `ranks` ranks over a grid of `extent` points: the factorisation whose
/// largest block has the least surface (the bytes a halo exchange moves; of equal ones, the
/// most even), axes given a
/// count in `fixed` (entries > 0) keeping it, no axis split into blocks thinner than
/// `min_block` points. Throws naming the values when no factorisation fits.
std::vector<int> process_grid(int ranks, const std::vector<long>& extent, const std::vector<int>& fixed = {},
                              long min_block = 1);

/// The neighbour directions of a D-dimensional block: every offset in {-1, 0, 1}^D but
/// zero (faces, edges and corners: 2, 8 or 26), in a fixed order shared by every rank.
std::vector<std::array<int, 3>> neighbour_directions(int D);

/// The link a halo exchange crosses, as the user gives it for the machine.
struct Interconnect {
  double bandwidth_GBps = 12.0;  ///< rank to rank, each way (shared memory on one node: about 10-20)
  double latency_us     = 3.0;   ///< per message
  /// Device-to-host and back for host-staged exchanges (GPU memory and an MPI that is not
  /// CUDA-aware); 0: no staging (host memory, or device buffers handed to MPI).
  double staging_GBps = 0.0;
  /// Device to device between the GPUs of one host (peer copies where MPI is not
  /// CUDA-aware; NVLink: hundreds of GB/s, PCIe: tens).
  double peer_GBps = 100.0;
};

/// What one exchange moves for one rank and how long the model says it takes.
struct ExchangeEstimate {
  long bytes_sent = 0;  ///< the same come back
  int messages    = 0;  ///< sends to other ranks (as many receives)
  /// Halos a rank sends itself (along a periodic axis it spans alone): copied on its
  /// device without MPI, left out of the time.
  int local_copies = 0;
  /// Of those, the messages copied device to device to a GPU of the same host, and
  /// their bytes (the rest cross the link).
  int peer_messages = 0;
  long peer_bytes   = 0;
  double seconds    = 0;  ///< latency a message; bytes over the link, staging both ways; peer bytes over the peer link
};

/// The model of an exchange of `messages` messages of `bytes_sent` bytes in all, of which
/// `peer_messages` (`peer_bytes`) are peer copies between GPUs of one host.
ExchangeEstimate exchange_estimate(long bytes_sent, int messages, const Interconnect& link, long peer_bytes = 0,
                                   int peer_messages = 0);

/// A distributed launch: the interior computed while the halo is in flight, then the band.
struct DistributedPrediction {
  double launch_seconds   = 0;  ///< the local block's launch alone (no exchange)
  double inner_seconds    = 0;  ///< its share not waiting for the halo
  double band_seconds     = 0;  ///< the rest, after the halo arrives
  double exchange_seconds = 0;
  bool overlapped         = false;  ///< whether the interior runs while the halo is in flight
  /// Fraction of the exchange spent while the interior computes (1: hidden).
  double hidden_fraction = 0;
  double seconds         = 0;  ///< the launch with its exchange
  /// Weak scaling: the rate per rank with the exchange over the rate alone.
  double weak_scaling_efficiency = 0;
};

/// Combines the local launch's predicted time, the share of its points in the inner box
/// (0 where there is none) and the exchange into one launch's prediction.
DistributedPrediction predict_distributed(double launch_seconds, double inner_share, const ExchangeEstimate& exchange,
                                          bool overlapped);

/// explain()'s paragraph on the decomposition and its exchange.
std::string explain_distributed(const std::vector<int>& ranks_per_axis, const std::vector<long>& global_extent,
                                const std::vector<long>& block_extent, const std::vector<int>& halo_width,
                                int steps_per_exchange, const Interconnect& link, const ExchangeEstimate& exchange,
                                const DistributedPrediction& prediction);

}  // namespace sparstencil
