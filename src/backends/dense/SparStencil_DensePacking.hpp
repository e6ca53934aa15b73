#pragma once
/// A' of a dense plan in its operand format (PackedA): packed once by the planner from the
/// kernel matrix, and read back wherever A' is laid out again (the kernel's tables and
/// the emulator through unpack_dense, the executor's 16-bit fragments through
/// unpack_halves). One encoding, written and read here only, so that the planner, the
/// emulator and the executor cannot disagree on it. Plain C++: the planner library builds
/// it on every build.
#include <vector>

#include "SparStencil_Plan.hpp"

namespace sparstencil::dense {

/// A' (columns in `order`, rows padded to 16) as Plan::dense packs it (PackedA).
PackedA pack_dense(const KernelMatrix& a, const ColumnOrder& order, Precision precision);
/// The A' entry at (row, k) a dense plan holds, in the operand format.
double unpack_dense(const PackedA& packed, Precision precision, int row, int k);
/// A' of an f16 or bf16 plan as its 16-bit values (row-major, 16 x K): each word of
/// PackedA::values split, its low half first.
std::vector<unsigned short> unpack_halves(const PackedA& packed);

}  // namespace sparstencil::dense
