#pragma once
/// One rank's halo exchange (docs/DISTRIBUTED.md): the messages to and from its neighbours,
/// their buffers, the packing and the host staging, the peer copies to ranks on other GPUs
/// of its host, and one exchange's calls in the order a launch makes them.

#include <mpi.h>
#include <Kokkos_Core.hpp>
#if defined(KOKKOS_ENABLE_CUDA)
#include "SparStencil_GpuRuntime.hpp"
#endif

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "SparStencil_Decomposition.hpp"
#include "SparStencil_GpuTransport.hpp"
#include "SparStencil_HaloBoxes.hpp"
#include "SparStencil_MpiCalls.hpp"
#include "SparStencil_Placement.hpp"

namespace sparstencil {
namespace impl {

/// The exchange of a halo of one width around a rank's block, from fields like Field: a
/// message to and from every neighbour (faces, edges, corners), packed into one buffer and
/// unpacked from another in one launch each. A launch calls post_receives, then
/// send_and_receive and unpack with the field whose ghosts it fills, then release.
template <class ExecSpace, class Field>
class HaloExchange {
 public:
  using T                = typename Field::value_type;
  static constexpr int D = Field::rank;
  using Coords           = std::array<long, D>;
  using PaddedView       = typename Field::padded_view;

  /// The messages of a halo `halo` wide around this rank's block of `domain`. `origin` is
  /// the fields' padded index of block coordinate 0; `staged`: messages through MPI go
  /// through host memory (MPI cannot take the fields' pointers); `peer_copies`: messages
  /// to ranks on other GPUs of this host are copied device to device (every rank asked for
  /// them); `link` for the estimate.
  HaloExchange(const ExecSpace& space, const Domain<D>& domain, const Placement& placement,
               const std::array<int, D>& halo, const Coords& origin, bool staged, bool peer_copies,
               const Interconnect& link)
      : m_domain(domain),
        m_host(placement.host),
        m_halo(halo),
        m_origin(origin),
        m_staged(staged),
        m_peer_copies(peer_copies),
        m_link(link) {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) m_device = space.cuda_device();
#endif
    (void)space;
    for (int k = 0; k < D; ++k) m_n[k] = m_domain.block(k).size;
    make_messages();
  }

  /// The model's view of one exchange: messages, bytes, peer copies, copies to this rank.
  const ExchangeEstimate& estimate() const { return m_estimate; }

  /// Maps the receive buffers of the ranks this one sends peer copies to (each receiver
  /// sends its buffer's IPC handle and the message's place in it), once. Collective: where
  /// any rank fails to map one, every rank rebuilds its messages to go through MPI instead.
  void connect_peers() {
    if (m_peers_connected) return;
    m_peers_connected = true;
    if (!m_peer_copies) return;
#if defined(KOKKOS_ENABLE_CUDA)
    const char* function = "DistributedPlan::iterate";
    const MPI_Comm comm  = m_domain.comm();
    struct Offer {
      cudaIpcMemHandle_t handle{};
      long offset = 0;  ///< bytes into the buffer
      int ok      = 0;
    };
    std::vector<Offer> given, taken;
    for (const Message& m : m_receives) {
      if (!m.peer_copy) continue;
      Offer o;
      o.ok     = m_ipc_receive && m_ipc_receive->handle(o.handle) ? 1 : 0;
      o.offset = m.offset * static_cast<long>(sizeof(T));
      given.push_back(o);
    }
    for (const Message& m : m_sends) taken.resize(taken.size() + (m.peer_copy ? 1 : 0));
    std::vector<MPI_Request> requests;
    std::size_t g = 0, t = 0;
    for (const Message& m : m_receives) {
      if (!m.peer_copy) continue;
      requests.emplace_back();
      check_mpi(MPI_Isend(&given[g++], sizeof(Offer), MPI_BYTE, m.peer, handle_tag + m.tag, comm, &requests.back()),
                function, "MPI_Isend");
    }
    for (const Message& m : m_sends) {
      if (!m.peer_copy) continue;
      requests.emplace_back();
      check_mpi(MPI_Irecv(&taken[t++], sizeof(Offer), MPI_BYTE, m.peer, handle_tag + m.tag, comm, &requests.back()),
                function, "MPI_Irecv");
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), function,
              "MPI_Waitall");
    int ok = 1;
    t      = 0;
    for (Message& m : m_sends) {
      if (!m.peer_copy) continue;
      const Offer& o = taken[t++];
      auto& mapping  = m_mapped[m.peer];
      if (o.ok && !mapping) mapping = std::make_unique<IpcMapping>(o.handle);
      if (!o.ok || !mapping->base()) {
        ok = 0;
        continue;
      }
      m.remote = reinterpret_cast<T*>(mapping->base() + o.offset);
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm), function, "MPI_Allreduce");
    if (ok) return;
    // Every rank goes through MPI: the messages, buffers and copies made again.
    m_mapped.clear();
    m_sends.clear(), m_receives.clear();
    m_pack = Copies{}, m_unpack = Copies{};
    m_remote_sent = m_remote_received = 0;
    m_peer_copies                     = false;
    m_ipc_receive.reset();
    make_messages();
#endif
  }

  /// Posts the receives of one exchange and the peer copies' handshakes: this rank's
  /// buffer is free (the last exchange unpacked it), and later the sender's word that the
  /// copy is done.
  void post_receives() {
    const char* function = "DistributedPlan::iterate";
    const MPI_Comm comm  = m_domain.comm();
    m_requests.clear();
    m_ready.clear();
    for (const Message& m : m_receives) {
      if (m.self) continue;
      m_requests.emplace_back();
      if (m.peer_copy) {
        check_mpi(MPI_Irecv(nullptr, 0, MPI_BYTE, m.peer, done_tag + m.tag, comm, &m_requests.back()), function,
                  "MPI_Irecv");
        m_requests.emplace_back();
        check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, m.peer, ready_tag + m.tag, comm, &m_requests.back()), function,
                  "MPI_Isend");
        continue;
      }
      check_mpi(MPI_Irecv(receive_buffer(m), static_cast<int>(m.count), element_type<T>(), m.peer, m.tag, comm,
                          &m_requests.back()),
                function, "MPI_Irecv");
    }
    for (const Message& m : m_sends) {
      if (!m.peer_copy) continue;
      m_ready.emplace_back();
      check_mpi(MPI_Irecv(nullptr, 0, MPI_BYTE, m.peer, ready_tag + m.tag, comm, &m_ready.back()), function,
                "MPI_Irecv");
    }
  }

  /// Packs `field`'s owned points on `exchange_space` and sends them (through the host
  /// where staged, device to device for peer copies); returns when every message has come
  /// in, those through the host copied back to the device (not fenced).
  void send_and_receive(const ExecSpace& exchange_space, const PaddedView& field) {
    const char* function = "DistributedPlan::iterate";
    const MPI_Comm comm  = m_domain.comm();
    m_pack.field         = field;
    m_pack.run(exchange_space);
    if (m_staged && m_remote_sent > 0) {
      const std::pair<long, long> remote(0, m_remote_sent);
      Kokkos::deep_copy(exchange_space, Kokkos::subview(m_send_host, remote), Kokkos::subview(m_send_device, remote));
    }
    exchange_space.fence();
    for (const Message& m : m_sends) {
      if (m.kind() != 0) continue;
      m_requests.emplace_back();
      check_mpi(MPI_Isend(send_buffer(m), static_cast<int>(m.count), element_type<T>(), m.peer, m.tag, comm,
                          &m_requests.back()),
                function, "MPI_Isend");
    }
    if (!m_ready.empty()) copy_to_peers(exchange_space);
    check_mpi(MPI_Waitall(static_cast<int>(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE), function,
              "MPI_Waitall");
    if (m_staged && m_remote_received > 0) {
      const std::pair<long, long> remote(0, m_remote_received);
      Kokkos::deep_copy(exchange_space, Kokkos::subview(m_receive_device, remote), m_receive_host);
    }
  }

  /// Unpacks every received halo into `field`'s ghosts on `exchange_space` (not fenced).
  void unpack(const ExecSpace& exchange_space, const PaddedView& field) {
    m_unpack.field = field;
    m_unpack.run(exchange_space);
  }

  /// Lets go of the field the exchange packed and unpacked: its memory is the caller's to free.
  void release() { m_pack.field = m_unpack.field = {}; }

 private:
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
  using Copies = BoxCopies<PaddedView, D>;

  /// Tags of the exchange's messages: a halo's is its direction's index (below 27); a peer
  /// copy's handshake adds these.
  static constexpr int ready_tag = 32, done_tag = 64, handle_tag = 96;

  Domain<D> m_domain;
  std::vector<int> m_host;  ///< each rank's host (Placement::host)
  std::array<int, D> m_halo{};
  Coords m_n{};       ///< the block's extent
  Coords m_origin{};  ///< the fields' padded index of block coordinate 0
  bool m_staged          = false;
  bool m_peer_copies     = false;  ///< messages to ranks on other GPUs of this host are peer copies
  bool m_peers_connected = false;  ///< connect_peers ran
  Interconnect m_link;
  int m_device = -1;  ///< the CUDA device of the receive buffer peers copy into
  /// Every message packed into one buffer, those through MPI first, so that one copy
  /// takes them to the host where staged; the receives through MPI first in theirs, so
  /// one copy brings them back, then the peer copies. A message to this rank is
  /// unpacked from the send buffer (no MPI, no staging).
  std::vector<Message> m_sends, m_receives;
  Kokkos::View<T*, typename Field::memory_space> m_send_device, m_receive_device;
  Kokkos::View<T*, StagingSpace> m_send_host, m_receive_host;
  long m_remote_sent = 0, m_remote_received = 0;  ///< values sent to and received from other ranks through MPI
#if defined(KOKKOS_ENABLE_CUDA)
  std::unique_ptr<IpcBuffer> m_ipc_receive;             ///< m_receive_device's memory where peers copy into it
  std::map<int, std::unique_ptr<IpcMapping>> m_mapped;  ///< peers' receive buffers, by rank
#endif
  Copies m_pack, m_unpack;  ///< their field set for each exchange
  ExchangeEstimate m_estimate;
  std::vector<MPI_Request> m_requests;  ///< the exchange's messages and handshakes in flight
  std::vector<MPI_Request> m_ready;     ///< the receivers' word that their buffers are free for peer copies

  void make_messages() {
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
        send.lo[k]    = o[k] < 0 ? 0 : o[k] > 0 ? m_n[k] - m_halo[k] : 0;
        send.hi[k]    = o[k] < 0 ? m_halo[k] : m_n[k];
        receive.lo[k] = o[k] < 0 ? -m_halo[k] : o[k] > 0 ? m_n[k] : 0;
        receive.hi[k] = o[k] < 0 ? 0 : o[k] > 0 ? m_n[k] + m_halo[k] : m_n[k];
        volume *= send.hi[k] - send.lo[k];
      }
      if (volume == 0) continue;
      send.peer    = m_domain.neighbour(o);
      receive.peer = send.peer;
      if (send.peer == MPI_PROC_NULL) continue;
      // A message carries its sender's direction: received from o, it was sent toward -o.
      send.tag    = static_cast<int>(d);
      receive.tag = static_cast<int>(std::find(directions.begin(), directions.end(), back) - directions.begin());
      send.count = receive.count = element_count("DistributedPlan", volume);
      send.self = receive.self = send.peer == me;
      // A rank on another GPU of this host (the same GPU too: a copy within its memory).
      send.peer_copy = receive.peer_copy =
          m_peer_copies && !send.self &&
          m_host[static_cast<std::size_t>(send.peer)] == m_host[static_cast<std::size_t>(me)];
      if (!send.self) bytes += volume * static_cast<long>(sizeof(T));
      if (send.peer_copy) peer_bytes += volume * static_cast<long>(sizeof(T));
      m_sends.push_back(send);
      m_receives.push_back(receive);
    }
    // Messages through MPI first (one copy each way moves them all where staged), then
    // peer copies, then those to this rank, which are unpacked from the send buffer.
    const auto by_kind = [](const Message& x, const Message& y) { return x.kind() < y.kind(); };
    std::stable_sort(m_sends.begin(), m_sends.end(), by_kind);
    std::stable_sort(m_receives.begin(), m_receives.end(), by_kind);
    long received = 0;
    for (Message& m : m_sends) {
      m.offset = sent;
      sent += m.count;
      if (m.kind() == 0) m_remote_sent = sent;
    }
    for (Message& m : m_receives) {
      if (m.self) continue;
      m.offset = received;
      received += m.count;
      if (m.kind() == 0) m_remote_received = received;
    }
    using DeviceBuffer = Kokkos::View<T*, typename Field::memory_space>;
    m_send_device      = DeviceBuffer("sparstencil halo send", static_cast<std::size_t>(sent));
    if (peer_bytes == 0)
      m_receive_device = DeviceBuffer("sparstencil halo receive", static_cast<std::size_t>(received));
#if defined(KOKKOS_ENABLE_CUDA)  // peer copies are made on CUDA only
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      if (peer_bytes > 0) {  // memory the peers can map
        m_ipc_receive    = std::make_unique<IpcBuffer>(static_cast<std::size_t>(received) * sizeof(T), m_device);
        m_receive_device = DeviceBuffer(static_cast<T*>(m_ipc_receive->data()), static_cast<std::size_t>(received));
      }
    }
#endif
    if (m_staged) {
      m_send_host =
          Kokkos::View<T*, StagingSpace>("sparstencil halo send (host)", static_cast<std::size_t>(m_remote_sent));
      m_receive_host = Kokkos::View<T*, StagingSpace>("sparstencil halo receive (host)",
                                                      static_cast<std::size_t>(m_remote_received));
    }
    // A message's box in the padded allocation (whose extents DistributedField keeps in int).
    auto add_box = [&](Copies& copies, T* data, const Message& m) {
      Kokkos::Array<int, D> begin, size;
      for (int k = 0; k < D; ++k)
        begin[k] = static_cast<int>(m.lo[k] + m_origin[k]), size[k] = static_cast<int>(m.hi[k] - m.lo[k]);
      copies.add(data, begin, size);
    };
    m_unpack.unpack = true;
    for (const Message& m : m_sends) add_box(m_pack, m_send_device.data() + m.offset, m);
    for (const Message& m : m_receives) {
      add_box(m_unpack, m.self ? m_send_device.data() + matching_send(m).offset : m_receive_device.data() + m.offset,
              m);
    }
    Interconnect link = m_link;
    if (!m_staged) link.staging_GBps = 0;
    const auto count = [&](int kind) {
      return static_cast<int>(
          std::count_if(m_sends.begin(), m_sends.end(), [&](const Message& m) { return m.kind() == kind; }));
    };
    m_estimate              = exchange_estimate(bytes, count(0) + count(1), link, peer_bytes, count(1));
    m_estimate.local_copies = count(2);
  }

  /// The send to this rank that a receive from this rank takes its values from.
  const Message& matching_send(const Message& receive) const {
    for (const Message& m : m_sends) {
      if (m.self && m.tag == receive.tag) return m;
    }
    fail("DistributedPlan", "no send matches a message to this rank (internal)");
  }

  /// Where MPI reads or writes a message: the host copy where halos are staged, else the
  /// device buffer.
  T* send_buffer(const Message& m) const { return (m_staged ? m_send_host.data() : m_send_device.data()) + m.offset; }
  T* receive_buffer(const Message& m) const {
    return (m_staged ? m_receive_host.data() : m_receive_device.data()) + m.offset;
  }

  /// The peer copies of a packed exchange, once each receiver has said its buffer is free;
  /// each receiver is told when its copy is done (its requests joined to the exchange's).
  void copy_to_peers(const ExecSpace& exchange_space) {
    const char* function = "DistributedPlan::iterate";
    check_mpi(MPI_Waitall(static_cast<int>(m_ready.size()), m_ready.data(), MPI_STATUSES_IGNORE), function,
              "MPI_Waitall");
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      for (const Message& m : m_sends) {
        if (!m.peer_copy) continue;
        SPARSTENCIL_GPU_CHECK(cudaMemcpyAsync(m.remote, m_send_device.data() + m.offset,
                                              static_cast<std::size_t>(m.count) * sizeof(T), cudaMemcpyDefault,
                                              exchange_space.cuda_stream()));
      }
    }
#endif
    exchange_space.fence();
    for (const Message& m : m_sends) {
      if (!m.peer_copy) continue;
      m_requests.emplace_back();
      check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, m.peer, done_tag + m.tag, m_domain.comm(), &m_requests.back()),
                function, "MPI_Isend");
    }
  }
};

}  // namespace impl

}  // namespace sparstencil
