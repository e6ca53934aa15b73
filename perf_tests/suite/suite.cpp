// The benchmark suite (docs/BENCHMARKS.md): every executor SparStencil has, and cuDNN,
// on the standard kernels, the catalogue and a star/box sweep, in one run.
//   sparstencil_bench_suite [--sizes paper|small] [--groups standard,catalogue,sweep]
//                           [--filter TEXT[,TEXT...]] [--json FILE] [--time-limit S] ...
// Per case: median of --repeats timed runs (CUDA events) after --warmup, inputs random
// and rotating so the L2 cache holds none of them; GStencil/s per original step; the
// device-to-device copy measured in the same run on the same grid and the % of its
// single-step roofline; the accuracy on a window against the double reference (relative
// L2 error and the worst error over the documented bound); the model's prediction.
// Fused steps run on the sparse and dense executors as one launch (a fused plan) and on
// the generic executor as one launch by temporal blocking (executor "generic-tb"); its
// unfused steps and cuDNN run t single steps, so their per-step time is the single step's.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "bench_sizes.hpp"
#include "suite_grids.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_CUDA_SPTC)
#define SUITE_HAS_SPARSE 1
#include "SparStencil_CudaDevice.hpp"
#include "SparStencil_SparseExecutor.hpp"
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_ENABLE_DENSE_CUDA)
#define SUITE_HAS_DENSE 1
#include "SparStencil_DenseExecutor.hpp"
#include "SparStencil_DenseModel.hpp"
#endif
#if defined(KOKKOS_ENABLE_CUDA) && defined(SPARSTENCIL_SUITE_HAS_CUDNN)
#define SUITE_HAS_CUDNN 1
#include "cudnn_baseline.hpp"
#endif

namespace {

using namespace sparstencil;
using namespace sparstencil::bench;
using json = nlohmann::json;

struct Settings {
  bool paper_sizes = !std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;
  std::vector<std::string> groups{"standard", "catalogue", "sweep"};
  std::vector<std::string> filters;       ///< kernels whose name contains one of these; all if empty
  std::string json_path, catalogue_path;  // empty: reference_catalogue_path()
  std::vector<int> steps{1, 2, 3, 4, 7}, catalogue_steps{1, 3};
  int warmup = 5, repeats = 21, sweep_max_radius = 7, sweep_max_steps = 8;
  double time_limit  = 540;
  bool large         = true;   ///< 3-D standard kernels at 1024^3 too, where memory allows
  std::string device = "cpu";  ///< the planner's device description
};

/// One workload: a stencil on a grid in one storage format, at several fusion depths.
struct Item {
  std::string group;
  AnyStencil stencil;
  std::vector<long> extents;
  Storage storage;
  std::vector<int> steps;
  bool baselines = true;  ///< cuDNN too
};

std::string extents_text(const std::vector<long>& e) {
  std::string s;
  for (long n : e) s += (s.empty() ? "" : "x") + std::to_string(n);
  return s;
}

/// The operand precision the planner models for an executor on a storage format.
Precision precision_of(Storage s, bool matrix) {
  switch (s) {
    case Storage::f16: return Precision::f16;
    case Storage::bf16: return Precision::bf16;
    case Storage::f32: return matrix ? Precision::tf32 : Precision::f32;
    default: return Precision::f64;
  }
}

// ---- accuracy -----------------------------------------------------------------------

struct Accuracy {
  double relative_l2 = 0;  ///< ||out - ref|| / ||ref|| over the window
  double bound_ratio = 0;  ///< max |out - ref| / (factor * sum |w||in| + floor * max |in|); <= 1 passes
  long overflows     = 0;  ///< points whose exact value the format cannot hold (and that hold +-inf or +-max)
};

/// The largest finite value of a storage format.
double largest_finite(Storage s) {
  switch (s) {
    case Storage::f16: return 65504.0;
    case Storage::bf16: return 0x1.FEp127;
    case Storage::f32: return 0x1.FFFFFEp127;
    default: return std::numeric_limits<double>::max();
  }
}

/// Checks `out` = one application of `stencil` to `in` on a window: at the periodic wrap
/// (the grid's last and first points) or, for executors that pad with zeros, in the middle.
template <int D>
/// `scale_by`: the stencil whose absolute weights scale the bound (t rounded steps: the
/// step's absolute weights fused t times); `stencil`'s own by default.
Accuracy check(const Stencil<D>& stencil, const GridSet& g, const void* in, const void* out, bool at_wrap,
               double factor, double floor, const std::optional<Stencil<D>>& scale_by = std::nullopt) {
  const long side = D == 1 ? 256 : D == 2 ? 32 : 12;
  std::vector<long> origin(D), size(D, side), in_origin(D), in_size(D);
  std::array<int, D> in_extents{};
  for (int a = 0; a < D; ++a) {
    const long w  = std::min(side, g.extents[a]);
    size[a]       = w;
    origin[a]     = at_wrap ? g.extents[a] - w / 2 : g.extents[a] / 2 - w / 2;
    in_origin[a]  = origin[a] - stencil.radius()[a];
    in_size[a]    = w + 2 * stencil.radius()[a];
    in_extents[a] = static_cast<int>(in_size[a]);
  }
  HostGrid<D> input(in_extents), magnitude(in_extents);
  input.values   = window(in, g.storage, g.extents, in_origin, in_size);
  double largest = 0;
  for (std::size_t i = 0; i < input.values.size(); ++i) {
    magnitude.values[i] = std::abs(input.values[i]);
    largest             = std::max(largest, magnitude.values[i]);
  }
  std::vector<Term<D>> absolute = scale_by ? scale_by->terms() : stencil.terms();
  for (Term<D>& t : absolute) t.weight = std::abs(t.weight);
  HostGrid<D> exact(in_extents), scale(in_extents);
  reference_apply(stencil, input, exact, Boundary::interior);
  reference_apply(Stencil<D>(absolute), magnitude, scale, Boundary::interior);
  const std::vector<double> got = window(out, g.storage, g.extents, origin, size);
  double error2 = 0, norm2 = 0, worst = 0;
  long overflows     = 0;
  const double limit = largest_finite(g.storage);
  for (std::size_t flat = 0; flat < got.size(); ++flat) {
    std::array<int, D> p{};
    std::size_t rest = flat;
    for (int a = D - 1; a >= 0; --a) {
      p[a] = static_cast<int>(rest % size[a]) + stencil.radius()[a];
      rest /= size[a];
    }
    // Exact values beyond the format's range (a fused stencil with a large gain) must come
    // out as infinity or the largest value of their sign; they are counted, not compared.
    if (std::abs(exact(p)) > limit) {
      const bool held = (std::isinf(got[flat]) || std::abs(got[flat]) == limit) && (got[flat] > 0) == (exact(p) > 0);
      worst           = std::max(worst, held ? 0.0 : INFINITY);
      ++overflows;
      continue;
    }
    const double diff = got[flat] - exact(p);
    error2 += diff * diff;
    norm2 += exact(p) * exact(p);
    const double bound = factor * scale(p) + floor * largest;
    worst              = std::max(worst, std::isfinite(diff) ? std::abs(diff) / bound : INFINITY);
  }
  return {norm2 > 0 ? std::sqrt(error2 / norm2) : 0.0, worst, overflows};
}

// ---- the run ------------------------------------------------------------------------

class Suite {
 public:
  explicit Suite(Settings s) : m_settings(std::move(s)), m_start(std::chrono::steady_clock::now()) {}

  void run(const Item& item) {
    const double start = elapsed();
    std::visit([&](const auto& s) { run_item(item, s); }, item.stencil);
    m_workloads.push_back({{"group", item.group},
                           {"kernel", name(item.stencil)},
                           {"extents", extents_text(item.extents)},
                           {"storage", to_string(item.storage)},
                           {"seconds", elapsed() - start}});
  }
  bool out_of_time() const { return elapsed() > m_settings.time_limit; }
  int failures() const { return m_failures; }
  json report(const std::string& stopped) const {
    return {{"device", m_device_name}, {"planner_device", m_settings.device},
            {"cudnn", m_cudnn},        {"date", today()},
            {"seconds", elapsed()},    {"stopped_early", stopped},
            {"copies", m_copies},      {"rows", m_rows},
            {"choices", m_choices},    {"workloads", m_workloads}};
  }
  void describe_device(const std::string& name, const std::string& cudnn) {
    m_device_name = name;
    m_cudnn       = cudnn;
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count(); }
  static std::string today() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
    return text;
  }

  /// Copy bandwidth (bytes read + written per second) for grids of this size and format.
  double copy_bandwidth(const GridSet& g) {
    const std::string key = extents_text(g.extents) + " " + to_string(g.storage);
    if (auto it = m_copy.find(key); it != m_copy.end()) return it->second;
    const Kokkos::DefaultExecutionSpace space;
    const double s         = median_seconds(m_settings.warmup, m_settings.repeats, [&](int i) {
      Kokkos::deep_copy(space, g.outputs[i % 2], g.inputs[i % g.inputs.size()]);
    });
    const double bandwidth = 2.0 * g.points * storage_bytes(g.storage) / s;
    m_copy[key]            = bandwidth;
    m_copies.push_back({{"extents", extents_text(g.extents)},
                        {"storage", to_string(g.storage)},
                        {"seconds", s},
                        {"bytes_per_s", bandwidth}});
    return bandwidth;
  }

  GridSet& grids(const Item& item) {
    if (!m_grids || m_grids->storage != item.storage || m_grids->extents != item.extents) {
      m_grids.reset();  // free before allocating the next set
      std::size_t cache = 0;
#if defined(KOKKOS_ENABLE_CUDA)
      int device = 0, l2 = 0;
      cudaGetDevice(&device);
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
      cache = static_cast<std::size_t>(l2);
#endif
      m_grids = std::make_unique<GridSet>(item.storage, item.extents, cache);
    }
    return *m_grids;
  }

  /// The planner's request for an item's stencil and grid (periodic) at depth t.
  PlanRequest request(const Item& item, Precision p, int t) const {
    PlanRequest r;
    r.stencil   = item.stencil;
    r.grid      = item.extents;
    r.precision = p;
    r.device    = m_settings.device;
    r.steps     = t;
    return r;
  }

  /// The model's generic time per step at depth t in the form the row measured (one step;
  /// temporal blocking for t > 1, whether or not the planner would pick that form).
  double predicted_generic_seconds(const Item& item, Precision p, int t) const {
    PlanRequest r = request(item, p, t);
    r.backends    = {"generic"};
    try {
      return generic::predict(r, t > 1).seconds / t;
    } catch (const std::runtime_error&) {
      return 0;  // the model sees no tile that fits (the run found a smaller one): no prediction
    }
  }

  json& add_row(const Item& item, const char* executor, Precision precision, int t) {
    m_rows.push_back({{"group", item.group},
                      {"kernel", name(item.stencil)},
                      {"dims", dimension(item.stencil)},
                      {"extents", extents_text(item.extents)},
                      {"storage", to_string(item.storage)},
                      {"executor", executor},
                      {"precision", sparstencil::to_string(precision)},
                      {"steps", t},
                      {"status", "ok"}});
    return m_rows.back();
  }

  /// Fills a row from a measurement; prints it.
  void finish_row(json& row, const GridSet& g, double launch_seconds, int t, const Accuracy& accuracy,
                  double predicted_step, const std::string& detail) {
    const double roofline =
        m_copy.at(extents_text(g.extents) + " " + to_string(g.storage)) / (2.0 * storage_bytes(g.storage)) / 1e9;
    const double step             = launch_seconds / t;
    row["launch_seconds"]         = launch_seconds;
    row["step_seconds"]           = step;
    row["gstencils"]              = g.points / step / 1e9;
    row["roofline_gstencils"]     = roofline;
    row["percent_roofline"]       = 100.0 * g.points / step / 1e9 / roofline;
    row["relative_l2"]            = accuracy.relative_l2;
    row["bound_ratio"]            = accuracy.bound_ratio;
    row["overflow_points"]        = accuracy.overflows;
    row["predicted_step_seconds"] = predicted_step;
    row["detail"]                 = accuracy.overflows == 0 ? detail
                                                            : detail + "; " + std::to_string(accuracy.overflows) +
                                                  " checked points beyond the format's range (held as inf)";
    if (!(accuracy.bound_ratio <= 1)) {
      row["status"] = "wrong";
      ++m_failures;
    }
    print(row);
  }

  void fail_row(json& row, const std::string& status, const std::string& why) {
    row["status"] = status;
    row["detail"] = why;
    if (status == "error") ++m_failures;
    print(row);
  }

  static void print(const json& r) {
    const std::string name = r["kernel"].get<std::string>() + " " + r["extents"].get<std::string>();
    if (r["status"] == "ok" || r["status"] == "wrong") {
      const double predicted = r["predicted_step_seconds"].get<double>();
      char model[24]         = "     -";
      if (predicted > 0)
        std::snprintf(model, sizeof model, "%+6.0f%%", 100.0 * (predicted / r["step_seconds"].get<double>() - 1));
      std::printf("%-34s %-4s t=%d %-7s %-4s %8.1f GStencil/s %6.1f%% roof  err %.1e (%.2f of bound) model %s  %s%s\n",
                  name.c_str(), r["storage"].get<std::string>().c_str(), r["steps"].get<int>(),
                  r["executor"].get<std::string>().c_str(), r["precision"].get<std::string>().c_str(),
                  r["gstencils"].get<double>(), r["percent_roofline"].get<double>(), r["relative_l2"].get<double>(),
                  r["bound_ratio"].get<double>(), model, r["status"] == "wrong" ? "WRONG " : "",
                  r["detail"].get<std::string>().c_str());
    } else {
      std::printf("%-34s %-4s t=%d %-7s %s: %s\n", name.c_str(), r["storage"].get<std::string>().c_str(),
                  r["steps"].get<int>(), r["executor"].get<std::string>().c_str(),
                  r["status"].get<std::string>().c_str(), r["detail"].get<std::string>().c_str());
    }
    std::fflush(stdout);
  }

  template <int D>
  void run_item(const Item& item, const Stencil<D>& stencil) {
    GridSet& g = grids(item);
    copy_bandwidth(g);
    std::optional<double> generic_step;
    std::map<int, double> sparse_steps, blocked_steps, dense_steps;
    if (item.storage != Storage::bf16) {
      generic_step = run_generic(item, g, stencil, 1);
      // Temporal blocking (slow as it stands, docs/GENERIC.md): every depth in the sweep,
      // the shallowest and deepest on the standard kernels, none on the catalogue, so the
      // whole suite stays within one 10-minute call.
      for (int t : item.steps) {
        const bool deepest = t == item.steps.back(), shallowest = t == 2;
        if (t == 1 || item.group == "catalogue" || (item.group == "standard" && !deepest && !shallowest)) continue;
        if (auto s = run_generic(item, g, stencil, t)) blocked_steps[t] = *s;
      }
    }
#if defined(SUITE_HAS_CUDNN)
    if (item.baselines && item.storage != Storage::bf16) run_cudnn(item, g, stencil);
#endif
#if defined(SUITE_HAS_SPARSE)
    for (int t : item.steps) {
      const Precision p = precision_of(item.storage, true);
      if (auto s = run_matrix<D, cuda_sptc::SparseExecutor>(item, g, "sparse", "cuda_sptc", p, t,
                                                            cuda_sptc::step_error_bound)) {
        sparse_steps[t] = *s;
      }
    }
#endif
#if defined(SUITE_HAS_DENSE)
    // Dense operands: f16, bf16, tf32 (float grids) and f64.
    for (int t : item.steps) {
      const Precision p = precision_of(item.storage, true);
      if (auto s = run_matrix<D, dense::DenseExecutor>(item, g, "dense", "dense", p, t, dense::step_error_bound)) {
        dense_steps[t] = *s;
      }
    }
#endif
    // The planner's choice is measured too where the depths above left it out.
    for (int t : item.steps) {
      if (t > 1 && scored(item) && !blocked_steps.count(t) && choice(item, t).executor == "generic-tb") {
        if (auto s = run_generic(item, g, stencil, t)) blocked_steps[t] = *s;
      }
    }
    record_choices(item, generic_step, blocked_steps, sparse_steps, dense_steps);
  }

  /// The generic executor: one step (t = 1) or t steps in one launch by temporal blocking.
  /// Returns seconds per step.
  template <int D>
  std::optional<double> run_generic(const Item& item, const GridSet& g, const Stencil<D>& stencil, int t) {
    switch (item.storage) {
      case Storage::f16:
        if constexpr (has_distinct_half) return run_generic<D, Kokkos::Experimental::half_t>(item, g, stencil, t);
        return std::nullopt;
      case Storage::f32: return run_generic<D, float>(item, g, stencil, t);
      default: return run_generic<D, double>(item, g, stencil, t);
    }
  }

  template <int D, class T>
  std::optional<double> run_generic(const Item& item, const GridSet& g, const Stencil<D>& stencil, int t) {
    using View = Kokkos::View<typename impl::grid_data<T, D>::type, Kokkos::LayoutRight,
                              Kokkos::DefaultExecutionSpace::memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    auto view  = [&](const void* p) {
      T* data = static_cast<T*>(const_cast<void*>(p));
      if constexpr (D == 1) return View(data, g.extents[0]);
      else if constexpr (D == 2) return View(data, g.extents[0], g.extents[1]);
      else return View(data, g.extents[0], g.extents[1], g.extents[2]);
    };
    const Precision p = precision_of(item.storage, false);
    json& row         = add_row(item, t == 1 ? "generic" : "generic-tb", p, t);
    try {
      Options options;
      options.backend  = "generic";
      options.boundary = Boundary::periodic;
      const Kokkos::DefaultExecutionSpace space;
      // t = 1: apply, one call a sample as an application makes it; t > 1: one
      // temporal-blocking launch from in(i) to out(i), what iterate runs for each full
      // launch (iterate itself may split one launch to keep its handle parity, so the
      // executor is prepared here directly).
      using Steps      = impl::GenericSteps<D, Kokkos::DefaultExecutionSpace, T>;
      const auto steps = std::make_shared<const Steps>(stencil);
      auto input       = [](const View& v) { return impl::as_input(impl::strided_grid(v)); };
      if (t > 1 && steps->fused_depth(input(view(g.in(0))), impl::strided_grid(view(g.out(0))), t, std::nullopt,
                                      options.boundary) != t) {
        fail_row(row, "refused",
                 "temporal blocking of " + std::to_string(t) + " steps: no tile and halo fit team scratch");
        return std::nullopt;
      }
      std::function<void(const View&, const View&)> fused;
      std::string fused_variant;
      if (t > 1) {
        const typename Steps::Launch prepared =
            steps->prepare(space, input(view(g.in(0))), impl::strided_grid(view(g.out(0))), Boundary::periodic, t,
                           std::nullopt, options.generic.tuning);
        fused = [steps, prepared, input](const View& a, const View& b) {
          prepared.run(input(a), impl::strided_grid(b), false);
        };
        fused_variant = prepared.variant;
      }
      auto launch = [&](int i) {
        if (t == 1) return apply(space, stencil, view(g.in(i)), view(g.out(i)), options).variant;
        fused(view(g.in(i)), view(g.out(i)));
        return fused_variant;
      };
      // The first launch tunes the kernel (grids of 2^20 points or more); it is also the checked one.
      const std::string variant = launch(0);
      Kokkos::fence();
      std::vector<Term<D>> absolute = stencil.terms();
      for (Term<D>& term : absolute) term.weight = std::abs(term.weight);
      const Accuracy accuracy =
          check(fuse(stencil, t), g, g.in(0), g.out(0), true, t * step_error_factor<T>(stencil.terms().size()), 0.0,
                std::optional<Stencil<D>>(fuse(Stencil<D>(absolute), t)));
      const double s = median_seconds(m_settings.warmup, m_settings.repeats, [&](int i) { launch(i); });
      finish_row(row, g, s, t, accuracy, predicted_generic_seconds(item, p, t), variant);
      return s / t;
    } catch (const std::exception& e) {
      fail_row(row, "error", e.what());
      return std::nullopt;
    }
  }

#if defined(SUITE_HAS_CUDNN)
  template <int D>
  void run_cudnn(const Item& item, const GridSet& g, const Stencil<D>& stencil) {
    const Precision p = precision_of(item.storage, false);
    json& row         = add_row(item, "cudnn", p, 1);
    try {
      std::vector<int> radius(stencil.radius().begin(), stencil.radius().end());
      std::vector<int> box(D);
      long taps = 1;
      for (int a = 0; a < D; ++a) taps *= (box[a] = 2 * radius[a] + 1);
      std::vector<double> dense(taps, 0.0);
      for (const Term<D>& t : stencil.terms()) {
        long flat = 0;
        for (int a = 0; a < D; ++a) flat = flat * box[a] + t.offset[a] + radius[a];
        dense[flat] = t.weight;
      }
      const CudnnType type      = item.storage == Storage::f16   ? CudnnType::f16
                                  : item.storage == Storage::f32 ? CudnnType::f32
                                                                 : CudnnType::f64;
      const cudaStream_t stream = Kokkos::DefaultExecutionSpace().cuda_stream();
      const CudnnStencil conv(item.extents, radius, dense, type, const_cast<void*>(g.in(0)), g.out(0), stream);
      conv.run(g.in(0), g.out(0));
      Kokkos::fence();
      // cuDNN may pick FFT or Winograd algorithms, whose error is not bounded per point the
      // way a direct sum is: 16 times the direct bound of the storage type.
      const double factor =
          16 * (type == CudnnType::f16   ? step_error_factor<Kokkos::Experimental::half_t>(stencil.terms().size())
                : type == CudnnType::f32 ? step_error_factor<float>(stencil.terms().size())
                                         : step_error_factor<double>(stencil.terms().size()));
      const Accuracy accuracy = check(stencil, g, g.in(0), g.out(0), false, factor, 0.0);
      const double s =
          median_seconds(m_settings.warmup, m_settings.repeats, [&](int i) { conv.run(g.in(i), g.out(i)); });
      finish_row(row, g, s, 1, accuracy, 0.0, conv.describe());
    } catch (const std::exception& e) {
      fail_row(row, "error", e.what());
    }
  }
#endif

#if defined(SUITE_HAS_SPARSE) || defined(SUITE_HAS_DENSE)
  /// A matrix-core executor (sparse or dense tensor cores) on the plan its backend makes
  /// for the item at depth t: one launch from in(i) to out(i). Returns seconds per step.
  template <int D, class Executor>
  std::optional<double> run_matrix(const Item& item, const GridSet& g, const char* executor_name, const char* backend,
                                   Precision p, int t, ErrorBound (*step_bound)(Precision, std::size_t)) {
    json& row = add_row(item, executor_name, p, t);
    Plan plan;
    try {
      PlanRequest r = request(item, p, t);
      r.backends    = {backend};
      plan          = make_plan(r);
    } catch (const std::exception& e) {
      fail_row(row, "refused", e.what());  // the planner cannot make such a plan: expected for some
      return std::nullopt;
    }
    try {
      const Executor executor(plan);
      const cudaStream_t stream = Kokkos::DefaultExecutionSpace().cuda_stream();
      executor.apply(g.in(0), g.out(0), stream);
      Kokkos::fence();
      const ErrorBound bound  = step_bound(p, as<D>(plan.stencil).terms().size());
      const Accuracy accuracy = check(as<D>(plan.stencil), g, g.in(0), g.out(0), true, bound.factor, bound.floor);
      const double s          = median_seconds(m_settings.warmup, m_settings.repeats,
                                               [&](int i) { executor.apply(g.in(i), g.out(i), stream); });
      finish_row(row, g, s, t, accuracy, plan.predicted.seconds / t,
                 "tile " + impl::tuple_string(plan.tile) + ", " + executor.describe());
      return s / t;
    } catch (const std::exception& e) {
      fail_row(row, "error", e.what());
      return std::nullopt;
    }
  }
#endif

  /// The planner's automatic choice against the measured executors, on the grids where it
  /// has one to make: f16 (generic, sparse and dense tensor cores) and f64 (generic, dense).
  /// float grids stay on the generic executor unless tf32 is asked for; bf16 grids are not
  /// scored, as the suite does not run the generic executor on them. For every depth t the
  /// generic executor's two forms (t single steps, "generic"; one launch by temporal
  /// blocking, "generic-tb") and the matrix-core executors are candidates; the planner's
  /// choice names one of them.
  static bool scored(const Item& item) { return item.storage == Storage::f16 || item.storage == Storage::f64; }

  /// The planner's automatic choice at depth t, named as the suite's rows name executors.
  struct Choice {
    std::string executor = "generic", note;
  };
  Choice choice(const Item& item, int t) const {
    Choice c;
    try {
      const Plan plan = make_plan(request(item, precision_of(item.storage, false), t));
      c.executor      = plan.backend != "generic"          ? plan.backend
                        : plan.predicted.temporal_blocking ? "generic-tb"
                                                           : "generic";
    } catch (const std::exception& e) {
      c.note = e.what();
    }
    return c;
  }

  void record_choices(const Item& item, std::optional<double> generic_step, const std::map<int, double>& blocked,
                      const std::map<int, double>& sparse, const std::map<int, double>& dense) {
    if (!scored(item)) return;
    for (int t : item.steps) {
      json c = {{"group", item.group},
                {"kernel", name(item.stencil)},
                {"extents", extents_text(item.extents)},
                {"storage", to_string(item.storage)},
                {"steps", t}};
      std::map<std::string, double> measured;
      if (generic_step) measured["generic"] = *generic_step;
      if (blocked.count(t)) measured["generic-tb"] = blocked.at(t);
      if (sparse.count(t)) measured["cuda_sptc"] = sparse.at(t);
      if (dense.count(t)) measured["dense"] = dense.at(t);
      if (measured.empty()) continue;
      const Choice planned      = choice(item, t);
      const std::string& chosen = planned.executor;
      if (!planned.note.empty()) c["note"] = planned.note;
      const auto fastest   = std::min_element(measured.begin(), measured.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
      c["chosen"]          = chosen;
      c["fastest"]         = fastest->first;
      c["measured"]        = measured;
      c["chosen_measured"] = measured.count(chosen) > 0;
      c["within_10"]       = measured.count(chosen) > 0 && measured.at(chosen) <= 1.1 * fastest->second;
      m_choices.push_back(c);
    }
  }

  Settings m_settings;
  std::chrono::steady_clock::time_point m_start;
  std::unique_ptr<GridSet> m_grids;
  std::map<std::string, double> m_copy;
  json m_copies = json::array(), m_rows = json::array(), m_choices = json::array(), m_workloads = json::array();
  std::string m_device_name = Kokkos::DefaultExecutionSpace::name(), m_cudnn = "not built";
  int m_failures = 0;
};

// ---- the cases ----------------------------------------------------------------------

std::vector<Item> make_items(const Settings& s) {
  const bool gpu = !std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>;
  std::vector<Storage> storages;
  if (has_distinct_half) storages.push_back(Storage::f16);
  if (gpu) storages.push_back(Storage::bf16);
  storages.push_back(Storage::f32);
  storages.push_back(Storage::f64);
  auto wanted = [&](const std::string& group, const AnyStencil& st) {
    return std::find(s.groups.begin(), s.groups.end(), group) != s.groups.end() &&
           (s.filters.empty() || std::any_of(s.filters.begin(), s.filters.end(), [&](const std::string& f) {
              return name(st).find(f) != std::string::npos;
            }));
  };
  auto grid = [&](int dims) { return problem_extents(dims, s.paper_sizes); };
  std::vector<Item> items;
  // The standard kernels and SPIDER's 15 x 15 box, every format, fused too.
  std::vector<AnyStencil> standard = presets::standard_set();
  standard.push_back(box(2, 7));
  for (const AnyStencil& st : standard) {
    if (!wanted("standard", st)) continue;
    for (Storage f : storages) items.push_back({"standard", st, grid(dimension(st)), f, s.steps});
  }
  // 3-D at 1024^3 too: every format fits an 80 GB device (f64: 6 grids of 8.6 GB).
  if (s.large && s.paper_sizes && gpu) {
    for (const AnyStencil& st : standard) {
      if (dimension(st) == 3 && wanted("standard", st)) {
        // cuDNN's f32 and f64 3-D convolutions take seconds a step here: measured at 512^3 only.
        for (Storage f : storages) {
          items.push_back({"standard", st, {1024, 1024, 1024}, f, s.steps, f == Storage::f16});
        }
      }
    }
  }
  // The sweet-spot sweep: 2-D stars and boxes, radius 1 to 7, fusion 1 to 8, f16.
  if (has_distinct_half) {
    std::vector<int> depths;
    for (int t = 1; t <= s.sweep_max_steps; ++t) depths.push_back(t);
    for (int r = 1; r <= s.sweep_max_radius; ++r) {
      for (const AnyStencil& st : {star(2, r), box(2, r)}) {
        if (wanted("sweep", st)) items.push_back({"sweep", st, grid(2), Storage::f16, depths, false});
      }
    }
  }
  // The catalogue at one 2-D and one 3-D size, 4096^2 and 256^3 (16.8 million points, enough
  // to fill the device, a sixth of the standard sizes' time); 1-D entries at the 1-D size.
  const bool catalogue = std::find(s.groups.begin(), s.groups.end(), "catalogue") != s.groups.end();
  const std::vector<CatalogueEntry> entries =
      !catalogue ? std::vector<CatalogueEntry>{}
                 : load_catalogue(s.catalogue_path.empty() ? reference_catalogue_path() : s.catalogue_path);
  for (const CatalogueEntry& e : entries) {
    if (!wanted("catalogue", e.stencil)) continue;
    const int dims            = dimension(e.stencil);
    std::vector<long> extents = grid(dims);
    if (s.paper_sizes && dims > 1) extents.assign(dims, dims == 2 ? 4096 : 256);
    for (Storage f : storages) {
      if (f != Storage::bf16) items.push_back({"catalogue", e.stencil, extents, f, s.catalogue_steps});
    }
  }
  return items;
}

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) out.push_back(std::stoi(part));
  return out;
}

/// The summary: per standard kernel and format, single step and best fused.
void print_summary(const json& report) {
  std::printf("\n== summary (GStencil/s per original step, %% of the same-run copy roofline)\n");
  std::printf("%-26s %-4s %14s %14s %14s %14s %15s %14s %9s\n", "kernel", "fmt", "generic", "cudnn", "sparse t=1",
              "sparse best", "generic-tb best", "dense t=1", "vs cudnn");
  struct Entry {
    const json *generic = nullptr, *cudnn = nullptr, *sparse1 = nullptr, *fused = nullptr, *blocked = nullptr,
               *dense1 = nullptr;
  };
  std::map<std::string, Entry> table;
  std::vector<std::string> order;
  auto rate = [](const json* r) { return r ? (*r)["gstencils"].get<double>() : 0.0; };
  for (const json& r : report["rows"]) {
    if (r["group"] != "standard" || r["status"] != "ok") continue;
    const std::string key =
        r["kernel"].get<std::string>() + " " + r["extents"].get<std::string>() + "|" + r["storage"].get<std::string>();
    if (!table.count(key)) order.push_back(key);
    Entry& e = table[key];
    if (r["executor"] == "generic") e.generic = &r;
    if (r["executor"] == "cudnn") e.cudnn = &r;
    if (r["executor"] == "sparse" && r["steps"] == 1) e.sparse1 = &r;
    if (r["executor"] == "sparse" && rate(&r) > rate(e.fused)) e.fused = &r;
    if (r["executor"] == "generic-tb" && rate(&r) > rate(e.blocked)) e.blocked = &r;
    if (r["executor"] == "dense" && r["steps"] == 1) e.dense1 = &r;
  }
  auto cell = [](const json* r) {
    if (!r) return std::string("-");
    char text[40];
    std::snprintf(text, sizeof text, "%.0f (%.0f%%)", (*r)["gstencils"].get<double>(),
                  (*r)["percent_roofline"].get<double>());
    return std::string(text);
  };
  for (const std::string& key : order) {
    const Entry& e = table[key];
    char ratio[16] = "-", fused[40] = "-", blocked[40] = "-";
    // Ours at one step in the same precision: tf32 (the matrix executors on f32 grids) is not f32.
    const bool f32      = key.substr(key.find('|') + 1) == "f32";
    const double single = std::max({rate(e.generic), f32 ? 0.0 : rate(e.sparse1), f32 ? 0.0 : rate(e.dense1)});
    if (e.cudnn && single > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", single / rate(e.cudnn));
    if (e.fused) std::snprintf(fused, sizeof fused, "%.0f (t=%d)", rate(e.fused), (*e.fused)["steps"].get<int>());
    if (e.blocked) {
      std::snprintf(blocked, sizeof blocked, "%.0f (t=%d)", rate(e.blocked), (*e.blocked)["steps"].get<int>());
    }
    std::printf("%-26s %-4s %14s %14s %14s %14s %15s %14s %9s\n", key.substr(0, key.find('|')).c_str(),
                key.substr(key.find('|') + 1).c_str(), cell(e.generic).c_str(), cell(e.cudnn).c_str(),
                cell(e.sparse1).c_str(), fused, blocked, cell(e.dense1).c_str(), ratio);
  }
  // The cost model: median |predicted - measured| / measured; the automatic choice.
  std::vector<double> errors;
  for (const json& r : report["rows"]) {
    if (r["status"] == "ok" && r["executor"] != "cudnn") {
      errors.push_back(std::abs(r["predicted_step_seconds"].get<double>() / r["step_seconds"].get<double>() - 1));
    }
  }
  // Scored by format, and over the cases where the dense executor was measured.
  std::map<std::string, std::pair<int, int>> scores;  // label -> (within 10%, cases)
  for (const json& c : report["choices"]) {
    const bool within = c["within_10"].get<bool>();
    for (const std::string& label : {c["storage"].get<std::string>() + " grids", std::string("all")}) {
      scores[label].first += within;
      ++scores[label].second;
    }
    if (c["measured"].contains("dense")) {
      scores["with dense measured"].first += within;
      ++scores["with dense measured"].second;
    }
  }
  if (!errors.empty()) {
    std::nth_element(errors.begin(), errors.begin() + errors.size() / 2, errors.end());
    std::printf("cost model: median error %.1f%% over %zu measured cases\n", 100 * errors[errors.size() / 2],
                errors.size());
  }
  for (const auto& [label, score] : scores) {
    std::printf("automatic choice within 10%% of the fastest measured, %s: %d of %d cases\n", label.c_str(),
                score.first, score.second);
  }
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  Settings s;
  CLI::App app{"SparStencil benchmark suite"};
  std::string sizes = s.paper_sizes ? "paper" : "small", groups = "standard,catalogue,sweep", steps = "1,2,3,4,7",
              catalogue_steps = "1,3";
  app.add_option("--sizes", sizes, "paper (1-D 10,240,000; 2-D 10240^2; 3-D 512^3 and 1024^3) or small")
      ->check(CLI::IsMember({"paper", "small"}));
  app.add_option("--groups", groups, "comma-separated: standard, catalogue, sweep");
  app.add_option("--filter", s.filters, "only kernels whose name contains one of these texts (comma-separated)")
      ->delimiter(',');
  app.add_option("--steps", steps, "fusion depths of the standard kernels");
  app.add_option("--catalogue-steps", catalogue_steps, "fusion depths of the catalogue stencils");
  app.add_option("--catalogue", s.catalogue_path, "stencil catalogue (JSON; default: the reference catalogue)");
  app.add_option("--repeats", s.repeats, "timed runs per case (median)")->check(CLI::Range(1, 1000));
  app.add_option("--warmup", s.warmup, "untimed runs before them")->check(CLI::Range(0, 1000));
  app.add_option("--time-limit", s.time_limit, "start no new case after this many seconds");
  app.add_option("--json", s.json_path, "write every measurement here");
  app.add_flag("!--no-large", s.large, "skip the 1024^3 grids");
  CLI11_PARSE(app, argc, argv);
  s.paper_sizes     = sizes == "paper";
  s.steps           = parse_list(steps);
  s.catalogue_steps = parse_list(catalogue_steps);
  s.groups.clear();
  {
    std::stringstream in(groups);
    for (std::string g; std::getline(in, g, ',');) {
      if (g != "standard" && g != "catalogue" && g != "sweep") {
        std::fprintf(stderr, "sparstencil_bench_suite: unknown group '%s' (standard, catalogue, sweep)\n", g.c_str());
        return 2;
      }
      s.groups.push_back(g);
    }
  }
  std::string cudnn = "not built", device_name = Kokkos::DefaultExecutionSpace::name();
#if defined(SUITE_HAS_CUDNN)
  cudnn = cudnn_version();
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  {
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
      std::fprintf(stderr, "sparstencil_bench_suite: no CUDA device\n");
      return 2;
    }
    s.device    = cuda_device_name(prop.major, prop.name);
    device_name = prop.name;
  }
#endif
  Suite suite(s);
  suite.describe_device(device_name, cudnn);
#if !defined(SUITE_HAS_SPARSE)
  std::printf("sparse executor: not in this build (needs Kokkos with CUDA); generic executor only\n");
#endif
#if !defined(SUITE_HAS_DENSE)
  std::printf("dense executor: not in this build (needs Kokkos with CUDA)\n");
#endif
#if !defined(SUITE_HAS_CUDNN)
  std::printf("cuDNN baseline: not in this build (needs Kokkos with CUDA and cuDNN)\n");
#endif
  std::vector<Item> items;
  try {
    items = make_items(s);
  } catch (const std::exception& e) {  // a catalogue missing or malformed
    std::fprintf(stderr, "sparstencil_bench_suite: %s\n", e.what());
    return 2;
  }
  std::printf("suite: %zu workloads, planner device %s, cuDNN %s\n", items.size(), s.device.c_str(), cudnn.c_str());
  std::string stopped;
  auto save = [&] {
    if (s.json_path.empty()) return;
    std::ofstream(s.json_path) << suite.report(stopped).dump(1) << "\n";
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (suite.out_of_time()) {
      stopped = "time limit reached after " + std::to_string(i) + " of " + std::to_string(items.size()) + " workloads";
      std::printf("suite: %s\n", stopped.c_str());
      break;
    }
    suite.run(items[i]);
    save();
  }
  save();
  const json report = suite.report(stopped);
  print_summary(report);
  std::printf("suite: %d failures (wrong results or errors)%s\n", suite.failures(),
              stopped.empty() ? "" : ", stopped early");
  return suite.failures() == 0 ? 0 : 1;
}
