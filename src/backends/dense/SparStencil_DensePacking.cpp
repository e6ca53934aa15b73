#include "SparStencil_DensePacking.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "SparStencil_DenseModel.hpp"
#include "SparStencil_Error.hpp"
#include "SparStencil_Rounding.hpp"

namespace sparstencil::dense {
namespace {

std::uint16_t half_bits(Precision p, double v) {
  return p == Precision::bf16 ? impl::bf16_bits(static_cast<float>(v)) : impl::f16_bits(static_cast<float>(v));
}

}  // namespace

PackedA pack_dense(const KernelMatrix& a, const ColumnOrder& order, Precision precision) {
  if (!has_dense_operands(precision)) {
    sparstencil::impl::fail("pack_dense", "precision ", to_string(precision), " has no dense matrix-core form");
  }
  const int K = static_cast<int>(order.columns.size());
  if (K == 0 || K % mma_shape(precision).k != 0) {
    throw std::logic_error("pack_dense: K = " + std::to_string(K) + " is not a positive multiple of the unit's k");
  }
  PackedA p;
  p.m_blocks      = (a.rows + 15) / 16;
  p.k_chunks      = K / mma_shape(precision).k;
  const int rows  = 16 * p.m_blocks;
  const bool wide = precision == Precision::f64, tf32 = precision == Precision::tf32;
  const std::size_t entries = static_cast<std::size_t>(rows) * K;
  p.values.assign(wide ? 2 * entries : tf32 ? entries : entries / 2, 0u);
  for (int row = 0; row < a.rows; ++row) {
    for (int k = 0; k < K; ++k) {
      const int c = order.columns[k];
      if (c == zero_column) continue;
      const double v      = a(row, c);
      const std::size_t e = static_cast<std::size_t>(row) * K + k;
      if (wide) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        p.values[2 * e]     = static_cast<std::uint32_t>(bits);
        p.values[2 * e + 1] = static_cast<std::uint32_t>(bits >> 32);
      } else if (tf32) {
        p.values[e] = impl::tf32_bits(static_cast<float>(v));
      } else {
        p.values[e / 2] |= static_cast<std::uint32_t>(half_bits(precision, v)) << (16 * (e % 2));
      }
    }
  }
  return p;
}

double unpack_dense(const PackedA& packed, Precision precision, int row, int k) {
  const int K         = packed.k_chunks * mma_shape(precision).k;
  const std::size_t e = static_cast<std::size_t>(row) * K + k;
  if (precision == Precision::f64) {
    const std::uint64_t bits = packed.values[2 * e] | static_cast<std::uint64_t>(packed.values[2 * e + 1]) << 32;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  if (precision == Precision::tf32) return impl::tf32_value(packed.values[e]);
  const auto bits = static_cast<std::uint16_t>(packed.values[e / 2] >> (16 * (e % 2)));
  return precision == Precision::bf16 ? impl::bf16_value(bits) : impl::f16_value(bits);
}

std::vector<unsigned short> unpack_halves(const PackedA& packed) {
  std::vector<unsigned short> row_major(packed.values.size() * 2);
  for (std::size_t w = 0; w < packed.values.size(); ++w) {
    row_major[2 * w]     = static_cast<unsigned short>(packed.values[w]);
    row_major[2 * w + 1] = static_cast<unsigned short>(packed.values[w] >> 16);
  }
  return row_major;
}

}  // namespace sparstencil::dense
