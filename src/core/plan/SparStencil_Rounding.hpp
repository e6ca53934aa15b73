#pragma once
/// Tensor-core operand formats on the host: rounding a float to f16, bf16 or tf32 and the
/// bit patterns the instructions take. Round to nearest, ties to even, for f16 and bf16
/// (what cvt.rn does); ties away from zero for tf32 (cvt.rna.tf32.f32).
#include <cmath>
#include <cstdint>
#include <cstddef>
#include <cstring>

#include "SparStencil_Device.hpp"
#include "SparStencil_Error.hpp"

namespace sparstencil::impl {

inline std::uint32_t float_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// IEEE binary16 bits of x, round to nearest even, with subnormals, overflow to infinity.
inline std::uint16_t f16_bits(float x) {
  const std::uint32_t u    = float_bits(x);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t abs  = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {                               // below the smallest normal half: subnormal or zero
    const float scaled = bits_float(abs) * 16777216.0f;  // x / 2^-24, exact in float
    const auto m       = static_cast<std::uint32_t>(std::nearbyint(scaled));  // ties to even
    return static_cast<std::uint16_t>(sign | m);
  }
  const std::uint32_t exponent = ((abs >> 23) - 112) << 10;
  const std::uint32_t mantissa = abs & 0x7fffffu;
  std::uint32_t h              = exponent | (mantissa >> 13);
  const std::uint32_t rest     = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return static_cast<std::uint16_t>(sign | h);
}

inline float f16_value(std::uint16_t h) {
  const std::uint32_t sign     = (h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// bfloat16 bits: the upper half of the float, rounded to nearest even.
inline std::uint16_t bf16_bits(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}
inline float bf16_value(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }

/// tf32 bits (a float whose low 13 mantissa bits are zero), ties away from zero.
inline std::uint32_t tf32_bits(float x) {
  const std::uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) >= 0x7f800000u) return u;
  return (u + 0x1000u) & 0xffffe000u;
}
inline float tf32_value(std::uint32_t t) { return bits_float(t); }

/// A value in the operand format of `p` (what a matrix instruction multiplies): f16, bf16
/// and tf32 rounded as above, f32 a float, f64 as it is.
inline double operand_value(Precision p, double v) {
  const float f = static_cast<float>(v);
  switch (p) {
    case Precision::f16: return f16_value(f16_bits(f));
    case Precision::bf16: return bf16_value(bf16_bits(f));
    case Precision::tf32: return tf32_value(tf32_bits(f));
    case Precision::f32: return f;
    default: return v;
  }
}
/// A value stored in a grid of precision `p` (tf32 grids store float).
inline double stored_value(Precision p, double v) {
  return operand_value(p == Precision::tf32 ? Precision::f32 : p, v);
}

}  // namespace sparstencil::impl

namespace sparstencil {

/// Error bound of one matrix-core step with `terms` terms (docs/PRECISION.md):
///   |computed - exact| <= factor * sum_k |w_k| |in(x + o_k)| + floor * max |in|
/// f16/bf16/tf32 operands: factor = u_op (weights rounded) + u_in (inputs rounded to the
/// operand format; 0 where storage already is that format) + (terms + 2) 2^-24 (f32 sums)
/// + u_store, `floor` covering weights (and inputs read from float grids) that fall below
/// the format's normal range (f16 subnormals, values of order 1); f64 operands summed in
/// f64: (terms + 2) 2^-53. `float_grids`: f16/bf16 operands read from float grids, results
/// stored as float.
struct ErrorBound {
  double factor = 0;
  double floor  = 0;
};
inline ErrorBound matrix_step_error_bound(Precision p, std::size_t terms, bool float_grids = false) {
  const double n        = static_cast<double>(terms);
  const double f32_sums = (n + 2.0) * 0x1p-24;
  if (float_grids && p == Precision::f16) return {0x1p-11 + 0x1p-11 + f32_sums + 0x1p-24, (2 * n + 1) * 0x1p-25};
  if (float_grids && p == Precision::bf16) return {0x1p-8 + 0x1p-8 + f32_sums + 0x1p-24, 0.0};
  if (float_grids) impl::fail("matrix_step_error_bound", "float grids are read as f16 or bf16, not ", to_string(p));
  switch (p) {
    case Precision::f16: return {0x1p-11 + f32_sums + 0x1p-11, (n + 1) * 0x1p-25};
    case Precision::bf16: return {0x1p-8 + f32_sums + 0x1p-8, 0.0};
    case Precision::tf32: return {0x1p-11 + 0x1p-11 + f32_sums + 0x1p-24, 0.0};
    case Precision::f64: return {(n + 2.0) * 0x1p-53, 0.0};
    default: impl::fail("matrix_step_error_bound", "precision ", to_string(p), " has no matrix-core form");
  }
}

}  // namespace sparstencil
