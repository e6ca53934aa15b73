#pragma once
/// The Kokkos side of a backend: what the front-end (src/kokkos) asks of each backend's
/// trait, and the Options a user hands in. A backend <name> supplies, in
/// src/backends/<name>/SparStencil_<Name>Kokkos.hpp, `sparstencil::<name>::KokkosBackend`
/// with these static members (docs/ARCHITECTURE.md):
///
///   static constexpr std::string_view name;       // the model's name()
///   template <class ExecSpace, class InView, class OutView>
///   static constexpr bool runs();                  // compile time: these types at all
///   template <class T>
///   static std::optional<Precision> precision(Precision floats);  // operand precision for
///                                                  // Views of T; nothing where it takes none
///                                                  // (floats: what float Views may be
///                                                  // multiplied as, Options::float_operands,
///                                                  // tf32 where the user named the backend)
///   template <class ExecSpace>
///   static std::optional<std::string> cannot_run(const ExecSpace&);  // run time: its device
///   template <class ExecSpace, class InView, class OutView, int D>
///   static std::unique_ptr<Launcher<ExecSpace, InView, OutView>>
///   launcher(const ExecSpace&, const Plan&, const Stencil<D>&, const InView&, const OutView&,
///            const Options&);                      // made once per plan and depth
///
/// `runs()` is false for types the backend cannot take, so nothing of it is instantiated
/// for them (kokkos-kernels' *_tpl_spec_avail).
#include <Kokkos_Core.hpp>

#include <optional>
#include <string>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_GenericModel.hpp"
#include "SparStencil_Plan.hpp"

namespace sparstencil {

/// What a user asks of apply, iterate and the plans they hold.
struct Options {
  Boundary boundary = Boundary::periodic;
  /// The backend that runs the steps, by name ("generic", "cuda_sptc"; print_configuration
  /// lists those built); empty: the planner's choice among the backends that can run them.
  /// A backend named that cannot run them is an error naming why.
  std::string backend;
  /// Generic executor only: a variant to run instead of the tuned or default one.
  std::optional<GenericConfig> generic_variant;
  GenericTuning tuning;
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
};

/// One launch of a planned step on Views of these types: `out` = the plan's fused steps
/// applied to `in`, asynchronous on `space`. Made by a backend's trait for one plan; holds
/// whatever the backend uploaded and tuned.
template <class ExecSpace, class InView, class OutView>
class Launcher {
 public:
  virtual ~Launcher()                                                                     = default;
  virtual void launch(const ExecSpace& space, const InView& in, const OutView& out) const = 0;
  /// A launch that follows another between the same two buffers (iterate's launches after
  /// its first): under Boundary::fixed_rim each launch leaves out's rim equal to in's, so
  /// `out` already holds it, and backends that copy it in a launch of their own skip that
  /// copy; otherwise the same as launch().
  virtual void launch_rim_held(const ExecSpace& space, const InView& in, const OutView& out) const {
    launch(space, in, out);
  }
  /// What runs, for RunReport::variant ("row runs, 12 chunks, ...", "streaming 64x1 ...").
  virtual std::string describe() const = 0;
  /// Whether launches can be recorded into a CUDA graph (no host synchronisation, no
  /// allocation in a launch).
  virtual bool capturable() const { return false; }
};

}  // namespace sparstencil
