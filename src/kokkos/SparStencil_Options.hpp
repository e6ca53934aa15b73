#pragma once
/// What a user asks of apply, iterate and the plans they hold. Options that belong to one
/// backend are that backend's own type, held under its name (`generic`: the generic
/// executor's variant and tuning), reached through the registry's traits.
#include <string>
#include <tuple>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Device.hpp"
#include "SparStencil_KokkosBackends.hpp"  // generated: the registered traits (generic::Options)

namespace sparstencil {

struct Options {
  Boundary boundary = Boundary::periodic;
  /// The backend that runs the steps, by name ("generic", "cuda_sptc"; print_configuration
  /// lists those built); empty: the planner's choice among the backends that can run them.
  /// A backend named that cannot run them is an error naming why.
  std::string backend;
  /// The generic executor's own options: a variant to run instead of the tuned or default
  /// one, and how its tuner picks (SparStencil_GenericModel.hpp).
  generic::Options generic;
  /// iterate only: steps per launch. 0 (default): the planner's choice, from 1 to 8, where
  /// it has a model of the device (GPUs), else 1. t >= 1: t steps a launch (fewer for the
  /// last launch if the count does not divide). The generic executor fuses by temporal
  /// blocking, the sparse one with fused plans whose band along each wall runs step by
  /// step (both exact under every boundary mode); the dense one only under a periodic
  /// boundary (elsewhere its fused plan is exact only away from the rim,
  /// docs/BOUNDARIES.md), so forcing both throws there.
  int fusion = 0;
  /// On CUDA, where the backend's launches can be recorded: iterate records runs of
  /// launches once as a CUDA graph and replays it, and StencilPlan::apply records each
  /// (in, out) pair's step; false launches each kernel.
  bool cuda_graphs = true;
  /// The largest |value| the input Views hold. A launch whose worst-case output (the sum of
  /// its stencil's |weights| times this) or whose weights pass what the precision holds
  /// (65504 for half_t) is refused naming the values, or with `allow_overflow` reported in
  /// RunReport::warnings and explain().
  double input_magnitude = 1.0;
  bool allow_overflow    = false;
  /// What float Views may be multiplied as. f32 (default): float accuracy, so the planner
  /// keeps them on the generic executor. tf32: the matrix-core backends (sparse, dense)
  /// may also bid, multiplying tf32 operands (inputs and weights rounded to 10 mantissa
  /// bits, sums in f32, results stored as float: docs/PRECISION.md). f16 or bf16: the
  /// dense backend may bid, reading the float Views as 16-bit operands (inputs and weights
  /// rounded to f16 or bf16, sums in f32, results stored as float; f16 operands hold
  /// inputs up to 65504: input_magnitude is checked against it). The planner picks the
  /// fastest predicted (the plans carry the request's precision; the generic executor
  /// sums float in f32 all the same, more accurate than asked). Naming a matrix-core
  /// backend (`backend`) with f32 here implies tf32. Only float Views are affected; f64
  /// is refused for any View.
  Precision float_operands = Precision::f32;

  /// Every field, in order: the binding fails to compile where a field is added and not
  /// named here, so equality (which keys apply's and iterate's cached plans) cannot miss
  /// one.
  friend auto tied(const Options& o) {
    const auto& [boundary, backend, generic, fusion, cuda_graphs, input_magnitude, allow_overflow, float_operands] = o;
    return std::tie(boundary, backend, generic, fusion, cuda_graphs, input_magnitude, allow_overflow, float_operands);
  }
  friend bool operator==(const Options& a, const Options& b) { return tied(a) == tied(b); }
  friend bool operator!=(const Options& a, const Options& b) { return !(a == b); }
};

}  // namespace sparstencil
