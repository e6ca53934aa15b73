#pragma once
// cuDNN as the stencil baseline a user would reach for: one stencil step as a
// single-channel cross-correlation (NCHW, NCDHW for 3-D, a 1-D grid as 1 x N) whose
// filter is the stencil's weights on the box of its radius. cuDNN pads with zeros, so
// it matches a periodic step away from the edges only; the suite checks it there.
// Raw device pointers and a cudaStream_t, no Kokkos. Built where cuDNN is found.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

namespace sparstencil::bench {

enum class CudnnType { f16, f32, f64 };

class CudnnStencil {
 public:
  /// `extents` axis 0 slowest; `radius` per axis; `weights` dense over the box
  /// (2 r_a + 1 per axis, row-major). Picks cuDNN's fastest algorithm for this problem
  /// with cudnnFindConvolutionForwardAlgorithmEx on `in`/`out` (which it overwrites).
  /// f16: f32 accumulation, tensor cores allowed; f32: FMA math (no TF32); f64: double.
  /// Throws std::runtime_error naming the failing cuDNN call.
  CudnnStencil(const std::vector<long>& extents, const std::vector<int>& radius, const std::vector<double>& weights,
               CudnnType type, void* in, void* out, cudaStream_t stream);
  ~CudnnStencil();
  CudnnStencil(const CudnnStencil&)            = delete;
  CudnnStencil& operator=(const CudnnStencil&) = delete;

  /// One step on `stream` (asynchronous).
  void run(const void* in, void* out) const;
  /// The algorithm cuDNN chose and its workspace: "IMPLICIT_PRECOMP_GEMM, tensor ops, 0 MiB".
  std::string describe() const;

 private:
  struct State;
  std::unique_ptr<State> m_state;
};

/// cuDNN's version as "9.19.0".
std::string cudnn_version();

}  // namespace sparstencil::bench
