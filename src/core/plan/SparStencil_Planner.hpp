#pragma once
/// The planner: for a stencil, grid, precision, device and fusion depth, ask every backend
/// model for its bids (SparStencil_Backend.hpp), each predicted by the backend's own cost
/// model (docs/COST_MODEL.md), and keep the fastest. The backends registered in this build
/// are asked by make_plan(request) (SparStencil_Backends.hpp); this form takes any list.
#include <string_view>
#include <vector>

#include "SparStencil_Backend.hpp"

namespace sparstencil {

/// The best plan among the bids of `backends` (restricted to request.backends where
/// given); explain() lists every bid. Throws std::runtime_error for invalid requests
/// (dimension mismatch, grid too small for the fused radius, steps < 1, an unknown device
/// or backend name) and where no backend asked can run the request, naming each reason.
Plan make_plan(const PlanRequest& request, const std::vector<const BackendModel*>& backends);

/// The backend of `backends` named `name`; throws std::runtime_error naming `function`, the
/// name and the known ones where none is: every entry point's one message for a backend
/// name it does not know.
const BackendModel& find_backend(std::string_view function, std::string_view name,
                                 const std::vector<const BackendModel*>& backends);

/// The request's fields filled into a plan, the stencil fused: what every bid starts from.
/// Throws as make_plan does for invalid requests, and where values pass the precision's
/// range (PlanRequest::input_magnitude, allow_overflow).
Plan base_plan(const PlanRequest& request);

/// For choosing between plans: predictions within 0.5% are a tie, broken by less compute,
/// then less shared-memory traffic (the model cannot tell such plans apart; fewer
/// operations is safer).
bool better(const Plan& a, const Plan& b);

/// Completes a prediction from its compute, memory and shared-memory times: the bound, the
/// launch time added, GStencil/s over `points` x `steps`.
void finish_prediction(Prediction& prediction, double launch_seconds, long points, int steps);

/// The largest grid extent the planner accepts: what the executors index along an axis.
inline constexpr long max_extent = (1L << 31) - 1;

/// Points of a grid; throws std::runtime_error where the count passes 2^62.
long grid_points(const std::vector<long>& grid);

}  // namespace sparstencil
