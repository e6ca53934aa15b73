#include "SparStencil_Backends.hpp"

#include "SparStencil_BackendModels.hpp"  // generated: the registered models

namespace sparstencil {

const std::vector<const BackendModel*>& registered_backends() {
#define SPARSTENCIL_MODEL_OF(name) &::sparstencil::name::model(),
  static const std::vector<const BackendModel*> all{SPARSTENCIL_BACKEND_LIST(SPARSTENCIL_MODEL_OF)};
#undef SPARSTENCIL_MODEL_OF
  return all;
}

const BackendModel& backend_model(std::string_view name, std::string_view function) {
  return find_backend(function, name, registered_backends());
}

Plan make_plan(const PlanRequest& request) { return make_plan(request, registered_backends()); }

}  // namespace sparstencil
