#pragma once
/// The Kokkos side of a backend: what the front-end (src/kokkos) asks of each backend's
/// trait, and the Launcher it makes. A backend <name> supplies, in
/// src/backends/<name>/SparStencil_<Name>Kokkos.hpp, `sparstencil::<name>::KokkosBackend`
/// with these static members (docs/ARCHITECTURE.md):
///
///   static constexpr std::string_view name;       // the model's name()
///   template <class ExecSpace, class InView, class OutView>
///   static constexpr bool runs();                  // compile time: these types at all
///   template <class T>
///   static std::optional<Precision> precision(Precision floats);  // operand precision for
///                                                  // Views of T; nothing where it takes none
///                                                  // (floats: what float Views may be
///                                                  // multiplied as, Options::float_operands,
///                                                  // tf32 where the user named the backend)
///   static constexpr std::string_view requirement; // what it runs, for errors naming it
///   template <class ExecSpace>
///   static std::optional<std::string> cannot_run(const ExecSpace&);  // run time: its device
///   template <int D, class ExecSpace, class InView, class OutView, class UserOptions>
///   static int steps_per_launch(const ExecSpace&, const Plan&, const Stencil<D>&, const InView&,
///                               const OutView&, const UserOptions&, bool forced);  // of a fused plan
///   template <class ExecSpace, class InView, class OutView, int D, class UserOptions>
///   static std::unique_ptr<Launcher<ExecSpace, InView, OutView>>
///   launcher(const ExecSpace&, const Plan&, const Stencil<D>&, const InView&, const OutView&,
///            const UserOptions&);                  // made once per plan and depth
///
/// UserOptions is the front-end's Options (src/kokkos/SparStencil_Options.hpp): a backend
/// reads only its own part of it (the generic executor `options.generic`, its own type).
///
/// `runs()` is false for types the backend cannot take, so nothing of it is instantiated
/// for them (kokkos-kernels' *_tpl_spec_avail).
#include <Kokkos_Core.hpp>

#include <optional>
#include <string>

#include "SparStencil_Boundary.hpp"
#include "SparStencil_Plan.hpp"

namespace sparstencil {

/// One launch of a planned step on Views of these types: `out` = the plan's fused steps
/// applied to `in`, asynchronous on `space`. Made by a backend's trait for one plan; holds
/// whatever the backend uploaded and tuned.
template <class ExecSpace, class InView, class OutView>
class Launcher {
 public:
  virtual ~Launcher()                                                                     = default;
  virtual void launch(const ExecSpace& space, const InView& in, const OutView& out) const = 0;
  /// A launch that follows another between the same two buffers (iterate's launches after
  /// its first): under Boundary::fixed_rim each launch leaves out's rim equal to in's, so
  /// `out` already holds it, and backends that copy it in a launch of their own skip that
  /// copy; otherwise the same as launch().
  virtual void launch_rim_held(const ExecSpace& space, const InView& in, const OutView& out) const {
    launch(space, in, out);
  }
  /// What runs, for RunReport::variant ("row runs, 12 chunks, ...", "streaming 64x1 ...").
  virtual std::string describe() const = 0;
  /// Whether launches can be recorded into a CUDA graph (no host synchronisation, no
  /// allocation in a launch).
  virtual bool capturable() const { return false; }
};

}  // namespace sparstencil
