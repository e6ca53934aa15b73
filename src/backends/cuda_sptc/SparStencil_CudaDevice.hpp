#pragma once
/// Device discovery for the CUDA executor; the run-time gate of dispatch (compute
/// capability 8.0+ has sparse tensor cores). Plain C++ header: no CUDA headers needed.
#include <string>

namespace sparstencil::cuda_sptc {

struct DeviceInfo {
  int device          = -1;
  int major           = 0;  ///< compute capability major
  int minor           = 0;
  int multiprocessors = 0;
  std::string name;
};

/// Number of usable CUDA devices; 0 when there is no device or no driver (no throw).
int device_count();

/// Properties of `device` (queried once per device and process); throws
/// std::runtime_error for an invalid device or a CUDA error.
DeviceInfo device_info(int device);

/// Sparse tensor cores (mma.sp) exist from Ampere, compute capability 8.0, on.
inline bool has_sparse_tensor_cores(const DeviceInfo& info) { return info.major >= 8; }

}  // namespace sparstencil::cuda_sptc
