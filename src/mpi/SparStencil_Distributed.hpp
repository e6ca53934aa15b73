#pragma once
/// Stencils on a grid decomposed over MPI ranks (docs/DISTRIBUTED.md):
///
///   sparstencil::Domain<2> domain(MPI_COMM_WORLD, {8192, 8192}, Boundary::fixed_rim);
///   sparstencil::DistributedField<float, 2> a(domain, ghost), b(domain, ghost);
///   sparstencil::DistributedPlan plan(space, stencil, a, b, options);
///   plan.iterate(a, b, 1000);   // halos t r wide exchanged every t fused steps
///   auto image = sparstencil::gather(a);   // the global grid on rank 0
///
/// Each rank runs the library's own plans on boxes of its padded block: the interior,
/// which needs no halo, while the halo is in flight; then the band along each face that
/// has a neighbour. Results are those of the single-domain run, bit for bit where the
/// executor's sums do not depend on a point's place in its tile (the generic executor).
/// Errors found on any rank are thrown on every rank, naming the ranks.
#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_Query_cuda_support
#endif
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "SparStencil_Domain.hpp"
#include "SparStencil_StencilPlan.hpp"
#include "SparStencil_Views.hpp"

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

/// Whether this MPI takes CUDA device pointers (OpenMPI's query; others are taken not to).
inline bool mpi_takes_cuda_pointers() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

/// Points [begin, begin + size) of a rank-D View, as a subview.
template <int D, class View>
auto subbox(const View& v, const std::array<long, D>& begin, const std::array<long, D>& size) {
  auto r = [&](int a) { return std::pair<long, long>(begin[a], begin[a] + size[a]); };
  if constexpr (D == 1) {
    return Kokkos::subview(v, r(0));
  } else if constexpr (D == 2) {
    return Kokkos::subview(v, r(0), r(1));
  } else {
    return Kokkos::subview(v, r(0), r(1), r(2));
  }
}

/// `size` values of T at `data` in MemSpace, as an unmanaged contiguous (LayoutRight) View.
template <class MemSpace, int D, class T>
auto packed(T* data, const std::array<long, D>& size) {
  using View = Kokkos::View<typename grid_data<T, D>::type, Kokkos::LayoutRight, MemSpace,
                            Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  if constexpr (D == 1) {
    return View(data, size[0]);
  } else if constexpr (D == 2) {
    return View(data, size[0], size[1]);
  } else {
    return View(data, size[0], size[1], size[2]);
  }
}

/// Host memory for halos staged through the host: page-locked where Kokkos has CUDA (copies
/// from pageable memory go through the driver's own staging, several times slower).
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

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

#if defined(KOKKOS_ENABLE_CUDA)
inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) fail("DistributedPlan", call, " failed: ", cudaGetErrorString(status));
}
#endif

/// The duration of work launched on an execution space, for timelines: CUDA events on
/// CUDA (launches return at once), the host's clock elsewhere (they return when done).
template <class ExecSpace>
class LaunchTimer {
 public:
  LaunchTimer()                              = default;
  LaunchTimer(const LaunchTimer&)            = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;
  ~LaunchTimer() {
#if defined(KOKKOS_ENABLE_CUDA)
    if (m_begin) cudaEventDestroy(m_begin);
    if (m_end) cudaEventDestroy(m_end);
#endif
  }
  template <class Launch>
  void time(const ExecSpace& space, Launch&& launch) {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      if (!m_begin) {
        check(cudaEventCreate(&m_begin), "cudaEventCreate");
        check(cudaEventCreate(&m_end), "cudaEventCreate");
      }
      check(cudaEventRecord(m_begin, space.cuda_stream()), "cudaEventRecord");
      launch();
      check(cudaEventRecord(m_end, space.cuda_stream()), "cudaEventRecord");
      return;
    }
#endif
    (void)space;
    const auto start = std::chrono::steady_clock::now();
    launch();
    m_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  /// The seconds the timed launch took; the space must have been fenced since.
  double seconds() const {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, m_begin, m_end), "cudaEventElapsedTime");
      return ms * 1e-3;
    }
#endif
    return m_seconds;
  }

 private:
#if defined(KOKKOS_ENABLE_CUDA)
  static constexpr auto check = check_cuda;
  cudaEvent_t m_begin = nullptr, m_end = nullptr;
#endif
  double m_seconds = 0;
};

/// A CUDA stream of the device's highest priority for the exchange's small kernels, so
/// their blocks are placed ahead of the interior's waiting ones (also across the ranks
/// that share a GPU through MPS); destroyed with its owner, after every use of it.
class PriorityStream {
 public:
  PriorityStream()                                 = default;
  PriorityStream(const PriorityStream&)            = delete;
  PriorityStream& operator=(const PriorityStream&) = delete;
#if defined(KOKKOS_ENABLE_CUDA)
  ~PriorityStream() {
    if (m_stream) cudaStreamDestroy(m_stream);
  }
  /// The stream, made on `device` at the first call.
  cudaStream_t get(int device) {
    if (!m_stream) {
      int current = 0;
      check(cudaGetDevice(&current), "cudaGetDevice");
      check(cudaSetDevice(device), "cudaSetDevice");
      int least = 0, greatest = 0;
      check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
      check(cudaStreamCreateWithPriority(&m_stream, cudaStreamNonBlocking, greatest), "cudaStreamCreateWithPriority");
      check(cudaSetDevice(current), "cudaSetDevice");
    }
    return m_stream;
  }

 private:
  static constexpr auto check = check_cuda;
  cudaStream_t m_stream       = nullptr;
#endif
};

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

#if defined(KOKKOS_ENABLE_CUDA)
/// Device memory that processes on the same host can map (CUDA IPC): the buffer that
/// ranks on other GPUs of the host copy their halos into.
class IpcBuffer {
 public:
  IpcBuffer(std::size_t bytes, int device) {
    int current = 0;
    check_cuda(cudaGetDevice(&current), "cudaGetDevice");
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    const cudaError_t status = cudaMalloc(&m_data, std::max<std::size_t>(bytes, 1));
    check_cuda(cudaSetDevice(current), "cudaSetDevice");
    check_cuda(status, "cudaMalloc");
  }
  IpcBuffer(const IpcBuffer&)            = delete;
  IpcBuffer& operator=(const IpcBuffer&) = delete;
  ~IpcBuffer() { cudaFree(m_data); }
  void* data() const { return m_data; }
  /// The handle another process opens, or the error that stops it.
  bool handle(cudaIpcMemHandle_t& h) const { return cudaIpcGetMemHandle(&h, m_data) == cudaSuccess; }

 private:
  void* m_data = nullptr;
};

/// A peer's IpcBuffer mapped into this process (peer access enabled as it is opened).
class IpcMapping {
 public:
  explicit IpcMapping(const cudaIpcMemHandle_t& h) {
    if (cudaIpcOpenMemHandle(&m_base, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) {
      m_base = nullptr;
      cudaGetLastError();  // the failure is reported by base() being null, not left pending
    }
  }
  IpcMapping(const IpcMapping&)            = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  ~IpcMapping() {
    if (m_base) cudaIpcCloseMemHandle(m_base);
  }
  char* base() const { return static_cast<char*>(m_base); }

 private:
  void* m_base = nullptr;
};
#endif

/// Boxes of a padded field copied to or from contiguous buffers (each box's points in
/// LayoutRight order) in one launch: every message of an exchange packed, or unpacked,
/// at once instead of a copy each.
template <class PaddedView, int D>
struct BoxCopies {
  using T                   = typename PaddedView::non_const_value_type;
  static constexpr int most = 26;  ///< the neighbours of a 3-D block
  struct Box {
    T* data    = nullptr;                   ///< the box's contiguous values
    long first = 0;                         ///< the box's first index in the launch
    Kokkos::Array<int, D> begin{}, size{};  ///< in the padded allocation's coordinates
  };
  PaddedView field;
  Kokkos::Array<Box, most> boxes;
  int count   = 0;
  long total  = 0;      ///< points of all boxes
  bool unpack = false;  ///< buffers to the field (else the field to buffers)

  void add(T* data, const Kokkos::Array<int, D>& begin, const Kokkos::Array<int, D>& size) {
    if (count == most) fail("DistributedPlan", "more than ", most, " boxes in one copy (internal)");
    boxes[count] = Box{data, total, begin, size};
    long points  = 1;
    for (int k = 0; k < D; ++k) points *= size[k];
    total += points;
    ++count;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const long i) const {
    int m = 0;
    while (m + 1 < count && boxes[m + 1].first <= i) ++m;
    const Box& b = boxes[m];
    long r       = i - b.first;
    Kokkos::Array<int, D> c;
    for (int k = D - 1; k >= 0; --k) c[k] = b.begin[k] + static_cast<int>(r % b.size[k]), r /= b.size[k];
    T& value = element<D>(field, c);
    if (unpack) value = b.data[i - b.first];
    else b.data[i - b.first] = value;
  }
  template <class ExecSpace>
  void run(const ExecSpace& space) const {
    if (count == 0) return;
    // Light-weight: the boxes travel in the kernel's parameters, not through constant
    // memory (whose launches wait on the host for the one before).
    static_assert(sizeof(BoxCopies) < 4096, "the halo copies must fit the launch parameters");
    using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<long>,
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>;
    Kokkos::parallel_for("sparstencil::halo_copies", Policy(space, 0, total), *this);
  }
};

}  // namespace impl

/// A grid of `extent` points decomposed into blocks over the ranks of an MPI communicator,
/// as a Cartesian topology: the boundary's periodicity joins the ends of every axis. Copies
/// share the communicator, which is freed with the last copy (before MPI_Finalize).
template <int D>
class Domain {
  static_assert(D >= 1 && D <= 3, "sparstencil: a Domain has 1, 2 or 3 axes");

 public:
  /// Decomposes over the ranks of `comm`: `ranks_per_axis` entries > 0 are kept, zeros are
  /// chosen (process_grid). A communicator with a Cartesian topology of D axes is taken as
  /// it is (its counts and periodicity must agree with the arguments). Collective: every
  /// rank must pass the same arguments, and any mismatch is an error on every rank.
  Domain(MPI_Comm comm, const std::array<long, D>& extent, Boundary boundary,
         const std::array<int, D>& ranks_per_axis = {})
      : m_state(std::make_shared<State>()) {
    const char* function = "Domain";
    State& s             = *m_state;
    s.extent             = extent;
    s.boundary           = boundary;
    int rank = 0, size = 0;
    impl::check_mpi(MPI_Comm_rank(comm, &rank), function, "MPI_Comm_rank");
    impl::check_mpi(MPI_Comm_size(comm, &size), function, "MPI_Comm_size");
    // The same arguments on every rank.
    std::vector<long> mine;
    for (long e : extent) mine.push_back(e);
    mine.push_back(static_cast<long>(boundary));
    for (int p : ranks_per_axis) mine.push_back(p);
    std::vector<long> all(mine.size() * static_cast<std::size_t>(size));
    impl::check_mpi(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_LONG, all.data(),
                                  static_cast<int>(mine.size()), MPI_LONG, comm),
                    function, "MPI_Allgather");
    impl::on_every_rank(comm, function, [&] {
      const std::vector<long> first(all.begin(), all.begin() + static_cast<long>(mine.size()));
      if (first != mine) {
        impl::fail(function, "this rank asks for a grid of ", impl::tuple_string(extent), ", boundary ",
                   to_string(boundary), ", ranks per axis ", impl::tuple_string(ranks_per_axis),
                   " where rank 0 asks for ", impl::tuple_string(std::vector<long>(first.begin(), first.begin() + D)),
                   ", boundary ", to_string(static_cast<Boundary>(first[D])), ", ranks per axis ",
                   impl::tuple_string(std::vector<long>(first.begin() + D + 1, first.end())),
                   ": every rank must pass the same decomposition");
      }
      for (int a = 0; a < D; ++a) {
        if (extent[a] < 1) impl::fail(function, "extent ", impl::tuple_string(extent), " has an empty axis");
      }
    });
    int topology = MPI_UNDEFINED;
    impl::check_mpi(MPI_Topo_test(comm, &topology), function, "MPI_Topo_test");
    const bool periodic = boundary == Boundary::periodic;
    if (topology == MPI_CART) {
      int ndims = 0;
      impl::check_mpi(MPI_Cartdim_get(comm, &ndims), function, "MPI_Cartdim_get");
      std::array<int, 3> dims{}, periods{}, coords{};
      impl::on_every_rank(comm, function, [&] {
        if (ndims != D)
          impl::fail(function, "the communicator's Cartesian topology has ", ndims, " axes, the grid ", D);
        impl::check_mpi(MPI_Cart_get(comm, D, dims.data(), periods.data(), coords.data()), function, "MPI_Cart_get");
        for (int a = 0; a < D; ++a) {
          if ((periods[a] != 0) != periodic) {
            impl::fail(function, "the communicator's topology is ", periods[a] ? "" : "not ", "periodic along axis ", a,
                       " but the boundary is ", to_string(boundary));
          }
          if (ranks_per_axis[a] > 0 && ranks_per_axis[a] != dims[a]) {
            impl::fail(function, "ranks per axis ", impl::tuple_string(ranks_per_axis),
                       " differ from the communicator's topology");
          }
          s.dims[a] = dims[a];
        }
      });
      impl::check_mpi(MPI_Comm_dup(comm, &s.comm), function, "MPI_Comm_dup");
    } else {
      impl::on_every_rank(comm, function, [&] {
        const std::vector<int> dims = process_grid(size, std::vector<long>(extent.begin(), extent.end()),
                                                   std::vector<int>(ranks_per_axis.begin(), ranks_per_axis.end()));
        for (int a = 0; a < D; ++a) s.dims[a] = dims[a];
      });
      std::array<int, D> periods{};
      for (int a = 0; a < D; ++a) periods[a] = periodic ? 1 : 0;
      impl::check_mpi(MPI_Cart_create(comm, D, s.dims.data(), periods.data(), 0, &s.comm), function, "MPI_Cart_create");
    }
    impl::check_mpi(MPI_Comm_rank(s.comm, &s.rank), function, "MPI_Comm_rank");
    impl::check_mpi(MPI_Comm_size(s.comm, &s.size), function, "MPI_Comm_size");
    s.coords = coords_of(s.rank);
    impl::on_every_rank(s.comm, function, [&] {
      for (int a = 0; a < D; ++a) {
        if (s.extent[a] < s.dims[a]) {
          impl::fail(function, "axis ", a, " of ", s.extent[a], " points cannot make ", s.dims[a], " blocks");
        }
      }
    });
  }

  MPI_Comm comm() const { return m_state->comm; }
  int rank() const { return m_state->rank; }
  int ranks() const { return m_state->size; }
  Boundary boundary() const { return m_state->boundary; }
  const std::array<long, D>& extent() const { return m_state->extent; }
  /// Ranks along each axis.
  const std::array<int, D>& ranks_per_axis() const { return m_state->dims; }
  const std::array<int, D>& coords() const { return m_state->coords; }

  std::array<int, D> coords_of(int rank) const {
    std::array<int, D> c{};
    impl::check_mpi(MPI_Cart_coords(m_state->comm, rank, D, c.data()), "Domain", "MPI_Cart_coords");
    return c;
  }
  /// The block of `rank` (this rank's by default) along `axis`.
  BlockRange block(int axis) const {
    return block_range(m_state->extent[axis], m_state->dims[axis], m_state->coords[axis]);
  }
  BlockRange block_of(int rank, int axis) const {
    return block_range(m_state->extent[axis], m_state->dims[axis], coords_of(rank)[axis]);
  }
  /// The smallest block any rank holds along `axis`.
  long smallest_block(int axis) const { return m_state->extent[axis] / m_state->dims[axis]; }

  /// The rank in `direction` (entries -1, 0, 1 for the first D axes), or MPI_PROC_NULL past
  /// a global edge that is not periodic.
  int neighbour(const std::array<int, 3>& direction) const {
    std::array<int, D> c = m_state->coords;
    for (int a = 0; a < D; ++a) {
      c[a] += direction[a];
      if (c[a] < 0 || c[a] >= m_state->dims[a]) {
        if (m_state->boundary != Boundary::periodic) return MPI_PROC_NULL;
        c[a] = (c[a] + m_state->dims[a]) % m_state->dims[a];
      }
    }
    int r = MPI_PROC_NULL;
    impl::check_mpi(MPI_Cart_rank(m_state->comm, c.data(), &r), "Domain", "MPI_Cart_rank");
    return r;
  }
  /// Whether this block has a neighbour (a rank, maybe itself) on `side` (-1, +1) of `axis`.
  bool has_neighbour(int axis, int side) const {
    std::array<int, 3> d{};
    d[axis] = side;
    return neighbour(d) != MPI_PROC_NULL;
  }

  bool same_as(const Domain& other) const { return m_state == other.m_state; }

 private:
  struct State {
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0, size = 1;
    std::array<long, D> extent{};
    std::array<int, D> dims{}, coords{};
    Boundary boundary = Boundary::periodic;
    ~State() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
    }
  };
  std::shared_ptr<State> m_state;
};

/// One rank's block of a decomposed field in a padded allocation: `ghost_width` points on
/// each side of every axis for the halo (global edges that are not periodic leave theirs
/// unused). Views of boxes of it are LayoutStride subviews in the block's coordinates
/// (0 the block's first owned point, -ghost_width the first ghost).
template <class T, int D, class Layout = Kokkos::LayoutRight,
          class MemSpace = Kokkos::DefaultExecutionSpace::memory_space>
class DistributedField {
 public:
  using value_type          = T;
  using padded_view         = GridView<T, D, Layout, MemSpace>;
  using box_view            = Kokkos::View<typename impl::grid_data<T, D>::type, Kokkos::LayoutStride, MemSpace>;
  using memory_space        = MemSpace;
  static constexpr int rank = D;

  DistributedField(const Domain<D>& domain, int ghost_width, const std::string& label = "field")
      : m_domain(domain), m_ghost(ghost_width) {
    std::array<long, D> padded{};
    impl::on_every_rank(domain.comm(), "DistributedField", [&] {
      if (ghost_width < 0) impl::fail("DistributedField", "ghost width ", ghost_width, " is negative");
      // Along the contiguous axis the owned points start, and every line of the padded
      // block starts, on a 128-byte boundary (a cache line): loads line up as on a plain
      // grid, and the matrix-core executors take their aligned paths (16 bytes).
      const int contiguous = std::is_same_v<Layout, Kokkos::LayoutLeft> ? 0 : D - 1;
      const long unit      = 128 % sizeof(T) == 0 ? static_cast<long>(128 / sizeof(T)) : 1;
      const auto round_up  = [&](long x) { return (x + unit - 1) / unit * unit; };
      for (int a = 0; a < D; ++a) {
        m_extent[a] = domain.block(a).size;
        m_origin[a] = a == contiguous ? round_up(ghost_width) : ghost_width;
        padded[a] =
            a == contiguous ? round_up(m_origin[a] + m_extent[a] + ghost_width) : m_extent[a] + 2L * ghost_width;
        if (padded[a] > INT_MAX) {
          impl::fail("DistributedField", "a padded block of ", padded[a], " points along axis ", a);
        }
      }
    });
    std::array<int, D> e{};
    for (int a = 0; a < D; ++a) e[a] = static_cast<int>(padded[a]);
    m_padded = make_view<padded_view>(label, e);
  }

  /// A new field shaped like `like` (same domain and ghost width); this rank alone.
  DistributedField(const DistributedField& like, const std::string& label)
      : m_domain(like.m_domain), m_ghost(like.m_ghost), m_extent(like.m_extent), m_origin(like.m_origin) {
    std::array<int, D> e{};
    for (int a = 0; a < D; ++a) e[a] = static_cast<int>(like.m_padded.extent(a));
    m_padded = make_view<padded_view>(label, e);
  }
  DistributedField(const DistributedField&)            = default;
  DistributedField& operator=(const DistributedField&) = default;

  const Domain<D>& domain() const { return m_domain; }
  int ghost_width() const { return m_ghost; }
  /// This rank's block extents (without ghosts).
  const std::array<long, D>& extent() const { return m_extent; }
  /// The padded allocation: block coordinate 0 along axis a is its index origin()[a]
  /// (the ghost width, more along the contiguous axis so that owned lines start aligned).
  const padded_view& padded() const { return m_padded; }
  const std::array<long, D>& origin() const { return m_origin; }
  /// Points [lo, hi) of the block's coordinates (from -ghost_width to extent + ghost_width).
  box_view box(const std::array<long, D>& lo, const std::array<long, D>& hi) const {
    std::array<long, D> begin{}, size{};
    for (int a = 0; a < D; ++a) {
      if (lo[a] < -m_ghost || hi[a] > m_extent[a] + m_ghost || lo[a] > hi[a]) {
        impl::fail("DistributedField::box", "box ", impl::tuple_string(lo), " to ", impl::tuple_string(hi),
                   " leaves the padded block (", -m_ghost, " to ", impl::tuple_string(m_extent), " + ", m_ghost, ")");
      }
      begin[a] = lo[a] + m_origin[a], size[a] = hi[a] - lo[a];
    }
    return impl::subbox<D>(m_padded, begin, size);
  }
  /// The points this rank owns.
  box_view owned() const { return box({}, m_extent); }

 private:
  Domain<D> m_domain;
  int m_ghost = 0;
  std::array<long, D> m_extent{}, m_origin{};
  padded_view m_padded;
};

namespace impl {
/// A field's padded block copied to the host (contiguous Views only cross memory spaces),
/// and the offsets of its owned points there.
template <class Field>
auto padded_on_host(const Field& f) {
  auto mirror = Kokkos::create_mirror_view(f.padded());
  Kokkos::deep_copy(mirror, f.padded());
  return mirror;
}
}  // namespace impl

/// The whole grid on `root` (a host View of the global extents; an empty View on the other
/// ranks). Collective.
template <class Field>
GridView<typename Field::value_type, Field::rank, Kokkos::LayoutRight, Kokkos::HostSpace> gather(const Field& f,
                                                                                                 int root = 0) {
  using T                 = typename Field::value_type;
  constexpr int D         = Field::rank;
  using Global            = GridView<T, D, Kokkos::LayoutRight, Kokkos::HostSpace>;
  const Domain<D>& domain = f.domain();
  const MPI_Comm comm     = domain.comm();
  std::vector<T> mine(
      static_cast<std::size_t>(std::accumulate(f.extent().begin(), f.extent().end(), 1L, std::multiplies<long>())));
  Kokkos::deep_copy(impl::packed<Kokkos::HostSpace, D>(mine.data(), f.extent()),
                    impl::subbox<D>(impl::padded_on_host(f), f.origin(), f.extent()));
  const int ranks = domain.ranks();
  std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(static_cast<std::size_t>(ranks));
  long total = 0;
  for (int r = 0; r < ranks; ++r) {
    long n = 1;
    for (int a = 0; a < D; ++a) n *= domain.block_of(r, a).size;
    counts[r]  = impl::element_count("gather", n);
    offsets[r] = impl::element_count("gather", total);
    total += n;
  }
  std::vector<T> all(domain.rank() == root ? static_cast<std::size_t>(total) : 0);
  impl::check_mpi(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), impl::element_type<T>(), all.data(),
                              counts.data(), offsets.data(), impl::element_type<T>(), root, comm),
                  "gather", "MPI_Gatherv");
  if (domain.rank() != root) return Global();
  std::array<int, D> e{};
  for (int a = 0; a < D; ++a) e[a] = static_cast<int>(domain.extent()[a]);
  Global global = make_view<Global>("gathered", e);
  for (int r = 0; r < ranks; ++r) {
    std::array<long, D> begin{}, size{};
    for (int a = 0; a < D; ++a) begin[a] = domain.block_of(r, a).begin, size[a] = domain.block_of(r, a).size;
    Kokkos::deep_copy(impl::subbox<D>(global, begin, size),
                      impl::packed<Kokkos::HostSpace, D>(all.data() + offsets[r], size));
  }
  return global;
}

/// Sets each rank's owned points from `global`, a host View of the global extents read on
/// every rank (each copies its own block; no messages). Ghosts are left as they were.
template <class Field, class GlobalView>
void scatter(const GlobalView& global, Field& f) {
  constexpr int D         = Field::rank;
  const Domain<D>& domain = f.domain();
  impl::on_every_rank(domain.comm(), "scatter", [&] {
    for (int a = 0; a < D; ++a) {
      if (static_cast<long>(global.extent(a)) != domain.extent()[a]) {
        impl::fail("scatter", "a global View of extents ", impl::extents_string(global), " for a grid of ",
                   impl::tuple_string(domain.extent()));
      }
    }
  });
  std::array<long, D> begin{}, size{};
  for (int a = 0; a < D; ++a) begin[a] = domain.block(a).begin, size[a] = domain.block(a).size;
  auto mirror = impl::padded_on_host(f);
  Kokkos::deep_copy(impl::subbox<D>(mirror, f.origin(), size), impl::subbox<D>(global, begin, size));
  Kokkos::deep_copy(f.padded(), mirror);
}

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
