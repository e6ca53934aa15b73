#pragma once
/// The dense plan emulator: runs a dense Plan on the host through the kernel's own
/// geometry and fragment mapping (SparStencil_DenseKernel.hpp) for one vendor's layout L,
/// so CI proves the mapping of every vendor right without its GPU. Per block it fills the
/// image (operand values), per unit and k chunk it loads each lane's A and B values as
/// the kernel does, and runs the instruction by its documented semantics: the lanes'
/// values placed in A, B and C by L's layout (checked against the vendors' own tables by
/// the tests), D = A B + C summed in the accumulator's format (f32 for f16/bf16, f64 for
/// f64), in k order. Results are rounded to the storage format and written as the kernel
/// writes them.
#include <array>
#include <vector>

#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_Reference.hpp"

namespace sparstencil::dense {

namespace emulation {

/// A value in the plan's operand format (what the instruction multiplies).
inline double operand_value(Precision p, double v) {
  switch (p) {
    case Precision::f16: return impl::f16_value(impl::f16_bits(static_cast<float>(v)));
    case Precision::bf16: return impl::bf16_value(impl::bf16_bits(static_cast<float>(v)));
    default: return v;
  }
}

/// The instruction L on one wave: a[lane][i], b[lane][i] the lanes' operands, c[lane][i]
/// their accumulators, summed in Acc.
template <class L, class Acc>
void multiply(const std::vector<std::array<double, L::a_values>>& a,
              const std::vector<std::array<double, L::b_values>>& b, std::vector<std::array<Acc, L::c_values>>& c) {
  double A[L::m][L::k] = {}, B[L::k][L::n] = {};
  Acc C[L::m][L::n]    = {};
  for (int lane = 0; lane < L::lanes; ++lane) {
    for (int i = 0; i < L::a_values; ++i) A[L::a(lane, i).row][L::a(lane, i).col] = a[lane][i];
    for (int i = 0; i < L::b_values; ++i) B[L::b(lane, i).row][L::b(lane, i).col] = b[lane][i];
    for (int i = 0; i < L::c_values; ++i) C[L::c(lane, i).row][L::c(lane, i).col] = c[lane][i];
  }
  for (int r = 0; r < L::m; ++r)
    for (int n = 0; n < L::n; ++n)
      for (int k = 0; k < L::k; ++k) C[r][n] += static_cast<Acc>(A[r][k]) * static_cast<Acc>(B[k][n]);
  for (int lane = 0; lane < L::lanes; ++lane)
    for (int i = 0; i < L::c_values; ++i) c[lane][i] = C[L::c(lane, i).row][L::c(lane, i).col];
}

template <class L, class Acc, int D>
void run(const Plan& plan, const HostGrid<D>& in, HostGrid<D>& out) {
  const DenseArgs<D> g = dense_args<D>(plan);
  std::vector<double> a(static_cast<std::size_t>(g.m_blocks) * 16 * g.K);
  for (int row = 0; row < g.m_blocks * 16; ++row)
    for (int k = 0; k < g.K; ++k) a[static_cast<std::size_t>(row) * g.K + k] = unpack_dense(plan.a, plan.precision, row, k);
  std::vector<double> image(static_cast<std::size_t>(g.image_values));
  // The kernel's tables of tile origins and tile points (coordinates, D a row).
  std::vector<int> tile_at(static_cast<std::size_t>(g.tiles) * D), point_at(static_cast<std::size_t>(g.m_blocks) * 16 * D);
  for (int t = 0; t < g.tiles; ++t)
    for (int ax = 0; ax < D; ++ax) tile_at[t * D + ax] = tile_coordinate(g, t, ax);
  for (int r = 0; r < g.m_blocks * 16; ++r)
    for (int ax = 0; ax < D; ++ax) point_at[r * D + ax] = point_coordinate(g, r, ax);
  long block_count = 1;
  for (int ax = 0; ax < D; ++ax) block_count *= g.blocks[ax];
  std::vector<std::array<double, L::a_values>> a_lanes(L::lanes);
  std::vector<std::array<double, L::b_values>> b_lanes(L::lanes);
  std::vector<std::array<Acc, L::c_values>> c_lanes(L::lanes);
  for (long b = 0; b < block_count; ++b) {
    long origin[D];
    block_origin(g, b, origin);
    std::fill(image.begin(), image.end(), 0.0);
    for (int row = 0; row < image_rows(g); ++row) {
      const ImageRow r = image_row(g, origin, row);
      for (int x = 0; x < g.shared_extent[D - 1]; ++x) {
        const long at = image_coordinate(g, origin, D - 1, x);
        if (r.inside && at >= 0) image[r.offset + x] = operand_value(plan.precision, in.values[r.in_index + at * g.in_stride[D - 1]]);
      }
    }
    for (int index = 0; index < unit_count<L>(g.tiles, g.m_blocks); ++index) {
      const Unit u = unit_of<L>(index, g.m_blocks);
      for (auto& c : c_lanes) c.fill(Acc(0));
      for (int kc = 0; kc < g.k_chunks; ++kc) {
        for (int lane = 0; lane < L::lanes; ++lane) {
          for (int i = 0; i < L::a_values; ++i) a_lanes[lane][i] = a[a_index<L>(u, g.K, kc, lane, i)];
          for (int i = 0; i < L::b_values; ++i) {
            const int o       = b_offset<L>(u, plan.gather.data(), plan.tile_offsets.data(), kc, lane, i);
            b_lanes[lane][i] = o < 0 ? 0.0 : image[o];
          }
        }
        multiply<L, Acc>(a_lanes, b_lanes, c_lanes);
      }
      for (int lane = 0; lane < L::lanes; ++lane) {
        for (int i = 0; i < L::c_values; ++i) {
          const Target t      = c_target<L>(u, lane, i);
          const OutputPoint x = output_point(g, origin, &tile_at[t.tile * D], &point_at[t.row * D]);
          if (!x.inside) continue;
          if (g.boundary == 0 || x.interior) out.values[x.out_index] = operand_value(plan.precision, c_lanes[lane][i]);
          else if (g.boundary == 2) out.values[x.out_index] = in.values[x.in_index];
        }
      }
    }
  }
}

}  // namespace emulation

/// The GPU a plan is emulated for.
enum class Vendor { nvidia, amd };

/// Runs `plan` over `in` into `out` (both of the plan's extents, row-major) as the dense
/// kernel runs it with `vendor`'s instructions. Throws for a plan of another backend, one
/// that does not verify, or grids of other extents.
template <int D>
void emulate(const Plan& plan, const HostGrid<D>& in, HostGrid<D>& out, Vendor vendor) {
  if (plan.backend != "dense" || !plan.dense) {
    impl::fail("dense::emulate", "the plan is for the ", plan.backend, " backend, not dense");
  }
  verify(plan, "dense::emulate");
  if (plan.dims() != D) impl::fail("dense::emulate", "the plan is ", plan.dims(), "-D, the grid ", D, "-D");
  for (int a = 0; a < D; ++a) {
    if (in.extents[a] != plan.grid[a] || out.extents[a] != plan.grid[a]) {
      impl::fail("dense::emulate", "grid extents differ from the plan's along axis ", a);
    }
  }
  const bool wide = plan.precision == Precision::f64;
  if (vendor == Vendor::nvidia && wide) emulation::run<NvidiaF64, double>(plan, in, out);
  else if (vendor == Vendor::nvidia) emulation::run<NvidiaF16, float>(plan, in, out);
  else if (wide) emulation::run<AmdF64, double>(plan, in, out);
  else emulation::run<AmdF16, float>(plan, in, out);
}

}  // namespace sparstencil::dense
