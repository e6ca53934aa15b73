#pragma once
/// Sparsity conversion (SparStencil §3.2): a column order of A' in which every consecutive
/// pair of columns is conflict-free (no row has a nonzero in both: the 1:2 pattern sparse
/// tf32 needs), so every group of two pairs has at most two nonzeros per row (2:4, for
/// f16/bf16). Permuting A's columns and B's rows alike leaves A x B unchanged (PIT, eq. 5),
/// so the order costs nothing at run time: the kernel gathers B through it.
///
/// Columns are paired along a matching of the non-conflict graph; a column left unmatched
/// is paired with an inserted zero column. Columns that are zero in every row are left
/// out entirely (a star stencil's patch corners, for example).
#include <vector>

#include "SparStencil_KernelMatrix.hpp"

namespace sparstencil {

/// Marks an inserted zero column in a ColumnOrder.
inline constexpr int zero_column = -1;

struct ColumnOrder {
  /// Column indices of A' (or zero_column), read in consecutive pairs.
  std::vector<int> columns;
  int zero_columns    = 0;  ///< inserted zero columns (the padding p of Problem 1)
  int dropped_columns = 0;  ///< columns of A' that are zero everywhere and were left out
};

/// Which columns of A' hold a nonzero in some row.
std::vector<bool> nonzero_columns(const KernelMatrix& a);

/// Strided swapping's distance h for a patch row of n columns and radius r: the two
/// halves of 2h positions cover the row, pairs h +- 1 apart never fall within one row's
/// reach (2r + 1); even.
int strided_swap_distance(int n, int r);

/// Bit matrix of column conflicts: conflict[i][j] when some row is nonzero in both i and j.
std::vector<std::vector<bool>> column_conflicts(const KernelMatrix& a);

/// Maximum-cardinality matching of the non-conflict graph (Edmonds' blossom algorithm,
/// Boost.Graph): the fewest zero columns for any A'.
ColumnOrder pair_columns_general(const KernelMatrix& a);

/// The hierarchical matching of the paper's Algorithm 1, generalised from two levels to
/// one per axis: at axis a, the patch's slices (blocks) i and i + s are paired element by
/// element, s = max(floor(m/2), k), m the patch extent and k = 2 r_a + 1 the staircase
/// width (slices k apart never share a row); unpaired slices recurse to the next axis,
/// and at the last axis an unpaired column takes a zero column. Linear time; minimal
/// for staircase matrices (box stencils), valid for any stencil of that radius.
template <int D>
ColumnOrder pair_columns_hierarchical(const KernelMatrix& a, const PatchGeometry<D>& geometry);

/// SPIDER's strided swapping (§3.1.2), the rule-based order for row-decomposed tiles (tile
/// extent 1 on every axis but the last, L outputs along it): each patch row of n = L + 2r
/// columns is padded to 2h, h = max(ceil(n/2), 2r + 2) rounded up to even, and position p
/// holds column p when p is even, p + h when p is odd and below h, p - h otherwise. Pairs
/// are then h - 1 or h + 1 apart, never within one stencil row's reach (2r + 1), so every
/// pair is conflict-free for any stencil. Throws for tiles that are not rows.
template <int D>
ColumnOrder pair_columns_strided(const KernelMatrix& a, const PatchGeometry<D>& geometry);

/// Appends zero-column pairs until the column count is a multiple of `k` (the
/// instruction's K: 32 for f16/bf16 m16n8k32, 16 for tf32 m16n8k16).
void pad_columns(ColumnOrder& order, int k);

/// Largest number of nonzeros any row has in one group of `group` consecutive columns of
/// the order (zero columns count as zeros): 1:2 holds when it is <= 1 for group 2, 2:4
/// when it is <= 2 for group 4. The order must list every nonzero column of A' once.
int max_nonzeros_per_group(const KernelMatrix& a, const ColumnOrder& order, int group);

/// Throws std::logic_error unless `order` lists each nonzero column of A' exactly once,
/// only valid indices or zero_column, and an even number of entries.
void check_column_order(const KernelMatrix& a, const ColumnOrder& order);

}  // namespace sparstencil
