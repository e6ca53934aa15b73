#pragma once
/// Precisions and the device descriptions the cost model reads (docs/COST_MODEL.md says
/// where each figure comes from).
#include <string>
#include <string_view>
#include <vector>

namespace sparstencil {

/// Operand precision of a planned run. f16 and bf16 store and multiply 16-bit values;
/// tf32 stores float and multiplies tf32 (10-bit mantissa) on tensor cores; f32 and f64
/// are exact-precision paths (generic executor).
enum class Precision { f16, bf16, tf32, f32, f64 };

const char* to_string(Precision p);
/// Throws for an unknown name, listing the known ones.
Precision precision_from_string(std::string_view text);
/// Bytes one grid value occupies in memory.
int storage_bytes(Precision p);
/// The format a plan's grids hold their values in: float where f16 or bf16 operands are
/// read from float grids (`float_grids`: rounded as the executor reads them, results
/// stored as float) and for tf32 operands, else the operand format itself.
inline Precision grid_format(Precision operands, bool float_grids) {
  return float_grids || operands == Precision::tf32 ? Precision::f32 : operands;
}
/// The largest finite value a grid of this precision stores (f16 65504; tf32 grids store
/// float, but values past tf32's largest, (2 - 2^-10) 2^127, become infinite operands), and the largest its sums and
/// weights hold on the plain cores (float for the 16- and 32-bit precisions, double for f64).
double largest_stored(Precision p);
double largest_summed(Precision p);

/// A device as the cost models see it: hardware figures only; what each backend reaches
/// of them is the backend's own description of itself.
struct DeviceDescription {
  std::string name;
  std::string source;  ///< where the figures come from (measured run or datasheet)
  int multiprocessors       = 0;
  double clock_ghz          = 0;
  double memory_bytes_per_s = 0;  ///< device memory, read + write bytes (copy bandwidth)
  double memory_bytes       = 0;  ///< device memory's capacity (0: not known, not checked)
  double shared_bytes_per_s = 0;  ///< shared memory, all SMs together
  long shared_bytes_per_sm  = 0;  ///< shared memory one SM holds (what limits resident blocks)
  double sparse_f16_flops   = 0;  ///< mma.sp f16/bf16, dense-equivalent flop/s (0: none)
  double sparse_tf32_flops  = 0;  ///< mma.sp tf32, dense-equivalent flop/s
  double dense_f16_flops    = 0;  ///< dense matrix cores, f16/bf16 operands summed in f32 (0: none)
  double dense_tf32_flops   = 0;  ///< dense matrix cores, tf32 operands summed in f32 (NVIDIA; 0: none)
  double dense_f64_flops    = 0;  ///< dense matrix cores, f64 (NVIDIA DMMA, AMD FP64 MFMA; 0: none)
  double cuda_f32_flops     = 0;  ///< FMA throughput of the plain cores, f32
  double cuda_f64_flops     = 0;
  double launch_seconds     = 0;  ///< fixed cost per kernel launch
  bool gpu                  = false;
  int wave_lanes            = 32;  ///< lanes of a warp (NVIDIA) or wavefront (AMD CDNA: 64)
  /// SM (AMD: CU) cycles a second, all of them together: what per-SM rates scale by.
  double sm_cycles_per_second() const { return multiprocessors * clock_ghz * 1e9; }
  bool has_sparse_tensor_cores() const { return sparse_f16_flops > 0; }
  bool has_dense_matrix_cores() const { return dense_f16_flops > 0 || dense_f64_flops > 0; }
};

/// h100, h200, a100, mi250x, gpu or cpu; throws for other names, listing the known ones.
const DeviceDescription& device_description(std::string_view name);
std::vector<std::string> device_names();
/// The description an NVIDIA GPU runs under, from its compute capability and product name:
/// 9.x "h100" (an H200: "h200"), 8.x "a100", others "gpu".
std::string cuda_device_name(int major, std::string_view product);
/// The description an AMD GPU runs under, from its architecture (HIP's gcnArchName,
/// "gfx90a:sramecc+:xnack-"): gfx90a "mi250x" (one MI200 die), others "gpu".
std::string amd_device_name(std::string_view gcn_arch);

}  // namespace sparstencil
