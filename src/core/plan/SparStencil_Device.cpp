#include "SparStencil_Device.hpp"

#include <limits>

#include "SparStencil_Error.hpp"

namespace sparstencil {
namespace {

// Per-SM-per-clock rates measured on the lent H100 (shared/reference PTX facts): sparse
// f16 m16n8k32 ~4000 flop (dense-equivalent), sparse tf32 m16n8k16 1980; plain cores
// 128 f32 FMA and 64 f64 FMA per SM per clock (Hopper, Ampere GA100 datasheets); shared
// memory 128 bytes per SM per clock.
constexpr double giga = 1e9, tera = 1e12;

DeviceDescription hopper(std::string name, std::string source, double memory_tb_s, double memory_gib) {
  DeviceDescription d;
  d.name                = std::move(name);
  d.source              = std::move(source);
  d.multiprocessors     = 132;
  d.clock_ghz           = 1.98;
  const double sm_clk   = d.sm_cycles_per_second();
  d.memory_bytes_per_s  = memory_tb_s * tera;
  d.memory_bytes        = memory_gib * 1024 * 1024 * 1024;
  d.shared_bytes_per_s  = 128 * sm_clk;
  d.shared_bytes_per_sm = 228 * 1024;
  d.sparse_f16_flops    = 964 * tera;  // measured, dense-equivalent
  d.sparse_tf32_flops   = 1980 * sm_clk;
  d.dense_f16_flops     = 645 * tera;   // mma.sync m16n8k16, measured
  d.dense_tf32_flops    = 332 * tera;   // mma.sync m16n8k8 tf32, measured
  d.dense_f64_flops     = 68.5 * tera;  // mma.sync m16n8k4 f64 (sm_90), measured; m8n8k4 runs at half
  d.cuda_f32_flops      = 2 * 128 * sm_clk;
  d.cuda_f64_flops      = 2 * 64 * sm_clk;
  d.launch_seconds      = 4e-6;
  d.gpu                 = true;
  return d;
}

DeviceDescription ampere() {
  DeviceDescription d;
  d.name = "a100";
  d.source =
      "A100 SXM4 80GB datasheet (not measured here): 108 SMs, 1.41 GHz, "
      "2.04 TB/s HBM2e, sparse f16 4096 flop/clk/SM";
  d.multiprocessors     = 108;
  d.clock_ghz           = 1.41;
  const double sm_clk   = d.sm_cycles_per_second();
  d.memory_bytes_per_s  = 0.9 * 2.039 * tera;  // copies reach about 90% of the pin rate
  d.memory_bytes        = 80.0 * 1024 * 1024 * 1024;
  d.shared_bytes_per_s  = 128 * sm_clk;
  d.shared_bytes_per_sm = 164 * 1024;
  d.sparse_f16_flops    = 4096 * sm_clk;
  d.sparse_tf32_flops   = 2048 * sm_clk;
  d.dense_f16_flops     = 2048 * sm_clk;  // 312 TFLOP/s
  d.dense_tf32_flops    = 1024 * sm_clk;  // 156 TFLOP/s
  d.dense_f64_flops     = 128 * sm_clk;   // DMMA 19.5 TFLOP/s
  d.cuda_f32_flops      = 2 * 64 * sm_clk;
  d.cuda_f64_flops      = 2 * 32 * sm_clk;
  d.launch_seconds      = 5e-6;
  d.gpu                 = true;
  return d;
}

/// A GPU without a description of its own (no sparse tensor cores planned): the A100's
/// memory and plain-core figures as an order of magnitude.
DeviceDescription unmeasured_gpu() {
  DeviceDescription d = ampere();
  d.name              = "gpu";
  d.source =
      "a GPU without a measured description: the A100 datasheet's memory and plain-core "
      "figures, no tensor cores";
  d.sparse_f16_flops  = 0;
  d.sparse_tf32_flops = 0;
  d.dense_f16_flops   = 0;
  d.dense_tf32_flops  = 0;
  d.dense_f64_flops   = 0;
  d.memory_bytes      = 0;  // its memory's size is not known: grids are not checked against it
  return d;
}

/// One graphics compute die of an MI250X (what HIP sees as a device), from AMD's
/// datasheet (no AMD GPU measured here): 110 CUs at 1.7 GHz, 1.6 TB/s HBM2e, MFMA f16
/// 1024 and f64 256 flop/clk/CU, vector f32 and f64 FMA 128 flop/clk/CU, 64-lane waves.
DeviceDescription cdna2() {
  DeviceDescription d;
  d.name                = "mi250x";
  d.source              = "MI250X datasheet, one of its two dies (not measured here): 110 CUs, 1.7 GHz, 1.6 TB/s";
  d.multiprocessors     = 110;
  d.clock_ghz           = 1.7;
  const double cu_clk   = d.sm_cycles_per_second();
  d.memory_bytes_per_s  = 0.85 * 1.6 * tera;
  d.memory_bytes        = 64.0 * 1024 * 1024 * 1024;  // a die's half of the 128 GB
  d.shared_bytes_per_s  = 128 * cu_clk;
  d.shared_bytes_per_sm = 64 * 1024;  // LDS
  d.dense_f16_flops     = 1024 * cu_clk;
  d.dense_f64_flops     = 256 * cu_clk;
  d.cuda_f32_flops      = 128 * cu_clk;
  d.cuda_f64_flops      = 128 * cu_clk;
  d.launch_seconds      = 6e-6;
  d.gpu                 = true;
  d.wave_lanes          = 64;
  return d;
}

DeviceDescription cpu() {
  DeviceDescription d;
  d.name               = "cpu";
  d.source             = "a generic 2-core x86-64 host (order of magnitude; no tensor cores)";
  d.multiprocessors    = 2;
  d.clock_ghz          = 2.5;
  d.memory_bytes_per_s = 20 * giga;
  d.shared_bytes_per_s = 0;
  d.cuda_f32_flops     = 2 * 2 * 16 * 2.5 * giga;  // 2 cores x 2 FMA x 16 lanes (AVX-512-ish)
  d.cuda_f64_flops     = d.cuda_f32_flops / 2;
  d.launch_seconds     = 1e-6;
  return d;
}

const std::vector<DeviceDescription>& all_devices() {
  static const std::vector<DeviceDescription> devices{
      hopper("h100", "lent H100 80GB HBM3, measured 2026-11-22: copy 2.99 TB/s, sparse f16 964 TFLOP/s", 2.99, 79.6),
      hopper("h200", "H200: the H100's compute figures, copy 4.3 TB/s as measured on a lent H200", 4.3, 140.4),
      ampere(),
      cdna2(),
      unmeasured_gpu(),
      cpu()};
  return devices;
}

}  // namespace

const char* to_string(Precision p) {
  switch (p) {
    case Precision::f16: return "f16";
    case Precision::bf16: return "bf16";
    case Precision::tf32: return "tf32";
    case Precision::f32: return "f32";
    case Precision::f64: return "f64";
  }
  return "?";
}

Precision precision_from_string(std::string_view text) {
  for (Precision p : {Precision::f16, Precision::bf16, Precision::tf32, Precision::f32, Precision::f64}) {
    if (text == to_string(p)) return p;
  }
  impl::fail("precision_from_string", "unknown precision '", text, "' (known: f16, bf16, tf32, f32, f64)");
}

int storage_bytes(Precision p) {
  switch (p) {
    case Precision::f16:
    case Precision::bf16: return 2;
    case Precision::tf32:
    case Precision::f32: return 4;
    case Precision::f64: return 8;
  }
  return 0;
}

double largest_stored(Precision p) {
  switch (p) {
    case Precision::f16: return 65504.0;
    case Precision::bf16: return 0x1.fep127;
    case Precision::tf32: return 0x1.ffcp127;  // tf32's largest: float values past it round to inf
    case Precision::f32: return std::numeric_limits<float>::max();
    case Precision::f64: return std::numeric_limits<double>::max();
  }
  return 0;
}

double largest_summed(Precision p) {
  return p == Precision::f64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
}

const DeviceDescription& device_description(std::string_view name) {
  for (const auto& d : all_devices())
    if (d.name == name) return d;
  std::string known;
  for (const auto& d : all_devices()) known += (known.empty() ? "" : ", ") + d.name;
  impl::fail("device_description", "unknown device '", name, "' (known: ", known, ")");
}

std::string cuda_device_name(int major, std::string_view product) {
  if (major >= 9) return product.find("H200") != std::string_view::npos ? "h200" : "h100";
  return major == 8 ? "a100" : "gpu";
}

std::string amd_device_name(std::string_view gcn_arch) { return gcn_arch.substr(0, 6) == "gfx90a" ? "mi250x" : "gpu"; }

std::vector<std::string> device_names() {
  std::vector<std::string> names;
  for (const auto& d : all_devices()) names.push_back(d.name);
  return names;
}

}  // namespace sparstencil
