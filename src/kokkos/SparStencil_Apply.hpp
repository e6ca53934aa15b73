#pragma once
/// One-off calls: sparstencil::apply (one step) and sparstencil::iterate (ping-pong time
/// stepping) on Kokkos Views. Each call finds the StencilPlan for its problem in a cache
/// keyed by the exact terms (offsets and weight bits), the Views' extents and strides, the
/// execution space instance and the options, made on first use; so a repeated call costs a
/// hash, a comparison and the plan's launch. A program holding its own StencilPlan skips
/// even that.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "SparStencil_StencilPlan.hpp"

namespace sparstencil {
namespace impl {

/// What makes two calls the same problem for a plan: everything but the Views' data (their
/// rows' alignment included).
template <int D>
struct CallKey {
  std::uintptr_t space = 0;  ///< the execution space instance (CUDA: its stream)
  std::size_t extent[D], in_stride[D], out_stride[D];
  int row_alignment = 16;
  Options options;

  template <class InView, class OutView>
  CallKey(std::uintptr_t s, const InView& in, const OutView& out, const Options& o)
      : space(s), row_alignment(impl::row_alignment(in, out)), options(o) {
    for (int a = 0; a < D; ++a) extent[a] = in.extent(a), in_stride[a] = in.stride(a), out_stride[a] = out.stride(a);
  }
  bool same_problem(const CallKey& k) const {
    for (int a = 0; a < D; ++a) {
      if (extent[a] != k.extent[a] || in_stride[a] != k.in_stride[a] || out_stride[a] != k.out_stride[a]) return false;
    }
    return space == k.space && row_alignment == k.row_alignment && options == k.options;
  }
};

template <int D>
bool same_terms(const Stencil<D>& a, const Stencil<D>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t t = 0; t < a.size(); ++t) {
    const Term<D>&x = a.terms()[t], &y = b.terms()[t];
    if (x.offset != y.offset || std::memcmp(&x.weight, &y.weight, sizeof(double)) != 0) return false;
  }
  return true;
}

/// FNV-1a over the offsets and weight bits.
template <int D>
std::uint64_t terms_hash(const Stencil<D>& s) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix        = [&](const void* p, std::size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  };
  for (const Term<D>& t : s.terms()) {
    mix(t.offset.data(), sizeof(int) * D);
    mix(&t.weight, sizeof(double));
  }
  return h;
}

template <class ExecSpace>
std::uintptr_t space_key(const ExecSpace& space) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    return reinterpret_cast<std::uintptr_t>(space.cuda_stream()) ^ static_cast<std::uintptr_t>(space.cuda_device());
  }
#elif defined(KOKKOS_ENABLE_HIP)
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) {
    return reinterpret_cast<std::uintptr_t>(space.hip_stream()) ^ static_cast<std::uintptr_t>(space.hip_device());
  }
#endif
  (void)space;
  return 0;
}

/// The plan for a call, made on first use. At most 64 plans a View type are kept (the
/// oldest goes), so programs changing weights every step do not grow it without bound;
/// the cache is emptied when Kokkos finalizes (plans hold device memory).
template <class ExecSpace, class InView, class OutView, int D>
StencilPlan<ExecSpace, InView, OutView>& cached_plan(const char* function, const ExecSpace& space,
                                                     const Stencil<D>& stencil, const InView& in, const OutView& out,
                                                     const Options& options) {
  using PlanType = StencilPlan<ExecSpace, InView, OutView>;
  struct Entry {
    std::uint64_t hash;
    CallKey<D> key;
    Stencil<D> stencil;
    std::unique_ptr<PlanType> plan;
  };
  static std::mutex mutex;
  static std::vector<Entry> entries;
  static bool hooked = false;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!hooked) {
    Kokkos::push_finalize_hook([] {
      const std::lock_guard<std::mutex> guard(mutex);
      entries.clear();
    });
    hooked = true;
  }
  const CallKey<D> key(space_key(space), in, out, options);
  const std::uint64_t hash = terms_hash(stencil);
  for (Entry& e : entries) {
    if (e.hash == hash && e.key.same_problem(key) && same_terms(e.stencil, stencil)) return *e.plan;
  }
  auto plan = std::make_unique<PlanType>(Caller{function}, space, stencil, in, out, options);
  if (entries.size() >= 64) entries.erase(entries.begin());
  entries.push_back({hash, key, stencil, std::move(plan)});
  return *entries.back().plan;
}

}  // namespace impl

/// One step: out = stencil applied to in, under options.boundary. Runs on `space` and
/// returns without fencing, like a Kokkos kernel launch.
template <class ExecSpace, int D, class InView, class OutView>
RunReport apply(const ExecSpace& space, const Stencil<D>& stencil, const InView& in, const OutView& out,
                const Options& options = {}) {
  impl::check_view_types<D, ExecSpace, InView, OutView>();
  impl::check_extents("apply", stencil, in, out);
  impl::check_no_overlap("apply", in, out);
  return impl::cached_plan("apply", space, stencil, in, out, options).apply(in, out);
}

/// One step on the output View's default execution space.
template <int D, class InView, class OutView>
RunReport apply(const Stencil<D>& stencil, const InView& in, const OutView& out, const Options& options = {}) {
  return apply(typename OutView::execution_space(), stencil, in, out, options);
}

/// `steps` steps ping-ponging between a and b, Options::fusion steps a launch
/// (StencilPlan::iterate says the rest). steps = 0 does nothing.
template <class ExecSpace, int D, class View>
RunReport iterate(const ExecSpace& space, const Stencil<D>& stencil, View& a, View& b, int steps,
                  const Options& options = {}) {
  impl::check_view_types<D, ExecSpace, View, View>();
  if (steps < 0) impl::fail("iterate", "step count ", steps, " is negative");
  impl::check_extents("iterate", stencil, a, b);
  impl::check_no_overlap("iterate", a, b);
  if (options.fusion < 0)
    impl::fail("iterate", "fusion ", options.fusion, " must be 0 (automatic) or a step count >= 1");
  return impl::cached_plan("iterate", space, stencil, a, b, options).iterate(a, b, steps);
}

template <int D, class View>
RunReport iterate(const Stencil<D>& stencil, View& a, View& b, int steps, const Options& options = {}) {
  return iterate(typename View::execution_space(), stencil, a, b, steps, options);
}

/// Forms taking a stencil whose dimension is known at run time (parsed text, catalogue):
/// a dimension other than the Views' rank throws.
template <class ExecSpace, class InView, class OutView>
RunReport apply(const ExecSpace& space, const AnyStencil& stencil, const InView& in, const OutView& out,
                const Options& options = {}) {
  return apply(space, impl::of_rank<static_cast<int>(OutView::rank)>("apply", stencil), in, out, options);
}
template <class InView, class OutView>
RunReport apply(const AnyStencil& stencil, const InView& in, const OutView& out, const Options& options = {}) {
  return apply(typename OutView::execution_space(), stencil, in, out, options);
}

template <class ExecSpace, class View>
RunReport iterate(const ExecSpace& space, const AnyStencil& stencil, View& a, View& b, int steps,
                  const Options& options = {}) {
  return iterate(space, impl::of_rank<static_cast<int>(View::rank)>("iterate", stencil), a, b, steps, options);
}
template <class View>
RunReport iterate(const AnyStencil& stencil, View& a, View& b, int steps, const Options& options = {}) {
  return iterate(typename View::execution_space(), stencil, a, b, steps, options);
}

}  // namespace sparstencil
