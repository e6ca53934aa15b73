#include "SparStencil_Domain.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>

#include "SparStencil_Error.hpp"

namespace sparstencil {

BlockRange block_range(long n, int parts, int coord) {
  if (parts < 1) impl::fail("block_range", "block count ", parts, " must be at least 1");
  if (coord < 0 || coord >= parts) impl::fail("block_range", "block ", coord, " is not one of 0..", parts - 1);
  if (n < parts) impl::fail("block_range", n, " points cannot make ", parts, " blocks");
  const long base = n / parts, larger = n % parts;
  return {coord * base + std::min<long>(coord, larger), base + (coord < larger ? 1 : 0)};
}

std::vector<int> process_grid(int ranks, const std::vector<long>& extent, const std::vector<int>& fixed,
                              long min_block) {
  const int D = static_cast<int>(extent.size());
  if (D < 1 || D > 3) impl::fail("process_grid", "a grid of ", D, " axes (1 to 3 wanted)");
  if (ranks < 1) impl::fail("process_grid", "rank count ", ranks, " must be at least 1");
  if (!fixed.empty() && static_cast<int>(fixed.size()) != D) {
    impl::fail("process_grid", "ranks per axis ", impl::tuple_string(fixed), " for a ", D, "-D grid");
  }
  long fixed_product = 1;
  for (int a = 0; a < static_cast<int>(fixed.size()); ++a) {
    if (fixed[a] < 0) impl::fail("process_grid", "ranks per axis ", impl::tuple_string(fixed), " has a negative count");
    if (fixed[a] > 0) fixed_product *= fixed[a];
  }
  if (ranks % fixed_product != 0) {
    impl::fail("process_grid", "ranks per axis ", impl::tuple_string(fixed), " do not divide the ", ranks, " ranks");
  }
  std::vector<int> best, dims(D, 1);
  double best_surface = std::numeric_limits<double>::infinity();
  int best_largest    = 0;
  // Every factorisation, the axes in order; of equal surface and evenness the first (more
  // ranks on earlier, slower axes: contiguous messages in LayoutRight) is kept.
  std::function<void(int, int)> place = [&](int a, int left) {
    if (a == D) {
      if (left != 1) return;
      double surface = 0;
      for (int k = 0; k < D; ++k) {
        if (dims[k] == 1) continue;
        double face = 1;
        for (int j = 0; j < D; ++j) {
          if (j != k) face *= static_cast<double>((extent[j] + dims[j] - 1) / dims[j]);
        }
        surface += 2 * face;
      }
      // Equal surfaces: the more even split (its blocks' corners and edges are fewer).
      const int largest = *std::max_element(dims.begin(), dims.end());
      if (surface < best_surface || (surface == best_surface && largest < best_largest)) {
        best_surface = surface, best_largest = largest, best = dims;
      }
      return;
    }
    const bool given = !fixed.empty() && fixed[a] > 0;
    for (int p = left; p >= 1; --p) {
      if (left % p != 0 || (given && p != fixed[a])) continue;
      if (extent[a] / p < min_block) continue;
      dims[a] = p;
      place(a + 1, left / p);
    }
    dims[a] = 1;
  };
  place(0, ranks);
  if (best.empty()) {
    impl::fail("process_grid", ranks, " ranks cannot split a grid of ", impl::tuple_string(extent),
               fixed.empty() ? std::string() : " with ranks per axis " + impl::tuple_string(fixed),
               " into blocks of at least ", min_block, " points an axis");
  }
  return best;
}

std::vector<std::array<int, 3>> neighbour_directions(int D) {
  std::vector<std::array<int, 3>> directions;
  for (int z = -1; z <= 1; ++z) {
    for (int y = (D >= 2 ? -1 : 0); y <= (D >= 2 ? 1 : 0); ++y) {
      for (int x = (D >= 3 ? -1 : 0); x <= (D >= 3 ? 1 : 0); ++x) {
        if (z == 0 && y == 0 && x == 0) continue;
        directions.push_back({z, y, x});
      }
    }
  }
  return directions;
}

ExchangeEstimate exchange_estimate(long bytes_sent, int messages, const Interconnect& link, long peer_bytes,
                                   int peer_messages) {
  if (peer_messages < 0 || peer_messages > messages || peer_bytes < 0 || peer_bytes > bytes_sent) {
    impl::fail("exchange_estimate", peer_messages, " peer messages of ", peer_bytes, " bytes are not part of ",
               messages, " messages of ", bytes_sent, " bytes");
  }
  ExchangeEstimate e;
  e.bytes_sent    = bytes_sent;
  e.messages      = messages;
  e.peer_messages = peer_messages;
  e.peer_bytes    = peer_bytes;
  if (messages == 0) return e;
  const double bytes = static_cast<double>(bytes_sent - peer_bytes);
  e.seconds          = messages * link.latency_us * 1e-6 + bytes / (link.bandwidth_GBps * 1e9);
  if (link.staging_GBps > 0) e.seconds += 2 * bytes / (link.staging_GBps * 1e9);  // down, then up
  if (peer_bytes > 0) e.seconds += static_cast<double>(peer_bytes) / (link.peer_GBps * 1e9);
  return e;
}

DistributedPrediction predict_distributed(double launch_seconds, double inner_share, const ExchangeEstimate& exchange,
                                          bool overlapped) {
  DistributedPrediction p;
  p.launch_seconds   = launch_seconds;
  p.exchange_seconds = exchange.seconds;
  p.overlapped       = overlapped && inner_share > 0;
  p.inner_seconds    = p.overlapped ? launch_seconds * std::clamp(inner_share, 0.0, 1.0) : 0.0;
  p.band_seconds     = launch_seconds - p.inner_seconds;
  if (exchange.seconds <= 0) {
    p.hidden_fraction = 1;
  } else {
    p.hidden_fraction = std::min(1.0, p.inner_seconds / exchange.seconds);
  }
  p.seconds                 = std::max(p.inner_seconds, exchange.seconds) + p.band_seconds;
  p.weak_scaling_efficiency = p.seconds > 0 ? launch_seconds / p.seconds : 1.0;
  return p;
}

std::string explain_distributed(const std::vector<int>& ranks_per_axis, const std::vector<long>& global_extent,
                                const std::vector<long>& block_extent, const std::vector<int>& halo_width,
                                int steps_per_exchange, const Interconnect& link, const ExchangeEstimate& exchange,
                                const DistributedPrediction& p) {
  std::ostringstream out;
  out << std::setprecision(3);
  out << "Decomposition: " << impl::tuple_string(global_extent) << " over ranks " << impl::tuple_string(ranks_per_axis)
      << "; this rank's block " << impl::tuple_string(block_extent) << ", halo " << impl::tuple_string(halo_width)
      << " (" << steps_per_exchange << " step" << (steps_per_exchange == 1 ? "" : "s") << " an exchange)\n";
  out << "Exchange: " << exchange.messages << (exchange.messages == 1 ? " message, " : " messages, ")
      << exchange.bytes_sent / 1e6 << " MB each way";
  if (exchange.local_copies > 0) out << " (and " << exchange.local_copies << " halo boxes copied within the rank)";
  out << "; link " << link.bandwidth_GBps << " GB/s, " << link.latency_us << " us a message";
  if (link.staging_GBps > 0) out << ", staged through the host at " << link.staging_GBps << " GB/s";
  if (exchange.peer_messages > 0) {
    out << "; " << exchange.peer_messages << " of the messages (" << exchange.peer_bytes / 1e6
        << " MB) copied device to device to GPUs of this host at " << link.peer_GBps << " GB/s";
  }
  out << ": " << exchange.seconds * 1e6 << " us\n";
  if (p.overlapped) {
    out << "Overlap: the interior (" << p.inner_seconds * 1e6 << " us) runs while the halo is in flight, the band ("
        << p.band_seconds * 1e6 << " us) after it arrives; the exchange is " << (p.hidden_fraction >= 1 ? "" : "not ")
        << "hidden (" << 100 * p.hidden_fraction << "% of it)\n";
  } else {
    out << "Overlap: none (the block has no interior away from its halo); the launch (" << p.launch_seconds * 1e6
        << " us) waits for the exchange\n";
  }
  out << "Weak scaling: predicted " << p.seconds * 1e6 << " us a launch, efficiency " << 100 * p.weak_scaling_efficiency
      << "% of one rank alone on its block\n";
  return out.str();
}

}  // namespace sparstencil
