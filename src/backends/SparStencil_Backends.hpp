#pragma once
/// The backends registered in this build (src/backends/CMakeLists.txt: one line each) and
/// the planner over all of them. Every build registers every backend's model, so any build
/// plans for any device; which backends can also run here is the Kokkos side's business
/// (SparStencil_KokkosBackend.hpp, print_configuration).
#include <string_view>
#include <vector>

#include "SparStencil_Planner.hpp"

namespace sparstencil {

/// The registered backends' models, in registration order (the generic executor first).
const std::vector<const BackendModel*>& registered_backends();

/// The registered model named `name`; throws std::runtime_error naming `function` and
/// listing the names for an unknown one (find_backend).
const BackendModel& backend_model(std::string_view name, std::string_view function = "backend_model");

/// The best plan among the registered backends' bids (SparStencil_Planner.hpp).
Plan make_plan(const PlanRequest& request);

}  // namespace sparstencil
