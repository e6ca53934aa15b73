#pragma once
/// A stencil plan over a decomposed field (docs/DISTRIBUTED.md): the library's plans on
/// boxes of each rank's block, halos exchanged while the interior runs.

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "SparStencil_Decomposition.hpp"
#include "SparStencil_DistributedField.hpp"
#include "SparStencil_GpuTransport.hpp"
#include "SparStencil_HaloBoxes.hpp"
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
        Setup& widest = setup(m_deepest, a, b);  // its plan of the computed box only
        encoded       = widest.full
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
      prepare(*s, a, b, launches);
    });
    connect_peers(*s, a);
    m_timeline.clear();
    // The exchange's stream is not ordered after work the caller queued on the plan's
    // space (each launch ends with both fenced).
    m_space.fence();
    for (std::size_t k = 0; k < launches.size(); ++k) {
      launch(*s, a, b, launches[k]);
      std::swap(a, b);
    }
    report                  = (s->inner ? s->inner : s->full)->report();  // the executor of most points
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
    const Setup& s = *it->second;
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
    const DistributedPrediction p =
        predict_distributed(s.full->plan().predicted.seconds * depth,
                            s.inner ? static_cast<double>(inner_points) / static_cast<double>(points) : 0.0, s.estimate,
                            s.inner != nullptr);
    return s.full->explain() + m_placement.describe() +
           explain_distributed(ranks, global, block, halo, depth, m_distributed.link, s.estimate, p);
  }

  /// The launches of the last iterate, where DistributedOptions::record_timeline is set.
  const std::vector<LaunchTimeline>& timeline() const { return m_timeline; }
  const Domain<D>& domain() const { return m_domain; }

 private:
  using Coords = std::array<long, D>;
  struct Message {
    int peer = MPI_PROC_NULL, tag = 0;
    Coords lo{}, hi{};           ///< the box sent (owned points) or received into (ghosts)
    long offset = 0, count = 0;  ///< its place in the exchange's buffers
    bool self = false;           ///< to or from this rank (a periodic axis it spans alone)
    /// Copied device to device (DistributedOptions::peer_copies): sends write `remote`,
    /// the message's place in the receiving rank's buffer, mapped into this process.
    bool peer_copy = false;
    T* remote      = nullptr;
    /// The order of messages in the buffers: through MPI, peer copies, then to this rank.
    int kind() const { return self ? 2 : peer_copy ? 1 : 0; }
  };
  using Copies = impl::BoxCopies<typename Field::padded_view, D>;
  struct Band {
    Coords lo{}, hi{};                ///< the points it writes
    Coords region_lo{}, region_hi{};  ///< the box it reads
    std::unique_ptr<LocalPlan> plan;
  };
  /// The boxes, plans and buffers of launches of up to `depth` steps.
  struct Setup {
    std::array<int, D> halo{};
    Coords computed_lo{}, computed_hi{};  ///< the block and the halo on sides with a neighbour
    Coords inner_exact_lo{}, inner_exact_hi{};
    std::unique_ptr<LocalPlan> full;   ///< the computed box in one launch
    std::unique_ptr<LocalPlan> inner;  ///< the block alone (null: no overlap)
    std::vector<Band> bands;
    /// Every message packed into one buffer, those through MPI first, so that one copy
    /// takes them to the host where staged; the receives through MPI first in theirs, so
    /// one copy brings them back, then the peer copies. A message to this rank is
    /// unpacked from the send buffer (no MPI, no staging).
    std::vector<Message> sends, receives;
    Kokkos::View<T*, typename Field::memory_space> send_device, receive_device;
    Kokkos::View<T*, impl::StagingSpace> send_host, receive_host;
    long remote_sent = 0, remote_received = 0;  ///< values sent to and received from other ranks through MPI
    bool peer_copies     = false;               ///< messages to ranks on other GPUs of this host are peer copies
    bool peers_connected = false;               ///< connect_peers ran
#if defined(KOKKOS_ENABLE_CUDA)
    std::unique_ptr<impl::IpcBuffer> ipc_receive;             ///< receive_device's memory where peers copy into it
    std::map<int, std::unique_ptr<impl::IpcMapping>> mapped;  ///< peers' receive buffers, by rank
#endif
    Copies pack, unpack;             ///< their field set per launch
    std::unique_ptr<Field> scratch;  ///< the bands' output
    ExchangeEstimate estimate;
    bool overlap_planned = false;  ///< plan_overlap ran (made on the first launches, not for a probe)
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
    auto s = std::make_unique<Setup>();
    Coords n{};
    for (int k = 0; k < D; ++k) {
      n[k]           = m_domain.block(k).size;
      s->halo[k]     = depth * m_stencil.radius()[k];
      const bool low = m_domain.has_neighbour(k, -1), high = m_domain.has_neighbour(k, +1);
      s->computed_lo[k]    = low ? -s->halo[k] : 0;
      s->computed_hi[k]    = n[k] + (high ? s->halo[k] : 0);
      s->inner_exact_lo[k] = low ? s->halo[k] : 0;
      s->inner_exact_hi[k] = n[k] - (high ? s->halo[k] : 0);
    }
    s->full        = std::make_unique<LocalPlan>(m_space, m_stencil, a.box(s->computed_lo, s->computed_hi),
                                          b.box(s->computed_lo, s->computed_hi), local_options());
    s->peer_copies = m_peer_copies;
    make_messages(*s, n);
    return *m_setups.emplace(depth, std::move(s)).first->second;
  }

  /// The interior box (the block, exact away from its padded sides) and the bands that
  /// cover the rest: along axis k, a band `halo` wide at each side with a neighbour,
  /// spanning the interior's range on earlier axes and the block on later ones. Each band
  /// reads its points widened by the halo (inside the computed box) and writes a scratch
  /// field, whose band points are then copied out. Throws where a box is too small for
  /// its plan.
  void plan_overlap(Setup& s, const Field& a, const Field& b) {
    for (int k = 0; k < D; ++k) {
      if (s.inner_exact_hi[k] <= s.inner_exact_lo[k]) return;  // no interior away from the halo
    }
    const Options local = local_options();
    const Coords& n     = a.extent();
    s.inner             = std::make_unique<LocalPlan>(m_space, m_stencil, a.owned(), b.owned(), local);
    // The bands run the interior's backend where they can: one executor's sums for every
    // owned point (the planner, free, may choose another for a thin box).
    Options same = local;
    if (same.backend.empty()) same.backend = s.inner->plan().backend;
    s.scratch = std::make_unique<Field>(a, "sparstencil band scratch");
    std::vector<Band> bands;
    for (int k = 0; k < D; ++k) {
      for (int side : {-1, +1}) {
        if (!m_domain.has_neighbour(k, side) || s.halo[k] == 0) continue;
        Band band;
        for (int j = 0; j < D; ++j) {
          if (j < k) band.lo[j] = s.inner_exact_lo[j], band.hi[j] = s.inner_exact_hi[j];
          if (j > k) band.lo[j] = 0, band.hi[j] = n[j];
        }
        band.lo[k] = side < 0 ? 0 : n[k] - s.halo[k];
        band.hi[k] = side < 0 ? s.halo[k] : n[k];
        // The global rim is the interior box's (under its boundary rule: interior leaves
        // it as `out` held it); the bands' scratch holds nothing there.
        bool empty = false;
        for (int j = 0; j < D; ++j) {
          const int r = m_stencil.radius()[j];
          if (!m_domain.has_neighbour(j, -1)) band.lo[j] = std::max<long>(band.lo[j], r);
          if (!m_domain.has_neighbour(j, +1)) band.hi[j] = std::min<long>(band.hi[j], n[j] - r);
          empty = empty || band.hi[j] <= band.lo[j];
        }
        if (empty) continue;
        for (int j = 0; j < D; ++j) {
          band.region_lo[j] = std::max(band.lo[j] - s.halo[j], s.computed_lo[j]);
          band.region_hi[j] = std::min(band.hi[j] + s.halo[j], s.computed_hi[j]);
        }
        const auto plan_band = [&](const Options& o) {
          return std::make_unique<LocalPlan>(m_exchange_space, m_stencil, a.box(band.region_lo, band.region_hi),
                                             s.scratch->box(band.region_lo, band.region_hi), o);
        };
        try {
          band.plan = plan_band(same);
        } catch (const std::runtime_error&) {  // the box is too thin for that backend
          band.plan = plan_band(local);
        }
        bands.push_back(std::move(band));
      }
    }
    s.bands = std::move(bands);
  }

  /// Builds every launch the schedule makes (planning may throw on one rank only: here,
  /// where every rank agrees on the outcome). A box of the overlap that cannot run them
  /// turns the overlap off on this rank.
  void prepare(Setup& s, const Field& a, const Field& b, const LaunchSteps& launches) {
    const std::vector<int> counts = launches.distinct();
    for (int n : counts)
      s.full->prepare_launch(a.box(s.computed_lo, s.computed_hi), b.box(s.computed_lo, s.computed_hi), n);
    if (!m_distributed.overlap) return;
    try {
      if (!s.overlap_planned) {
        s.overlap_planned = true;
        plan_overlap(s, a, b);
      }
      if (!s.inner) return;
      for (int n : counts) {
        s.inner->prepare_launch(a.owned(), b.owned(), n);
        for (Band& band : s.bands) {
          band.plan->prepare_launch(a.box(band.region_lo, band.region_hi),
                                    s.scratch->box(band.region_lo, band.region_hi), n);
        }
      }
    } catch (const std::runtime_error&) {  // a box too small for a plan: the whole box after the exchange
      s.inner.reset();
      s.bands.clear();
      s.scratch.reset();
    }
  }

  void make_messages(Setup& s, const Coords& n) {
    const auto directions = neighbour_directions(D);
    long bytes = 0, peer_bytes = 0, sent = 0;
    const int me = m_domain.rank();
    for (std::size_t d = 0; d < directions.size(); ++d) {
      const std::array<int, 3>& o = directions[d];
      std::array<int, 3> back{};
      for (int k = 0; k < 3; ++k) back[k] = -o[k];
      Message send, receive;
      long volume = 1;
      for (int k = 0; k < D; ++k) {
        // Sent toward o: the owned points on that side. Received from o: the ghosts there.
        send.lo[k]    = o[k] < 0 ? 0 : o[k] > 0 ? n[k] - s.halo[k] : 0;
        send.hi[k]    = o[k] < 0 ? s.halo[k] : n[k];
        receive.lo[k] = o[k] < 0 ? -s.halo[k] : o[k] > 0 ? n[k] : 0;
        receive.hi[k] = o[k] < 0 ? 0 : o[k] > 0 ? n[k] + s.halo[k] : n[k];
        volume *= send.hi[k] - send.lo[k];
      }
      if (volume == 0) continue;
      send.peer    = m_domain.neighbour(o);
      receive.peer = send.peer;
      if (send.peer == MPI_PROC_NULL) continue;
      // A message carries its sender's direction: received from o, it was sent toward -o.
      send.tag    = static_cast<int>(d);
      receive.tag = static_cast<int>(std::find(directions.begin(), directions.end(), back) - directions.begin());
      send.count = receive.count = impl::element_count("DistributedPlan", volume);
      send.self = receive.self = send.peer == me;
      // A rank on another GPU of this host (the same GPU too: a copy within its memory).
      send.peer_copy = receive.peer_copy =
          s.peer_copies && !send.self &&
          m_placement.host[static_cast<std::size_t>(send.peer)] == m_placement.host[static_cast<std::size_t>(me)];
      if (!send.self) bytes += volume * static_cast<long>(sizeof(T));
      if (send.peer_copy) peer_bytes += volume * static_cast<long>(sizeof(T));
      s.sends.push_back(send);
      s.receives.push_back(receive);
    }
    // Messages through MPI first (one copy each way moves them all where staged), then
    // peer copies, then those to this rank, which are unpacked from the send buffer.
    const auto by_kind = [](const Message& x, const Message& y) { return x.kind() < y.kind(); };
    std::stable_sort(s.sends.begin(), s.sends.end(), by_kind);
    std::stable_sort(s.receives.begin(), s.receives.end(), by_kind);
    long received = 0;
    for (Message& m : s.sends) {
      m.offset = sent;
      sent += m.count;
      if (m.kind() == 0) s.remote_sent = sent;
    }
    for (Message& m : s.receives) {
      if (m.self) continue;
      m.offset = received;
      received += m.count;
      if (m.kind() == 0) s.remote_received = received;
    }
    using DeviceBuffer = Kokkos::View<T*, typename Field::memory_space>;
    s.send_device      = DeviceBuffer("sparstencil halo send", static_cast<std::size_t>(sent));
    if (peer_bytes == 0)
      s.receive_device = DeviceBuffer("sparstencil halo receive", static_cast<std::size_t>(received));
#if defined(KOKKOS_ENABLE_CUDA)  // peer copies are made on CUDA only (m_peer_copies)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      if (peer_bytes > 0) {  // memory the peers can map
        s.ipc_receive =
            std::make_unique<impl::IpcBuffer>(static_cast<std::size_t>(received) * sizeof(T), m_space.cuda_device());
        s.receive_device = DeviceBuffer(static_cast<T*>(s.ipc_receive->data()), static_cast<std::size_t>(received));
      }
    }
#endif
    if (m_staged) {
      s.send_host =
          Kokkos::View<T*, impl::StagingSpace>("sparstencil halo send (host)", static_cast<std::size_t>(s.remote_sent));
      s.receive_host = Kokkos::View<T*, impl::StagingSpace>("sparstencil halo receive (host)",
                                                            static_cast<std::size_t>(s.remote_received));
    }
    // A message's box in the padded allocation (whose extents DistributedField keeps in int).
    auto add_box = [&](Copies& copies, T* data, const Message& m) {
      Kokkos::Array<int, D> begin, size;
      for (int k = 0; k < D; ++k)
        begin[k] = static_cast<int>(m.lo[k] + m_origin[k]), size[k] = static_cast<int>(m.hi[k] - m.lo[k]);
      copies.add(data, begin, size);
    };
    s.unpack.unpack = true;
    for (const Message& m : s.sends) add_box(s.pack, s.send_device.data() + m.offset, m);
    for (const Message& m : s.receives) {
      add_box(s.unpack, m.self ? s.send_device.data() + matching_send(s, m).offset : s.receive_device.data() + m.offset,
              m);
    }
    Interconnect link = m_distributed.link;
    if (!m_staged) link.staging_GBps = 0;
    const auto count = [&](int kind) {
      return static_cast<int>(
          std::count_if(s.sends.begin(), s.sends.end(), [&](const Message& m) { return m.kind() == kind; }));
    };
    s.estimate              = exchange_estimate(bytes, count(0) + count(1), link, peer_bytes, count(1));
    s.estimate.local_copies = count(2);
  }

  /// Tags of the exchange's messages: a halo's is its direction's index (below 27); a peer
  /// copy's handshake adds these.
  static constexpr int ready_tag = 32, done_tag = 64, handle_tag = 96;

  /// Maps the receive buffers of the ranks this one sends peer copies to (each receiver
  /// sends its buffer's IPC handle and the message's place in it). Collective: where any
  /// rank fails to map one, every rank rebuilds its messages to go through MPI instead.
  void connect_peers(Setup& s, const Field& a) {
    if (s.peers_connected) return;
    s.peers_connected = true;
    if (!s.peer_copies) return;
#if defined(KOKKOS_ENABLE_CUDA)
    const char* function = "DistributedPlan::iterate";
    const MPI_Comm comm  = m_domain.comm();
    struct Offer {
      cudaIpcMemHandle_t handle{};
      long offset = 0;  ///< bytes into the buffer
      int ok      = 0;
    };
    std::vector<Offer> given, taken;
    for (const Message& m : s.receives) {
      if (!m.peer_copy) continue;
      Offer o;
      o.ok     = s.ipc_receive && s.ipc_receive->handle(o.handle) ? 1 : 0;
      o.offset = m.offset * static_cast<long>(sizeof(T));
      given.push_back(o);
    }
    for (const Message& m : s.sends) taken.resize(taken.size() + (m.peer_copy ? 1 : 0));
    std::vector<MPI_Request> requests;
    std::size_t g = 0, t = 0;
    for (const Message& m : s.receives) {
      if (!m.peer_copy) continue;
      requests.emplace_back();
      impl::check_mpi(
          MPI_Isend(&given[g++], sizeof(Offer), MPI_BYTE, m.peer, handle_tag + m.tag, comm, &requests.back()), function,
          "MPI_Isend");
    }
    for (const Message& m : s.sends) {
      if (!m.peer_copy) continue;
      requests.emplace_back();
      impl::check_mpi(
          MPI_Irecv(&taken[t++], sizeof(Offer), MPI_BYTE, m.peer, handle_tag + m.tag, comm, &requests.back()), function,
          "MPI_Irecv");
    }
    impl::check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), function,
                    "MPI_Waitall");
    int ok = 1;
    t      = 0;
    for (Message& m : s.sends) {
      if (!m.peer_copy) continue;
      const Offer& o = taken[t++];
      auto& mapping  = s.mapped[m.peer];
      if (o.ok && !mapping) mapping = std::make_unique<impl::IpcMapping>(o.handle);
      if (!o.ok || !mapping->base()) {
        ok = 0;
        continue;
      }
      m.remote = reinterpret_cast<T*>(mapping->base() + o.offset);
    }
    impl::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm), function, "MPI_Allreduce");
    if (ok) return;
    // Every rank goes through MPI: the messages, buffers and copies made again.
    s.mapped.clear();
    s.sends.clear(), s.receives.clear();
    s.pack = Copies{}, s.unpack = Copies{};
    s.remote_sent = s.remote_received = 0;
    s.peer_copies                     = false;
    s.ipc_receive.reset();
    make_messages(s, a.extent());
#else
    (void)a;
#endif
  }

  /// The send to this rank that a receive from this rank takes its values from.
  static const Message& matching_send(const Setup& s, const Message& receive) {
    for (const Message& m : s.sends) {
      if (m.self && m.tag == receive.tag) return m;
    }
    impl::fail("DistributedPlan", "no send matches a message to this rank (internal)");
  }

  /// Where MPI reads or writes a message: the host copy where halos are staged, else the
  /// device buffer.
  T* send_buffer(const Setup& s, const Message& m) const {
    return (m_staged ? s.send_host.data() : s.send_device.data()) + m.offset;
  }
  T* receive_buffer(const Setup& s, const Message& m) const {
    return (m_staged ? s.receive_host.data() : s.receive_device.data()) + m.offset;
  }

  static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  /// The peer copies of a packed exchange, once each receiver has said its buffer is free;
  /// each receiver is told when its copy is done (its requests joined to `requests`).
  void copy_to_peers(const Setup& s, std::vector<MPI_Request>& ready, std::vector<MPI_Request>& requests) {
    const char* function = "DistributedPlan::iterate";
    impl::check_mpi(MPI_Waitall(static_cast<int>(ready.size()), ready.data(), MPI_STATUSES_IGNORE), function,
                    "MPI_Waitall");
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      for (const Message& m : s.sends) {
        if (!m.peer_copy) continue;
        impl::check_cuda(
            cudaMemcpyAsync(m.remote, s.send_device.data() + m.offset, static_cast<std::size_t>(m.count) * sizeof(T),
                            cudaMemcpyDefault, m_exchange_space.cuda_stream()),
            "cudaMemcpyAsync (peer copy)");
      }
    }
#endif
    m_exchange_space.fence();
    for (const Message& m : s.sends) {
      if (!m.peer_copy) continue;
      requests.emplace_back();
      impl::check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, m.peer, done_tag + m.tag, m_domain.comm(), &requests.back()),
                      function, "MPI_Isend");
    }
  }

  /// One launch of `steps` steps from a to b: the exchange of a's halo, the interior while
  /// it is in flight, then the bands (or, without overlap, the computed box after it).
  void launch(Setup& s, Field& a, Field& b, int steps) {
    const char* function = "DistributedPlan::iterate";
    const MPI_Comm comm  = m_domain.comm();
    const auto start     = std::chrono::steady_clock::now();
    LaunchTimeline time;
    std::vector<MPI_Request> requests, ready;
    for (const Message& m : s.receives) {
      if (m.self) continue;
      requests.emplace_back();
      if (m.peer_copy) {
        // A peer copy's handshake: this rank's buffer is free (the last launch unpacked
        // it), and later the sender's word that the copy is done.
        impl::check_mpi(MPI_Irecv(nullptr, 0, MPI_BYTE, m.peer, done_tag + m.tag, comm, &requests.back()), function,
                        "MPI_Irecv");
        requests.emplace_back();
        impl::check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, m.peer, ready_tag + m.tag, comm, &requests.back()), function,
                        "MPI_Isend");
        continue;
      }
      impl::check_mpi(MPI_Irecv(receive_buffer(s, m), static_cast<int>(m.count), impl::element_type<T>(), m.peer, m.tag,
                                comm, &requests.back()),
                      function, "MPI_Irecv");
    }
    for (const Message& m : s.sends) {
      if (!m.peer_copy) continue;
      ready.emplace_back();
      impl::check_mpi(MPI_Irecv(nullptr, 0, MPI_BYTE, m.peer, ready_tag + m.tag, comm, &ready.back()), function,
                      "MPI_Irecv");
    }
    // The interior first; on a device the packing kernel, on a stream of higher priority,
    // still starts before the interior's waiting blocks, and the copies to and from the
    // host run on the copy engines beside it. (On a host space the interior returns when
    // done, and the exchange follows it.)
    if (s.inner) {
      time.inner_begin = seconds_since(start);
      if (m_distributed.record_timeline) {
        m_inner_timer.time(m_space, [&] { s.inner->launch(a.owned(), b.owned(), steps); });
      } else {
        s.inner->launch(a.owned(), b.owned(), steps);
      }
    }
    time.exchange_begin = seconds_since(start);
    s.pack.field        = a.padded();
    s.pack.run(m_exchange_space);
    if (m_staged && s.remote_sent > 0) {
      const std::pair<long, long> remote(0, s.remote_sent);
      Kokkos::deep_copy(m_exchange_space, Kokkos::subview(s.send_host, remote), Kokkos::subview(s.send_device, remote));
    }
    m_exchange_space.fence();
    for (const Message& m : s.sends) {
      if (m.kind() != 0) continue;
      requests.emplace_back();
      impl::check_mpi(MPI_Isend(send_buffer(s, m), static_cast<int>(m.count), impl::element_type<T>(), m.peer, m.tag,
                                comm, &requests.back()),
                      function, "MPI_Isend");
    }
    if (!ready.empty()) copy_to_peers(s, ready, requests);
    impl::check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), function,
                    "MPI_Waitall");
    if (m_staged && s.remote_received > 0) {
      const std::pair<long, long> remote(0, s.remote_received);
      Kokkos::deep_copy(m_exchange_space, Kokkos::subview(s.receive_device, remote), s.receive_host);
    }
    if (m_distributed.record_timeline) m_exchange_space.fence();
    time.exchange_end = seconds_since(start);  // the halo is on the device
    s.unpack.field    = a.padded();
    s.unpack.run(m_exchange_space);
    if (s.inner) {
      // Each band's points are copied out before the next band's box, which may overlap
      // it in the scratch field, is computed; over the interior's inexact points, so after
      // the interior. The first band computes beside the interior (it reads `a` and
      // writes the scratch field, which the interior leaves alone).
      const auto compute = [&](Band& band) {
        band.plan->launch(a.box(band.region_lo, band.region_hi), s.scratch->box(band.region_lo, band.region_hi), steps);
      };
      if (!s.bands.empty()) compute(s.bands.front());
      m_space.fence();
      if (m_distributed.record_timeline) time.inner_end = time.inner_begin + m_inner_timer.seconds();
      for (std::size_t i = 0; i < s.bands.size(); ++i) {
        if (i > 0) compute(s.bands[i]);
        Kokkos::deep_copy(m_exchange_space, b.box(s.bands[i].lo, s.bands[i].hi),
                          s.scratch->box(s.bands[i].lo, s.bands[i].hi));
      }
      m_exchange_space.fence();
    } else {
      m_exchange_space.fence();
      s.full->launch(a.box(s.computed_lo, s.computed_hi), b.box(s.computed_lo, s.computed_hi), steps);
      m_space.fence();
    }
    s.pack.field = s.unpack.field = {};  // the fields' memory is the caller's to free
    if (m_distributed.record_timeline) m_timeline.push_back(time);
  }
};

}  // namespace sparstencil
