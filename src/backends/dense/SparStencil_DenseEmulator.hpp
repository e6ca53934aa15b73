#pragma once
/// The dense plan emulator: runs a dense Plan on the host through the kernel's own
/// geometry and fragment mapping (SparStencil_DenseKernel.hpp) for one vendor's layout L,
/// so CI proves the mapping of every vendor right without its GPU. Per block it fills the
/// image (operand values), per unit and k chunk it loads each lane's A and B values as
/// the kernel does (image_as_a layouts: the image as A over each part's chunks), and
/// runs the instruction by its documented semantics: the lanes'
/// values placed in A, B and C by L's layout (checked against the vendors' own tables by
/// the tests), D = A B + C summed in the accumulator's format (f32 for f16/bf16/tf32, f64
/// for f64), in k order. Results are rounded to the grids' format (tf32 and float-grid
/// plans: float) and written as the kernel writes them.
#include <array>
#include <vector>

#include "SparStencil_DenseKernel.hpp"
#include "SparStencil_DenseModel.hpp"
#include "SparStencil_Reference.hpp"

namespace sparstencil::dense {

namespace emulation {

/// The instruction L on one wave: a[lane][i], b[lane][i] the lanes' operands, c[lane][i]
/// their accumulators, summed in Acc.
template <class L, class Acc>
void multiply(const std::vector<std::array<double, L::a_values>>& a,
              const std::vector<std::array<double, L::b_values>>& b, std::vector<std::array<Acc, L::c_values>>& c) {
  double A[L::m][L::k] = {}, B[L::k][L::n] = {};
  Acc C[L::m][L::n] = {};
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
  constexpr int parts  = part_count<L>();
  // The kernel's operand tables: A' in fragment order, or (image_as_a) the parts' tables.
  std::vector<double> a;
  PartTables parted;
  if constexpr (image_as_a<L>) parted = part_tables<L>(plan);
  else a = a_fragments<L>(a_row_major(plan), g.K);
  const std::vector<int> runs          = run_offsets(plan);
  const std::vector<int>& tile_offsets = plan.tile_offsets;
  std::vector<double> image(static_cast<std::size_t>(g.image_values));
  long block_count = 1;
  for (int ax = 0; ax < D; ++ax) block_count *= g.blocks[ax];
  std::vector<std::array<double, L::a_values>> a_lanes(L::lanes);
  std::vector<std::array<double, L::b_values>> b_lanes(L::lanes);
  // Per group of the block, per part: the lanes' accumulators.
  std::vector<std::vector<std::array<Acc, L::c_values>>> c_lanes;
  const int groups = group_count<L>(g);
  for (long b = 0; b < block_count; ++b) {
    long origin[D];
    block_origin(g, b, origin);
    std::fill(image.begin(), image.end(), 0.0);
    for (int row = 0; row < image_rows(g); ++row) {
      const ImageRow r = image_row(g, origin, row);
      for (int x = 0; x < g.shared_extent[D - 1]; ++x) {
        const long at = image_coordinate(g, origin, D - 1, x);
        if (r.inside && at >= 0)
          image[r.offset + x] = impl::operand_value(plan.precision, in.values[r.in_index + at * g.in_stride[D - 1]]);
      }
    }
    // Every wave's unit: its groups, each part of A's rows, over the k chunks.
    c_lanes.assign(static_cast<std::size_t>(groups) * parts, std::vector<std::array<Acc, L::c_values>>(L::lanes));
    for (int group = 0; group < groups; ++group) {
      for (int part = 0; part < parts; ++part) {
        auto& c = c_lanes[static_cast<std::size_t>(group) * parts + part];
        for (auto& lane_c : c) lane_c.fill(Acc(0));
        if constexpr (image_as_a<L>) {  // the image as A, A' transposed as B: the part's chunks
          for (int chunk = parted.first[part]; chunk < parted.first[part + 1]; ++chunk) {
            for (int lane = 0; lane < L::lanes; ++lane) {
              for (int i = 0; i < L::a_values; ++i) {
                const Element e = L::a(lane, i);
                a_lanes[lane][i] =
                    image[tile_offsets[group_tile<L>(g, group, e.row)] + parted.offsets[chunk * L::k + e.col]];
              }
              for (int i = 0; i < L::b_values; ++i) b_lanes[lane][i] = parted.b[b_fragment<L>(chunk, lane) + i];
            }
            multiply<L, Acc>(a_lanes, b_lanes, c);
          }
        } else {
          for (int kc = 0; kc < g.k_chunks; ++kc) {
            for (int lane = 0; lane < L::lanes; ++lane) {
              for (int i = 0; i < L::a_values; ++i) a_lanes[lane][i] = a[a_fragment<L>(part, kc, lane) + i];
              const int tile = tile_offsets[group_tile<L>(g, group, b_column<L>(lane))];
              for (int i = 0; i < L::b_values; i += L::b_run) {
                const int at = tile + b_run_offset<L>(runs.data(), g.vector, kc, lane, i);
                for (int j = 0; j < L::b_run; ++j) b_lanes[lane][i + j] = image[at + j];
              }
            }
            multiply<L, Acc>(a_lanes, b_lanes, c);
          }
        }
      }
    }
    // Staged where the image was, then written a row at a time.
    std::vector<double>& stage = image;
    for (int group = 0; group < groups; ++group) {
      for (int part = 0; part < parts; ++part) {
        for (int lane = 0; lane < L::lanes; ++lane) {
          for (int i = 0; i < L::c_values; ++i) {
            const Target t = c_target<L>(part, lane, i);
            stage[stage_offset(g, group_tile<L>(g, group, t.tile)) + t.point] =
                impl::stored_value(grid_format(plan), c_lanes[static_cast<std::size_t>(group) * parts + part][lane][i]);
          }
        }
      }
    }
    const int span = g.tiles_x * 16;
    for (int row = 0; row < g.rows; ++row) {
      const OutputRow r = output_row(g, origin, row);
      if (!r.inside) continue;
      for (int x = 0; x < span && x_inside(g, origin, x); ++x) {
        if (g.boundary == Boundary::periodic || (r.interior && x_interior(g, origin, x))) {
          out.values[r.out_index + x * g.out_stride[D - 1]] = stage[static_cast<std::size_t>(row) * g.pitch + x];
        } else if (g.boundary == Boundary::fixed_rim) {
          out.values[r.out_index + x * g.out_stride[D - 1]] = in.values[r.in_index + x * g.in_stride[D - 1]];
        }
      }
    }
  }
}

}  // namespace emulation

/// The GPU a plan is emulated for: NVIDIA before sm_90 (f64 m8n8k4), sm_90 (f64 m16n8k4),
/// AMD CDNA2 (no tf32: its plans are refused).
enum class Vendor { nvidia, nvidia_sm90, amd };

/// Runs `plan` over `in` into `out` (both of the plan's extents, row-major) as the dense
/// kernel runs it with `vendor`'s instructions. Throws for a plan of another backend, one
/// that does not verify, grids of other extents, or a tf32 plan on AMD.
template <int D>
void emulate(const Plan& plan, const HostGrid<D>& in, HostGrid<D>& out, Vendor vendor) {
  if (plan.backend != "dense" || !plan.dense) {
    impl::fail("dense::emulate", "the plan is for the ", plan.backend, " backend, not dense");
  }
  verify(plan, "dense::emulate");
  check_kernel_limits(plan, "dense::emulate");
  if (plan.dims() != D) impl::fail("dense::emulate", "the plan is ", plan.dims(), "-D, the grid ", D, "-D");
  for (int a = 0; a < D; ++a) {
    if (in.extents[a] != plan.grid[a] || out.extents[a] != plan.grid[a]) {
      impl::fail("dense::emulate", "grid extents differ from the plan's along axis ", a);
    }
  }
  const bool wide = plan.precision == Precision::f64;
  if (plan.precision == Precision::tf32) {
    if (vendor == Vendor::amd)
      impl::fail("dense::emulate", "AMD's MFMA (gfx90a) has no tf32 form: a tf32 plan runs on NVIDIA only");
    emulation::run<NvidiaTF32, float>(plan, in, out);
  } else if (vendor == Vendor::nvidia && wide) emulation::run<NvidiaF64, double>(plan, in, out);
  else if (vendor == Vendor::nvidia_sm90 && wide) emulation::run<NvidiaF64Sm90, double>(plan, in, out);
  else if (vendor != Vendor::amd) emulation::run<NvidiaF16, float>(plan, in, out);
  else if (wide) emulation::run<AmdF64, double>(plan, in, out);
  else emulation::run<AmdF16, float>(plan, in, out);
}

}  // namespace sparstencil::dense
