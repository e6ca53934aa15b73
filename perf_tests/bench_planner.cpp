// Planning time: make_plan for every stencil of the catalogue and the presets, at the
// papers' sizes (1D 10,240,000; 2D 10240^2; 3D 512^3), f16 on the H100 description.
// The target is under 10 ms per stencil; the "worst ms" line after the table says where
// the slowest stands.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>

#include "SparStencil_Catalogue.hpp"
#include "SparStencil_Backends.hpp"
#include "SparStencil_Presets.hpp"

namespace {

double worst_ms = 0;
std::string worst_name;

sparstencil::PlanRequest request_for(const sparstencil::AnyStencil& s) {
  sparstencil::PlanRequest r;
  r.stencil = s;
  switch (sparstencil::dimension(s)) {
    case 1: r.grid = {10240000}; break;
    case 2: r.grid = {10240, 10240}; break;
    default: r.grid = {512, 512, 512};
  }
  return r;
}

void plan(benchmark::State& state, const sparstencil::PlanRequest& request, const std::string& name) {
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(sparstencil::make_plan(request));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ms > worst_ms) worst_ms = ms, worst_name = name;
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  std::vector<std::pair<std::string, sparstencil::AnyStencil>> all;
  for (const auto& s : sparstencil::presets::standard_set()) all.emplace_back(sparstencil::name(s), s);
  for (const auto& e : sparstencil::load_catalogue(sparstencil::reference_catalogue_path())) all.emplace_back(e.name, e.stencil);
  for (const auto& [name, stencil] : all) {
    const auto request = request_for(stencil);
    benchmark::RegisterBenchmark(("plan/" + name).c_str(), [request, name = name](benchmark::State& st) {
      plan(st, request, name);
    })->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::printf("worst ms: %.3f (%s), target < 10 ms: %s\n", worst_ms, worst_name.c_str(),
              worst_ms < 10.0 ? "met" : "MISSED");
  return 0;
}
