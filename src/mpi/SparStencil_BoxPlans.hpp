#pragma once
/// The boxes of a rank's block that a distributed plan computes (docs/DISTRIBUTED.md) and
/// the library's plans of them: the computed box (the block and its halo) in one launch
/// after the exchange, or the interior while the halo is in flight and the bands after it.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "SparStencil_Decomposition.hpp"
#include "SparStencil_StencilPlan.hpp"

namespace sparstencil {
namespace impl {

/// The boxes and plans of launches of up to one depth on one rank, from fields like Field.
/// A box's plan runs under the domain's boundary where the box meets a global edge and
/// `interior` on padded sides (their rim holds ghosts, which no owned point's steps read).
template <class ExecSpace, class Field>
class BoxPlans {
 public:
  static constexpr int D = Field::rank;
  using Box              = typename Field::box_view;
  using LocalPlan        = StencilPlan<ExecSpace, Box, Box>;
  using Coords           = std::array<long, D>;

  struct Band {
    Coords lo{}, hi{};                ///< the points it writes
    Coords region_lo{}, region_hi{};  ///< the box it reads
    std::unique_ptr<LocalPlan> plan;
  };

  /// The boxes of launches of up to `depth` steps of `stencil` on this rank's block of
  /// `domain` and the computed box's plan on `space`, from fields like `a` to fields like
  /// `b`; `local`: the options of a box's plan.
  BoxPlans(const ExecSpace& space, const Stencil<D>& stencil, const Domain<D>& domain, const Options& local, int depth,
           const Field& a, const Field& b)
      : m_stencil(stencil), m_domain(domain), m_local(local) {
    Coords n{};
    for (int k = 0; k < D; ++k) {
      n[k]           = m_domain.block(k).size;
      halo[k]        = depth * m_stencil.radius()[k];
      const bool low = m_domain.has_neighbour(k, -1), high = m_domain.has_neighbour(k, +1);
      computed_lo[k]    = low ? -halo[k] : 0;
      computed_hi[k]    = n[k] + (high ? halo[k] : 0);
      inner_exact_lo[k] = low ? halo[k] : 0;
      inner_exact_hi[k] = n[k] - (high ? halo[k] : 0);
    }
    full = std::make_unique<LocalPlan>(space, m_stencil, a.box(computed_lo, computed_hi),
                                       b.box(computed_lo, computed_hi), m_local);
  }

  /// Builds every launch the schedule makes (planning may throw on one rank only: the
  /// caller agrees the outcome with every rank); with `overlap`, plans the interior on
  /// `space` and the bands on `band_space`, once. A box of the overlap that cannot run the
  /// launches turns the overlap off on this rank.
  void prepare(const ExecSpace& space, const ExecSpace& band_space, const Field& a, const Field& b,
               const LaunchSteps& launches, bool overlap) {
    const std::vector<int> counts = launches.distinct();
    for (int n : counts) full->prepare_launch(a.box(computed_lo, computed_hi), b.box(computed_lo, computed_hi), n);
    if (!overlap) return;
    try {
      if (!overlap_planned) {
        overlap_planned = true;
        plan_overlap(space, band_space, a, b);
      }
      if (!inner) return;
      for (int n : counts) {
        inner->prepare_launch(a.owned(), b.owned(), n);
        for (Band& band : bands) {
          band.plan->prepare_launch(a.box(band.region_lo, band.region_hi), scratch->box(band.region_lo, band.region_hi),
                                    n);
        }
      }
    } catch (const std::runtime_error&) {  // a box too small for a plan: the whole box after the exchange
      inner.reset();
      bands.clear();
      scratch.reset();
    }
  }

  /// `steps` steps of the computed box from a to b.
  void launch_full(const Field& a, const Field& b, int steps) {
    full->launch(a.box(computed_lo, computed_hi), b.box(computed_lo, computed_hi), steps);
  }
  /// `steps` steps of the interior from a to b.
  void launch_inner(const Field& a, const Field& b, int steps) { inner->launch(a.owned(), b.owned(), steps); }
  /// `steps` steps of a band's box from a to the scratch field.
  void launch_band(const Band& band, const Field& a, int steps) {
    band.plan->launch(a.box(band.region_lo, band.region_hi), scratch->box(band.region_lo, band.region_hi), steps);
  }
  /// A band's points from the scratch field into b, on `space`.
  void copy_band(const ExecSpace& space, const Band& band, const Field& b) const {
    Kokkos::deep_copy(space, b.box(band.lo, band.hi), scratch->box(band.lo, band.hi));
  }

  std::array<int, D> halo{};
  Coords computed_lo{}, computed_hi{};  ///< the block and the halo on sides with a neighbour
  Coords inner_exact_lo{}, inner_exact_hi{};
  std::unique_ptr<LocalPlan> full;   ///< the computed box in one launch
  std::unique_ptr<LocalPlan> inner;  ///< the block alone (null: no overlap)
  std::vector<Band> bands;
  std::unique_ptr<Field> scratch;  ///< the bands' output
  bool overlap_planned = false;    ///< plan_overlap ran (made on the first launches, not for a probe)

 private:
  Stencil<D> m_stencil;
  Domain<D> m_domain;
  Options m_local;

  /// The interior box (the block, exact away from its padded sides) and the bands that
  /// cover the rest: along axis k, a band `halo` wide at each side with a neighbour,
  /// spanning the interior's range on earlier axes and the block on later ones. Each band
  /// reads its points widened by the halo (inside the computed box) and writes a scratch
  /// field, whose band points are then copied out. Throws where a box is too small for
  /// its plan.
  void plan_overlap(const ExecSpace& space, const ExecSpace& band_space, const Field& a, const Field& b) {
    for (int k = 0; k < D; ++k) {
      if (inner_exact_hi[k] <= inner_exact_lo[k]) return;  // no interior away from the halo
    }
    const Coords& n = a.extent();
    inner           = std::make_unique<LocalPlan>(space, m_stencil, a.owned(), b.owned(), m_local);
    // The bands run the interior's backend where they can: one executor's sums for every
    // owned point (the planner, free, may choose another for a thin box).
    Options same = m_local;
    if (same.backend.empty()) same.backend = inner->plan().backend;
    scratch = std::make_unique<Field>(a, "sparstencil band scratch");
    std::vector<Band> planned;
    for (int k = 0; k < D; ++k) {
      for (int side : {-1, +1}) {
        if (!m_domain.has_neighbour(k, side) || halo[k] == 0) continue;
        Band band;
        for (int j = 0; j < D; ++j) {
          if (j < k) band.lo[j] = inner_exact_lo[j], band.hi[j] = inner_exact_hi[j];
          if (j > k) band.lo[j] = 0, band.hi[j] = n[j];
        }
        band.lo[k] = side < 0 ? 0 : n[k] - halo[k];
        band.hi[k] = side < 0 ? halo[k] : n[k];
        // The global rim is the interior box's (under its boundary rule: interior leaves
        // it as `out` held it); the bands' scratch holds nothing there.
        bool empty = false;
        for (int j = 0; j < D; ++j) {
          const int r = m_stencil.radius()[j];
          if (!m_domain.has_neighbour(j, -1)) band.lo[j] = std::max<long>(band.lo[j], r);
          if (!m_domain.has_neighbour(j, +1)) band.hi[j] = std::min<long>(band.hi[j], n[j] - r);
          empty = empty || band.hi[j] <= band.lo[j];
        }
        if (empty) continue;
        for (int j = 0; j < D; ++j) {
          band.region_lo[j] = std::max(band.lo[j] - halo[j], computed_lo[j]);
          band.region_hi[j] = std::min(band.hi[j] + halo[j], computed_hi[j]);
        }
        const auto plan_band = [&](const Options& o) {
          return std::make_unique<LocalPlan>(band_space, m_stencil, a.box(band.region_lo, band.region_hi),
                                             scratch->box(band.region_lo, band.region_hi), o);
        };
        try {
          band.plan = plan_band(same);
        } catch (const std::runtime_error&) {  // the box is too thin for that backend
          band.plan = plan_band(m_local);
        }
        planned.push_back(std::move(band));
      }
    }
    bands = std::move(planned);
  }
};

}  // namespace impl

}  // namespace sparstencil
