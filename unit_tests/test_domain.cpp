// The arithmetic of decomposed grids (core/plan/SparStencil_Domain): blocks, process grids,
// neighbour directions and the exchange model. The MPI runs are in unit_tests/mpi.
#include <gtest/gtest.h>

#include <numeric>

#include "SparStencil_Domain.hpp"

namespace sparstencil {
namespace {

TEST(Domain, BlocksCoverAnAxisOnceLargerFirst) {
  for (long n : {7L, 10L, 101L}) {
    for (int parts = 1; parts <= 7 && parts <= n; ++parts) {
      long next = 0;
      for (int c = 0; c < parts; ++c) {
        const BlockRange b = block_range(n, parts, c);
        EXPECT_EQ(b.begin, next) << n << " " << parts << " " << c;
        EXPECT_TRUE(b.size == n / parts || b.size == n / parts + 1);
        if (c > 0) EXPECT_LE(b.size, block_range(n, parts, c - 1).size);
        next = b.begin + b.size;
      }
      EXPECT_EQ(next, n);
    }
  }
  EXPECT_THROW(block_range(3, 4, 0), std::runtime_error);
  EXPECT_THROW(block_range(10, 2, 2), std::runtime_error);
  EXPECT_THROW(block_range(10, 0, 0), std::runtime_error);
}

TEST(Domain, ProcessGridsMinimiseTheSurfaceAndKeepGivenCounts) {
  EXPECT_EQ(process_grid(4, {1000, 1000}), (std::vector<int>{2, 2}));
  EXPECT_EQ(process_grid(4, {4000, 100}), (std::vector<int>{4, 1}));  // cut the long axis
  EXPECT_EQ(process_grid(8, {64, 64, 64}), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(process_grid(6, {100, 100}, {0, 3}), (std::vector<int>{2, 3}));
  EXPECT_EQ(process_grid(7, {100}), (std::vector<int>{7}));
  for (int ranks = 1; ranks <= 12; ++ranks) {
    const std::vector<int> d = process_grid(ranks, {50, 60, 70});
    EXPECT_EQ(std::accumulate(d.begin(), d.end(), 1, std::multiplies<int>()), ranks);
  }
  EXPECT_THROW(process_grid(4, {100, 100}, {3, 0}), std::runtime_error);   // 3 does not divide 4
  EXPECT_THROW(process_grid(5, {4, 1}), std::runtime_error);               // 5 blocks of 5 points
  EXPECT_THROW(process_grid(4, {40, 40}, {}, 25), std::runtime_error);     // blocks below 25 points
  EXPECT_THROW(process_grid(2, {10, 10}, {1, 1, 1}), std::runtime_error);  // counts of 3 axes for 2
}

TEST(Domain, NeighbourDirectionsAreFacesEdgesAndCorners) {
  EXPECT_EQ(neighbour_directions(1).size(), 2u);
  EXPECT_EQ(neighbour_directions(2).size(), 8u);
  EXPECT_EQ(neighbour_directions(3).size(), 26u);
  for (int D = 1; D <= 3; ++D) {
    for (const auto& d : neighbour_directions(D)) {
      for (int k = D; k < 3; ++k) EXPECT_EQ(d[k], 0);  // unused axes stay zero
    }
  }
}

TEST(Domain, ExchangeModelAndOverlap) {
  Interconnect link;
  link.bandwidth_GBps = 10, link.latency_us = 2, link.staging_GBps = 20;
  const ExchangeEstimate e = exchange_estimate(1000000, 4, link);
  EXPECT_NEAR(e.seconds, 4 * 2e-6 + 1e6 / 10e9 + 2 * 1e6 / 20e9, 1e-12);
  EXPECT_EQ(exchange_estimate(0, 0, link).seconds, 0.0);
  // A quarter of the bytes copied device to device to a GPU of the host: no staging, the
  // peer link's rate.
  link.peer_GBps           = 250;
  const ExchangeEstimate p = exchange_estimate(1000000, 4, link, 250000, 1);
  EXPECT_NEAR(p.seconds, 4 * 2e-6 + 7.5e5 / 10e9 + 2 * 7.5e5 / 20e9 + 2.5e5 / 250e9, 1e-12);
  EXPECT_EQ(p.peer_messages, 1);
  EXPECT_THROW(exchange_estimate(1000, 1, link, 2000, 1), std::runtime_error);  // more peer bytes than bytes
  EXPECT_THROW(exchange_estimate(1000, 1, link, 500, 2), std::runtime_error);   // more peer messages than messages
  // Hidden: the interior (900 us of 1 ms) outlasts the exchange (208 us).
  const DistributedPrediction hidden = predict_distributed(1e-3, 0.9, e, true);
  EXPECT_DOUBLE_EQ(hidden.hidden_fraction, 1.0);
  EXPECT_NEAR(hidden.seconds, 1e-3, 1e-12);
  EXPECT_NEAR(hidden.weak_scaling_efficiency, 1.0, 1e-12);
  const DistributedPrediction exposed = predict_distributed(1e-4, 0.5, e, true);
  EXPECT_NEAR(exposed.hidden_fraction, 5e-5 / e.seconds, 1e-12);
  EXPECT_NEAR(exposed.seconds, e.seconds + 5e-5, 1e-12);
  const DistributedPrediction serial = predict_distributed(1e-4, 0.5, e, false);
  EXPECT_EQ(serial.hidden_fraction, 0.0);
  EXPECT_NEAR(serial.seconds, e.seconds + 1e-4, 1e-12);
  EXPECT_LT(serial.weak_scaling_efficiency, exposed.weak_scaling_efficiency);
}

}  // namespace
}  // namespace sparstencil
