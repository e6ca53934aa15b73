#pragma once
/// The CUDA sparse tensor-core executor, raw API: runs a cuda_sptc Plan (from
/// sparstencil::make_plan) on device pointers with element strides, on a cudaStream_t.
/// Needs no Kokkos. Storage follows the plan's precision: f16 grids hold __half, bf16
/// grids __nv_bfloat16, tf32 grids float (multiplied as tf32, summed in f32).
///
///   sparstencil::cuda_sptc::SparseExecutor run(plan);     // checks, uploads A' and tables
///   run.apply(d_in, in_strides, d_out, out_strides, stream);
///
/// Axes follow the plan: axis 0 slowest. Any positive strides work; the fast path wants
/// the last axis contiguous (stride 1) with 16-byte aligned rows. A LayoutLeft array is
/// planned with its axes reversed (the Kokkos front-end does this).
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "SparStencil_Plan.hpp"

namespace sparstencil::cuda_sptc {

class SparseExecutor {
 public:
  /// Throws std::runtime_error naming the problem: a plan for another executor, a
  /// precision without sparse operands, a block too large for shared memory, no CUDA
  /// device or one below compute capability 8.0 (the current device is used).
  explicit SparseExecutor(const Plan& plan);
  ~SparseExecutor();
  SparseExecutor(const SparseExecutor&)            = delete;
  SparseExecutor& operator=(const SparseExecutor&) = delete;
  SparseExecutor(SparseExecutor&&) noexcept;
  SparseExecutor& operator=(SparseExecutor&&) noexcept;

  /// One launch: `out` = the plan's stencil (its fused_steps steps) applied to `in`, under
  /// the plan's boundary, enqueued on `stream`; returns without synchronising. Both grids
  /// have the plan's extents; strides are in elements, one per axis. Throws for a
  /// null pointer, a stride count other than the plan's dimension, non-positive strides,
  /// overlapping in and out, or a failed launch.
  void apply(const void* in, const std::vector<long>& in_strides, void* out, const std::vector<long>& out_strides,
             cudaStream_t stream = nullptr) const;
  /// The same with the plan's dimension of strides per grid in arrays (no allocation:
  /// the form for time loops).
  void apply(const void* in, const long* in_strides, void* out, const long* out_strides,
             cudaStream_t stream = nullptr) const;

  /// apply() for contiguous grids (last axis fastest).
  void apply(const void* in, void* out, cudaStream_t stream = nullptr) const;

  const Plan& plan() const;
  /// The kernel variant and launch shape, for reports: "f16 MB=1 KC=4, 6400 blocks x 256".
  std::string describe() const;

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

/// Row-major (last axis fastest) element strides for `extents`.
std::vector<long> contiguous_strides(const std::vector<long>& extents);

}  // namespace sparstencil::cuda_sptc
