#pragma once
/// What a StencilPlan reports of a run (RunReport) and the steps each launch of a run takes
/// (LaunchSteps).
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Plan.hpp"

namespace sparstencil {

/// What ran: the backend ("generic", "cuda_sptc"), the Kokkos execution space, the step
/// count, what the backend ran (its kernel variant), the steps of each launch, and the
/// boundary and operand precision of the plan it ran.
struct RunReport {
  std::string executor;
  std::string execution_space;
  int steps = 0;
  std::string variant;
  int steps_per_launch = 1;  ///< fusion depth of the launches (the last may run fewer)
  /// Range problems the options allowed (Options::allow_overflow: results may be inf),
  /// weights that round to 0 in the operand precision.
  std::vector<std::string> warnings;
  Boundary boundary   = Boundary::periodic;
  Precision precision = Precision::f32;
};

/// The steps of each launch of a run, held in constant memory whatever the step count:
/// `repeats` launches of `depth` steps, then one launch of each of `rest` (at most a few).
struct LaunchSteps {
  int depth   = 0;
  int repeats = 0;
  std::vector<int> rest;

  std::size_t size() const { return static_cast<std::size_t>(repeats) + rest.size(); }
  bool empty() const { return size() == 0; }
  /// The steps of launch n (n < size()).
  int operator[](std::size_t n) const {
    return n < static_cast<std::size_t>(repeats) ? depth : rest.at(n - static_cast<std::size_t>(repeats));
  }
  /// The steps of the deepest launch (0 for no launch).
  int most() const {
    int m = repeats > 0 ? depth : 0;
    for (int r : rest) m = std::max(m, r);
    return m;
  }
  /// Each launch depth once, ascending.
  std::vector<int> distinct() const {
    std::vector<int> d = rest;
    if (repeats > 0) d.push_back(depth);
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    return d;
  }
  /// As ints {depth, repeats, rest...}, to send (decode() reads them back).
  std::vector<int> encode() const {
    std::vector<int> e{depth, repeats};
    e.insert(e.end(), rest.begin(), rest.end());
    return e;
  }
  static LaunchSteps decode(const std::vector<int>& e) {
    LaunchSteps s;
    if (e.size() >= 2) s = {e[0], e[1], std::vector<int>(e.begin() + 2, e.end())};
    return s;
  }
};

}  // namespace sparstencil
