#include "SparStencil_Backends.hpp"

#include <string>

#include "SparStencil_BackendModels.hpp"  // generated: the registered models

namespace sparstencil {

const std::vector<const BackendModel*>& registered_backends() {
#define SPARSTENCIL_MODEL_OF(name) &::sparstencil::name::model(),
  static const std::vector<const BackendModel*> all{SPARSTENCIL_BACKEND_LIST(SPARSTENCIL_MODEL_OF)};
#undef SPARSTENCIL_MODEL_OF
  return all;
}

const BackendModel& backend_model(std::string_view name) {
  std::string names;
  for (const BackendModel* b : registered_backends()) {
    if (b->name() == name) return *b;
    names += (names.empty() ? "" : ", ") + std::string(b->name());
  }
  impl::fail("backend_model", "unknown backend '", name, "' (known: ", names, ")");
}

Plan make_plan(const PlanRequest& request) { return make_plan(request, registered_backends()); }

}  // namespace sparstencil
