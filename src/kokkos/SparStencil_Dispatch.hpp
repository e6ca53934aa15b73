#pragma once
/// Dispatch from Kokkos Views to the backends: the registered backends' Kokkos traits
/// (SparStencil_KokkosBackend.hpp), the device an execution space runs on as the cost
/// models name it, and the planning request for Views.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "SparStencil_Backends.hpp"
#include "SparStencil_Device.hpp"
#include "SparStencil_KokkosBackends.hpp"  // generated: the registered traits
#include "SparStencil_Options.hpp"
#include "SparStencil_ViewChecks.hpp"
#include "SparStencil_Wisdom.hpp"

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
#include "SparStencil_GpuRuntime.hpp"
#endif

namespace sparstencil::impl {

#define SPARSTENCIL_TRAIT_OF(name) std::tuple<::sparstencil::name::KokkosBackend>{},
/// The registered backends' traits, in registration order.
using KokkosBackends = decltype(std::tuple_cat(SPARSTENCIL_BACKEND_LIST(SPARSTENCIL_TRAIT_OF) std::tuple<>{}));
#undef SPARSTENCIL_TRAIT_OF

/// Calls f(Trait{}) for every registered trait.
template <class F>
void for_each_backend(F&& f) {
  std::apply([&](auto... trait) { (f(trait), ...); }, KokkosBackends{});
}

/// What `describe(device)` gives for a GPU, asked once per device (thread-safe).
template <class Describe>
const std::string& described_once(int device, Describe describe) {
  static std::mutex mutex;
  static std::map<int, std::string> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(device); it != known.end()) return it->second;
  return known.emplace(device, describe(device)).first->second;
}

/// The device an execution space runs on, by the name of its description
/// (device_description): CUDA compute capability 9.x "h100" (an H200 "h200"), 8.x
/// "a100", HIP gfx90a "mi250x", other GPUs "gpu", host spaces "cpu".
template <class ExecSpace>
const std::string& device_name(const ExecSpace& space) {
  static const std::string cpu = "cpu", gpu = "gpu";
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    return described_once(space.cuda_device(), [](int device) -> std::string {
      gpu::DeviceProperties props{};
      SPARSTENCIL_GPU_CHECK(gpu::properties(&props, device));
      return cuda_device_name(props.major, props.name);
    });
  }
#elif defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) {
    return described_once(space.hip_device(), [](int device) -> std::string {
      gpu::DeviceProperties props{};
      SPARSTENCIL_GPU_CHECK(gpu::properties(&props, device));
      return amd_device_name(props.gcnArchName);
    });
  }
#endif
  (void)space;
  return runs_on_host<ExecSpace>() ? cpu : gpu;
}

/// The precision a View's values are stored in: what the generic executor sums them at.
template <class T>
constexpr Precision storage_precision() {
  if constexpr (std::is_same_v<T, double>) return Precision::f64;
  else if constexpr (std::is_same_v<T, float>) return Precision::f32;
  else return has_distinct_half ? Precision::f16 : Precision::f32;
}

/// The stencil with its axes in the plan's order: the View's, reversed for LayoutLeft (the
/// contiguous axis last).
template <int D, class Layout>
Stencil<D> in_plan_order(const Stencil<D>& stencil) {
  if constexpr (!std::is_same_v<Layout, Kokkos::LayoutLeft>) {
    return stencil;
  } else {
    std::vector<Term<D>> terms;
    for (const Term<D>& t : stencil.terms()) {
      Term<D> r = t;
      for (int a = 0; a < D; ++a) r.offset[a] = t.offset[D - 1 - a];
      terms.push_back(r);
    }
    return Stencil<D>(terms, stencil.name());
  }
}

/// The largest power of two, 16 at most, dividing the byte address of every row start of
/// `in` and `out` (rows along the fastest axis: the last of LayoutRight, the first of
/// LayoutLeft): PlanRequest::row_alignment. Strided rows: the element size.
template <class InView, class OutView>
int row_alignment(const InView& in, const OutView& out) {
  std::uintptr_t bits = 0;
  auto add            = [&bits](const auto& v) {
    using V              = std::decay_t<decltype(v)>;
    constexpr int rank   = static_cast<int>(V::rank);
    constexpr bool left  = std::is_same_v<typename V::array_layout, Kokkos::LayoutLeft>;
    constexpr auto bytes = sizeof(typename V::value_type);
    const int fast       = left ? 0 : rank - 1;
    bits |= reinterpret_cast<std::uintptr_t>(v.data());
    if (v.stride(fast) != 1) bits |= bytes;
    for (int a = 0; a < rank; ++a) {
      if (a != fast && v.extent(a) > 1) bits |= static_cast<std::uintptr_t>(v.stride(a)) * bytes;
    }
  };
  add(in);
  add(out);
  int alignment = 16;
  while (alignment > 1 && bits % alignment != 0) alignment /= 2;
  return alignment;
}

/// The planning request for Views of these types on `space`: the stencil and grid in plan
/// order, the device, and the backends that can run them (float Views: at f32, or as the
/// operands options.float_operands allows: tf32, or f16/bf16 read from the float grids),
/// or the one named in options.backend (an error naming why where it cannot), and the
/// alignment of the Views' rows.
template <int D, class ExecSpace, class InView, class OutView>
PlanRequest request_for(const char* function, const ExecSpace& space, const Stencil<D>& stencil, const InView& in,
                        const OutView& out, const Options& options) {
  using T      = typename OutView::non_const_value_type;
  using Layout = typename OutView::array_layout;
  if (options.float_operands == Precision::f64) {
    fail(function,
         "float_operands f64: float Views are multiplied as f32, tf32, f16 or bf16 (double fields: "
         "double Views)");
  }
  constexpr bool float_view = std::is_same_v<T, float>;
  const bool asked          = float_view && options.float_operands != Precision::f32;
  PlanRequest r;
  r.stencil         = in_plan_order<D, Layout>(stencil);
  r.device          = device_name(space);
  r.boundary        = options.boundary;
  r.precision       = asked ? options.float_operands : storage_precision<T>();
  r.input_magnitude = options.input_magnitude;
  r.allow_overflow  = options.allow_overflow;
  r.row_alignment   = row_alignment(in, out);
  for (int a = 0; a < D; ++a) {
    r.grid.push_back(static_cast<long>(out.extent(std::is_same_v<Layout, Kokkos::LayoutLeft> ? D - 1 - a : a)));
  }
  if (!options.backend.empty()) backend_model(options.backend, function);  // the registry knows the name
  for_each_backend([&](auto trait) {
    using Trait      = decltype(trait);
    const bool named = options.backend == Trait::name;
    if (!named && !options.backend.empty()) return;
    if constexpr (Trait::template runs<ExecSpace, InView, OutView>()) {
      const Precision floats                   = named && !asked ? Precision::tf32 : options.float_operands;
      const std::optional<Precision> precision = Trait::template precision<T>(floats);
      const std::optional<std::string> why     = Trait::cannot_run(space);
      if (named) {
        if (why) fail(function, "backend ", Trait::name, " cannot run here: ", *why);
        if (!precision) {
          fail(function, "backend ", Trait::name, " cannot run these Views",
               asked ? std::string(" as ") + to_string(options.float_operands) + " operands" : "", ": ",
               Trait::requirement);
        }
        r.precision = *precision;
        r.backends  = {std::string(Trait::name)};
      } else if (!why && (precision == storage_precision<T>() || precision == r.precision)) {
        r.backends.emplace_back(Trait::name);
      }
    } else if (named) {
      fail(function, "backend ", Trait::name, " cannot run these Views (", extents_string(out), " in ",
           OutView::memory_space::name(), " on ", ExecSpace::name(), "): ", Trait::requirement);
    }
  });
  // 16-bit operands of float Views are read from the float grids.
  r.float_grids = float_view && (r.precision == Precision::f16 || r.precision == Precision::bf16);
  return r;
}

/// Calls f(Trait{}) for the registered trait named `name` that runs these types; fails
/// (internal) where none does: the planner chose among those that do.
template <class ExecSpace, class InView, class OutView, class F>
void with_backend(std::string_view name, F&& f) {
  bool found = false;
  for_each_backend([&](auto trait) {
    using Trait = decltype(trait);
    if constexpr (Trait::template runs<ExecSpace, InView, OutView>()) {
      if (!found && name == Trait::name) {
        found = true;
        f(trait);
      }
    }
  });
  SPARSTENCIL_ASSERT(found);
}

}  // namespace sparstencil::impl
