#pragma once
/// The dense matrix-core executor, raw API: runs a dense Plan on device pointers with
/// element strides, on a stream. Needs no Kokkos. One source builds for NVIDIA (CUDA,
/// sm_80+: mma.sync) and AMD (HIP, gfx90a+: MFMA). Storage follows grid_format(plan):
/// f16 grids hold IEEE half values, bf16 grids bfloat16, f64 grids double, tf32 grids
/// float (multiplied as tf32, summed in f32; NVIDIA only), and plans with float_grids
/// float (rounded to their f16/bf16 operands, results stored as float).
///
///   sparstencil::dense::DenseExecutor run(plan);     // checks, uploads A' and tables
///   run.apply(d_in, in_strides, d_out, out_strides, stream);
///
/// Axes follow the plan: axis 0 slowest; any positive strides.
#include <memory>
#include <string>
#include <vector>

#include "SparStencil_Plan.hpp"

#if defined(__HIPCC__)
#include <hip/hip_runtime_api.h>
#else
#include <cuda_runtime_api.h>
#endif

namespace sparstencil::dense {

#if defined(__HIPCC__)
using Stream = hipStream_t;
#else
using Stream = cudaStream_t;
#endif

class DenseExecutor {
 public:
  /// Throws std::runtime_error naming the problem: a plan for another backend or that
  /// does not verify, no GPU or one without the matrix instructions (NVIDIA below compute
  /// capability 8.0; AMD other than gfx90a or gfx94x, or a tf32 plan on AMD), a block needing more shared
  /// memory than the device gives one, a grid of more blocks than a launch takes.
  explicit DenseExecutor(const Plan& plan);
  ~DenseExecutor();
  DenseExecutor(const DenseExecutor&)            = delete;
  DenseExecutor& operator=(const DenseExecutor&) = delete;
  DenseExecutor(DenseExecutor&&) noexcept;
  DenseExecutor& operator=(DenseExecutor&&) noexcept;

  /// One launch: `out` = the plan's stencil applied to `in` under the plan's boundary,
  /// enqueued on `stream`; returns without synchronising. Strides in elements, one per
  /// axis, positive. Throws for a null pointer, bad strides, overlapping grids, another
  /// device current than the executor's, or a failed launch.
  void apply(const void* in, const long* in_strides, void* out, const long* out_strides, Stream stream = nullptr) const;
  /// apply() for contiguous grids (last axis fastest).
  void apply(const void* in, void* out, Stream stream = nullptr) const;

  const Plan& plan() const;
  /// The instruction and launch shape, for reports: "mma.sync m16n8k16 f16/bf16 -> f32, 6400 blocks x 256".
  std::string describe() const;

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

}  // namespace sparstencil::dense
