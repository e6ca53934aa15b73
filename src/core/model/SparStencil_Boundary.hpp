#pragma once
/// The boundary contract every executor follows. The rim along axis a is the r_a points at
/// each end, r_a being the stencil's radius along a (largest |offset| on that axis). The
/// interior is every point at least r_a from both ends of every axis.
///   interior : interior points are written; the rim of `out` is left untouched.
///   periodic : every point is written; reads wrap around (index modulo extent).
///   fixed_rim: interior points are written; the rim of `out` is copied from `in`
///              (Dirichlet data held fixed).
/// Every extent must be at least 2 r_a + 1, so there is an interior and no periodic read
/// wraps more than once.
#include <string>
#include <string_view>

#include "SparStencil_Error.hpp"

namespace sparstencil {

enum class Boundary { interior, periodic, fixed_rim };

inline const char* to_string(Boundary b) {
  switch (b) {
    case Boundary::interior: return "interior";
    case Boundary::periodic: return "periodic";
    case Boundary::fixed_rim: return "fixed_rim";
  }
  return "?";
}

inline Boundary boundary_from_string(std::string_view text) {
  for (Boundary b : {Boundary::interior, Boundary::periodic, Boundary::fixed_rim}) {
    if (text == to_string(b)) return b;
  }
  impl::fail("boundary_from_string", "unknown boundary '", text, "' (known: interior, periodic, fixed_rim)");
}

}  // namespace sparstencil
