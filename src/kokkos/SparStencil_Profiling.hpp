#pragma once
/// Kokkos profiling regions around SparStencil's work, so kokkos-tools see which backend
/// ran: "sparstencil::apply[cuda_sptc]", "sparstencil::iterate[generic]".
#include <Kokkos_Core.hpp>

#include <string>

namespace sparstencil::impl {

/// A region open for the object's lifetime: closed on return and on exceptions alike.
class ProfilingRegion {
 public:
  explicit ProfilingRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ProfilingRegion() { Kokkos::Profiling::popRegion(); }
  ProfilingRegion(const ProfilingRegion&)            = delete;
  ProfilingRegion& operator=(const ProfilingRegion&) = delete;
};

}  // namespace sparstencil::impl
