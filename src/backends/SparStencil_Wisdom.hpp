#pragma once
/// Wisdom (FFTW's word; cuDNN keeps a plan cache alike): the plans the planner made and the
/// variants the generic executor's autotuner timed in this process, saved to a file and
/// loaded by a later run, so that its first StencilPlan, apply or iterate skips planning
/// and tuning and costs what later ones cost.
///
///   sparstencil::load_wisdom("stencils.wisdom");   // if the file exists: every entry verified
///   ... make plans, run ...
///   sparstencil::save_wisdom("stencils.wisdom");   // what this run planned and tuned
///
/// A plan is kept under its whole request (stencil terms and name, grid, precision, device,
/// fused steps, boundary, backends, range options); a tuned variant under the tuner's key
/// (execution space, value type, shape, extents and strides, device ordinal, boundary,
/// steps). Loading verifies every entry before it takes any: each plan as plan_from_json
/// does, and against its request; each variant as one the tuner times. A file that does not
/// verify is refused, naming the entry and field. Entries loaded replace those held under
/// the same key; the file's own version must be this library's (plans of another version's
/// models are not this one's choices).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "SparStencil_Backend.hpp"

namespace sparstencil {

struct GenericConfig;  // the generic executor's variants (SparStencil_GenericModel.hpp)

/// What wisdom holds: plans, tuned variants.
struct WisdomSize {
  std::size_t plans    = 0;
  std::size_t variants = 0;
};

/// Everything held, as JSON text: the same wisdom gives the same bytes (entries in key
/// order), so a file saved, loaded and saved again is bit-identical.
std::string wisdom_to_json();
/// Verifies every entry of `text`, then takes them all (or none: throws std::runtime_error
/// naming `source`, the entry and the field at fault).
void wisdom_from_json(std::string_view text, std::string_view source = "wisdom");
/// wisdom_to_json written to `path` (throws naming the path where it cannot be written).
void save_wisdom(const std::string& path);
/// wisdom_from_json of the file at `path` (throws naming the path where it cannot be read).
void load_wisdom(const std::string& path);
/// Drops everything held (plans made later are planned again).
void forget_wisdom();
WisdomSize wisdom_size();

/// The most plans held: past it the oldest made is dropped (a program making more
/// distinct plans than this keeps the latest).
inline constexpr std::size_t wisdom_plans_kept = 4096;

namespace impl {

/// The plan for `request`: the one held, else make_plan's, then held.
Plan wise_plan(const PlanRequest& request);
/// The variant held under a tuner's key, if any.
std::optional<GenericConfig> wise_variant(const std::string& key);
/// Holds the variant the tuner chose under its key.
void remember_variant(const std::string& key, const GenericConfig& variant);

}  // namespace impl
}  // namespace sparstencil
