#include "cudnn_baseline.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <stdexcept>

namespace sparstencil::bench {

namespace {

void check(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuDNN: ") + call + " failed: " + cudnnGetErrorString(status));
  }
}
void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("cuDNN baseline: ") + call + " failed: " + cudaGetErrorString(status));
  }
}
#define SUITE_CUDNN(call) check(call, #call)

const char* algorithm_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "other";
  }
}

}  // namespace

struct CudnnStencil::State {
  cudnnHandle_t handle                = nullptr;
  cudnnTensorDescriptor_t x           = nullptr;
  cudnnTensorDescriptor_t y           = nullptr;
  cudnnFilterDescriptor_t w           = nullptr;
  cudnnConvolutionDescriptor_t conv   = nullptr;
  cudnnConvolutionFwdAlgo_t algorithm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnMathType_t math                = CUDNN_DEFAULT_MATH;
  void* filter                        = nullptr;
  void* workspace                     = nullptr;
  std::size_t workspace_bytes         = 0;  ///< allocated
  std::size_t algorithm_bytes         = 0;  ///< what the chosen algorithm uses
  CudnnType type                      = CudnnType::f32;

  ~State() {
    if (workspace) cudaFree(workspace);
    if (filter) cudaFree(filter);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (x) cudnnDestroyTensorDescriptor(x);
    if (handle) cudnnDestroy(handle);
  }
};

CudnnStencil::CudnnStencil(const std::vector<long>& extents, const std::vector<int>& radius,
                           const std::vector<double>& weights, CudnnType type, void* in, void* out, cudaStream_t stream)
    : m_state(std::make_unique<State>()) {
  State& s       = *m_state;
  s.type         = type;
  const int dims = static_cast<int>(extents.size());
  if (dims < 1 || dims > 3 || radius.size() != extents.size()) {
    throw std::invalid_argument("CudnnStencil: extents and radius must have 1 to 3 equal-length axes");
  }
  // cuDNN wants at least 2 spatial axes: a 1-D grid is one row.
  std::vector<int> spatial(extents.begin(), extents.end()), filter(dims), pad(radius);
  for (int a = 0; a < dims; ++a) filter[a] = 2 * radius[a] + 1;
  if (dims == 1) {
    spatial.insert(spatial.begin(), 1);
    filter.insert(filter.begin(), 1);
    pad.insert(pad.begin(), 0);
  }
  const int n = static_cast<int>(spatial.size());
  std::vector<int> tensor_dims{1, 1}, filter_dims{1, 1};
  tensor_dims.insert(tensor_dims.end(), spatial.begin(), spatial.end());
  filter_dims.insert(filter_dims.end(), filter.begin(), filter.end());
  std::vector<int> strides(n + 2, 1);
  for (int a = n + 2 - 2; a >= 0; --a) strides[a] = strides[a + 1] * tensor_dims[a + 1];
  const std::vector<int> ones(n, 1);

  const cudnnDataType_t data    = type == CudnnType::f16   ? CUDNN_DATA_HALF
                                  : type == CudnnType::f32 ? CUDNN_DATA_FLOAT
                                                           : CUDNN_DATA_DOUBLE;
  const cudnnDataType_t compute = type == CudnnType::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  s.math = type == CudnnType::f16 ? CUDNN_TENSOR_OP_MATH : type == CudnnType::f32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;

  SUITE_CUDNN(cudnnCreate(&s.handle));
  SUITE_CUDNN(cudnnSetStream(s.handle, stream));
  SUITE_CUDNN(cudnnCreateTensorDescriptor(&s.x));
  SUITE_CUDNN(cudnnCreateTensorDescriptor(&s.y));
  SUITE_CUDNN(cudnnSetTensorNdDescriptor(s.x, data, n + 2, tensor_dims.data(), strides.data()));
  SUITE_CUDNN(cudnnSetTensorNdDescriptor(s.y, data, n + 2, tensor_dims.data(), strides.data()));
  SUITE_CUDNN(cudnnCreateFilterDescriptor(&s.w));
  SUITE_CUDNN(cudnnSetFilterNdDescriptor(s.w, data, CUDNN_TENSOR_NCHW, n + 2, filter_dims.data()));
  SUITE_CUDNN(cudnnCreateConvolutionDescriptor(&s.conv));
  SUITE_CUDNN(cudnnSetConvolutionNdDescriptor(s.conv, n, pad.data(), ones.data(), ones.data(), CUDNN_CROSS_CORRELATION,
                                              compute));
  SUITE_CUDNN(cudnnSetConvolutionMathType(s.conv, s.math));

  // The filter in the data type.
  const std::size_t taps    = weights.size();
  const std::size_t element = type == CudnnType::f16 ? 2 : type == CudnnType::f32 ? 4 : 8;
  std::vector<unsigned char> host(taps * element);
  for (std::size_t i = 0; i < taps; ++i) {
    if (type == CudnnType::f16) reinterpret_cast<__half*>(host.data())[i] = __double2half(weights[i]);
    else if (type == CudnnType::f32) reinterpret_cast<float*>(host.data())[i] = static_cast<float>(weights[i]);
    else reinterpret_cast<double*>(host.data())[i] = weights[i];
  }
  SUITE_CUDNN(cudaMalloc(&s.filter, host.size()));
  SUITE_CUDNN(cudaMemcpy(s.filter, host.data(), host.size(), cudaMemcpyHostToDevice));

  // Workspace: what the hungriest algorithm asks, up to a quarter of free memory.
  std::size_t free_bytes = 0, total_bytes = 0;
  SUITE_CUDNN(cudaMemGetInfo(&free_bytes, &total_bytes));
  std::size_t wanted = 0;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++a) {
    std::size_t bytes = 0;
    if (cudnnGetConvolutionForwardWorkspaceSize(s.handle, s.x, s.w, s.conv, s.y,
                                                static_cast<cudnnConvolutionFwdAlgo_t>(a),
                                                &bytes) == CUDNN_STATUS_SUCCESS) {
      wanted = std::max(wanted, bytes);
    }
  }
  s.workspace_bytes = std::min(wanted, free_bytes / 4);
  if (s.workspace_bytes > 0) SUITE_CUDNN(cudaMalloc(&s.workspace, s.workspace_bytes));

  cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  SUITE_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(s.handle, s.x, in, s.w, s.filter, s.conv, s.y, out,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, results, s.workspace,
                                                     s.workspace_bytes));
  const auto best = std::find_if(results, results + returned, [&](const cudnnConvolutionFwdAlgoPerf_t& r) {
    return r.status == CUDNN_STATUS_SUCCESS && r.memory <= s.workspace_bytes;
  });
  if (best == results + returned) throw std::runtime_error("cuDNN: no forward algorithm runs this problem");
  s.algorithm       = best->algo;
  s.algorithm_bytes = best->memory;
  s.math            = best->mathType;
  SUITE_CUDNN(cudnnSetConvolutionMathType(s.conv, s.math));
}

CudnnStencil::~CudnnStencil() = default;

void CudnnStencil::run(const void* in, void* out) const {
  const State& s     = *m_state;
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const void* alpha = s.type == CudnnType::f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta  = s.type == CudnnType::f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  SUITE_CUDNN(cudnnConvolutionForward(s.handle, alpha, s.x, in, s.w, s.filter, s.conv, s.algorithm, s.workspace,
                                      s.workspace_bytes, beta, s.y, out));
}

std::string CudnnStencil::describe() const {
  const State& s = *m_state;
  return std::string(algorithm_name(s.algorithm)) +
         (s.math == CUDNN_TENSOR_OP_MATH || s.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? ", tensor ops" : "") +
         ", " + std::to_string(s.algorithm_bytes >> 20) + " MiB workspace";
}

std::string cudnn_version() {
  const std::size_t v = cudnnGetVersion();
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace sparstencil::bench
