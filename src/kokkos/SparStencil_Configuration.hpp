#pragma once
/// What this build of SparStencil has: version, backends (models and executors), Kokkos'
/// version and execution spaces, and the devices it would run on.
#include <Kokkos_Core.hpp>

#include <ostream>
#include <string>

#include "SparStencil_Config.hpp"
#include "SparStencil_Dispatch.hpp"

namespace sparstencil {

/// Prints the configuration, one fact a line. Call after Kokkos is initialised (it names
/// the default execution space's device).
inline void print_configuration(std::ostream& out) {
  out << "SparStencil " << SPARSTENCIL_VERSION_STRING << "\n";
  out << "  backends registered (planner models): " << SPARSTENCIL_BACKEND_NAMES << "\n";
  out << "  backends that run Views of the default execution space:";
  using Space = Kokkos::DefaultExecutionSpace;
  using View  = Kokkos::View<float**, Space>;
  using Half  = Kokkos::View<Kokkos::Experimental::half_t**, Space>;
  using Wide  = Kokkos::View<double**, Space>;
  impl::for_each_backend([&](auto trait) {
    using Trait     = decltype(trait);
    const bool runs = Trait::template runs<Space, View, View>() || Trait::template runs<Space, Half, Half>() ||
                      Trait::template runs<Space, Wide, Wide>();
    out << ' ' << Trait::name << (runs ? "" : " (no: " + std::string(Trait::requirement) + ")");
  });
  out << "\n";
  // Executors built beside a Kokkos without their GPU serve only their raw APIs (CUDA
  // pointers): said so, after the line above says Views cannot reach them.
#if defined(KOKKOS_ENABLE_CUDA)
  [[maybe_unused]] const char* cuda_use = "built";
#else
  [[maybe_unused]] const char* cuda_use =
      "built for its raw API on CUDA pointers only (this Kokkos has no CUDA: Views cannot reach it)";
#endif
#if defined(SPARSTENCIL_ENABLE_CUDA_SPTC)
  out << "  cuda_sptc executor: " << cuda_use << "\n";
#else
  out << "  cuda_sptc executor: not built (no CUDA compiler at configure time)\n";
#endif
#if defined(SPARSTENCIL_ENABLE_DENSE_CUDA)
  out << "  dense executor (CUDA): " << cuda_use << "\n";
#elif defined(SPARSTENCIL_ENABLE_DENSE_HIP)
  out << "  dense executor (HIP): built\n";
#else
  out << "  dense executor: not built (no CUDA compiler and no Kokkos with HIP at configure time)\n";
#endif
  out << "  Kokkos " << KOKKOS_VERSION / 10000 << "." << KOKKOS_VERSION / 100 % 100 << "." << KOKKOS_VERSION % 100
      << ", default execution space " << Space::name() << "\n";
  if (Kokkos::is_initialized()) {
    const std::string& device = impl::device_name(Space());
    out << "  device: " << device << " (" << device_description(device).source << ")\n";
  }
}

}  // namespace sparstencil
