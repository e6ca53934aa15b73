// Loading stencil catalogues in the JSON form of the reference catalogue.
#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

TEST(Catalogue, LoadsTheReferenceCatalogue) {
  const auto entries = load_catalogue(SPARSTENCIL_CATALOGUE_PATH);
  ASSERT_EQ(entries.size(), 78u);
  for (const auto& e : entries) EXPECT_FALSE(e.name.empty());
  const auto& j2d5pt = entries.front();
  EXPECT_EQ(j2d5pt.name, "an5d-j2d5pt");
  EXPECT_EQ(j2d5pt.shape, "star");
  const auto& s = as<2>(j2d5pt.stencil);
  EXPECT_EQ(s.size(), 5u);
  // [dx, dy, dz] maps to View indices (0, 1, 2): (0,-1) is the first listed term.
  EXPECT_EQ(s.weight({0, -1}), 0.043220338983050846);
  EXPECT_EQ(s.weight({1, 0}), 0.10338983050847457);
  std::size_t by_dims[4] = {};
  for (const auto& e : entries) ++by_dims[dimension(e.stencil)];
  EXPECT_GT(by_dims[1], 0u);
  EXPECT_GT(by_dims[2], 0u);
  EXPECT_GT(by_dims[3], 0u);
}

TEST(Catalogue, ErrorsNameTheEntryAndField) {
  EXPECT_ERROR_MENTIONS(load_catalogue("/nonexistent/catalogue.json"), "cannot open", "/nonexistent/catalogue.json");
  EXPECT_ERROR_MENTIONS(parse_catalogue("[{\"name\": \"x\""), "not valid JSON");
  EXPECT_ERROR_MENTIONS(parse_catalogue("{}"), "top level must be a JSON array");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"a","dims":2,"offsets":[[0,0,0]]}])"),
                        "entry 0", "'a'", "missing field 'coefficients'");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"b","dims":4,"offsets":[],"coefficients":[]}])"),
                        "'dims' must be 1, 2 or 3");
  EXPECT_ERROR_MENTIONS(
      parse_catalogue(R"([{"name":"c","dims":1,"offsets":[[0,0,0],[1,0,0]],"coefficients":[1]}])"),
      "2 offsets but 1 coefficients");
  EXPECT_ERROR_MENTIONS(
      parse_catalogue(R"([{"name":"d","dims":2,"offsets":[[0,0,1]],"coefficients":[1]}])"),
      "'d'", "nonzero component beyond dims 2");
  EXPECT_ERROR_MENTIONS(
      parse_catalogue(R"([{"name":"e","dims":2,"offsets":[[0,0,0],[0,0,0]],"coefficients":[1,2]}])"),
      "'e'", "duplicate offset (0,0)");
  EXPECT_ERROR_MENTIONS(
      parse_catalogue(R"([{"name":"f","dims":1,"offsets":[[0.5]],"coefficients":[1]}])"), "not all integers");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"dims":1,"offsets":[[0]],"coefficients":[1]}])"),
                        "entry 0", "'name'");
}

}  // namespace
}  // namespace sparstencil::test
