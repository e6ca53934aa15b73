#pragma once
/// The operands of the sparse MMA (mma.sp::ordered_metadata): which precisions it takes,
/// its shape, A' compressed and packed per lane, and the error bound of one step it
/// computes. Plain C++: the planner packs, the emulator and the tests decode.
#include <cstddef>

#include "SparStencil_Plan.hpp"
#include "SparStencil_Rounding.hpp"

namespace sparstencil::cuda_sptc {

/// Whether sparse tensor cores take this precision (f16, bf16: 2:4; tf32: 1:2).
bool has_sparse_operands(Precision p);

/// m16n8k32 for f16/bf16 (2:4), m16n8k16 for tf32 (1:2).
MmaShape mma_shape(Precision p);

/// Compresses A' (columns in `order`) for mma.sp of `precision`; rows padded to 16.
PackedA pack_operand(const KernelMatrix& a, const ColumnOrder& order, Precision precision);

/// The dense A' value at (row, k) that a packed operand encodes, decoded the way the
/// hardware reads fragments and metadata (used by the emulator and the tests).
double unpack_operand(const PackedA& packed, Precision precision, int row, int k);

/// Error bound of one sparse tensor-core step (f16, bf16, tf32): matrix_step_error_bound.
using sparstencil::ErrorBound;
ErrorBound step_error_bound(Precision p, std::size_t terms);

}  // namespace sparstencil::cuda_sptc
