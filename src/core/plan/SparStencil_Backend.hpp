#pragma once
/// What the planner and the backends exchange. A backend (src/backends/<name>) describes
/// itself to the planner through a BackendModel: whether it can run a request, and its
/// bids, each a complete plan with its part filled in and predicted by its own cost model.
/// Models are free of Kokkos and CUDA, so every build plans for every device; the planner
/// (SparStencil_Planner.hpp) asks every model it is given and keeps the fastest bid.
/// docs/ARCHITECTURE.md shows how a backend is added.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "SparStencil_Plan.hpp"

namespace sparstencil {

/// How a matrix-form backend orders A' columns for its instruction. `best`: the backend's
/// choice. The others force a form: the general pairing rules (hierarchical, edmonds,
/// strided_swapping), or for 16-output row tiles `parity_split` (row runs on image rows as
/// they are) and `interleaved` (row runs on interleaved image rows where the stencil has
/// that form). Backends without a matrix form ignore it.
enum class Pairing { best, hierarchical, edmonds, strided_swapping, parity_split, interleaved };

struct PlanRequest {
  AnyStencil stencil = Stencil<1>({{{0}, 1.0}});  ///< one step
  std::vector<long> grid;                         ///< extents, one per dimension (plan order: last fastest)
  Precision precision = Precision::f16;
  /// f16/bf16 operands read from grids of float (float Views multiplied as 16-bit
  /// operands where the user asked: Options::float_operands); results stored as float.
  bool float_grids = false;
  /// The largest power of two, 16 at most, dividing the byte address of every grid row's
  /// first value (rows along the fastest axis; both grids): 16 where rows are whole 16-byte
  /// units, what the matrix-core executors copy whole; a 16-bit grid of odd width gives 2.
  int row_alignment  = 16;
  std::string device = "h100";
  int steps          = 1;  ///< steps fused into one launch
  Boundary boundary  = Boundary::periodic;
  /// The backends that may run the plan, by name; empty: every backend the planner is
  /// given. One name forces that backend (an error where it cannot run the request).
  std::vector<std::string> backends;
  Pairing pairing = Pairing::best;
  /// The largest |value| the inputs hold: the planner refuses a launch whose worst-case
  /// output (sum of the fused stencil's |weights| times this) passes the largest value of
  /// the precision's storage format, or whose weights pass its arithmetic's.
  double input_magnitude = 1.0;
  /// Turn those refusals into warnings (Plan::warnings; explain() prints them).
  bool allow_overflow = false;
};

/// A backend's answer to a request: the plans it made (each with the one-line summary
/// explain() prints beside it) and the candidates it dropped without planning them.
struct Bids {
  struct Candidate {
    Plan plan;
    std::string summary;
  };
  std::vector<Candidate> plans;
  std::vector<Bid> dropped;
};

class BackendModel {
 public:
  virtual ~BackendModel() = default;
  /// The name plans, options, reports and the registry use ("generic", "cuda_sptc").
  virtual std::string_view name() const = 0;
  /// Why the backend cannot run the request (device, precision, dimension, stencil shape,
  /// the fused weights of `base`: base_plan(request)), or nothing where it can.
  virtual std::optional<std::string> cannot_run(const PlanRequest& request, const Plan& base) const = 0;
  /// Its plans for the request, built on `base` (the request's fields filled, the stencil
  /// fused) with backend = name(). Candidates whose lower bound cannot beat `to_beat`
  /// seconds may be dropped unplanned (to_beat is infinite where the backend is forced).
  virtual Bids bid(const PlanRequest& request, const Plan& base, double to_beat) const = 0;
  /// Whether the backend runs on the plain cores (FMA units): the model paper's "CU" side,
  /// against which matrix-form bids are compared (Plan::scenario).
  virtual bool plain_cores() const { return false; }
  /// The model paper's scenario of this backend's plan against a plain-cores plan of the
  /// same request; unknown where the backend has no such comparison.
  virtual Scenario scenario(const Plan& /*mine*/, const Plan& /*plain*/) const { return {}; }
};

}  // namespace sparstencil
