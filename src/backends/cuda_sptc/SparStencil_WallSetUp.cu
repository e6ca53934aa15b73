/// The wall kernel's set-up: the boxes of the band along the walls it computes, one step's
/// terms, its launch shape (interior and fixed_rim plans with wall work).
#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

#include "SparStencil_Emulator.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_SparseExecutorState.cuh"
#include "SparStencil_WallBands.hpp"
#include "SparStencil_WallKernel.cuh"

namespace sparstencil::cuda_sptc {

using impl::Operand;
using impl::padded;
using impl::upload;
using sparstencil::impl::fail;

void SparseExecutor::State::set_up_walls(Operand op) {
  const WallBands bands = wall_bands(plan);
  if (bands.boxes.empty()) return;
  impl::WallParams& w = wall_params;
  const auto extent   = padded(plan.grid, 1L);
  for (int a = 0; a < 3; ++a) w.extent[a] = extent[a], w.radius[a] = bands.radius[a];
  w.steps    = bands.steps;
  w.boundary = plan.boundary;
  std::vector<int> offsets;
  std::vector<float> weights;
  std::visit(
      [&](const auto& stencil) {
        const int D = static_cast<int>(stencil.radius().size());
        for (const auto& term : stencil.terms()) {
          for (int a = 0; a < 3 - D; ++a) offsets.push_back(0);
          for (int a = 0; a < D; ++a) offsets.push_back(term.offset[a]);
          weights.push_back(emulation::operand_value(plan.precision, term.weight));
        }
      },
      plan.original);
  w.terms   = static_cast<int>(weights.size());
  w.offsets = keep(upload(offsets));
  w.weights = keep(upload(weights));
  std::vector<long> boxes;
  for (const WallBox& box : bands.boxes) {
    boxes.insert(boxes.end(), box.lo.begin(), box.lo.end());
    boxes.insert(boxes.end(), box.hi.begin(), box.hi.end());
  }
  w.boxes     = keep(upload(boxes));
  wall_blocks = static_cast<long>(bands.boxes.size());
  if (wall_blocks > INT32_MAX) fail("SparseExecutor", "the wall bands need too many thread blocks");
  wall_kernel       = op == Operand::f16    ? impl::wall_kernel<Operand::f16>
                      : op == Operand::bf16 ? impl::wall_kernel<Operand::bf16>
                                            : impl::wall_kernel<Operand::tf32>;
  wall_shared_bytes = bands.shared_bytes;
  wall_threads      = wall_block_threads(bands.largest_region);
  allow_shared(wall_kernel, wall_shared_bytes, "the wall kernel's blocks need ");
  SPARSTENCIL_GPU_CHECK(cudaStreamCreateWithFlags(&wall_stream, cudaStreamNonBlocking));
  SPARSTENCIL_GPU_CHECK(cudaEventCreateWithFlags(&wall_fork, cudaEventDisableTiming));
  SPARSTENCIL_GPU_CHECK(cudaEventCreateWithFlags(&wall_join, cudaEventDisableTiming));
}

}  // namespace sparstencil::cuda_sptc
