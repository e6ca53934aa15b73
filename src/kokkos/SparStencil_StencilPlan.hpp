#pragma once
/// A stencil plan a user holds (kokkos-fft's and cuDNN's style): made once from the
/// execution space, the stencil, the Views (their extents, strides, layout and memory
/// space) and the options, it plans, tunes, builds the executor and uploads its tables;
/// then apply and iterate only launch.
///
///   sparstencil::StencilPlan plan(space, stencil, in, out, options);
///   plan.apply(in, out);              // one step, microseconds of host work
///   plan.iterate(a, b, 1000);         // ping-pong; on CUDA recorded once as a CUDA graph
///   std::cout << plan.explain();      // every backend's bid and why the winner won
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "SparStencil_Dispatch.hpp"
#include "SparStencil_Profiling.hpp"
#include "SparStencil_RecordedLaunches.hpp"
#include "SparStencil_RunReport.hpp"

/// A deleted function whose use says why, where the compiler takes a reason (C++26);
/// elsewhere the compiler's note shows this declaration's line, the reason on it.
#if defined(__cpp_deleted_function) && __cpp_deleted_function >= 202403L
#define SPARSTENCIL_DELETED(why) = delete (why)
#else
#define SPARSTENCIL_DELETED(why) = delete
#endif

namespace sparstencil {

namespace impl {

/// Who made a plan, for its error messages.
struct Caller {
  const char* function;
};

}  // namespace impl

template <class ExecSpace, class InView, class OutView = InView>
class StencilPlan {
 public:
  static constexpr int D = static_cast<int>(OutView::rank);

  /// Plans one step of `stencil` from Views like `in` to Views like `out` (their extents
  /// and strides; the Views themselves are read only by the tuning launches, which write
  /// `out`). Throws std::runtime_error naming the problem for bad Views or options.
  StencilPlan(const ExecSpace& space, const Stencil<D>& stencil, const InView& in, const OutView& out,
              const Options& options = {})
      : StencilPlan(impl::Caller{"StencilPlan"}, space, stencil, in, out, options) {}

  /// The same, errors naming `caller.function` (apply and iterate make their plans so).
  StencilPlan(impl::Caller caller, const ExecSpace& space, const Stencil<D>& stencil, const InView& in,
              const OutView& out, const Options& options)
      : m_space(space), m_stencil(stencil), m_options(options), m_caller(caller.function) {
    impl::check_view_types<D, ExecSpace, InView, OutView>();
    if (!Kokkos::is_initialized()) impl::fail(caller.function, "Kokkos is not initialized");
    impl::check_extents(caller.function, stencil, in, out);
    impl::check_no_overlap(caller.function, in, out);
    if (options.fusion < 0) {
      impl::fail(caller.function, "fusion ", options.fusion, " must be 0 (automatic) or a step count >= 1");
    }
    for (int a = 0; a < D; ++a) {
      m_extent[a]     = in.extent(a);
      m_in_stride[a]  = in.stride(a);
      m_out_stride[a] = out.stride(a);
    }
    m_request = impl::request_for<D, ExecSpace, InView, OutView>(caller.function, space, stencil, in, out, options);
    m_single  = &stage(1, in, out);
  }

  /// A plan owns its executor's device tables and recorded graphs: it moves, it does not
  /// copy (share one by reference or std::shared_ptr). A moved-from plan throws on use.
  // Before C++26 the message reaches the user only as the source line the compiler quotes
  // ("declared here"): it must begin on the declaring line.
  // clang-format off
  StencilPlan(const StencilPlan&) SPARSTENCIL_DELETED("sparstencil: a StencilPlan cannot be copied (it owns device "
                                                     "tables); move it, or share it by reference or std::shared_ptr");
  // clang-format on
  StencilPlan& operator=(const StencilPlan&) SPARSTENCIL_DELETED(
      "sparstencil: a StencilPlan cannot be copied (it owns device tables); move it, or share it by reference or "
      "std::shared_ptr");
  StencilPlan(StencilPlan&&)            = default;
  StencilPlan& operator=(StencilPlan&&) = default;

  /// After Kokkos::finalize a plan's device memory cannot be freed any more (Kokkos aborts
  /// on such a deallocation): it is left to the process's exit, with a warning.
  ~StencilPlan() {
    // (Made while Kokkos was initialised: not initialised now means finalised. Kokkos 3
    // has no is_finalized.)
    if (Kokkos::is_initialized() || m_stages.empty()) return;
    std::fprintf(stderr,
                 "sparstencil: warning: a StencilPlan outlived Kokkos::finalize; its device memory is left to "
                 "the process's exit (destroy plans before finalize)\n");
    for (auto& [depth, s] : m_stages) (void)s->launcher.release();
  }

  /// A plan for a stencil whose dimension is known at run time: it must equal the rank.
  StencilPlan(const ExecSpace& space, const AnyStencil& stencil, const InView& in, const OutView& out,
              const Options& options = {})
      : StencilPlan(space, impl::of_rank<D>("StencilPlan", stencil), in, out, options) {}

  /// One step: out = stencil(in) under the plan's boundary, on the plan's space, without
  /// fencing. The Views must have the extents and strides the plan was made for.
  template <class In, class Out>
  const RunReport& apply(const In& in, const Out& out) const {
    impl::check_plan_view_types<In, Out, InView, OutView>();
    const InView& from = in;
    const OutView& to  = out;
    check("StencilPlan::apply", from, to);
    const impl::ProfilingRegion region(single().apply_region);
    if (!replay_recorded_step(from, to)) single().launcher->launch(m_space, from, to);
    return single().report;
  }

  /// `steps` steps ping-ponging between a and b, Options::fusion steps a launch (0: the
  /// planner's choice). On return `a` holds the final field and `b` the one a launch
  /// before it: when the launch count is odd the two View handles are swapped. With
  /// Boundary::interior the rim of each buffer keeps whatever it held, so give both the
  /// same rim (for example b = copy of a). steps = 0 does nothing. On CUDA, runs of
  /// launches the backend can record are recorded once as a CUDA graph and replayed.
  template <class View>
  RunReport iterate(View& a, View& b, int steps) {
    impl::check_plan_view_types<View, View, InView, OutView>();
    static_assert(std::is_same_v<InView, OutView>,
                  "sparstencil: iterate swaps in and out: it needs a plan whose in and out View types are one");
    static_assert(std::is_same_v<View, InView>,
                  "sparstencil: iterate swaps the two View handles: they must be of the plan's View type");
    if (steps < 0) impl::fail("iterate", "step count ", steps, " is negative");
    check("iterate", a, b);
    for (int k = 0; k < D; ++k) {
      if (m_in_stride[k] != m_out_stride[k]) {
        impl::fail("iterate", "the plan's in and out Views have different strides (", impl::tuple_string(m_in_stride),
                   " vs ", impl::tuple_string(m_out_stride), "): iterate swaps them");
      }
    }
    if (steps == 0) {
      RunReport r = single().report;
      r.steps     = 0;
      return r;
    }
    const Schedule& launches = schedule(steps, a, b);
    const StageData& main    = *launches.main;  // its full launches
    const impl::ProfilingRegion region(main.iterate_region);
    std::size_t next = replay_recorded(launches, a, b);
    for (; next < launches.size(); ++next) {
      launch_in_run(*launches.at(next).launcher, next, a, b);
      std::swap(a, b);
    }
    RunReport r        = main.report;
    r.steps            = steps;
    r.steps_per_launch = main.steps;
    return r;
  }

  /// The steps of each launch iterate(in, out, steps) makes, at most `most_per_launch` a
  /// launch where that is > 0 (a caller launching them one by one, as distributed plans
  /// do, replays this list through launch()). Builds the stages they need.
  LaunchSteps launch_steps(int steps, const InView& in, const OutView& out, int most_per_launch = 0) {
    if (steps < 0) impl::fail("StencilPlan::launch_steps", "step count ", steps, " is negative");
    check("StencilPlan::launch_steps", in, out);
    LaunchSteps counts;
    if (steps == 0) return counts;
    const Schedule& s = schedule(steps, in, out, most_per_launch);
    counts.depth      = s.main->steps;
    counts.repeats    = s.repeats;
    for (const StageData* t : s.tail) counts.rest.push_back(t->steps);
    return counts;
  }

  /// One launch of `steps` steps (fused where the plan fuses that deep) from in to out, on
  /// the plan's space, without fencing; `steps` must be a count launch_steps gave.
  template <class In, class Out>
  void launch(const In& in, const Out& out, int steps) {
    impl::check_plan_view_types<In, Out, InView, OutView>();
    const InView& from = in;
    const OutView& to  = out;
    const StageData& s = launch_stage("StencilPlan::launch", from, to, steps);
    const impl::ProfilingRegion region(s.iterate_region);
    s.launcher->launch(m_space, from, to);
  }

  /// Plans and builds what launch(in, out, steps) runs, without launching; throws where
  /// the plan cannot run `steps` steps a launch on these Views.
  void prepare_launch(const InView& in, const OutView& out, int steps) {
    (void)launch_stage("StencilPlan::prepare_launch", in, out, steps);
  }

  /// The plan of one step: its backend, its part, every bid (explain()).
  const Plan& plan() const { return single().plan; }
  std::string explain() const { return sparstencil::explain(single().plan); }
  /// What apply runs.
  const RunReport& report() const { return single().report; }
  const ExecSpace& space() const { return m_space; }

 private:
  struct StageData {
    Plan plan;
    std::unique_ptr<Launcher<ExecSpace, InView, OutView>> launcher;
    int steps = 1;  ///< steps one launch runs
    RunReport report;
    std::string apply_region, iterate_region;
  };

  ExecSpace m_space;
  Stencil<D> m_stencil;
  Options m_options;
  const char* m_caller;  ///< what made the plan, for errors from planning
  PlanRequest m_request;
  std::size_t m_extent[D], m_in_stride[D], m_out_stride[D];
  /// Stages by the depth asked for (a stage may run fewer steps a launch: StageData::steps).
  std::map<int, std::unique_ptr<StageData>> m_stages;
  /// A pointer a move leaves null behind it (the stages it points into move with it).
  struct MovedWith {
    const StageData* stage = nullptr;
    MovedWith()            = default;
    MovedWith(const StageData* s) : stage(s) {}
    MovedWith(MovedWith&& other) noexcept : stage(std::exchange(other.stage, nullptr)) {}
    MovedWith& operator=(MovedWith&& other) noexcept {
      stage = std::exchange(other.stage, nullptr);
      return *this;
    }
  };
  MovedWith m_single;  ///< the stage apply runs
  /// Plans of each fusion depth the automatic choice weighed, kept for their stages.
  std::map<int, Plan> m_plans;
  std::map<int, int> m_chosen_depth;  ///< automatic fusion: min(steps, 8) -> depth
  /// Launches of a run in constant memory: `repeats` of `main`, then those of `tail`.
  struct Schedule {
    int steps = -1, depth = 0;
    const StageData* main = nullptr;
    std::size_t repeats   = 0;
    std::vector<const StageData*> tail;
    std::size_t size() const { return repeats + tail.size(); }
    const StageData& at(std::size_t n) const { return n < repeats ? *main : *tail[n - repeats]; }
  } m_schedule;
#if defined(KOKKOS_ENABLE_CUDA)
  static constexpr int recorded_launches           = 16;  ///< launches in one graph (an even count)
  static constexpr std::size_t recorded_runs_kept  = 4;   ///< iterate's graphs kept (buffer pairs x stages)
  static constexpr std::size_t recorded_steps_kept = 8;   ///< apply's recorded steps kept
  impl::RecordedCache<StageData> m_recorded{recorded_runs_kept};
  /// apply's recorded steps by (in, out) data, the latest few.
  mutable impl::RecordedCache<StageData> m_recorded_steps{recorded_steps_kept};
  mutable std::size_t m_step_recordings = 0;
  mutable bool m_step_unrecordable      = false;
#endif

  /// The stage apply runs; throws where the plan was moved from.
  const StageData& single() const {
    if (!m_single.stage) impl::fail(m_caller, "this plan was moved from; use the plan it was moved to");
    return *m_single.stage;
  }

  void check(const char* function, const InView& in, const OutView& out) const {
    if (!m_single.stage) impl::fail(function, "this plan was moved from; use the plan it was moved to");
    if (!Kokkos::is_initialized()) {
      impl::fail(function, "Kokkos is not initialized (finalized after the plan was made?): the plan cannot run");
    }
    for (int k = 0; k < D; ++k) {
      if (in.extent(k) != m_extent[k] || out.extent(k) != m_extent[k]) {
        impl::fail(function, "Views of extents ", impl::extents_string(in), " and ", impl::extents_string(out),
                   " for a plan made for ", impl::tuple_string(m_extent));
      }
    }
    for (int k = 0; k < D; ++k) {
      if (in.stride(k) != m_in_stride[k] || out.stride(k) != m_out_stride[k]) {
        impl::fail(function, "Views of strides ", impl::strides_string(in), " and ", impl::strides_string(out),
                   " for a plan made for ", impl::tuple_string(m_in_stride), " and ", impl::tuple_string(m_out_stride));
      }
    }
    impl::check_no_overlap(function, in, out);
  }

  const StageData& launch_stage(const char* function, const InView& in, const OutView& out, int steps) {
    check(function, in, out);
    if (steps < 1) impl::fail(function, "step count ", steps, " must be at least 1");
    const StageData& s = stage(steps, in, out);
    if (s.steps != steps) {
      impl::fail(function, "the ", s.plan.backend, " backend runs at most ", s.steps, " steps a launch here, not ",
                 steps);
    }
    return s;
  }

  /// The plan of `depth` steps a launch (the planner's, made once, or held as wisdom).
  const Plan& plan_of(int depth) {
    auto it = m_plans.find(depth);
    if (it == m_plans.end()) {
      PlanRequest r = m_request;
      r.steps       = depth;
      try {
        it = m_plans.emplace(depth, impl::wise_plan(r)).first;
      } catch (const std::runtime_error& e) {  // name what the user called
        const std::string what = e.what(), prefix = "sparstencil::";
        impl::fail(m_caller, what.compare(0, prefix.size(), prefix) == 0 ? what.substr(prefix.size()) : what);
      }
    }
    return it->second;
  }

  /// The stage for launches of up to `depth` steps: the plan's backend builds its launcher
  /// (uploads, tuning), which runs `steps` <= depth steps a launch.
  const StageData& stage(int depth, const InView& in, const OutView& out) {
    if (auto it = m_stages.find(depth); it != m_stages.end()) return *it->second;
    auto s            = std::make_unique<StageData>();
    s->plan           = plan_of(depth);
    const bool forced = m_options.fusion > 0;
    impl::with_backend<ExecSpace, InView, OutView>(s->plan.backend, [&](auto trait) {
      using Trait = decltype(trait);
      s->steps    = Trait::steps_per_launch(m_space, s->plan, m_stencil, in, out, m_options, forced);
    });
    if (s->steps < depth) {  // the backend runs fewer steps a launch: that depth's stage
      const StageData& fewer = stage(s->steps, in, out);
      return *m_stages.emplace(depth, std::make_unique<StageData>(copy_of(fewer))).first->second;
    }
    impl::with_backend<ExecSpace, InView, OutView>(s->plan.backend, [&](auto trait) {
      using Trait = decltype(trait);
      s->launcher =
          Trait::template launcher<ExecSpace, InView, OutView, D>(m_space, s->plan, m_stencil, in, out, m_options);
    });
    s->report         = {s->plan.backend,  ExecSpace::name(), 1, s->launcher->describe(), s->steps, s->plan.warnings,
                         s->plan.boundary, s->plan.precision};
    s->apply_region   = "sparstencil::apply[" + s->plan.backend + "]";
    s->iterate_region = "sparstencil::iterate[" + s->plan.backend + "]";
    return *m_stages.emplace(depth, std::move(s)).first->second;
  }

  /// A stage standing for another: shares nothing but what it reads (the launcher is the
  /// other stage's, which outlives it in m_stages).
  StageData copy_of(const StageData& other) {
    StageData s;
    s.plan           = other.plan;
    s.steps          = other.steps;
    s.report         = other.report;
    s.apply_region   = other.apply_region;
    s.iterate_region = other.iterate_region;
    s.launcher       = std::make_unique<Alias>(*other.launcher);
    return s;
  }
  class Alias final : public Launcher<ExecSpace, InView, OutView> {
   public:
    explicit Alias(const Launcher<ExecSpace, InView, OutView>& to) : m_to(to) {}
    void launch(const ExecSpace& space, const InView& in, const OutView& out) const override {
      m_to.launch(space, in, out);
    }
    void launch_rim_held(const ExecSpace& space, const InView& in, const OutView& out) const override {
      m_to.launch_rim_held(space, in, out);
    }
    std::string describe() const override { return m_to.describe(); }
    bool capturable() const override { return m_to.capturable(); }

   private:
    const Launcher<ExecSpace, InView, OutView>& m_to;
  };

  /// Steps a launch for `steps` steps: Options::fusion, or the depth (1 to 8) whose plan
  /// is predicted fastest per step, where the device has a model of its own (GPUs).
  int fusion_for(int steps) {
    if (m_options.fusion > 0) return std::min(m_options.fusion, steps);
    if (steps <= 1 || !device_description(m_request.device).gpu) return 1;
    const int most = std::min(steps, 8);
    if (auto it = m_chosen_depth.find(most); it != m_chosen_depth.end()) return it->second;
    int best            = 1;
    double best_seconds = plan_of(1).predicted.seconds;
    for (int t = 2; t <= most; ++t) {
      double seconds = INFINITY;
      try {
        seconds = plan_of(t).predicted.seconds / t;
      } catch (const std::runtime_error&) {
        continue;  // t x radius too wide for the grid
      }
      if (seconds < 0.98 * best_seconds) {  // a deeper fusion must gain more than noise
        best_seconds = seconds;
        best         = t;
      }
    }
    return m_chosen_depth.emplace(most, best).first->second;
  }

  /// The launches of `steps` steps: stages of the fusion depth, then the rest; their count
  /// has the parity of the stages' steps' sum where a split makes that possible. Held in
  /// constant memory: the full launches as a count.
  const Schedule& schedule(int steps, const InView& a, const OutView& b, int most = 0) {
    const int depth = most > 0 ? std::min(most, fusion_for(steps)) : fusion_for(steps);
    if (m_schedule.steps == steps && m_schedule.depth == depth) return m_schedule;
    Schedule s;
    s.steps     = steps;
    s.depth     = depth;
    s.main      = &stage(depth, a, b);  // depth <= steps
    const int m = s.main->steps;
    s.repeats   = static_cast<std::size_t>((steps - depth) / m + 1);  // launches while depth steps are left
    int left    = steps - static_cast<int>(s.repeats) * m;
    while (left > 0) {  // fewer than depth steps: at most depth - 1 launches
      const StageData& t = stage(left, a, b);
      s.tail.push_back(&t);
      left -= t.steps;
    }
    if ((static_cast<long long>(s.size()) - steps) % 2 != 0) {  // split the last launch of several steps
      bool split = false;
      for (std::size_t k = s.tail.size(); k-- > 0 && !split;) {
        const int n = s.tail[k]->steps;
        if (n > 1 && stage(n - 1, a, b).steps == n - 1) {
          s.tail[k] = &stage(n - 1, a, b);
          s.tail.insert(s.tail.begin() + static_cast<long>(k) + 1, &stage(1, a, b));
          split = true;
        }
      }
      if (!split && m > 1 && stage(m - 1, a, b).steps == m - 1) {  // the last full launch
        --s.repeats;
        s.tail.insert(s.tail.begin(), {&stage(m - 1, a, b), &stage(1, a, b)});
      }
    }
    m_schedule = std::move(s);
    return m_schedule;
  }

  /// apply on CUDA: the step recorded once per (in, out) as a CUDA graph and replayed
  /// (Options::cuda_graphs): one submission whatever the kernels of a step (the generic
  /// executor's interior and rim), with their parameters set once (replaying a one-node
  /// graph takes less host time than launching its kernel: docs/BENCHMARKS.md). A plan
  /// whose calls cycle through more pairs than it keeps stops recording. Returns whether
  /// it ran the step.
  bool replay_recorded_step(const InView& in, const OutView& out) const {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
      const Launcher<ExecSpace, InView, OutView>& launcher = *single().launcher;
      if (!m_options.cuda_graphs || !launcher.capturable() || m_step_unrecordable) return false;
      const impl::RecordedLaunches* found = m_recorded_steps.find(in.data(), out.data(), m_single.stage);
      if (!found) {
        if (++m_step_recordings > 4 * recorded_steps_kept) {  // pairs cycle past what is kept
          m_step_unrecordable = true;
          return false;
        }
        std::unique_ptr<impl::RecordedLaunches> graph;
        try {
          graph = std::make_unique<impl::RecordedLaunches>(m_space.cuda_stream(),
                                                           [&] { launcher.launch(m_space, in, out); });
        } catch (const std::runtime_error&) {  // this Kokkos' launches cannot be recorded: launch them
          m_step_unrecordable = true;
          return false;
        }
        found = &m_recorded_steps.keep(in.data(), out.data(), m_single.stage, std::move(graph));
      }
      found->replay(m_space.cuda_stream());
      return true;
    }
#endif
    (void)in, (void)out;
    return false;
  }

  /// The n-th launch of a run ping-ponging between two buffers: the launches after the
  /// first find a fixed rim already in place (Launcher::launch_rim_held).
  void launch_in_run(const Launcher<ExecSpace, InView, OutView>& launcher, std::size_t n, const InView& in,
                     const OutView& out) const {
    if (n > 0) launcher.launch_rim_held(m_space, in, out);
    else launcher.launch(m_space, in, out);
  }

  /// Replays the recorded graph over the leading launches of the schedule where they are
  /// runs of one recordable stage on CUDA (Options::cuda_graphs); returns the launches done.
  std::size_t replay_recorded(const Schedule& launches, InView& a, OutView& b) {
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda> && std::is_same_v<InView, OutView>) {
      if (!m_options.cuda_graphs) return 0;
      const StageData* first = launches.main;
      const std::size_t same = launches.repeats;
      if (!first->launcher->capturable() || same < static_cast<std::size_t>(recorded_launches)) return 0;
      const impl::RecordedLaunches* found = m_recorded.find(a.data(), b.data(), first);
      if (!found) {
        InView x   = a;
        OutView y  = b;
        auto graph = std::make_unique<impl::RecordedLaunches>(m_space.cuda_stream(), [&] {
          for (int n = 0; n < recorded_launches; ++n) {
            launch_in_run(*first->launcher, n, x, y);
            std::swap(x, y);
          }
        });
        found      = &m_recorded.keep(a.data(), b.data(), first, std::move(graph));
      }
      const std::size_t replays = same / recorded_launches;
      for (std::size_t n = 0; n < replays; ++n) found->replay(m_space.cuda_stream());
      return replays * recorded_launches;  // an even count: a and b are where they were
    }
#endif
    (void)launches, (void)a, (void)b;
    return 0;
  }
};

}  // namespace sparstencil
