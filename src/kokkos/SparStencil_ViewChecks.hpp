#pragma once
/// Checks of the Views handed to apply, iterate and plans: mistakes the types reveal are
/// compile errors with a `sparstencil:` message; the rest throw std::runtime_error naming
/// the function and the values at fault.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "SparStencil_Error.hpp"
#include "SparStencil_Overlap.hpp"
#include "SparStencil_Precision.hpp"
#include "SparStencil_Stencil.hpp"

namespace sparstencil::impl {

template <int D, class ExecSpace, class InView, class OutView>
constexpr void check_view_types() {
  static_assert(Kokkos::is_view<InView>::value && Kokkos::is_view<OutView>::value,
                "sparstencil: in and out must be Kokkos::Views");
  static_assert(static_cast<int>(InView::rank) == D && static_cast<int>(OutView::rank) == D,
                "sparstencil: the Views' rank must equal the stencil's dimension");
  static_assert(std::is_same_v<typename OutView::value_type, typename OutView::non_const_value_type>,
                "sparstencil: the output View must not have a const value type");
  static_assert(std::is_same_v<typename InView::non_const_value_type, typename OutView::non_const_value_type>,
                "sparstencil: in and out must have the same value type");
  static_assert(is_supported_scalar<typename OutView::non_const_value_type>,
                "sparstencil: the value type must be Kokkos::Experimental::half_t, float or double");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename InView::memory_space>::accessible &&
                    Kokkos::SpaceAccessibility<ExecSpace, typename OutView::memory_space>::accessible,
                "sparstencil: the execution space cannot access the Views' memory space");
}

/// The D-dimensional stencil of `stencil` for Views of rank D; throws naming both where
/// the dimension differs.
template <int D>
const Stencil<D>& of_rank(const char* function, const AnyStencil& stencil) {
  static_assert(D >= 1 && D <= 3, "sparstencil: Views must have rank 1, 2 or 3");
  if (dimension(stencil) != D) {
    fail(function, "stencil '", name(stencil), "' is ", dimension(stencil), "-D but the Views have rank ", D);
  }
  return std::get<D - 1>(stencil);
}

/// Views handed to apply must be of the plan's kind: a clear compile error where not.
template <class In, class Out, class InView, class OutView>
constexpr void check_plan_view_types() {
  static_assert(Kokkos::is_view<In>::value && Kokkos::is_view<Out>::value,
                "sparstencil: StencilPlan::apply takes Kokkos::Views");
  static_assert(static_cast<int>(In::rank) == static_cast<int>(InView::rank) &&
                    static_cast<int>(Out::rank) == static_cast<int>(OutView::rank),
                "sparstencil: the Views' rank differs from the rank the plan was made for");
  static_assert(std::is_same_v<typename In::non_const_value_type, typename InView::non_const_value_type> &&
                    std::is_same_v<typename Out::non_const_value_type, typename OutView::non_const_value_type>,
                "sparstencil: the Views' value type differs from the type the plan was made for");
  static_assert(std::is_same_v<typename In::array_layout, typename InView::array_layout> &&
                    std::is_same_v<typename Out::array_layout, typename OutView::array_layout>,
                "sparstencil: the Views' layout differs from the layout the plan was made for");
  static_assert(std::is_same_v<typename In::memory_space, typename InView::memory_space> &&
                    std::is_same_v<typename Out::memory_space, typename OutView::memory_space>,
                "sparstencil: the Views' memory space differs from the space the plan was made for");
  static_assert(std::is_convertible_v<In, InView> && std::is_convertible_v<Out, OutView>,
                "sparstencil: the Views cannot be converted to the plan's View types");
}

template <class View>
std::string extents_string(const View& v) {
  std::vector<std::size_t> e;
  for (int a = 0; a < static_cast<int>(View::rank); ++a) e.push_back(v.extent(a));
  return tuple_string(e);
}

template <class View>
std::string strides_string(const View& v) {
  std::vector<std::size_t> s;
  for (int a = 0; a < static_cast<int>(View::rank); ++a) s.push_back(v.stride(a));
  return tuple_string(s);
}

/// Whether two Views share an element: decided element by element for equal strides (two
/// subviews of one allocation), conservatively (their memory ranges meet) otherwise.
template <class InView, class OutView>
Overlap view_overlap(const InView& in, const OutView& out) {
  constexpr int D = static_cast<int>(OutView::rank);
  long in_stride[D], out_stride[D], extent[D];
  for (int a = 0; a < D; ++a) {
    in_stride[a]  = static_cast<long>(in.stride(a));
    out_stride[a] = static_cast<long>(out.stride(a));
    extent[a]     = static_cast<long>(std::min(in.extent(a), out.extent(a)));
  }
  return grid_overlap(reinterpret_cast<std::uintptr_t>(in.data()), in_stride,
                      reinterpret_cast<std::uintptr_t>(out.data()), out_stride, extent, D,
                      sizeof(typename OutView::non_const_value_type));
}

/// Views that hold data, and do not share an element.
template <class InView, class OutView>
void check_no_overlap(const char* function, const InView& in, const OutView& out) {
  for (const auto& [what, data, label] : {std::tuple{"in", static_cast<const void*>(in.data()), in.label()},
                                          std::tuple{"out", static_cast<const void*>(out.data()), out.label()}}) {
    if (data == nullptr) {
      fail(function, what, " View", label.empty() ? std::string() : " '" + label + "'",
           " holds no data (a null pointer): allocate it, or give an unmanaged View its memory");
    }
  }
  switch (view_overlap(in, out)) {
    case Overlap::none: return;
    case Overlap::shared_elements:
      fail(function, "in and out overlap in memory (View labels '", in.label(), "' and '", out.label(),
           "'): they share elements; a step needs separate input and output buffers");
    case Overlap::undecided:
      fail(function, "in and out may overlap in memory (View labels '", in.label(), "' and '", out.label(),
           "'): their memory ranges meet and their strides differ, so shared elements cannot be ruled out; a "
           "step needs separate input and output buffers");
  }
}

/// Extents equal, large enough for the stencil's radius, indexable in 32 bits.
template <int D, class InView, class OutView>
void check_extents(const char* function, const Stencil<D>& stencil, const InView& in, const OutView& out) {
  for (int a = 0; a < D; ++a) {
    if (in.extent(a) != out.extent(a)) {
      fail(function, "in and out extents differ: ", extents_string(in), " vs ", extents_string(out));
    }
  }
  for (int a = 0; a < D; ++a) {
    const std::size_t needed = 2 * static_cast<std::size_t>(stencil.radius()[a]) + 1;
    if (in.extent(a) < needed) {
      fail(function, "extent ", in.extent(a), " along axis ", a, " of ", extents_string(in),
           " is too small for the stencil's radius ", stencil.radius()[a], " (needs at least ", needed, ")");
    }
    if (in.extent(a) > static_cast<std::size_t>(INT32_MAX)) {
      fail(function, "extent ", in.extent(a), " along axis ", a, " exceeds 2^31 - 1");
    }
  }
}

}  // namespace sparstencil::impl
