// Fuzz target: plan_from_json, and the emulator behind it. Any text either reads as a plan
// or is refused with a std::runtime_error; a plan read writes back (to_json) as text that
// reads as the same plan, explain() describes it, and a small cuda_sptc plan emulates on
// a grid of its extents without a fault (verify() keeps every table inside what it indexes).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>

#include "SparStencil_Emulator.hpp"
#include "SparStencil_Plan.hpp"

namespace {

using namespace sparstencil;

/// Emulation work small enough for a fuzzer's pace: grid points, and MMAs and image points
/// over all blocks.
bool small(const Plan& p) {
  long points = 1, blocks = 1;
  for (int a = 0; a < p.dims(); ++a) {
    points *= p.grid[a];
    const long span = static_cast<long>(p.tile[a]) * p.tiles_per_block[a];
    blocks *= (p.grid[a] + span - 1) / span;
  }
  long tiles = 1, image = 1;
  for (int a = 0; a < p.dims(); ++a) tiles *= p.tiles_per_block[a], image *= p.shared_extent[a];
  const long mmas = blocks * (tiles / 8) * p.a.m_blocks * p.a.k_chunks;
  return points <= (1L << 14) && mmas <= 4096 && blocks * image <= (1L << 22);
}

template <int D>
void emulate_once(const Plan& p) {
  std::array<int, D> extents{};
  for (int a = 0; a < D; ++a) extents[a] = static_cast<int>(p.grid[a]);
  HostGrid<D> in(extents), out(extents);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> magnitude(0.25, 1.0);
  for (double& v : in.values) v = (rng() & 1 ? -1 : 1) * magnitude(rng);  // never zero
  cuda_sptc::emulate(p, in, out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Plan plan;
  try {
    plan = plan_from_json(text);
  } catch (const std::runtime_error&) {
    return 0;  // a clear refusal
  }
  const std::string written = to_json(plan);
  if (to_json(plan_from_json(written)) != written) {  // reading it back must not throw either
    std::fprintf(stderr, "plan_from_json(to_json(p)) differs from p\n");
    std::abort();
  }
  (void)explain(plan);
  if (plan.backend == "cuda_sptc" && has_matrix_form(plan) && small(plan)) {
    switch (plan.dims()) {
      case 1: emulate_once<1>(plan); break;
      case 2: emulate_once<2>(plan); break;
      default: emulate_once<3>(plan); break;
    }
  }
  return 0;
}
