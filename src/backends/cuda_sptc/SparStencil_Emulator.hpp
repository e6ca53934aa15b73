#pragma once
/// The plan emulator: runs a cuda_sptc Plan on the host exactly as the GPU kernel
/// will, so CI can prove the transformation right without a GPU. Per block of tiles it
/// fills a shared-memory image (block plus halo, padded rows; periodic reads wrap, reads
/// outside the grid are zero), and per group of 8 tiles and 16-row block of A' it runs the
/// MMAs: B fragments gathered lane by lane through the gather table, A decoded from the
/// packed values and metadata, operands rounded to f16/bf16/tf32, products summed in f32.
/// Results are rounded to the storage precision and written under the boundary contract
/// (with the plan's stencil radius, the fused one for fused plans); plans under walls then
/// take the wall kernel's band (emulate_wall_bands).
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "SparStencil_Plan.hpp"
#include "SparStencil_Reference.hpp"
#include "SparStencil_Rounding.hpp"
#include "SparStencil_SparseOperand.hpp"
#include "SparStencil_WallBands.hpp"

namespace sparstencil::cuda_sptc {

namespace emulation {

/// A value in the operand format of `p` (what the MMA multiplies), as the f32 sums take it.
inline float operand_value(Precision p, double v) { return static_cast<float>(sparstencil::impl::operand_value(p, v)); }

/// A value stored in the grid's precision (tf32 plans store float).
inline double stored_value(Precision p, float v) { return sparstencil::impl::stored_value(p, v); }

}  // namespace emulation

/// The wall kernel (SparStencil_WallKernel.cuh) of a plan under interior or fixed_rim: the
/// band points off the rim take t single steps, each as the kernel sums it
/// (one step's weights and the values as operands, fma in term order, f32, rounded to
/// storage; rim values held).
template <int D>
void emulate_wall_bands(const Plan& plan, const HostGrid<D>& in, HostGrid<D>& out) {
  const WallBands bands  = wall_bands(plan);
  const Stencil<D>& step = as<D>(plan.original);
  std::vector<float> weights;
  for (const auto& term : step.terms()) weights.push_back(emulation::operand_value(plan.precision, term.weight));
  HostGrid<D> now = in, next = in;
  for (int s = 0; s < plan.fused_steps; ++s) {
    for (std::size_t flat = 0; flat < now.values.size(); ++flat) {
      const auto x = now.point(flat);
      if (!in_interior(step, now.extents, x)) continue;  // the rim keeps the input's values
      float sum = 0.0f;
      for (std::size_t k = 0; k < weights.size(); ++k) {
        auto y = x;
        for (int a = 0; a < D; ++a) y[a] += step.terms()[k].offset[a];
        sum = std::fma(weights[k], emulation::operand_value(plan.precision, now(y)), sum);
      }
      next.values[flat] = emulation::stored_value(plan.precision, sum);
    }
    std::swap(now, next);
  }
  std::array<long, 3> extent{1, 1, 1}, x3{};
  for (int a = 0; a < D; ++a) extent[3 - D + a] = now.extents[a];
  for (std::size_t flat = 0; flat < now.values.size(); ++flat) {
    const auto x = now.point(flat);
    for (int a = 0; a < D; ++a) x3[3 - D + a] = x[a];
    if (in_wall_band(bands, extent, x3) && in_interior(step, now.extents, x)) out.values[flat] = now.values[flat];
  }
}

/// Runs `plan` over `in` into `out` (both of the plan's extents). Throws for a plan of
/// another backend or without a matrix form, and for one that does not verify (verify():
/// every table read here lies inside what it indexes).
template <int D>
void emulate(const Plan& plan, const HostGrid<D>& in, HostGrid<D>& out) {
  if (plan.backend != "cuda_sptc")
    sparstencil::impl::fail("emulate", "the plan is for the ", plan.backend, " backend, not cuda_sptc");
  if (!has_matrix_form(plan)) sparstencil::impl::fail("emulate", "the plan has no matrix form (no tile)");
  verify(plan, "emulate");
  if (plan.dims() != D) sparstencil::impl::fail("emulate", "the plan is ", plan.dims(), "-D, the grid ", D, "-D");
  for (int a = 0; a < D; ++a) {
    if (in.extents[a] != plan.grid[a] || out.extents[a] != plan.grid[a]) {
      sparstencil::impl::fail("emulate", "grid extents differ from the plan's along axis ", a);
    }
  }
  const Stencil<D>& stencil     = as<D>(plan.stencil);
  const bool periodic           = plan.boundary == Boundary::periodic;
  const std::vector<int> stride = plan.shared_strides();
  std::vector<float> shared(static_cast<std::size_t>(stride[0]) * plan.shared_extent[0]);

  // Grid positions in long: near 2^31 points along an axis a block or tile origin plus an
  // offset passes int (verify() bounds every table, not the grid's size).
  std::array<long, D> blocks{}, block_span{};
  long block_count    = 1;
  int tiles_per_block = 1;
  for (int a = 0; a < D; ++a) {
    block_span[a] = static_cast<long>(plan.tile[a]) * plan.tiles_per_block[a];
    blocks[a]     = (in.extents[a] + block_span[a] - 1) / block_span[a];
    block_count *= blocks[a];
    tiles_per_block *= plan.tiles_per_block[a];
  }
  const int k_total = static_cast<int>(plan.order.columns.size());
  const int K       = plan.mma.k;
  // A' as the fragments and metadata encode it (decoded once; every tile group reuses it).
  std::vector<float> a_decoded(static_cast<std::size_t>(plan.a.m_blocks) * 16 * k_total);
  for (int row = 0; row < plan.a.m_blocks * 16; ++row)
    for (int k = 0; k < k_total; ++k)
      a_decoded[static_cast<std::size_t>(row) * k_total + k] =
          static_cast<float>(unpack_operand(plan.a, plan.precision, row, k));

  for (long b = 0; b < block_count; ++b) {
    std::array<long, D> origin{};
    for (long rest = b, a = D - 1; a >= 0; --a) {
      origin[a] = (rest % blocks[a]) * block_span[a];
      rest /= blocks[a];
    }
    // Shared-memory image of the block plus halo.
    std::fill(shared.begin(), shared.end(), 0.0f);
    int extent_points = 1;
    for (int a = 0; a < D; ++a) extent_points *= plan.shared_extent[a];
    for (int s = 0; s < extent_points; ++s) {
      std::array<int, D> x{};
      int offset  = 0;
      bool inside = true;
      for (int rest = s, a = D - 1; a >= 0; --a) {
        const int local = rest % plan.shared_extent[a];
        rest /= plan.shared_extent[a];
        offset += local * stride[a];
        long g = origin[a] + local - plan.shared_lead[a];
        if (periodic) g = ((g % in.extents[a]) + in.extents[a]) % in.extents[a];
        inside = inside && g >= 0 && g < in.extents[a];
        x[a]   = static_cast<int>(g);
      }
      if (inside) shared[offset] = emulation::operand_value(plan.precision, in(x));
    }
    // MMAs, one N block of 8 tiles at a time.
    for (int group = 0; group < tiles_per_block / 8; ++group) {
      for (int mb = 0; mb < plan.a.m_blocks; ++mb) {
        float acc[16][8] = {};
        for (int kc = 0; kc < k_total / K; ++kc) {
          // B fragments as the lanes load them: column g is tile 8 group + g.
          std::vector<float> bfrag(static_cast<std::size_t>(K) * 8, 0.0f);
          for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, t = lane % 4;
            for (int i = 0; i < 4; ++i) {
              for (int h = 0; h < (plan.precision == Precision::tf32 ? 1 : 2); ++h) {
                const int krow      = plan.precision == Precision::tf32 ? t + 4 * i : 2 * t + 8 * i + h;
                const int gather    = plan.gather[kc * K + krow];
                bfrag[krow * 8 + g] = gather < 0 ? 0.0f : shared[plan.tile_offsets[group * 8 + g] + gather];
              }
            }
          }
          for (int r = 0; r < 16; ++r) {
            for (int kk = 0; kk < K; ++kk) {
              const float a = a_decoded[static_cast<std::size_t>(mb * 16 + r) * k_total + kc * K + kk];
              if (a == 0.0f) continue;
              for (int n = 0; n < 8; ++n) acc[r][n] += a * bfrag[kk * 8 + n];
            }
          }
        }
        // Results: row r of A' is tile point r, column n is tile 8 group + n.
        for (int n = 0; n < 8; ++n) {
          std::array<long, D> tile_origin{};
          for (int rest = group * 8 + n, a = D - 1; a >= 0; --a) {
            tile_origin[a] = origin[a] + (rest % plan.tiles_per_block[a]) * plan.tile[a];
            rest /= plan.tiles_per_block[a];
          }
          for (int r = 0; r < 16 && mb * 16 + r < plan.rows; ++r) {
            std::array<int, D> x{};
            bool inside = true;
            for (int rest = mb * 16 + r, a = D - 1; a >= 0; --a) {
              const long at = tile_origin[a] + rest % plan.tile[a];
              rest /= plan.tile[a];
              inside = inside && at < in.extents[a];
              x[a]   = static_cast<int>(at);
            }
            if (!inside) continue;
            if (!periodic && !in_interior(stencil, in.extents, x)) continue;
            out(x) = emulation::stored_value(plan.precision, acc[r][n]);
          }
        }
      }
    }
  }
  if (plan.boundary == Boundary::fixed_rim) {
    for (std::size_t flat = 0; flat < in.values.size(); ++flat) {
      if (!in_interior(stencil, in.extents, in.point(flat))) out.values[flat] = in.values[flat];
    }
  }
  if (!periodic) emulate_wall_bands(plan, in, out);
}

}  // namespace sparstencil::cuda_sptc
