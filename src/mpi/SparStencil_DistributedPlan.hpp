#pragma once
/// A stencil plan over a decomposed field (docs/DISTRIBUTED.md): the library's plans on
/// boxes of each rank's block, halos exchanged while the interior runs.

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "SparStencil_BoxPlans.hpp"
#include "SparStencil_Decomposition.hpp"
#include "SparStencil_DistributedField.hpp"
#include "SparStencil_GpuTransport.hpp"
#include "SparStencil_HaloExchange.hpp"
#include "SparStencil_LaunchTimer.hpp"
#include "SparStencil_MpiCalls.hpp"
#include "SparStencil_Placement.hpp"
#include "SparStencil_StencilPlan.hpp"

namespace sparstencil {

/// How a distributed plan exchanges and what it records.
struct DistributedOptions {
  Interconnect link;    ///< for explain()'s model
  bool overlap = true;  ///< compute the interior while the halo is in flight
  /// Keep a timeline of each launch (DistributedPlan::timeline()).
  bool record_timeline = false;
  /// Where MPI cannot take device pointers: halos for a rank on another GPU of the same
  /// host are copied device to device into its receive buffer (CUDA IPC, over NVLink
  /// where the GPUs have it) instead of staged through host memory. Falls back to staging,
  /// on every rank, where any rank cannot map a peer's buffer.
  bool peer_copies = true;
};

/// One launch as it ran, in seconds from the launch's start: the exchange (packing to the
/// last ghost written) and the interior's computation.
struct LaunchTimeline {
  double exchange_begin = 0, exchange_end = 0;
  double inner_begin = 0, inner_end = 0;  ///< both 0 where the launch did not overlap
  /// The share of the exchange during which the interior computed.
  double hidden_fraction() const {
    const double span = exchange_end - exchange_begin;
    if (span <= 0) return 1;
    const double both = std::min(exchange_end, inner_end) - std::max(exchange_begin, inner_begin);
    return std::max(0.0, both) / span;
  }
};

/// A stencil plan over a decomposed field: the library's plans on boxes of each rank's
/// block, with the halo exchange between launches. Collective: every rank makes it with the
/// same stencil and options and calls iterate with the same step count.
template <class ExecSpace, class Field>
class DistributedPlan {
 public:
  using T                = typename Field::value_type;
  static constexpr int D = Field::rank;
  using Box              = typename Field::box_view;
  using LocalPlan        = StencilPlan<ExecSpace, Box, Box>;

  /// Plans `stencil` from fields like `a` to fields like `b` under the domain's boundary
  /// (Options::boundary must equal it). Options::fusion caps the steps a launch, and so the
  /// halo: t r_a along each axis, which the fields' ghost width must hold.
  DistributedPlan(const ExecSpace& space, const Stencil<D>& stencil, const Field& a, const Field& b,
                  const Options& options = {}, const DistributedOptions& distributed = {})
      : m_space(space),
        m_exchange_space(space),
        m_stencil(stencil),
        m_options(options),
        m_distributed(distributed),
        m_domain(a.domain()) {
    const char* function = "DistributedPlan";
    impl::on_every_rank(m_domain.comm(), function, [&] {
      if (!b.domain().same_as(m_domain)) impl::fail(function, "the two fields belong to different domains");
      if (a.ghost_width() != b.ghost_width()) {
        impl::fail(function, "the fields' ghost widths differ: ", a.ghost_width(), " and ", b.ghost_width());
      }
      if (options.boundary != m_domain.boundary()) {
        impl::fail(function, "Options::boundary is ", to_string(options.boundary), " but the domain's is ",
                   to_string(m_domain.boundary()), ": the domain's boundary applies at its global edges");
      }
      if (options.fusion < 0) impl::fail(function, "fusion ", options.fusion, " must be 0 (automatic) or >= 1");
      m_deepest = INT_MAX;
      for (int a_ = 0; a_ < D; ++a_) {
        const int r = stencil.radius()[a_];
        if (r == 0) continue;
        const long room = std::min<long>(a.ghost_width(), m_domain.smallest_block(a_));
        if (room < r) {
          impl::fail(function, "ghost width ", a.ghost_width(), " and smallest block ", m_domain.smallest_block(a_),
                     " along axis ", a_, " must both hold the stencil's radius ", r, " (a halo of one step)");
        }
        m_deepest = std::min<long>(m_deepest, room / r);
      }
      if (m_deepest == INT_MAX) m_deepest = 8;  // no axis needs a halo
      if (options.fusion > 0) m_deepest = std::min(m_deepest, options.fusion);
    });
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      m_exchange_space = Kokkos::Cuda(m_exchange_stream.get(space.cuda_device()));
    }
#endif
    m_staged = !Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Field::memory_space>::accessible &&
               !impl::mpi_takes_cuda_pointers();
    m_ghost    = a.ghost_width();
    m_origin   = a.origin();
    int device = -1;
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      device = space.cuda_device();
      // Peer copies where every rank stages its halos and asks for them.
      int peers = m_staged && distributed.peer_copies ? 1 : 0;
      impl::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &peers, 1, MPI_INT, MPI_MIN, m_domain.comm()), function,
                      "MPI_Allreduce");
      m_peer_copies = peers == 1;
    }
#endif
    m_placement = impl::Placement::of(m_domain.comm(), device);
  }

  /// `steps` steps ping-ponging between a and b (StencilPlan::iterate's contract, fields
  /// swapped when the launch count is odd); halos exchanged before each launch. Returns when
  /// the steps are done.
  RunReport iterate(Field& a, Field& b, int steps) {
    const char* function = "DistributedPlan::iterate";
    const MPI_Comm comm  = m_domain.comm();
    int low = steps, high = steps;
    impl::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_INT, MPI_MIN, comm), function, "MPI_Allreduce");
    impl::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_INT, MPI_MAX, comm), function, "MPI_Allreduce");
    impl::on_every_rank(comm, function, [&] {
      if (low != high) impl::fail(function, "the ranks ask for different step counts (", low, " to ", high, ")");
      if (steps < 0) impl::fail(function, "step count ", steps, " is negative");
      check_fields(function, a, b);
    });
    RunReport report;
    if (steps == 0) return report;
    // The launches, as rank 0's plan of its widest box schedules them.
    std::vector<int> encoded;  // LaunchSteps::encode(): a few ints whatever the step count
    impl::on_every_rank(comm, function, [&] {
      if (m_domain.rank() == 0) {
        const Boxes& widest = setup(m_deepest, a, b).boxes;  // its plan of the computed box only
        encoded             = widest.full
                      ->launch_steps(steps, a.box(widest.computed_lo, widest.computed_hi),
                                     b.box(widest.computed_lo, widest.computed_hi), m_deepest)
                      .encode();
      }
    });
    int count = static_cast<int>(encoded.size());
    impl::check_mpi(MPI_Bcast(&count, 1, MPI_INT, 0, comm), function, "MPI_Bcast");
    encoded.resize(static_cast<std::size_t>(count));
    impl::check_mpi(MPI_Bcast(encoded.data(), count, MPI_INT, 0, comm), function, "MPI_Bcast");
    const LaunchSteps launches = LaunchSteps::decode(encoded);
    const int depth            = launches.most();
    Setup* s                   = nullptr;
    impl::on_every_rank(comm, function, [&] {
      s = &setup(depth, a, b);
      s->boxes.prepare(m_space, m_exchange_space, a, b, launches, m_distributed.overlap);
    });
    s->exchange.connect_peers();
    m_timeline.clear();
    // The exchange's stream is not ordered after work the caller queued on the plan's
    // space (each launch ends with both fenced).
    m_space.fence();
    for (std::size_t k = 0; k < launches.size(); ++k) {
      launch(*s, a, b, launches[k]);
      std::swap(a, b);
    }
    const auto& most        = s->boxes.inner ? s->boxes.inner : s->boxes.full;  // the executor of most points
    report                  = most->report();
    report.steps            = steps;
    report.steps_per_launch = depth;
    m_last_depth            = depth;
    return report;
  }

  /// One step from `in` to `out` (in's halo is exchanged, so in is written).
  RunReport apply(Field& in, Field& out) {
    Field a = in, b = out;
    RunReport r = iterate(a, b, 1);
    return r;
  }

  /// This rank's plan of its block, the decomposition, the exchange's model and whether the
  /// exchange hides behind the interior.
  std::string explain() {
    const int depth = m_last_depth > 0 ? m_last_depth : 1;
    auto it         = m_setups.find(depth);
    if (it == m_setups.end()) {
      return "sparstencil::DistributedPlan: nothing planned yet (explain() follows the first iterate or apply)\n";
    }
    const Boxes& s                   = it->second->boxes;
    const ExchangeEstimate& estimate = it->second->exchange.estimate();
    std::vector<int> ranks(m_domain.ranks_per_axis().begin(), m_domain.ranks_per_axis().end());
    std::vector<long> global(m_domain.extent().begin(), m_domain.extent().end());
    std::vector<long> block;
    std::vector<int> halo;
    for (int a = 0; a < D; ++a) block.push_back(m_domain.block(a).size), halo.push_back(s.halo[a]);
    long points = 1, inner_points = 1;
    for (int a = 0; a < D; ++a) {
      points *= m_domain.block(a).size;
      inner_points *= std::max<long>(0, s.inner_exact_hi[a] - s.inner_exact_lo[a]);
    }
    const DistributedPrediction p = predict_distributed(
        s.full->plan().predicted.seconds * depth,
        s.inner ? static_cast<double>(inner_points) / static_cast<double>(points) : 0.0, estimate, s.inner != nullptr);
    return s.full->explain() + m_placement.describe() +
           explain_distributed(ranks, global, block, halo, depth, m_distributed.link, estimate, p);
  }

  /// The launches of the last iterate, where DistributedOptions::record_timeline is set.
  const std::vector<LaunchTimeline>& timeline() const { return m_timeline; }
  const Domain<D>& domain() const { return m_domain; }

 private:
  using Boxes    = impl::BoxPlans<ExecSpace, Field>;
  using Exchange = impl::HaloExchange<ExecSpace, Field>;
  /// The boxes, plans and exchange of launches of up to one depth.
  struct Setup {
    Boxes boxes;
    Exchange exchange;
    Setup(const DistributedPlan& p, int depth, const Field& a, const Field& b)
        : boxes(p.m_space, p.m_stencil, p.m_domain, p.local_options(), depth, a, b),
          exchange(p.m_space, p.m_domain, p.m_placement, boxes.halo, p.m_origin, p.m_staged, p.m_peer_copies,
                   p.m_distributed.link) {}
  };

  impl::PriorityStream m_exchange_stream;  // first: destroyed after every space using it
  ExecSpace m_space, m_exchange_space;
  Stencil<D> m_stencil;
  Options m_options;
  DistributedOptions m_distributed;
  Domain<D> m_domain;
  int m_deepest = 1;
  int m_ghost   = 0;
  std::array<long, D> m_origin{};  ///< the fields' padded index of block coordinate 0
  int m_last_depth   = 0;
  bool m_staged      = false;
  bool m_peer_copies = false;  ///< every rank stages and asks for peer copies (CUDA)
  impl::Placement m_placement;
  std::map<int, std::unique_ptr<Setup>> m_setups;
  std::vector<LaunchTimeline> m_timeline;
  impl::LaunchTimer<ExecSpace> m_inner_timer;

  void check_fields(const char* function, const Field& a, const Field& b) const {
    for (const Field* f : {&a, &b}) {
      if (!f->domain().same_as(m_domain)) impl::fail(function, "a field of another domain than the plan's");
      if (f->ghost_width() != m_ghost) {
        impl::fail(function, "a field of ghost width ", f->ghost_width(), " for a plan made for ", m_ghost);
      }
    }
    if (a.padded().data() == b.padded().data()) impl::fail(function, "a and b are the same field");
  }

  /// The options of a box's plan: the domain's boundary where the box meets a global edge,
  /// `interior` on padded sides (their rim holds ghosts, which no owned point's steps read).
  Options local_options() const {
    Options o  = m_options;
    o.boundary = m_domain.boundary() == Boundary::periodic ? Boundary::interior : m_domain.boundary();
    return o;
  }

  Setup& setup(int depth, const Field& a, const Field& b) {
    if (auto it = m_setups.find(depth); it != m_setups.end()) return *it->second;
    auto s = std::make_unique<Setup>(*this, depth, a, b);
    return *m_setups.emplace(depth, std::move(s)).first->second;
  }

  static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  /// One launch of `steps` steps from a to b: the exchange of a's halo, the interior while
  /// it is in flight, then the bands (or, without overlap, the computed box after it).
  void launch(Setup& s, Field& a, Field& b, int steps) {
    const auto start = std::chrono::steady_clock::now();
    Boxes& boxes     = s.boxes;
    LaunchTimeline time;
    s.exchange.post_receives();
    // The interior first; on a device the packing kernel, on a stream of higher priority,
    // still starts before the interior's waiting blocks, and the copies to and from the
    // host run on the copy engines beside it. (On a host space the interior returns when
    // done, and the exchange follows it.)
    if (boxes.inner) {
      time.inner_begin = seconds_since(start);
      if (m_distributed.record_timeline) {
        m_inner_timer.time(m_space, [&] { boxes.launch_inner(a, b, steps); });
      } else {
        boxes.launch_inner(a, b, steps);
      }
    }
    time.exchange_begin = seconds_since(start);
    s.exchange.send_and_receive(m_exchange_space, a.padded());
    if (m_distributed.record_timeline) m_exchange_space.fence();
    time.exchange_end = seconds_since(start);  // the halo is on the device
    s.exchange.unpack(m_exchange_space, a.padded());
    if (boxes.inner) {
      // Each band's points are copied out before the next band's box, which may overlap
      // it in the scratch field, is computed; over the interior's inexact points, so after
      // the interior. The first band computes beside the interior (it reads `a` and
      // writes the scratch field, which the interior leaves alone).
      if (!boxes.bands.empty()) boxes.launch_band(boxes.bands.front(), a, steps);
      m_space.fence();
      if (m_distributed.record_timeline) time.inner_end = time.inner_begin + m_inner_timer.seconds();
      for (std::size_t i = 0; i < boxes.bands.size(); ++i) {
        if (i > 0) boxes.launch_band(boxes.bands[i], a, steps);
        boxes.copy_band(m_exchange_space, boxes.bands[i], b);
      }
      m_exchange_space.fence();
    } else {
      m_exchange_space.fence();
      boxes.launch_full(a, b, steps);
      m_space.fence();
    }
    s.exchange.release();  // the fields' memory is the caller's to free
    if (m_distributed.record_timeline) m_timeline.push_back(time);
  }
};

}  // namespace sparstencil
