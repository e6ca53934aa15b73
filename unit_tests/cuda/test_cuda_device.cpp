// CUDA device discovery (no Kokkos). Skips, saying why, where there is no CUDA device.
#include <gtest/gtest.h>

#include <stdexcept>

#include "SparStencil_CudaDevice.hpp"

namespace {

TEST(CudaDevice, ReportsComputeCapability) {
  if (sparstencil::cuda_sptc::device_count() == 0) GTEST_SKIP() << "no CUDA device: GPU test skipped";
  const auto info = sparstencil::cuda_sptc::device_info(0);
  EXPECT_GE(info.major, 5);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_FALSE(info.name.empty());
  std::printf("device 0: %s, compute capability %d.%d, %d SMs, sparse tensor cores: %s\n", info.name.c_str(),
              info.major, info.minor, info.multiprocessors,
              sparstencil::cuda_sptc::has_sparse_tensor_cores(info) ? "yes" : "no");
}

TEST(CudaDevice, InvalidDeviceIsAClearError) {
  try {
    sparstencil::cuda_sptc::device_info(sparstencil::cuda_sptc::device_count() + 3);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

}  // namespace
