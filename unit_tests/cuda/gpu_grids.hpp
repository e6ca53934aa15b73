#pragma once
// GPU grids for the raw-API executor tests: device buffers, grids stored in a plan's
// precision with any strides (the gaps filled, and checked untouched after the launch),
// a launch's result read back.
#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_Reference.hpp"
#include "SparStencil_Rounding.hpp"
#include "test_grid_utils.hpp"

namespace sparstencil::test {

/// Device memory for one grid, freed on scope exit.
struct DeviceBuffer {
  void* data = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { SPARSTENCIL_GPU_CHECK(cudaMalloc(&data, bytes)); }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&)            = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/// Storage bytes of a value as a grid of `p` holds it.
inline void store(Precision p, double v, unsigned char* at) {
  if (p == Precision::f64) {
    std::memcpy(at, &v, 8);
  } else if (p == Precision::tf32 || p == Precision::f32) {
    const float f = static_cast<float>(v);
    std::memcpy(at, &f, 4);
  } else {
    const std::uint16_t h =
        p == Precision::f16 ? impl::f16_bits(static_cast<float>(v)) : impl::bf16_bits(static_cast<float>(v));
    std::memcpy(at, &h, 2);
  }
}
inline double load(Precision p, const unsigned char* at) {
  if (p == Precision::f64) {
    double v;
    std::memcpy(&v, at, 8);
    return v;
  }
  if (p == Precision::tf32 || p == Precision::f32) {
    float f;
    std::memcpy(&f, at, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, at, 2);
  return p == Precision::f16 ? impl::f16_value(h) : impl::bf16_value(h);
}

/// Element offset of point i under `strides`, and the elements a strided grid spans.
template <int D>
long offset_of(const std::array<int, D>& i, const std::vector<long>& strides) {
  long o = 0;
  for (int a = 0; a < D; ++a) o += i[a] * strides[a];
  return o;
}
template <int D>
long span_of(const std::array<int, D>& extents, const std::vector<long>& strides) {
  std::array<int, D> last{};
  for (int a = 0; a < D; ++a) last[a] = extents[a] - 1;
  return offset_of<D>(last, strides) + 1;
}

/// Runs a step on the GPU: `in` and `before` (the output's prior contents) stored in
/// precision `p` and uploaded with the given strides, `launch(d_in, d_out)`, the result
/// read back.
template <int D, class Launch>
HostGrid<D> run_on_gpu(Precision p, const HostGrid<D>& in, const HostGrid<D>& before,
                       const std::vector<long>& in_strides, const std::vector<long>& out_strides, Launch&& launch) {
  const int bytes     = storage_bytes(p);
  const long in_span  = span_of<D>(in.extents, in_strides);
  const long out_span = span_of<D>(in.extents, out_strides);
  // Fill the gaps of strided grids with values too: a kernel that reads them is caught.
  std::vector<unsigned char> host_in(in_span * bytes), host_out(out_span * bytes);
  for (long e = 0; e < in_span; ++e) store(p, 1e4, &host_in[e * bytes]);
  for (long e = 0; e < out_span; ++e) store(p, -7.0, &host_out[e * bytes]);
  for (std::size_t flat = 0; flat < in.values.size(); ++flat) {
    const auto i = in.point(flat);
    store(p, in.values[flat], &host_in[offset_of<D>(i, in_strides) * bytes]);
    store(p, before.values[flat], &host_out[offset_of<D>(i, out_strides) * bytes]);
  }
  DeviceBuffer d_in(host_in.size()), d_out(host_out.size());
  SPARSTENCIL_GPU_CHECK(cudaMemcpy(d_in.data, host_in.data(), host_in.size(), cudaMemcpyHostToDevice));
  SPARSTENCIL_GPU_CHECK(cudaMemcpy(d_out.data, host_out.data(), host_out.size(), cudaMemcpyHostToDevice));
  launch(d_in.data, d_out.data);
  SPARSTENCIL_GPU_CHECK(cudaDeviceSynchronize());
  SPARSTENCIL_GPU_CHECK(cudaMemcpy(host_out.data(), d_out.data, host_out.size(), cudaMemcpyDeviceToHost));
  HostGrid<D> out(in.extents);
  for (std::size_t flat = 0; flat < out.values.size(); ++flat) {
    out.values[flat] = load(p, &host_out[offset_of<D>(out.point(flat), out_strides) * bytes]);
  }
  // Nothing written between the strided rows.
  std::vector<char> touched(out_span, 0);
  for (std::size_t flat = 0; flat < out.values.size(); ++flat) touched[offset_of<D>(out.point(flat), out_strides)] = 1;
  for (long e = 0; e < out_span; ++e) {
    if (!touched[e]) {
      EXPECT_EQ(load(p, &host_out[e * bytes]), -7.0) << "wrote into a gap at element " << e;
    }
  }
  return out;
}

/// How far a kernel's result may be from the emulator's: the same rounded operands summed
/// in another order, 2^-22 (n + 2) sum_k |w_k| |in(x + o_k)| for f32 sums (2^-50 for f64),
/// plus one unit in the last place of the storage format (sums that differ in their last
/// bits may round to neighbouring values); n the plan's (fused) terms. docs/PRECISION.md.
template <int D>
HostGrid<D> summation_order_slack(const Plan& plan, const HostGrid<D>& in, const HostGrid<D>& before,
                                  const HostGrid<D>& emulated) {
  const Stencil<D>& applied = as<D>(plan.stencil);
  HostGrid<D> slack         = abs(before);
  reference_apply(abs_weights(applied), abs(in), slack, plan.boundary);
  const Precision p = grid_format(plan);
  const double ulp  = p == Precision::f16    ? 0x1p-10
                      : p == Precision::bf16 ? 0x1p-7
                      : p == Precision::f64  ? 0x1p-52
                                             : 0x1p-23;
  const double sums = p == Precision::f64 ? 0x1p-50 : 0x1p-22;
  for (std::size_t f = 0; f < slack.values.size(); ++f) {
    slack.values[f] = sums * (applied.size() + 2.0) * slack.values[f] + ulp * std::fabs(emulated.values[f]) + 1e-300;
  }
  return slack;
}

}  // namespace sparstencil::test
