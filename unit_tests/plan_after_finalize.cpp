// A plan that outlives Kokkos::finalize: running it throws, naming the cause, and
// destroying it afterwards neither aborts nor crashes (its device memory is left to the
// process's exit, with a warning). Exit code 0 and "plan_after_finalize: ok" on success.
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "SparStencil.hpp"

int main(int argc, char* argv[]) {
  using Space = Kokkos::DefaultExecutionSpace;
  using View  = Kokkos::View<float**, Space::memory_space>;
  Kokkos::initialize(argc, argv);
  std::unique_ptr<sparstencil::StencilPlan<Space, View>> plan;
  View* in  = new View("in", 40, 50);  // kept past finalize, never destroyed: Kokkos aborts on that
  View* out = new View("out", 40, 50);
  Kokkos::deep_copy(*in, 1.0f);
  plan = std::make_unique<sparstencil::StencilPlan<Space, View>>(Space(), sparstencil::presets::heat_2d(), *in, *out);
  plan->apply(*in, *out);
  Space().fence();
  Kokkos::finalize();
  bool refused = false;
  try {
    plan->apply(*in, *out);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    refused                = what.find("Kokkos is not initialized") != std::string::npos;
    std::printf("apply after finalize: %s\n", e.what());
  }
  if (!refused) {
    std::printf("plan_after_finalize: apply after finalize did not throw the expected error\n");
    return 1;
  }
  plan.reset();  // must not abort
  std::printf("plan_after_finalize: ok\n");
  return 0;
}
