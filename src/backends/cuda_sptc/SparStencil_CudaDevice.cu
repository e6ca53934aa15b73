#include <map>
#include <mutex>

#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_CudaDevice.hpp"

namespace sparstencil::cuda_sptc {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: clear the sticky error, report none
    return 0;
  }
  return count;
}

DeviceInfo device_info(int device) {
  const int count = device_count();
  if (device < 0 || device >= count) {
    throw std::runtime_error("sparstencil::cuda_sptc::device_info: device " + std::to_string(device) +
                             " does not exist (" + std::to_string(count) + " CUDA devices)");
  }
  // Properties do not change while the process runs, and cudaGetDeviceProperties is
  // slow: dispatch asks on every apply, so each device is queried once.
  static std::mutex mutex;
  static std::map<int, DeviceInfo> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(device); it != known.end()) return it->second;
  DeviceInfo info;
  info.device = device;
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&info.major, cudaDevAttrComputeCapabilityMajor, device));
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&info.minor, cudaDevAttrComputeCapabilityMinor, device));
  SPARSTENCIL_GPU_CHECK(cudaDeviceGetAttribute(&info.multiprocessors, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp props{};
  SPARSTENCIL_GPU_CHECK(cudaGetDeviceProperties(&props, device));
  info.name = props.name;
  known.emplace(device, info);
  return info;
}

}  // namespace sparstencil::cuda_sptc
