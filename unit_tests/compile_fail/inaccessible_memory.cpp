// Views in a memory space the execution space cannot reach (on a CUDA build: HostSpace
// Views run on Kokkos::Cuda). A bare memory space that grants no access stands in for it
// on host-only builds.
#include <SparStencil.hpp>
struct UnreachableSpace {
  using memory_space    = UnreachableSpace;
  using execution_space = Kokkos::DefaultHostExecutionSpace;
  using device_type     = Kokkos::Device<execution_space, memory_space>;
  using size_type       = std::size_t;
  static constexpr const char* name() { return "UnreachableSpace"; }
};
using Exec = Kokkos::DefaultHostExecutionSpace;
using View = Kokkos::View<double**, UnreachableSpace, Kokkos::MemoryUnmanaged>;
static_assert(!Kokkos::SpaceAccessibility<Exec, UnreachableSpace>::accessible, "test premise");
void f(View in, View out) { sparstencil::apply(Exec(), sparstencil::presets::heat_2d(), in, out); }
int main() {}
