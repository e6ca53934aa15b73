// Plans read from JSON are verified: every plan the planner makes verifies and reads back
// as itself; a plan whose fields are of the wrong type, out of range or inconsistent is
// refused naming the field; and every mutation of a valid plan that is accepted emulates
// without a fault (the emulator indexes only with what verify() checked).
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

using nlohmann::json;

/// The plans mutated below: each form of the matrix plan and a generic one, on small grids.
std::vector<Plan> sample_plans() {
  std::vector<Plan> plans;
  PlanRequest r = request_for(presets::heat_1d(), Precision::f16, Boundary::periodic);
  plans.push_back(cuda_sptc::make_sparse_plan(r, {16}));  // row runs, 1-D
  r = request_for(presets::heat_2d(), Precision::f16, Boundary::interior);
  plans.push_back(cuda_sptc::make_sparse_plan(r, {4, 4}));  // gather table, f16
  r = request_for(presets::box_2d9p(), Precision::bf16, Boundary::periodic, 2);
  plans.push_back(cuda_sptc::make_sparse_plan(r, {1, 16}));  // fused row runs
  r         = request_for(presets::box_3d27p(), Precision::f16, Boundary::fixed_rim);
  r.pairing = Pairing::interleaved;
  plans.push_back(cuda_sptc::make_sparse_plan(r, {1, 1, 16}));  // interleaved rows
  r = request_for(presets::heat_3d(), Precision::tf32, Boundary::periodic);
  plans.push_back(cuda_sptc::make_sparse_plan(r, {2, 2, 4}));  // gather table, tf32, 3-D
  r          = request_for(presets::box_2d9p(), Precision::f32, Boundary::periodic);
  r.backends = {"generic"};
  plans.push_back(make_plan(r));
  return plans;
}

template <int D>
void emulate_on_random_grid(const Plan& plan) {
  std::array<int, D> extents{};
  for (int a = 0; a < D; ++a) extents[a] = static_cast<int>(plan.grid[a]);
  const HostGrid<D> in = random_grid<D>(extents, plan.precision, 7);
  HostGrid<D> out      = random_grid<D>(extents, plan.precision, 8);
  cuda_sptc::emulate(plan, in, out);
}

void emulate_on_random_grid(const Plan& plan) {
  switch (plan.dims()) {
    case 1: emulate_on_random_grid<1>(plan); break;
    case 2: emulate_on_random_grid<2>(plan); break;
    default: emulate_on_random_grid<3>(plan); break;
  }
}

/// The plan's JSON with the value at `pointer` replaced.
std::string with(const Plan& plan, const std::string& pointer, const json& value) {
  json j                         = json::parse(to_json(plan));
  j[json::json_pointer(pointer)] = value;
  return j.dump();
}

TEST(PlanJson, EveryPlannedFormVerifiesAndReadsBack) {
  std::size_t checked = 0;
  for (const AnyStencil& any : presets::standard_set()) {
    std::visit(
        [&](const auto& s) {
          constexpr int D = std::decay_t<decltype(s)>::rank;
          for (Precision p : sparse_precisions) {
            for (int steps : {1, 2}) {
              {
                // (The boundary takes no part in the matrix form.)
                PlanRequest r = request_for(s, p, Boundary::periodic, steps);
                for (const auto& tile : cuda_sptc::candidate_tiles(D, radius_vector(fuse(s, steps)))) {
                  std::vector<Pairing> pairings = {Pairing::best};
                  if (cuda_sptc::is_row_run_tile(tile)) pairings.push_back(Pairing::interleaved);
                  for (Pairing pairing : pairings) {
                    r.pairing       = pairing;
                    const Plan plan = cuda_sptc::make_sparse_plan(r, tile);
                    EXPECT_NO_THROW(verify(plan)) << s.name() << " tile " << impl::tuple_string(tile);
                    EXPECT_EQ(plan_from_json(to_json(plan)), plan) << s.name() << " tile " << impl::tuple_string(tile);
                    ++checked;
                  }
                }
              }
            }
          }
        },
        any);
  }
  EXPECT_GT(checked, 300u);
  // A block per tile (pairs interleaved 16 apart: the 15 x 15 box).
  PlanRequest r   = request_for(box<2>(7), Precision::f16, Boundary::periodic, 1, {64, 64});
  r.pairing       = Pairing::interleaved;
  const Plan wide = cuda_sptc::make_sparse_plan(r, {1, 16});
  ASSERT_EQ(wide.interleave, 16);
  EXPECT_EQ(plan_from_json(to_json(wide)), wide);
}

TEST(PlanJson, RefusesPlansThatDoNotVerify) {
  const std::vector<Plan> plans = sample_plans();
  const Plan& row               = plans[0];  // heat1d, grid 157, tile 16
  const Plan& gather            = plans[1];  // heat2d, grid 19 x 37, tile 4 x 4
  const Plan& generic           = plans[5];
  // Tables pointing outside what they index.
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/gather/3", 1000000)), "sparstencil::plan_from_json",
                        "field 'gather'", "entry 3 (1000000)", "inside the image");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/gather/0", -7)), "field 'gather'", "entry 0 (-7)");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/tile_offsets/5", 1 << 20)), "field 'tile_offsets'", "entry 5");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/order/columns/2", 10000)), "field 'order.columns'",
                        "entry 2 (10000)");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/runs/0/offset/0", 4000)), "field 'runs'", "run 0");
  // Row alignments other than a power of two from 1 to 16; plans written before the field
  // read rows of whole 16-byte units.
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/row_alignment", 3)), "field 'row_alignment'", "3 bytes",
                        "power of two");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/row_alignment", 32)), "field 'row_alignment'", "32 bytes");
  EXPECT_EQ(plan_from_json(with(row, "/row_alignment", 2)).row_alignment, 2);
  nlohmann::json older = nlohmann::json::parse(to_json(row));
  older.erase("row_alignment");
  EXPECT_EQ(plan_from_json(older.dump()).row_alignment, 16);
  // Negative and oversized extents.
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/grid/0", -157)), "field 'grid'", "extent -157", "outside 1..");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/grid/0", 2147483648L)), "field 'grid'", "extent 2147483648");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/shared_extent/1", -3)), "field 'shared_extent'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/shared_pitch", 1)), "field 'shared_pitch'");
  // Truncated tables and sizes that disagree.
  json j = json::parse(to_json(gather));
  j["a"]["values"].erase(j["a"]["values"].size() - 1);
  EXPECT_ERROR_MENTIONS(plan_from_json(j.dump()), "field 'a.values'", "m_blocks x k_chunks");
  j = json::parse(to_json(gather));
  j["a"]["metadata"].erase(0);
  EXPECT_ERROR_MENTIONS(plan_from_json(j.dump()), "field 'a.metadata'");
  j = json::parse(to_json(gather));
  j["tile_offsets"].erase(0);
  EXPECT_ERROR_MENTIONS(plan_from_json(j.dump()), "field 'tile_offsets'", "entries for");
  j = json::parse(to_json(gather));
  j["gather"].erase(0);
  EXPECT_ERROR_MENTIONS(plan_from_json(j.dump()), "field 'gather'", "entries for K");
  j = json::parse(to_json(row));
  j["runs"].erase(0);
  EXPECT_ERROR_MENTIONS(plan_from_json(j.dump()), "field 'runs'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/a/m_blocks", 2)), "field 'a.m_blocks'", "ceil(rows / 16)");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/a/k_chunks", 9)), "field 'a.k_chunks'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/rows", 17)), "field 'rows'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/patch/0", 5)), "field 'patch'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/tile", json::array({4, 4, 1}))), "field 'tile'", "3 entries");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/mma", json::array({16, 8, 16}))), "field 'mma'", "m16n8k32");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/interleave/0", 5)), "field 'interleave'", "not 0, 4, 8 or 16");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(generic, "/gather", json::array({0}))), "field 'gather'", "no tile");
  // Numbers beyond their C++ type: refused, never truncated (4294967297 would read as 1).
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/fused_steps", 4294967297L)), "field 'fused_steps'", "4294967297");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/rows", 4294967312L)), "field 'rows'", "4294967312");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/a/values/0", 4294967296L)), "field 'a.values[0]'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(gather, "/gather/1", -2147483649L)), "field 'gather[1]'");
  std::string huge = with(row, "/predicted/seconds", "here");
  huge.replace(huge.find("\"here\""), 6, "1e400");
  EXPECT_ERROR_MENTIONS(plan_from_json(huge), "not valid JSON at field 'predicted.seconds'", "number overflow");
  // Wrong types.
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/grid", "157")), "field 'grid'", "expected an array");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/precision", 16)), "field 'precision'", "expected a string");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/a", json::array())), "field 'a'", "expected an object");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/mma", json::array({16, 8}))), "field 'mma'", "2 entries");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/runs/1/offset", "x")), "field 'runs[1].offset'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/original/text", 5)), "field 'original.text'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(generic, "/bids/0/outcome", "won")), "field 'bids[0].outcome'", "won");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/predicted/temporal_blocking", 1)),
                        "field 'predicted.temporal_blocking'");
  EXPECT_ERROR_MENTIONS(plan_from_json("[1, 2]"), "top level must be a JSON object");
  // Names and the stencil.
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/device", "tpu")), "field 'device'", "unknown device 'tpu'");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/backend", "")), "field 'backend'", "empty");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/boundary", "open")), "field 'boundary'", "unknown boundary");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/fused_steps", 2)), "field 'stencil'", "fuse(original, 2)");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/fused_steps", 0)), "field 'fused_steps'", "below 1");
  EXPECT_ERROR_MENTIONS(plan_from_json(with(row, "/original/dims", 2)), "field 'original.dims'", "1-D");
  json other                = json::parse(to_json(row));
  other["original"]["text"] = "0:0.5 2:0.5";  // radius 2: the tile's patch is for radius 1
  other["stencil"]["text"]  = "0:0.5 2:0.5";
  EXPECT_ERROR_MENTIONS(plan_from_json(other.dump()), "field 'radius'", "(1) is not the radius (2)");
  // A one-point stencil fused over 2^31 - 1 steps is checked without 2^31 map builds.
  json scaled                = json::parse(to_json(generic));
  scaled["original"]["text"] = "0,0:1";
  scaled["stencil"]["text"]  = "0,0:1";
  scaled["fused_steps"]      = 2147483647;
  EXPECT_EQ(plan_from_json(scaled.dump()).fused_steps, 2147483647);
}

TEST(PlanJson, WritesNamesThatAreNotUtf8) {
  // A stencil is named by whatever text it was given; to_json must not throw on it.
  PlanRequest r   = request_for(Stencil<1>({{{0}, 0.5}, {{1}, 0.5}}, "caf\xe9"), Precision::f16, Boundary::periodic);
  const Plan plan = make_plan(r);
  std::string text;
  ASSERT_NO_THROW(text = to_json(plan));
  EXPECT_EQ(name(plan_from_json(text).original), "caf\xef\xbf\xbd");  // U+FFFD for the stray byte
}

/// Every leaf of a plan's JSON replaced by values that break ranges and types, and every
/// array cut short: each result is refused with a message naming a field, or accepted
/// and then emulated without a fault.
TEST(PlanJson, MutatedPlansAreRefusedClearlyOrEmulate) {
  std::size_t refused = 0, accepted = 0;
  for (const Plan& plan : sample_plans()) {
    const json original = json::parse(to_json(plan));
    std::vector<std::string> leaves, arrays;
    std::mt19937_64 rng(11);
    std::function<void(const json&, const std::string&)> walk = [&](const json& j, const std::string& at) {
      if (j.is_object()) {
        for (const auto& [key, value] : j.items()) walk(value, at + "/" + key);
      } else if (j.is_array()) {
        arrays.push_back(at);
        std::set<std::size_t> picked;  // long tables: the ends, the middle and one at random
        if (j.size() <= 6) {
          for (std::size_t i = 0; i < j.size(); ++i) picked.insert(i);
        } else {
          picked = {0, 1, j.size() / 2, j.size() - 1, rng() % j.size()};
        }
        for (std::size_t i : picked) walk(j[i], at + "/" + std::to_string(i));
      } else {
        leaves.push_back(at);
      }
    };
    walk(original, "");
    auto attempt = [&](const std::string& text, const std::string& what) {
      Plan read;
      try {
        read = plan_from_json(text);
      } catch (const std::runtime_error& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.rfind("sparstencil::plan_from_json: ", 0), 0u) << what << ": " << message;
        EXPECT_TRUE(message.find("field '") != std::string::npos || message.find("top level") != std::string::npos)
            << what << ": " << message;
        ++refused;
        return;
      }
      ++accepted;
      if (read.backend == "cuda_sptc" && has_matrix_form(read)) {
        EXPECT_NO_THROW(emulate_on_random_grid(read)) << what;
      }
    };
    for (const std::string& leaf : leaves) {
      const json& value              = original[json::json_pointer(leaf)];
      std::vector<json> replacements = {-1, 0, 1, 4294967297L, -2147483649L, 0.5, "x", nullptr, json::array()};
      if (value.is_number_integer()) {
        const long v = value.get<long>();
        for (long w : {v - 1, v + 1, 2 * v + 7, -v}) replacements.push_back(w);
      }
      for (const json& replacement : replacements) {
        json mutated                      = original;
        mutated[json::json_pointer(leaf)] = replacement;
        attempt(mutated.dump(), leaf + " = " + replacement.dump());
      }
    }
    for (const std::string& array : arrays) {
      json mutated = original;
      json& a      = mutated[json::json_pointer(array)];
      if (a.empty()) continue;
      a.erase(a.size() - 1);
      attempt(mutated.dump(), array + " cut short");
    }
  }
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(accepted, 100u);
}

}  // namespace
}  // namespace sparstencil::test
