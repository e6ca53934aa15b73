#include "SparStencil_Planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

#include "SparStencil_Fuse.hpp"
#include "SparStencil_Rounding.hpp"

namespace sparstencil {

long grid_points(const std::vector<long>& grid) {
  long n = 1;
  for (long x : grid) {
    if (x < 1 || n > (1L << 62) / x) {
      impl::fail("make_plan", "grid ", impl::tuple_string(grid),
                 x < 1 ? " has an extent below 1" : " has more than 2^62 points (counted in 64 bits)");
    }
    n *= x;
  }
  return n;
}

void finish_prediction(Prediction& pr, double launch, long points, int steps) {
  const double slowest = std::max({pr.compute_seconds, pr.memory_seconds, pr.shared_seconds});
  pr.bound     = slowest == pr.compute_seconds ? "compute" : slowest == pr.memory_seconds ? "memory" : "shared memory";
  pr.seconds   = slowest + launch;
  pr.gstencils = static_cast<double>(points) * steps / pr.seconds / 1e9;
}

bool better(const Plan& a, const Plan& b) {
  const double sa = a.predicted.seconds, sb = b.predicted.seconds;
  if (std::abs(sa - sb) > 0.005 * std::max(sa, sb)) return sa < sb;
  return std::tie(a.predicted.compute_seconds, a.predicted.shared_seconds) <
         std::tie(b.predicted.compute_seconds, b.predicted.shared_seconds);
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

/// Weights (one step's and the fused stencil's) that round to 0 in the precision's operand
/// format: a warning in the plan each (the term then has no effect where the weights are
/// operands, the matrix-core backends; the generic executor sums in float or double).
void warn_of_vanishing_weights(const PlanRequest& r, Plan& p) {
  if (r.precision == Precision::f64) return;
  for (const AnyStencil* s : {&p.original, &p.stencil}) {
    if (s == &p.stencil && r.steps == 1) break;  // the same stencil
    std::size_t vanishing = 0;
    std::string first;
    std::visit(
        [&](const auto& stencil) {
          for (const auto& term : stencil.terms()) {
            if (term.weight == 0 || impl::operand_value(r.precision, term.weight) != 0) continue;
            if (vanishing++ == 0) first = number(term.weight) + " at offset " + impl::tuple_string(term.offset);
          }
        },
        *s);
    if (vanishing == 0) continue;
    const std::string what = s == &p.original ? "weight" : "fused weight";
    p.warnings.push_back((vanishing == 1 ? "the " + what + " " + first
                                         : std::to_string(vanishing) + " " + what + "s (the first " + first + ")") +
                         (vanishing == 1 ? " rounds" : " round") + " to 0 as " + to_string(r.precision) +
                         " operands: no effect where the weights are operands (matrix cores); scale the weights "
                         "or choose a wider precision");
  }
}

/// Values the precision's formats cannot hold: every weight (one step's and the fused
/// stencil's) within what its sums hold, and the worst-case output of one launch, the
/// fused weights' |sum| times the inputs' magnitude, within what its grids store (float
/// grids: float). Refused, or where the request allows it, written into the plan's
/// warnings. (Weights and inputs past a backend's operands: that backend's cannot_run.)
void check_range(const PlanRequest& r, Plan& p) {
  if (!(r.input_magnitude >= 0) || !std::isfinite(r.input_magnitude)) {
    impl::fail("make_plan", "input magnitude ", r.input_magnitude, " must be a finite number >= 0");
  }
  std::vector<std::string> problems;
  const double summed = largest_summed(r.precision);
  const double stored = largest_stored(r.float_grids ? Precision::f32 : r.precision);
  for (const AnyStencil* s : {&p.original, &p.stencil}) {
    if (s == &p.stencil && r.steps == 1) break;  // the same stencil
    const double largest = largest_weight(*s);
    if (largest > summed) {
      problems.push_back(std::string(s == &p.original ? "a weight" : "a fused weight") + " of magnitude " +
                         number(largest) + " exceeds " + to_string(r.precision) + "'s sums (largest " + number(summed) +
                         ")");
    }
  }
  const double worst = abs_weight_sum(p.stencil) * r.input_magnitude;
  if (worst > stored) {
    problems.push_back("the worst-case output " + number(worst) + " (sum of |weights|" +
                       (r.steps > 1 ? " of the " + std::to_string(r.steps) + " fused steps" : std::string()) +
                       " x input magnitude " + number(r.input_magnitude) + ") exceeds " +
                       (r.float_grids ? std::string("float grids") : std::string(to_string(r.precision))) +
                       "'s largest value " + number(stored));
  }
  warn_of_vanishing_weights(r, p);
  if (problems.empty()) return;
  if (!r.allow_overflow) {
    std::string all;
    for (const std::string& q : problems) all += (all.empty() ? "" : "; ") + q;
    impl::fail("make_plan", all, ": results would be inf or NaN. State the inputs' magnitude (input_magnitude), ",
               "scale the weights, choose a wider precision, or allow it (allow_overflow: a warning instead)");
  }
  for (std::string& q : problems) p.warnings.push_back(q + ": results may be inf or NaN");
}

}  // namespace

Plan base_plan(const PlanRequest& r) {
  if (static_cast<int>(r.grid.size()) != dimension(r.stencil)) {
    impl::fail("make_plan", "grid has ", r.grid.size(), " extents but the stencil is ", dimension(r.stencil), "-D");
  }
  if (r.steps < 1) impl::fail("make_plan", "fused step count ", r.steps, " must be at least 1");
  if (r.float_grids && r.precision != Precision::f16 && r.precision != Precision::bf16) {
    impl::fail("make_plan", "float grids are read as f16 or bf16 operands, not ", to_string(r.precision),
               " (tf32 operands read float grids without it; f32 and f64 are the grids' own formats)");
  }
  if (!valid_row_alignment(r.row_alignment)) {
    impl::fail("make_plan", "row alignment ", r.row_alignment, " bytes must be a power of two from 1 to 16");
  }
  for (std::size_t a = 0; a < r.grid.size(); ++a) {
    if (r.grid[a] > max_extent) {
      impl::fail("make_plan", "grid extent ", r.grid[a], " along axis ", a, " exceeds ", max_extent,
                 " (2^31 - 1), the most the executors index along an axis");
    }
  }
  const long points               = grid_points(r.grid);
  const DeviceDescription& device = device_description(r.device);  // throws for an unknown name
  const double grid_bytes =
      2.0 * static_cast<double>(points) * storage_bytes(grid_format(r.precision, r.float_grids));  // in and out
  if (device.memory_bytes > 0 && grid_bytes > device.memory_bytes) {
    impl::fail("make_plan", "grid ", impl::tuple_string(r.grid), " needs ", number(grid_bytes / (1024.0 * 1024 * 1024)),
               " GiB for its input and output (", points, " points x 2 x ",
               storage_bytes(grid_format(r.precision, r.float_grids)), " bytes) but device ", r.device, " holds ",
               number(device.memory_bytes / (1024.0 * 1024 * 1024)), " GiB");
  }
  Plan p;
  p.original      = r.stencil;
  p.stencil       = fuse(r.stencil, r.steps);
  p.fused_steps   = r.steps;
  p.boundary      = r.boundary;
  p.precision     = r.precision;
  p.float_grids   = r.float_grids;
  p.row_alignment = r.row_alignment;
  p.device        = r.device;
  p.grid          = r.grid;
  p.redundancy    = static_cast<double>(term_count(p.stencil)) / (r.steps * static_cast<double>(term_count(r.stencil)));
  const std::vector<int> fused_radius = radius(p.stencil);
  for (std::size_t a = 0; a < r.grid.size(); ++a) {
    if (r.grid[a] < 2L * fused_radius[a] + 1) {
      impl::fail("make_plan", "grid extent ", r.grid[a], " along axis ", a, " is too small for radius ",
                 fused_radius[a], r.steps > 1 ? " (fused)" : "", " (needs at least ", 2 * fused_radius[a] + 1, ")");
    }
  }
  check_range(r, p);
  return p;
}

namespace {

/// The backends the request asks for, in the order given to the planner.
std::vector<const BackendModel*> asked(const PlanRequest& r, const std::vector<const BackendModel*>& backends) {
  for (const std::string& wanted : r.backends) find_backend("make_plan", wanted, backends);
  std::vector<const BackendModel*> chosen;
  for (const BackendModel* b : backends) {
    if (r.backends.empty() || std::find(r.backends.begin(), r.backends.end(), b->name()) != r.backends.end()) {
      chosen.push_back(b);
    }
  }
  return chosen;
}

}  // namespace

const BackendModel& find_backend(std::string_view function, std::string_view name,
                                 const std::vector<const BackendModel*>& backends) {
  std::string names;
  for (const BackendModel* b : backends) {
    if (b->name() == name) return *b;
    names += (names.empty() ? "" : ", ") + std::string(b->name());
  }
  impl::fail(function, "unknown backend '", name, "' (known: ", names, ")");
}

Plan make_plan(const PlanRequest& r, const std::vector<const BackendModel*>& backends) {
  const Plan base                             = base_plan(r);
  const std::vector<const BackendModel*> ours = asked(r, backends);
  const bool forced                           = r.backends.size() == 1;
  struct Planned {
    Bids::Candidate candidate;
    const BackendModel* backend;
  };
  std::vector<Planned> planned;
  std::vector<Bid> bids;
  for (const BackendModel* b : backends) {
    if (std::find(ours.begin(), ours.end(), b) == ours.end()) {
      bids.push_back(
          {std::string(b->name()), {}, 0, Bid::Outcome::cannot_run, "not asked for (PlanRequest::backends)"});
    }
  }
  // Each backend bids against the fastest plan so far (the generic executor, cheap to
  // predict, comes first in the registry), so a backend may drop candidates that cannot win.
  for (const BackendModel* b : ours) {
    if (const std::optional<std::string> why = b->cannot_run(r, base)) {
      if (forced) impl::fail("make_plan", "backend ", b->name(), " cannot run this request: ", *why);
      bids.push_back({std::string(b->name()), {}, 0, Bid::Outcome::cannot_run, *why});
      continue;
    }
    double to_beat = INFINITY;
    for (const Planned& p : planned)
      to_beat = forced ? INFINITY : std::min(to_beat, p.candidate.plan.predicted.seconds);
    Bids offer = b->bid(r, base, to_beat);
    for (Bids::Candidate& c : offer.plans) planned.push_back({std::move(c), b});
    bids.insert(bids.end(), offer.dropped.begin(), offer.dropped.end());
  }
  if (planned.empty()) {
    std::string reasons;
    for (const Bid& bid : bids) reasons += (reasons.empty() ? "" : "; ") + bid.backend + ": " + bid.reason;
    impl::fail("make_plan", "no backend can run this request (", reasons, ")");
  }
  const auto best = std::min_element(planned.begin(), planned.end(), [](const Planned& a, const Planned& b) {
    return better(a.candidate.plan, b.candidate.plan);
  });
  Plan chosen     = best->candidate.plan;
  for (const Planned& p : planned) {
    bids.push_back({p.candidate.plan.backend, p.candidate.plan.tile, p.candidate.plan.predicted.seconds,
                    &p == &*best ? Bid::Outcome::chosen : Bid::Outcome::slower, p.candidate.summary});
  }
  // The model paper's scenario: the fastest matrix-form plan whose backend makes that
  // comparison (the sparse one) against the fastest plain-cores plan, where both exist.
  const Planned* plain = nullptr;
  for (const Planned& p : planned) {
    if (p.backend->plain_cores() && (!plain || better(p.candidate.plan, plain->candidate.plan))) plain = &p;
  }
  const Planned* matrix = nullptr;
  for (const Planned& p : planned) {
    if (!plain || p.backend->plain_cores()) continue;
    const Scenario sc = p.backend->scenario(p.candidate.plan, plain->candidate.plan);
    if (sc.known && (!matrix || better(p.candidate.plan, matrix->candidate.plan))) {
      matrix          = &p;
      chosen.scenario = sc;
    }
  }
  // Fastest first; backends that could not run last.
  std::stable_sort(bids.begin(), bids.end(), [](const Bid& a, const Bid& b) {
    const bool ra = a.outcome == Bid::Outcome::cannot_run, rb = b.outcome == Bid::Outcome::cannot_run;
    return ra != rb ? rb : (!ra && a.seconds < b.seconds);
  });
  chosen.bids = std::move(bids);
  return chosen;
}

}  // namespace sparstencil
