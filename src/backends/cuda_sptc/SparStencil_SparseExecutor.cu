#include "SparStencil_SparseExecutor.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <sstream>
#include <utility>

#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_Overlap.hpp"
#include "SparStencil_SparseExecutorState.cuh"
#include "SparStencil_SparseKernelFacts.hpp"
#include "SparStencil_SparseOperand.hpp"

namespace sparstencil::cuda_sptc {

using impl::KernelParams;
using impl::Operand;
using impl::padded;
using impl::RowRunParams;
using sparstencil::impl::fail;

std::vector<long> contiguous_strides(const std::vector<long>& extents) {
  std::vector<long> strides(extents.size(), 1);
  for (int a = static_cast<int>(extents.size()) - 2; a >= 0; --a) strides[a] = strides[a + 1] * extents[a + 1];
  return strides;
}

SparseExecutor::SparseExecutor(const Plan& plan) : m_state(std::make_unique<State>()) {
  State& s     = *m_state;
  s.plan       = plan;
  s.contiguous = contiguous_strides(plan.grid);
  if (plan.backend != "cuda_sptc")
    fail("SparseExecutor", "the plan is for the ", plan.backend, " backend, not cuda_sptc");
  if (!has_sparse_operands(plan.precision)) {
    fail("SparseExecutor", "precision ", to_string(plan.precision), " has no sparse tensor-core form");
  }
  if (plan.float_grids)
    fail("SparseExecutor", "the plan reads float grids: the sparse executor reads grids of its operand format");
  const int D = plan.dims();
  if (D < 1 || D > 3) fail("SparseExecutor", "the plan is ", D, "-D; 1-D to 3-D are supported");

  // The device: the current one, compute capability 8.0 or newer.
  if (device_count() == 0) fail("SparseExecutor", "no CUDA device is available");
  SPARSTENCIL_GPU_CHECK(cudaGetDevice(&s.device));
  const DeviceInfo info = device_info(s.device);
  if (!has_sparse_tensor_cores(info)) {
    fail("SparseExecutor", "device ", s.device, " (", info.name, ", compute capability ", info.major, ".", info.minor,
         ") has no sparse tensor cores: compute capability 8.0 or newer is needed");
  }

  const Operand op = plan.precision == Precision::f16    ? Operand::f16
                     : plan.precision == Precision::bf16 ? Operand::bf16
                                                         : Operand::tf32;
  s.element_bytes  = storage_bytes(plan.precision);
  s.set_up_walls(op);
  if (!plan.runs.empty()) {
    s.set_up_row_runs(info, op);
    return;
  }
  s.set_up_gather(info, op);
}

template <class Sparse>
void SparseExecutor::State::launch_with_walls(const void* in, const long* in_strides, void* out,
                                              const long* out_strides, cudaStream_t stream, bool beside,
                                              Sparse&& sparse) const {
  beside = beside && wall_blocks > 0;
  if (beside) {
    SPARSTENCIL_GPU_CHECK(cudaEventRecord(wall_fork, stream));
    SPARSTENCIL_GPU_CHECK(cudaStreamWaitEvent(wall_stream, wall_fork, 0));
  }
  sparse();
  if (wall_blocks == 0) return;
  impl::WallParams w = wall_params;
  w.in               = in;
  w.out              = out;
  const int D        = plan.dims();
  const auto is = padded(in_strides, D, 0L), os = padded(out_strides, D, 0L);
  for (int a = 0; a < 3; ++a) w.in_stride[a] = is[a], w.out_stride[a] = os[a];
  wall_kernel<<<static_cast<unsigned>(wall_blocks), wall_threads, wall_shared_bytes, beside ? wall_stream : stream>>>(
      w);
  SPARSTENCIL_GPU_CHECK_LAUNCH();
  if (beside) {
    SPARSTENCIL_GPU_CHECK(cudaEventRecord(wall_join, wall_stream));
    SPARSTENCIL_GPU_CHECK(cudaStreamWaitEvent(stream, wall_join, 0));
  }
}

SparseExecutor::~SparseExecutor()                                    = default;
SparseExecutor::SparseExecutor(SparseExecutor&&) noexcept            = default;
SparseExecutor& SparseExecutor::operator=(SparseExecutor&&) noexcept = default;

const Plan& SparseExecutor::plan() const { return m_state->plan; }

std::string SparseExecutor::describe() const {
  const State& s = *m_state;
  std::ostringstream out;
  if (s.run_kernel != nullptr) {
    const RowRunParams& p = s.run_params;
    out << to_string(s.plan.precision) << " row runs" << (s.plan.interleave != 0 ? " (interleaved)" : "") << ", "
        << p.k_chunks << " chunks, " << s.run_loop << ", " << s.grid_blocks << " blocks x " << s.block_threads << ", "
        << p.segment << " steps a warp, " << s.shared_bytes << " B shared";
    return out.str();
  }
  out << to_string(s.plan.precision) << " MB=" << s.plan.a.m_blocks << " KC=" << s.held_chunks << ", " << s.grid_blocks
      << " blocks x " << impl::threads_per_block << ", " << s.params.blocks_per_cta << " tile blocks each, "
      << s.shared_bytes << " B shared";
  return out.str();
}

void SparseExecutor::apply(const void* in, void* out, cudaStream_t stream) const {
  const std::vector<long>& strides = m_state->contiguous;
  apply(in, strides.data(), out, strides.data(), stream);
}

void SparseExecutor::apply(const void* in, const std::vector<long>& in_strides, void* out,
                           const std::vector<long>& out_strides, cudaStream_t stream) const {
  const int D = m_state->plan.dims();
  if (static_cast<int>(in_strides.size()) != D || static_cast<int>(out_strides.size()) != D) {
    fail("SparseExecutor::apply", "need ", D, " strides per grid, got ", in_strides.size(), " and ",
         out_strides.size());
  }
  apply(in, in_strides.data(), out, out_strides.data(), stream);
}

void SparseExecutor::apply(const void* in, const long* in_strides, void* out, const long* out_strides,
                           cudaStream_t stream) const {
  const State& s = *m_state;
  const int D    = s.plan.dims();
  if (in == nullptr || out == nullptr) fail("SparseExecutor::apply", "null grid pointer");
  for (int a = 0; a < D; ++a) {
    if (in_strides[a] < 1 || out_strides[a] < 1) {
      fail("SparseExecutor::apply", "strides must be positive: in ",
           sparstencil::impl::tuple_string(std::vector<long>(in_strides, in_strides + D)), ", out ",
           sparstencil::impl::tuple_string(std::vector<long>(out_strides, out_strides + D)));
    }
  }
  if (sparstencil::impl::grid_overlap(reinterpret_cast<std::uintptr_t>(in), in_strides,
                                      reinterpret_cast<std::uintptr_t>(out), out_strides, s.plan.grid.data(), D,
                                      static_cast<std::size_t>(s.element_bytes)) != sparstencil::impl::Overlap::none) {
    fail("SparseExecutor::apply", "in and out overlap in memory (or may: equal strides are decided element by ",
         "element, others by their memory ranges): a step needs separate buffers");
  }
  int current = 0;
  SPARSTENCIL_GPU_CHECK(cudaGetDevice(&current));
  if (current != s.device) {
    fail("SparseExecutor::apply", "the executor was built on device ", s.device, " but device ", current,
         " is current");
  }
  if (s.run_kernel != nullptr) {
    RowRunParams p = s.run_params;
    p.in           = in;
    p.out          = out;
    const auto is = padded(in_strides, D, 0L), os = padded(out_strides, D, 0L);
    for (int a = 0; a < 3; ++a) p.in_stride[a] = is[a], p.out_stride[a] = os[a];
    // Whole 16-byte output rows: the kernel's copy-only store path (1-D rows are a strip
    // apart); input rows of whole 16-byte units: its copy-only fill path. Elsewhere it
    // checks chunk by chunk.
    const int vector = 16 / s.element_bytes;
    p.out_aligned =
        reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && os[2] == 1 && os[1] % vector == 0 && os[0] % vector == 0;
    p.in_aligned =
        reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && is[2] == 1 && is[1] % vector == 0 && is[0] % vector == 0;
    s.launch_with_walls(in, in_strides, out, out_strides, stream, s.walls_variant && p.out_aligned, [&] {
      s.run_kernel<<<static_cast<unsigned>(s.grid_blocks), s.block_threads, s.shared_bytes, stream>>>(p);
      SPARSTENCIL_GPU_CHECK_LAUNCH();
    });
    return;
  }
  KernelParams p = s.params;
  p.in           = in;
  p.out          = out;
  const auto is = padded(in_strides, D, 0L), os = padded(out_strides, D, 0L);
  for (int a = 0; a < 3; ++a) {
    p.in_stride[a]  = is[a];
    p.out_stride[a] = os[a];
  }
  s.launch_with_walls(in, in_strides, out, out_strides, stream, false, [&] {
    s.kernel<<<static_cast<unsigned>(s.grid_blocks), impl::threads_per_block, s.shared_bytes, stream>>>(p);
    SPARSTENCIL_GPU_CHECK_LAUNCH();
  });
}

}  // namespace sparstencil::cuda_sptc
