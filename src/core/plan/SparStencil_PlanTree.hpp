#pragma once
/// Plans as JSON trees, inside the library only (the JSON library is a build-only
/// dependency: this header is not installed): to_json's and plan_from_json's forms without
/// the text, for documents that hold plans (wisdom files).
#include <string_view>

#include <nlohmann/json.hpp>

#include "SparStencil_Plan.hpp"

namespace sparstencil::impl {

/// Whether a plan's tree holds its fused stencil. Verification requires it to equal
/// fuse(original, fused_steps), so a document may leave it out and its reader fuse the
/// original again: a deep 3-D fusion's terms are most of its plan's text, and parsing
/// them costs more than fusing (box3d:r=4 over 8 steps: 274,625 terms).
enum class FusedStencil { held, derived };

/// The plan as to_json writes it; without "stencil" where `fused` is derived.
nlohmann::json plan_tree(const Plan& plan, FusedStencil fused = FusedStencil::held);

/// read_plan's reading and verification, from a tree. Where `fused` is derived the tree may
/// leave "stencil" out: it is then fuse(original, fused_steps), once the depth is checked.
Plan plan_from_tree(const nlohmann::json& tree, std::string_view function, std::string_view field_prefix,
                    FusedStencil fused = FusedStencil::held);

}  // namespace sparstencil::impl
