// Wisdom (SparStencil_Wisdom.hpp): plans and tuned variants saved, reloaded bit-identical,
// used instead of planning and tuning, and files that do not verify refused naming the
// entry and field, taking nothing.
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

using nlohmann::json;
using Space = Kokkos::DefaultHostExecutionSpace;
using V2    = Kokkos::View<float**, Space::memory_space>;

PlanRequest request_of(const char* stencil, std::vector<long> grid, int steps = 1) {
  PlanRequest r;
  r.stencil = parse_stencil(stencil);
  r.grid    = std::move(grid);
  r.device  = "h200";
  r.steps   = steps;
  return r;
}

/// A few plans of every backend and dimension, made through wisdom.
std::vector<PlanRequest> some_requests() {
  std::vector<PlanRequest> all{request_of("box2d:r=3", {4096, 4096}), request_of("heat1d", {1 << 20}),
                               request_of("box3d:r=1", {256, 256, 256}, 3),
                               request_of("star3d:r=2", {128, 130, 129}, 2)};
  all.push_back(request_of("box2d:r=2", {2048, 2050}));
  all.back().precision = Precision::f64;
  all.back().boundary  = Boundary::fixed_rim;
  return all;
}

TEST(Wisdom, SavedWisdomReloadsBitIdenticalWithEqualPlans) {
  forget_wisdom();
  const std::vector<PlanRequest> requests = some_requests();
  std::vector<Plan> made;
  for (const PlanRequest& r : requests) made.push_back(impl::wise_plan(r));
  impl::remember_variant("a tuner key", generic::candidates(2, true).back());
  EXPECT_EQ(wisdom_size().plans, requests.size());
  EXPECT_EQ(wisdom_size().variants, 1u);
  const std::string saved = wisdom_to_json();

  forget_wisdom();
  EXPECT_EQ(wisdom_size().plans, 0u);
  wisdom_from_json(saved);
  EXPECT_EQ(wisdom_to_json(), saved);  // bit-identical
  for (std::size_t i = 0; i < requests.size(); ++i) {
    EXPECT_TRUE(impl::wise_plan(requests[i]) == made[i]) << i;
    EXPECT_TRUE(make_plan(requests[i]) == made[i]) << i;
  }
  ASSERT_TRUE(impl::wise_variant("a tuner key").has_value());
  EXPECT_EQ(*impl::wise_variant("a tuner key"), generic::candidates(2, true).back());
  EXPECT_FALSE(impl::wise_variant("another key").has_value());
  EXPECT_EQ(wisdom_size().plans, requests.size());  // found, not planned again

  // Through a file.
  const std::string path = testing::TempDir() + "sparstencil_test.wisdom";
  save_wisdom(path);
  forget_wisdom();
  load_wisdom(path);
  EXPECT_EQ(wisdom_to_json(), saved);
  std::remove(path.c_str());
  EXPECT_ERROR_MENTIONS(load_wisdom(path), "load_wisdom", "cannot read", path);
  EXPECT_ERROR_MENTIONS(save_wisdom(testing::TempDir() + "no such folder/x.wisdom"), "save_wisdom", "cannot write");
}

TEST(Wisdom, AHeldPlanIsUsedWithoutPlanning) {
  // A file holding, for a request the tensor cores win, the generic executor's plan (a
  // valid plan, not the planner's choice): the request gets the file's plan.
  PlanRequest any = request_of("box2d:r=3", {10240, 10240});
  ASSERT_NE(make_plan(any).backend, "generic");
  PlanRequest generic_only = any;
  generic_only.backends    = {"generic"};
  forget_wisdom();
  (void)impl::wise_plan(generic_only);
  json file                               = json::parse(wisdom_to_json());
  file["plans"][0]["request"]["backends"] = json::array();
  forget_wisdom();
  wisdom_from_json(file.dump());
  EXPECT_EQ(impl::wise_plan(any).backend, "generic");
  EXPECT_EQ(wisdom_size().plans, 1u);
  forget_wisdom();
}

/// The exported wisdom of some_requests(), edited by `edit`, must be refused naming each of
/// `names`, and nothing of it taken.
template <class Edit>
void expect_refused(Edit edit, const std::vector<std::string>& names) {
  forget_wisdom();
  for (const PlanRequest& r : some_requests()) (void)impl::wise_plan(r);
  impl::remember_variant("key", generic::candidates(3, false).front());
  json file = json::parse(wisdom_to_json());
  forget_wisdom();
  edit(file);
  try {
    wisdom_from_json(file.dump(), "edited.wisdom");
    ADD_FAILURE() << "accepted a file that does not verify";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("load_wisdom"), std::string::npos) << what;
    EXPECT_NE(what.find("edited.wisdom"), std::string::npos) << what;
    for (const std::string& n : names) EXPECT_NE(what.find(n), std::string::npos) << "no '" << n << "' in: " << what;
  }
  EXPECT_EQ(wisdom_size().plans, 0u);
  EXPECT_EQ(wisdom_size().variants, 0u);
}

TEST(Wisdom, FilesThatDoNotVerifyAreRefusedNamingTheField) {
  expect_refused([](json& f) { f["version"] = "0.0.1"; }, {"'version'", "0.0.1"});
  expect_refused([](json& f) { f["format"] = "fftw"; }, {"'format'"});
  expect_refused([](json& f) { f["extra"] = 1; }, {"'extra'", "unknown field"});
  expect_refused([](json& f) { f["plans"][1]["request"]["grid"] = {1 << 20, 3}; }, {"'plans[1].request.grid'"});
  expect_refused([](json& f) { f["plans"][0]["request"]["steps"] = 2; }, {"'plans[0].request.steps'"});
  expect_refused([](json& f) { f["plans"][2]["request"]["stencil"] = "heat1d"; }, {"'plans[2].request.stencil'"});
  expect_refused([](json& f) { f["plans"][0]["request"]["backends"] = {"nobody"}; }, {"'plans[0].request.backends'"});
  expect_refused([](json& f) { f["plans"][0]["request"]["input_magnitude"] = "1.0"; },
                 {"'plans[0].request.input_magnitude'", "hexadecimal"});
  expect_refused([](json& f) { f["plans"][0]["request"]["pairing"] = 99; }, {"'plans[0].request.pairing'"});
  expect_refused([](json& f) { f["plans"][3]["request"].erase("device"); }, {"'plans[3].request.device'", "missing"});
  // The plan itself: plan_from_json's field, under the entry's.
  expect_refused([](json& f) { f["plans"][0]["plan"]["fused_steps"] = "two"; }, {"'plans[0].plan.fused_steps'"});
  expect_refused([](json& f) { f["plans"][4]["plan"]["grid"] = {2048}; }, {"plans[4].plan"});
  expect_refused([](json& f) { f["plans"][2]["plan"]["precision"] = "f8"; }, {"'plans[2].plan.precision'", "f8"});
  // Variants: one the tuner times, spelled as the file writes it.
  expect_refused([](json& f) { f["variants"][0]["variant"]["caching"] = "magic"; },
                 {"'variants[0].variant.caching'", "magic"});
  expect_refused([](json& f) { f["variants"][0]["variant"]["threads_fast"] = 3; },
                 {"'variants[0].variant'", "none of the variants"});
  expect_refused([](json& f) { f["variants"][0]["key"] = ""; }, {"'variants[0].key'", "empty"});
  expect_refused([](json& f) { f = json::array(); }, {"top level"});
  // Not JSON at all.
  forget_wisdom();
  EXPECT_ERROR_MENTIONS(wisdom_from_json("{\"format\": ", "cut.wisdom"), "load_wisdom", "cut.wisdom", "not valid JSON");
  EXPECT_EQ(wisdom_size().plans, 0u);
}

/// The index of the first plan entry of more than one step.
std::size_t first_fused(const json& file) {
  for (std::size_t i = 0; i < file["plans"].size(); ++i) {
    if (file["plans"][i]["plan"]["fused_steps"].get<int>() > 1) return i;
  }
  ADD_FAILURE() << "no fused plan in the file";
  return 0;
}

TEST(Wisdom, FusedPlansAreHeldWithoutTheirFusedStencilAndDeriveIt) {
  forget_wisdom();
  for (const PlanRequest& r : some_requests()) (void)impl::wise_plan(r);
  const std::string saved = wisdom_to_json();
  const json file         = json::parse(saved);
  int fused               = 0;
  for (const json& entry : file["plans"]) {
    EXPECT_FALSE(entry["plan"].contains("stencil")) << "the file holds a fused stencil: derived on loading";
    fused += entry["plan"]["fused_steps"].get<int>() > 1;
  }
  EXPECT_EQ(fused, 2);
  // Reloaded, each plan is the planner's, its fused stencil included.
  forget_wisdom();
  wisdom_from_json(saved);
  for (const PlanRequest& r : some_requests()) EXPECT_TRUE(impl::wise_plan(r) == make_plan(r)) << name(r.stencil);
  // A file that holds a fused stencil has it verified as plan_from_json does.
  const std::size_t i  = first_fused(file);
  const std::string at = "plans[" + std::to_string(i) + "].plan.";
  expect_refused([&](json& f) { f["plans"][i]["plan"]["stencil"] = f["plans"][i]["plan"]["original"]; },
                 {"'" + at + "stencil'", "is not fuse(original"});
  // Depths checked before anything is fused (a deep fusion would take the memory first).
  expect_refused([&](json& f) { f["plans"][i]["plan"]["fused_steps"] = 0; }, {"'" + at + "fused_steps'", "below 1"});
  expect_refused([&](json& f) { f["plans"][i]["plan"]["fused_steps"] = 100000; },
                 {"'" + at + "fused_steps'", "beyond the supported radius"});
  // An original whose fusion overflows a double is refused naming the field, not fuse alone.
  expect_refused(
      [&](json& f) {
        json& original   = f["plans"][i]["plan"]["original"];
        const int dims   = original["dims"].get<int>();
        original["text"] = dims == 3   ? "0,0,0:1e300 1,0,0:1e300"
                           : dims == 2 ? "0,0:1e300 1,0:1e300"
                                       : "0:1e300 1:1e300";
      },
      {"'" + at + "original'", "cannot be fused"});
  // Another depth fuses into a consistent stencil that the rest of the plan does not fit.
  expect_refused(
      [&](json& f) { f["plans"][i]["plan"]["fused_steps"] = f["plans"][i]["plan"]["fused_steps"].get<int>() + 1; },
      {"plans[" + std::to_string(i) + "]"});
  forget_wisdom();
}

TEST(Wisdom, AStencilPlanTakesItsPlanAndTunedVariantFromWisdom) {
  // A grid the tuner times (Options::generic.tuning.min_points), on the host space.
  const int n = 1100;
  V2 in("in", n, n), out("out", n, n);
  fill_random<2>(in, 3);
  forget_wisdom();
  std::string variant;
  {
    StencilPlan plan(Space(), presets::heat_2d(), in, out, Options{Boundary::periodic});
    variant = plan.report().variant;
  }
  const WisdomSize held = wisdom_size();
  EXPECT_GE(held.plans, 1u);
  EXPECT_GE(held.variants, 1u);
  const std::string saved = wisdom_to_json();
  forget_wisdom();
  wisdom_from_json(saved);
  StencilPlan again(Space(), presets::heat_2d(), in, out, Options{Boundary::periodic});
  EXPECT_EQ(again.report().variant, variant);
  EXPECT_EQ(wisdom_size().plans, held.plans);
  EXPECT_EQ(wisdom_size().variants, held.variants);
  EXPECT_EQ(wisdom_to_json(), saved);
  // Its results are the plan's.
  const HostGrid<2> start = to_grid<2>(in);
  again.apply(in, out);
  Space().fence();
  HostGrid<2> expected = start, magnitude = abs(start);
  reference_apply(presets::heat_2d(), start, expected, Boundary::periodic);
  reference_apply(abs_weights(presets::heat_2d()), abs(start), magnitude, Boundary::periodic);
  EXPECT_TRUE(within_bound(to_grid<2>(out), expected, magnitude, step_error_factor<float>(5)));
  forget_wisdom();
}

}  // namespace
}  // namespace sparstencil::test
