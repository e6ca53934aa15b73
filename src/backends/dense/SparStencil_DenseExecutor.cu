// The dense executor: one source for NVIDIA (nvcc) and AMD (hipcc -x hip), its host side
// here (the plan checked against the device, A' and the tables uploaded in the fragment
// order of the layout the device runs, each apply checked and launched); the kernel, its
// image copies, its multiply and its operand kinds in the SparStencil_Dense*.cuh headers,
// the vendor's instructions and lane layouts taken from SparStencil_MatrixFragments.hpp
// and the kernel's geometry from SparStencil_DenseKernel.hpp.
#include "SparStencil_DenseExecutor.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "SparStencil_DenseGpuKernel.cuh"
#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseLaunch.cuh"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_DenseOperandKinds.cuh"
#include "SparStencil_DensePacking.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_Overlap.hpp"

namespace sparstencil::dense {
namespace {

using detail::BF16;
using detail::dense_kernel;
using detail::F16;
using detail::F64;
using detail::launch_kind;
using detail::Layout16;
using detail::TF32;
using sparstencil::impl::fail;

template <class T>
T* upload(const std::vector<T>& host) {
  void* device = nullptr;
  SPARSTENCIL_GPU_CHECK(gpu::malloc_bytes(&device, std::max<std::size_t>(host.size(), 1) * sizeof(T)));
  try {
    SPARSTENCIL_GPU_CHECK(gpu::copy_to_device(device, host.data(), host.size() * sizeof(T)));
  } catch (...) {
    (void)gpu::free_bytes(device);
    throw;
  }
  return static_cast<T*>(device);
}

}  // namespace

struct DenseExecutor::State {
  Plan plan;
  DenseArgs<1> args1;
  DenseArgs<2> args2;
  DenseArgs<3> args3;
  int device         = 0;
  long blocks        = 0;
  std::size_t shared = 0;
  std::vector<long> contiguous;
  std::vector<void*> allocations;
  std::string instruction;

  ~State() {
    for (void* p : allocations) (void)gpu::free_bytes(p);  // no throw from a destructor
  }
  template <int D>
  DenseArgs<D>& args() {
    if constexpr (D == 1) return args1;
    else if constexpr (D == 2) return args2;
    else return args3;
  }
  template <int D>
  void set_up(const void* a, const int* runs, const int* tile_offsets, const int* chunk_offsets,
              const int (&part_chunk)[3]) {
    DenseArgs<D>& g = args<D>();
    g               = dense_args<D>(plan);
    g.a             = a;
    g.run_offsets   = runs;
    g.tile_offsets  = tile_offsets;
    g.chunk_offsets = chunk_offsets;
    std::copy(part_chunk, part_chunk + 3, g.part_chunk);
    blocks = 1;
    for (int ax = 0; ax < D; ++ax) blocks *= g.blocks[ax];
  }
};

DenseExecutor::DenseExecutor(const Plan& plan) : m_state(std::make_unique<State>()) {
  State& s = *m_state;
  if (plan.backend != "dense" || !plan.dense) {
    fail("DenseExecutor", "the plan is for the ", plan.backend, " backend, not dense");
  }
  verify(plan, "DenseExecutor");
  check_kernel_limits(plan, "DenseExecutor");
  s.plan = plan;
  SPARSTENCIL_GPU_CHECK(gpu::current_device(&s.device));
  gpu::DeviceProperties props{};
  SPARSTENCIL_GPU_CHECK(gpu::properties(&props, s.device));
#if defined(SPARSTENCIL_GPU_AMD)
  const std::string arch = props.gcnArchName;
  if (arch.rfind("gfx90a", 0) != 0 && arch.rfind("gfx94", 0) != 0) {
    fail("DenseExecutor", "device ", props.name, " (", arch, ") has no MFMA of the kernel: gfx90a or gfx94x is needed");
  }
#else
  if (props.major < 8) {
    fail("DenseExecutor", "device ", props.name, " (compute capability ", props.major, ".", props.minor,
         ") has no mma.sync of the kernel: 8.0 or newer is needed");
  }
#endif
  // A' in the fragment order of the layout the device runs; every upload kept to be freed
  // (room reserved first: a keep that threw would lose its buffer).
  s.allocations.reserve(8);
  auto keep = [&](auto* device) {
    s.allocations.push_back(const_cast<void*>(static_cast<const void*>(device)));
    return device;
  };
  const void* a            = nullptr;
  const int* chunk_offsets = nullptr;
  int part_chunk[3]{};
  if (plan.precision == Precision::f64) {
    const std::vector<double> row_major = a_row_major(plan);
    const int K                         = static_cast<int>(plan.order.columns.size());
#if defined(SPARSTENCIL_GPU_AMD)
    s.instruction = AmdF64::instruction;
    a             = keep(upload(a_fragments<AmdF64>(row_major, K)));
#else
    // The layout follows __CUDA_ARCH__ of the code that runs: its PTX version (a JIT of
    // compute_80 PTX on an sm_90 device runs m8n8k4).
    cudaFuncAttributes kernel{};
    SPARSTENCIL_GPU_CHECK(cudaFuncGetAttributes(&kernel, dense_kernel<F64, double, 2>));
    if (kernel.ptxVersion >= 90) {
      s.instruction      = NvidiaF64Sm90::instruction;
      const PartTables t = part_tables<NvidiaF64Sm90>(plan);
      a                  = keep(upload(t.b));
      chunk_offsets      = keep(upload(t.offsets));
      std::copy(t.first.begin(), t.first.end(), part_chunk);
    } else {
      s.instruction = NvidiaF64::instruction;
      a             = keep(upload(a_fragments<NvidiaF64>(row_major, K)));
    }
#endif
  } else if (plan.precision == Precision::tf32) {
#if defined(SPARSTENCIL_GPU_AMD)
    fail("DenseExecutor", "device ", props.name, " has no tf32 matrix instructions (MFMA of gfx90a: f16, bf16, f64)");
#else
    s.instruction = NvidiaTF32::instruction;
    a             = keep(upload(a_fragments<NvidiaTF32>(plan.a.values, static_cast<int>(plan.order.columns.size()))));
#endif
  } else {
    const std::vector<unsigned short> row_major = unpack_halves(plan.a);
    s.instruction                               = Layout16::instruction;
    a = keep(upload(a_fragments<Layout16>(row_major, static_cast<int>(plan.order.columns.size()))));
  }
  const int* runs         = keep(upload(run_offsets(plan)));
  const int* tile_offsets = keep(upload(plan.tile_offsets));
  switch (plan.dims()) {
    case 1: s.set_up<1>(a, runs, tile_offsets, chunk_offsets, part_chunk); break;
    case 2: s.set_up<2>(a, runs, tile_offsets, chunk_offsets, part_chunk); break;
    default: s.set_up<3>(a, runs, tile_offsets, chunk_offsets, part_chunk); break;
  }
  if (s.blocks > 0x7fffffffL) fail("DenseExecutor", "the grid needs ", s.blocks, " blocks, more than a launch takes");
  s.shared = shared_bytes(plan);
#if defined(SPARSTENCIL_GPU_AMD)
  const std::size_t limit = props.sharedMemPerBlock;
#else
  const std::size_t limit = props.sharedMemPerBlockOptin;
#endif
  if (s.shared > limit) {
    fail("DenseExecutor", "a block of the plan (for device ", plan.device, ") needs ", s.shared,
         " bytes of shared memory; device ", props.name, " gives a block at most ", limit);
  }
  s.contiguous.assign(plan.dims(), 1);
  for (int ax = plan.dims() - 2; ax >= 0; --ax) s.contiguous[ax] = s.contiguous[ax + 1] * plan.grid[ax + 1];
}

DenseExecutor::~DenseExecutor()                                   = default;
DenseExecutor::DenseExecutor(DenseExecutor&&) noexcept            = default;
DenseExecutor& DenseExecutor::operator=(DenseExecutor&&) noexcept = default;

const Plan& DenseExecutor::plan() const { return m_state->plan; }

std::string DenseExecutor::describe() const {
  return m_state->instruction + ", " + std::to_string(m_state->blocks) + " blocks x " + std::to_string(block_threads);
}

void DenseExecutor::apply(const void* in, void* out, Stream stream) const {
  apply(in, m_state->contiguous.data(), out, m_state->contiguous.data(), stream);
}

void DenseExecutor::apply(const void* in, const long* in_strides, void* out, const long* out_strides,
                          Stream stream) const {
  State& s    = *m_state;
  const int D = s.plan.dims();
  if (in == nullptr || out == nullptr) fail("DenseExecutor::apply", "null grid pointer");
  for (int a = 0; a < D; ++a) {
    if (in_strides[a] < 1 || out_strides[a] < 1) {
      fail("DenseExecutor::apply", "strides must be positive: in ",
           sparstencil::impl::tuple_string(std::vector<long>(in_strides, in_strides + D)), ", out ",
           sparstencil::impl::tuple_string(std::vector<long>(out_strides, out_strides + D)));
    }
  }
  const std::size_t bytes = static_cast<std::size_t>(storage_bytes(grid_format(s.plan)));
  if (sparstencil::impl::grid_overlap(reinterpret_cast<std::uintptr_t>(in), in_strides,
                                      reinterpret_cast<std::uintptr_t>(out), out_strides, s.plan.grid.data(), D,
                                      bytes) != sparstencil::impl::Overlap::none) {
    fail("DenseExecutor::apply", "in and out overlap in memory (or may: equal strides are decided element by ",
         "element, others by their memory ranges): a step needs separate buffers");
  }
  int current = 0;
  SPARSTENCIL_GPU_CHECK(gpu::current_device(&current));
  if (current != s.device) {
    fail("DenseExecutor::apply", "the executor was built on device ", s.device, " but device ", current, " is current");
  }
  const void* args = nullptr;
  auto fill        = [&](auto& g) {
    g.in  = in;
    g.out = out;
    for (int a = 0; a < D; ++a) g.in_stride[a] = in_strides[a], g.out_stride[a] = out_strides[a];
    args = &g;
  };
  DenseArgs<1> g1 = s.args1;
  DenseArgs<2> g2 = s.args2;
  DenseArgs<3> g3 = s.args3;
  if (D == 1) fill(g1);
  else if (D == 2) fill(g2);
  else fill(g3);
  switch (s.plan.precision) {
    case Precision::f16:
      if (s.plan.float_grids) launch_kind<F16, float>(D, args, s.blocks, s.shared, stream);
      else launch_kind<F16>(D, args, s.blocks, s.shared, stream);
      break;
    case Precision::bf16:
      if (s.plan.float_grids) launch_kind<BF16, float>(D, args, s.blocks, s.shared, stream);
      else launch_kind<BF16>(D, args, s.blocks, s.shared, stream);
      break;
#if !defined(SPARSTENCIL_GPU_AMD)
    case Precision::tf32: launch_kind<TF32>(D, args, s.blocks, s.shared, stream); break;
#endif
    case Precision::f64: launch_kind<F64>(D, args, s.blocks, s.shared, stream); break;
    default: fail("DenseExecutor::apply", "no dense kernel for ", to_string(s.plan.precision), " here");
  }
}

}  // namespace sparstencil::dense
