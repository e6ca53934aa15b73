#include "SparStencil_SparseOperand.hpp"

#include <stdexcept>
#include <string>

#include "SparStencil_Error.hpp"
#include "SparStencil_Rounding.hpp"

namespace sparstencil::cuda_sptc {

// Packed operand layout (PTX ISA, mma.sp with ::ordered_metadata; checked on the H100,
// see the project's PTX notes). lane = 4 g + t, g = lane / 4, t = lane % 4.
//
// f16/bf16, m16n8k32: a 16 x 32 block of A' has 8 groups of 4 columns per row; each group
// keeps 2 values and their positions i0 < i1. Registers of a lane:
//   reg0 row g, group t; reg1 row g+8, group t; reg2 row g, group t+4; reg3 row g+8, group t+4
// each holding the value at i0 in its low half and the value at i1 in its high half.
// tf32, m16n8k16: 8 pairs of columns per row, one value each; the same four registers
// with "pair" for "group", one tf32 word each.
//
// Metadata: one 32-bit word per lane. For the MMA of chunk kc the selector is f = kc % 2
// and lanes 4g + 2f (groups 0-3) and 4g + 2f + 1 (groups 4-7) supply it: nibble c of the
// low half is row g's group, of the high half row g+8's; a nibble is i0 | i1 << 2
// (tf32: 0b0100 for element 0, 0b1110 for element 1). So one word per lane serves the
// chunk pair (2q, 2q+1), and values and metadata are contiguous per lane.
// Groups with fewer than two nonzeros store zeros at legal, increasing positions.
namespace {

constexpr int lanes = 32;

std::uint16_t half_bits(Precision p, double v) {
  return p == Precision::bf16 ? sparstencil::impl::bf16_bits(static_cast<float>(v))
                              : sparstencil::impl::f16_bits(static_cast<float>(v));
}
double half_value(Precision p, std::uint16_t bits) {
  return p == Precision::bf16 ? sparstencil::impl::bf16_value(bits) : sparstencil::impl::f16_value(bits);
}

/// Positions (i0, i1) for a group whose nonzeros are at `found` (at most 2 of 0..3).
std::pair<int, int> group_positions(const std::vector<int>& found) {
  if (found.size() == 2) return {found[0], found[1]};
  if (found.empty()) return {0, 1};
  switch (found[0]) {
    case 0: return {0, 1};
    case 1: return {0, 1};
    case 2: return {0, 2};
    default: return {2, 3};
  }
}

std::size_t value_index(const PackedA& p, int mb, int kc, int lane, int reg) {
  return ((static_cast<std::size_t>(mb) * p.k_chunks + kc) * lanes + lane) * 4 + reg;
}
std::size_t metadata_index(const PackedA& p, int mb, int kc, int lane) {
  const int pairs = (p.k_chunks + 1) / 2;
  return (static_cast<std::size_t>(mb) * pairs + kc / 2) * lanes + lane;
}

/// Where the fragments of (row r of a 16-row block, group c) live: the value register's
/// lane and index, the metadata lane, and the nibble's bit shift.
struct FragmentSlot {
  int value_lane, reg, metadata_lane, shift;
};
FragmentSlot slot(int r, int c, int kc) {
  const int g = r % 8, upper = r >= 8 ? 1 : 0, f = kc % 2;
  return {4 * g + c % 4, (c >= 4 ? 2 : 0) + upper, 4 * g + 2 * f + (c >= 4 ? 1 : 0), 16 * upper + 4 * (c % 4)};
}

}  // namespace

bool has_sparse_operands(Precision p) { return p == Precision::f16 || p == Precision::bf16 || p == Precision::tf32; }

MmaShape mma_shape(Precision p) { return {16, 8, p == Precision::tf32 ? 16 : 32}; }

ErrorBound step_error_bound(Precision p, std::size_t terms) {
  if (!has_sparse_operands(p)) {
    sparstencil::impl::fail("step_error_bound", "precision ", to_string(p), " has no tensor-core form");
  }
  return matrix_step_error_bound(p, terms);
}

PackedA pack_operand(const KernelMatrix& a, const ColumnOrder& order, Precision precision) {
  if (!has_sparse_operands(precision)) {
    sparstencil::impl::fail("pack_operand", "precision ", to_string(precision), " has no sparse tensor-core form");
  }
  const MmaShape mma = mma_shape(precision);
  const int k_total  = static_cast<int>(order.columns.size());
  if (k_total % mma.k != 0) {
    throw std::logic_error("pack_operand: K = " + std::to_string(k_total) + " is not a multiple of " +
                           std::to_string(mma.k));
  }
  const bool tf32 = precision == Precision::tf32;
  const int group = tf32 ? 2 : 4;  // columns per metadata nibble
  PackedA p;
  p.m_blocks = (a.rows + 15) / 16;
  p.k_chunks = k_total / mma.k;
  p.values.assign(static_cast<std::size_t>(p.m_blocks) * p.k_chunks * lanes * 4, 0u);
  p.metadata.assign(static_cast<std::size_t>(p.m_blocks) * ((p.k_chunks + 1) / 2) * lanes, 0u);
  auto value_at = [&](int row, int k) {
    const int c = order.columns[k];
    return (row < a.rows && c != zero_column) ? a(row, c) : 0.0;
  };
  for (int mb = 0; mb < p.m_blocks; ++mb) {
    for (int kc = 0; kc < p.k_chunks; ++kc) {
      for (int r = 0; r < 16; ++r) {
        const int row = mb * 16 + r;
        for (int c = 0; c < 8; ++c) {
          const int k0 = kc * mma.k + c * group;
          std::vector<int> found;
          for (int i = 0; i < group; ++i)
            if (value_at(row, k0 + i) != 0.0) found.push_back(i);
          const FragmentSlot s = slot(r, c, kc);
          std::uint32_t nibble = 0, word = 0;
          if (tf32) {
            if (found.size() > 1) throw std::logic_error("pack_operand: a column pair is not 1:2");
            const int i = found.empty() ? 0 : found[0];
            nibble      = i == 0 ? 0x4u : 0xEu;
            word        = sparstencil::impl::tf32_bits(static_cast<float>(value_at(row, k0 + i)));
          } else {
            if (found.size() > 2) throw std::logic_error("pack_operand: a group of four is not 2:4");
            const auto [i0, i1] = group_positions(found);
            nibble              = static_cast<std::uint32_t>(i0 | (i1 << 2));
            word                = half_bits(precision, value_at(row, k0 + i0)) |
                   (static_cast<std::uint32_t>(half_bits(precision, value_at(row, k0 + i1))) << 16);
          }
          p.values[value_index(p, mb, kc, s.value_lane, s.reg)] = word;
          p.metadata[metadata_index(p, mb, kc, s.metadata_lane)] |= nibble << s.shift;
        }
      }
    }
  }
  return p;
}

double unpack_operand(const PackedA& p, Precision precision, int row, int k) {
  const MmaShape mma = mma_shape(precision);
  const bool tf32    = precision == Precision::tf32;
  const int group    = tf32 ? 2 : 4;
  const int mb = row / 16, r = row % 16, kc = k / mma.k, c = (k % mma.k) / group, pos = k % group;
  const FragmentSlot s       = slot(r, c, kc);
  const std::uint32_t word   = p.values[value_index(p, mb, kc, s.value_lane, s.reg)];
  const std::uint32_t nibble = (p.metadata[metadata_index(p, mb, kc, s.metadata_lane)] >> s.shift) & 0xFu;
  if (tf32) {
    const int element = nibble == 0x4u ? 0 : 1;  // 0b0100: element 0, 0b1110: element 1
    return pos == element ? sparstencil::impl::tf32_value(word) : 0.0;
  }
  const int i0 = static_cast<int>(nibble & 3u), i1 = static_cast<int>(nibble >> 2);
  if (pos == i0) return half_value(precision, static_cast<std::uint16_t>(word & 0xffffu));
  if (pos == i1) return half_value(precision, static_cast<std::uint16_t>(word >> 16));
  return 0.0;
}

}  // namespace sparstencil::cuda_sptc
