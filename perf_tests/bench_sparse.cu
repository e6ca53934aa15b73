// Benchmark of the CUDA sparse tensor-core executor (raw API, no Kokkos) on the standard
// set at the papers' sizes, against the device-to-device copy measured in the same run.
//   sparstencil_bench_sparse [--sizes=paper|small] [--all-tiles] [--row-runs] [--walls]
//                            [--depths] [--json=FILE] [--filter=TEXT] [--grid=N0xN1[xN2]]
// (--row-runs adds each stencil's two row-run forms, image rows as they are (parity
// split) and interleaved, f16, single step and t = 3 (with --depths every depth), beside
// the planner's choice;
// --walls adds the f16 single step and t = 3 under the interior and fixed_rim boundaries
// (the wall kernel included); --depths adds f16 fused plans of t = 2 .. 8 under periodic
// and fixed_rim, the cost model's fitting data (a depth the sparse backend cannot plan is
// reported and skipped); the rest runs periodic. --grid sets the extents of the cases of its
// dimension, rows packed (not whole 16-byte units where the last extent is not a multiple of
// 8), and the copy measured on it where 2-D.)
// Per case: CUDA events around each launch, 5 warm-up launches, median of 30; inputs
// random (never zeros); three grids rotate as in -> out so no launch reads what the
// previous one left in L2. GStencil/s counts original steps (a fused launch does t).
// Roofline = copy bandwidth / (2 x storage bytes) in GStencil/s, single step.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "SparStencil_GpuRuntime.hpp"
#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_Device.hpp"
#include "SparStencil_Fuse.hpp"
#include "SparStencil_Parse.hpp"
#include "SparStencil_Backends.hpp"
#include "SparStencil_CudaSptcModel.hpp"
#include "SparStencil_Presets.hpp"
#include "SparStencil_SparseExecutor.hpp"
#include "SparStencil_Stencil.hpp"
#include "bench_sizes.hpp"

namespace {

using namespace sparstencil;

bool paper_sizes         = true;
std::string model_device = "h100";  ///< the description the model column predicts for: the device's
constexpr int warmup = 5, repeats = 30;

enum class Element { f16, bf16, f32 };

/// Values in [0.25, 1) with random sign from a hash of the index: never zero.
__global__ void fill_random(void* data, long n, Element kind, unsigned seed) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += gridDim.x * static_cast<long>(blockDim.x)) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
    const float v = (0.25f + 0.75f * (h & 0xFFFFFF) / 16777216.0f) * ((h >> 31) ? -1.0f : 1.0f);
    if (kind == Element::f32) static_cast<float*>(data)[i] = v;
    else if (kind == Element::bf16) static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16(v);
    else static_cast<__half*>(data)[i] = __float2half(v);
  }
}

struct Buffers {
  std::vector<void*> grids;
  long elements = 0;
  Buffers(long n, Element kind) : elements(n) {
    const int bytes = kind == Element::f32 ? 4 : 2;
    for (int i = 0; i < 3; ++i) {
      void* p = nullptr;
      SPARSTENCIL_GPU_CHECK(cudaMalloc(&p, n * bytes));
      fill_random<<<1024, 256>>>(p, n, kind, 1234u + i);
      SPARSTENCIL_GPU_CHECK_LAUNCH();
      grids.push_back(p);
    }
    SPARSTENCIL_GPU_CHECK(cudaDeviceSynchronize());
  }
  ~Buffers() {
    for (void* p : grids) cudaFree(p);
  }
};

/// Median seconds of `launch(i)` over `repeats` timed runs after `warmup` untimed ones.
template <class Launch>
double median_seconds(Launch&& launch) {
  cudaEvent_t start, stop;
  SPARSTENCIL_GPU_CHECK(cudaEventCreate(&start));
  SPARSTENCIL_GPU_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) launch(i);
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    SPARSTENCIL_GPU_CHECK(cudaEventRecord(start));
    launch(i);
    SPARSTENCIL_GPU_CHECK(cudaEventRecord(stop));
    SPARSTENCIL_GPU_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SPARSTENCIL_GPU_CHECK(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(ms * 1e-3);
  }
  SPARSTENCIL_GPU_CHECK(cudaEventDestroy(start));
  SPARSTENCIL_GPU_CHECK(cudaEventDestroy(stop));
  std::nth_element(seconds.begin(), seconds.begin() + repeats / 2, seconds.end());
  return seconds[repeats / 2];
}

std::vector<long> grid_asked;  ///< --grid: the extents of the cases of its dimension
/// The extents the cases of `dims` dimensions run on: --grid's, or those --sizes names.
std::vector<long> case_grid(int dims) {
  return static_cast<int>(grid_asked.size()) == dims ? grid_asked : bench::problem_extents(dims, paper_sizes);
}

/// Copy bandwidth (read + write bytes per second) for `bytes`-sized elements, 2-D size.
double copy_bandwidth(int bytes) {
  const long n = case_grid(2)[0] * case_grid(2)[1];
  Buffers b(n, bytes == 4 ? Element::f32 : Element::f16);
  const double s = median_seconds([&](int i) {
    SPARSTENCIL_GPU_CHECK(cudaMemcpyAsync(b.grids[(i + 1) % 3], b.grids[i % 3], n * bytes, cudaMemcpyDeviceToDevice));
  });
  return 2.0 * n * bytes / s;
}

struct Row {
  std::string stencil, precision, tile, variant, boundary, pairing;
  int steps = 1;
  double ms = 0, gstencils = 0, roofline = 0, predicted_gstencils = 0, predicted_seconds = 0;
  cuda_sptc::SparseCostTerms terms;  ///< the model's counts (for a refit: perf_tests/fit_sparse_model.py)
};
std::vector<Row> rows;

void run_case(const AnyStencil& stencil, Precision precision, int steps, const std::vector<int>& tile,
              double copy_bytes_per_s, Pairing pairing = Pairing::best, Boundary boundary = Boundary::periodic) {
  PlanRequest r;
  r.pairing       = pairing;
  r.stencil       = stencil;
  r.grid          = case_grid(dimension(stencil));
  r.precision     = precision;
  r.steps         = steps;
  r.boundary      = boundary;
  r.backends      = {"cuda_sptc"};
  r.device        = model_device;
  const Plan plan = tile.empty() ? make_plan(r) : cuda_sptc::make_sparse_plan(r, tile);
  const cuda_sptc::SparseExecutor executor(plan);
  long n = 1;
  for (long e : plan.grid) n *= e;
  const int bytes = storage_bytes(precision);
  Buffers b(n, precision == Precision::tf32   ? Element::f32
               : precision == Precision::bf16 ? Element::bf16
                                              : Element::f16);
  const double s = median_seconds([&](int i) { executor.apply(b.grids[i % 3], b.grids[(i + 1) % 3]); });
  Row row;
  row.stencil             = name(stencil);
  row.precision           = to_string(precision);
  row.boundary            = to_string(boundary);
  row.steps               = steps;
  row.tile                = impl::tuple_string(plan.tile);
  row.variant             = executor.describe();
  row.ms                  = s * 1e3;
  row.gstencils           = static_cast<double>(n) * steps / s / 1e9;
  row.roofline            = copy_bytes_per_s / (2.0 * bytes) / 1e9;
  row.predicted_gstencils = plan.predicted.gstencils;
  row.predicted_seconds   = plan.predicted.seconds;
  row.pairing             = pairing == Pairing::parity_split  ? "parity_split"
                            : pairing == Pairing::interleaved ? "interleaved"
                                                              : "best";
  row.terms               = cuda_sptc::sparse_cost_terms(plan);
  rows.push_back(row);
  std::printf("%-12s %-5s t=%d %-9s tile %-10s %9.3f ms %8.1f GStencil/s  roofline %6.1f  %5.1f%%  model %7.1f  [%s]\n",
              row.stencil.c_str(), row.precision.c_str(), steps, row.boundary.c_str(), row.tile.c_str(), row.ms,
              row.gstencils, row.roofline, 100.0 * row.gstencils / row.roofline, row.predicted_gstencils,
              row.variant.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool all_tiles = false, row_runs = false, walls = false, depths = false;
  std::string json_path, filter;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sizes=small") == 0) paper_sizes = false;
    else if (std::strcmp(argv[i], "--sizes=paper") == 0) paper_sizes = true;
    else if (std::strcmp(argv[i], "--all-tiles") == 0) all_tiles = true;
    else if (std::strcmp(argv[i], "--row-runs") == 0) row_runs = true;
    else if (std::strcmp(argv[i], "--walls") == 0) walls = true;
    else if (std::strcmp(argv[i], "--depths") == 0) depths = true;
    else if (std::strncmp(argv[i], "--json=", 7) == 0) json_path = argv[i] + 7;
    else if (std::strncmp(argv[i], "--filter=", 9) == 0) filter = argv[i] + 9;
    else if (std::strncmp(argv[i], "--grid=", 7) == 0) {
      try {
        grid_asked = parse_extents(argv[i] + 7);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "sparstencil_bench_sparse: --grid: %s\n", e.what());
        return 2;
      }
    } else {
      std::fprintf(stderr, "sparstencil_bench_sparse: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (cuda_sptc::device_count() == 0 || !cuda_sptc::has_sparse_tensor_cores(cuda_sptc::device_info(0))) {
    std::printf("sparstencil_bench_sparse: no CUDA device of compute capability 8.0+: nothing measured\n");
    return 0;
  }
  const auto info = cuda_sptc::device_info(0);
  model_device    = cuda_device_name(info.major, info.name);
  std::printf("device: %s (%d SMs, model: %s), sizes: %s\n", info.name.c_str(), info.multiprocessors,
              model_device.c_str(), paper_sizes ? "paper" : "small");
  const double copy16 = copy_bandwidth(2), copy32 = copy_bandwidth(4);
  std::printf("copy roofline: 16-bit %.3f TB/s, 32-bit %.3f TB/s (read + write)\n", copy16 / 1e12, copy32 / 1e12);
  auto wanted = [&](const AnyStencil& s) { return filter.empty() || name(s).find(filter) != std::string::npos; };

  std::vector<AnyStencil> set = presets::standard_set();
  set.push_back(box<2>(7));  // SPIDER's 15 x 15 workload (Box-2D7R)
  for (const AnyStencil& s : set) {
    if (!wanted(s)) continue;
    std::vector<int> row_tile(dimension(s), 1);
    row_tile.back() = 16;
    run_case(s, Precision::f16, 1, {}, copy16);
    for (Boundary wall : {Boundary::interior, Boundary::fixed_rim}) {
      for (int steps : {1, 3}) {
        if (walls && (steps == 1 || name(s) != "box2d:r=7"))
          run_case(s, Precision::f16, steps, {}, copy16, Pairing::best, wall);
      }
    }
    for (Pairing form : {Pairing::parity_split, Pairing::interleaved}) {
      if (row_runs) run_case(s, Precision::f16, 1, row_tile, copy16, form);
    }
    if (name(s) == "box2d:r=7") continue;
    for (Pairing form : {Pairing::parity_split, Pairing::interleaved}) {
      if (row_runs) run_case(s, Precision::f16, 3, row_tile, copy16, form);
    }
    run_case(s, Precision::bf16, 1, {}, copy16);
    run_case(s, Precision::tf32, 1, {}, copy32);
    run_case(s, Precision::f16, 3, {}, copy16);
    for (int steps = 2; depths && steps <= 8; ++steps) {
      for (Boundary wall : {Boundary::periodic, Boundary::fixed_rim}) {
        if (steps == 3 && wall == Boundary::periodic) continue;  // above
        std::vector<std::pair<std::vector<int>, Pairing>> forms{{{}, Pairing::best}};
        if (row_runs && wall == Boundary::periodic)
          forms.insert(forms.end(), {{row_tile, Pairing::parity_split}, {row_tile, Pairing::interleaved}});
        for (const auto& [tile, form] : forms) {
          try {
            run_case(s, Precision::f16, steps, tile, copy16, form, wall);
          } catch (const std::runtime_error& e) {
            std::printf("%-12s f16   t=%d %-9s not planned: %s\n", name(s).c_str(), steps, to_string(wall), e.what());
          }
        }
      }
    }
    if (all_tiles) {
      const auto radius =
          std::visit([](const auto& st) { return std::vector<int>(st.radius().begin(), st.radius().end()); }, s);
      for (const auto& tile : cuda_sptc::candidate_tiles(dimension(s), radius))
        run_case(s, Precision::f16, 1, tile, copy16);
    }
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << std::boolalpha;
    out.precision(10);
    const DeviceDescription& d = device_description(model_device);
    out << "{\"device\": \"" << info.name << "\", \"copy_tbs_16\": " << copy16 / 1e12
        << ", \"copy_tbs_32\": " << copy32 / 1e12 << ", \"model_device\": {\"name\": \"" << d.name
        << "\", \"multiprocessors\": " << d.multiprocessors << ", \"clock_ghz\": " << d.clock_ghz
        << ", \"memory_bytes_per_s\": " << d.memory_bytes_per_s << ", \"shared_bytes_per_s\": " << d.shared_bytes_per_s
        << ", \"launch_seconds\": " << d.launch_seconds << "}, \"runs\": [\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r                        = rows[i];
      const cuda_sptc::SparseCostTerms& t = r.terms;
      out << "  {\"stencil\": \"" << r.stencil << "\", \"precision\": \"" << r.precision << "\", \"boundary\": \""
          << r.boundary << "\", \"steps\": " << r.steps << ", \"tile\": \"" << r.tile << "\", \"ms\": " << r.ms
          << ", \"gstencils\": " << r.gstencils << ", \"roofline\": " << r.roofline
          << ", \"model_gstencils\": " << r.predicted_gstencils << ", \"model_seconds\": " << r.predicted_seconds
          << ", \"pairing\": \"" << r.pairing << "\""
          << ", \"variant\": \"" << r.variant << "\", \"model_terms\": {\"loop\": \"" << t.loop
          << "\", \"dims\": " << t.dims << ", \"tf32\": " << t.tf32 << ", \"interleaved\": " << t.interleaved
          << ", \"points\": " << t.points << ", \"steps\": " << t.steps << ", \"terms\": " << t.terms
          << ", \"groups\": " << t.groups << ", \"chunks\": " << t.chunks
          << ", \"resident_warps\": " << t.resident_warps << ", \"tensor_seconds\": " << t.tensor_seconds
          << ", \"memory_bytes\": " << t.memory_bytes << ", \"shared_bytes\": " << t.shared_bytes
          << ", \"wall_point_steps\": " << t.wall_point_steps << "}}" << (i + 1 < rows.size() ? ",\n" : "\n");
    }
    out << "]}\n";
  }
  return 0;
}
