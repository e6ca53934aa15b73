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
/// Whether sparse tensor cores take this precision (f16, bf16: 2:4; tf32: 1:2).
bool has_sparse_operands(Precision p);

/// Error bound factor of one tensor-core step with `terms` terms (docs/PRECISION.md):
///   |computed - exact| <= factor * sum_k |w_k| |in(x + o_k)| + floor * max |in|
/// with factor = u_op (weights rounded) + u_in (inputs rounded to the operand format;
/// 0 where storage already is that format) + (terms + 2) 2^-24 (f32 sums) + u_store, and
/// `floor` covering weights that fall below the format's normal range (f16 subnormals).
struct ErrorBound {
  double factor = 0;
  double floor  = 0;
};
ErrorBound sparse_step_error_bound(Precision p, std::size_t terms);

struct DeviceDescription {
  std::string name;
  std::string source;  ///< where the figures come from (measured run or datasheet)
  int multiprocessors  = 0;
  double clock_ghz     = 0;
  double memory_bytes_per_s = 0;  ///< device memory, read + write bytes (copy bandwidth)
  double shared_bytes_per_s = 0;  ///< shared memory, all SMs together
  double sparse_f16_flops   = 0;  ///< mma.sp f16/bf16, dense-equivalent flop/s (0: none)
  double sparse_tf32_flops  = 0;  ///< mma.sp tf32, dense-equivalent flop/s
  double cuda_f32_flops     = 0;  ///< FMA throughput of the plain cores, f32
  double cuda_f64_flops     = 0;
  double launch_seconds     = 0;  ///< fixed cost per kernel launch
  /// Fractions of the bandwidth and FMA rate the generic executor reaches as it stands
  /// (GPUs: measured on the H100 with the tuned executor, perf_tests/RESULTS.md; 1 where
  /// unmeasured). 16-bit Views reach less of the bandwidth (one 2-byte load a value).
  /// The planner compares executors as they run, not as they could.
  double generic_memory_efficiency       = 1;
  double generic_memory_efficiency_16bit = 1;
  double generic_compute_efficiency      = 1;
  /// Stencils without a compiled kernel (SparStencil_ShapeMatch.hpp) loop over offsets
  /// and weights held in memory: bound by issuing those loads, not by the FMAs, so this
  /// fraction applies to the f32 rate whatever the precision.
  double generic_runtime_shape_efficiency = 1;
  /// Temporal blocking (t steps a launch in team scratch): the fraction of the generic
  /// compute rate its sums reach (scratch reads, a barrier a step), and the most team
  /// scratch its two buffers may take (a tile plus t x R halo: deeper fusion does not fit).
  double generic_temporal_efficiency = 1;
  double team_scratch_bytes          = 40944;  ///< Kokkos on CUDA: 48 KiB a block less its team reserve
  bool has_sparse_tensor_cores() const { return sparse_f16_flops > 0; }
};

/// h100, h200, a100 or cpu; throws for other names, listing the known ones.
const DeviceDescription& device_description(std::string_view name);
std::vector<std::string> device_names();

}  // namespace sparstencil
