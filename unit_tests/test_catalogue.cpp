// Loading stencil catalogues in the JSON form of the reference catalogue.
#include <cstdlib>

#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

TEST(Catalogue, LoadsTheReferenceCatalogue) {
  const auto entries = load_catalogue(reference_catalogue_path());
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

// Programs find the catalogue beside them (the build's copy, or an installed one), or where
// SPARSTENCIL_CATALOGUE says; never at a path baked in by the build machine.
TEST(Catalogue, ReferenceCatalogueIsFoundBesideThePrograms) {
  const std::string found = reference_catalogue_path();
  EXPECT_NE(found.find("share/sparstencil/stencils.json"), std::string::npos) << found;
  ::setenv("SPARSTENCIL_CATALOGUE", "/nonexistent/stencils.json", 1);
  EXPECT_ERROR_MENTIONS(reference_catalogue_path(), "SPARSTENCIL_CATALOGUE", "/nonexistent/stencils.json",
                        "not a file");
  ::setenv("SPARSTENCIL_CATALOGUE", found.c_str(), 1);
  EXPECT_EQ(reference_catalogue_path(), found);
  ::unsetenv("SPARSTENCIL_CATALOGUE");
}

TEST(Catalogue, ErrorsNameTheEntryAndField) {
  EXPECT_ERROR_MENTIONS(load_catalogue("/nonexistent/catalogue.json"), "cannot open", "/nonexistent/catalogue.json");
  EXPECT_ERROR_MENTIONS(parse_catalogue("[{\"name\": \"x\""), "not valid JSON");
  EXPECT_ERROR_MENTIONS(parse_catalogue("{}"), "top level must be a JSON array");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"a","dims":2,"offsets":[[0,0,0]]}])"), "entry 0", "'a'",
                        "missing field 'coefficients'");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"b","dims":4,"offsets":[],"coefficients":[]}])"),
                        "'dims' must be 1, 2 or 3");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"c","dims":1,"offsets":[[0,0,0],[1,0,0]],"coefficients":[1]}])"),
                        "2 offsets but 1 coefficients");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"d","dims":2,"offsets":[[0,0,1]],"coefficients":[1]}])"), "'d'",
                        "nonzero component beyond dims 2");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"e","dims":2,"offsets":[[0,0,0],[0,0,0]],"coefficients":[1,2]}])"),
                        "'e'", "duplicate offset (0,0)");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"f","dims":1,"offsets":[[0.5]],"coefficients":[1]}])"),
                        "not all integers");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"dims":1,"offsets":[[0]],"coefficients":[1]}])"), "entry 0", "'name'");
  // Summary fields that contradict the offsets, and a name given twice (in any case).
  EXPECT_ERROR_MENTIONS(
      parse_catalogue(R"([{"name":"g","dims":1,"radius":2,"points":2,"offsets":[[0],[1]],"coefficients":[1,2]}])"),
      "'g'", "field 'radius' is 2 but the largest |offset component| give 1");
  EXPECT_ERROR_MENTIONS(
      parse_catalogue(R"([{"name":"h","dims":1,"radius":1,"points":3,"offsets":[[0],[-1]],"coefficients":[1,2]}])"),
      "'h'", "field 'points' is 3 but the offsets listed give 2");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"i","dims":1,"radius":"1","offsets":[[0]],"coefficients":[1]}])"),
                        "field 'radius' must be an integer");
  EXPECT_ERROR_MENTIONS(parse_catalogue(R"([{"name":"Twice","dims":1,"offsets":[[0]],"coefficients":[1]},
                                            {"name":"twice","dims":1,"offsets":[[1]],"coefficients":[1]}])"),
                        "entry 1", "entry 0's ('Twice') again");
  EXPECT_EQ(parse_catalogue(R"([{"name":"j","dims":2,"radius":1,"points":2,"offsets":[[0,0],[0,-1]],
                                  "coefficients":[1,2]}])")
                .size(),
            1u);
}

TEST(Catalogue, FieldTypesAndRangesNameEntryAndField) {
  // Every error is the loader's own (no JSON-library exception), naming entry and field.
  auto refused = [](const std::string& text, std::initializer_list<std::string> parts) {
    try {
      parse_catalogue(text);
      ADD_FAILURE() << "accepted: " << text.substr(0, 120);
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("sparstencil::load_catalogue: catalogue: ", 0), 0u) << message;
      for (const std::string& part : parts) {
        EXPECT_NE(message.find(part), std::string::npos) << message << "\n  does not mention: " << part;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a std::runtime_error: " << e.what();
    }
  };
  const std::string ok = R"("dims":1,"offsets":[[0],[1]],"coefficients":[0.5,0.5])";
  refused(R"([{"name":5,)" + ok + "}]", {"entry 0", "field 'name' must be a string, found 5"});
  refused(R"([{"name":"",)" + ok + "}]", {"entry 0", "field 'name' is empty"});
  refused(R"([{"name":"a","shape":3,)" + ok + "}]", {"entry 0 ('a')", "field 'shape' must be a string, found 3"});
  refused(R"([{"name":"a","source":["x"],)" + ok + "}]", {"'a'", "field 'source' must be a string"});
  refused(R"([{"name":"a","dims":4294967298,"offsets":[[0]],"coefficients":[1]}])",
          {"'a'", "field 'dims' must be 1, 2 or 3, found 4294967298"});
  refused(R"([{"name":"a","dims":"2","offsets":[[0]],"coefficients":[1]}])", {"field 'dims'", "found \"2\""});
  refused(R"([{"name":"a","dims":1,"offsets":[[4294967297]],"coefficients":[1]}])",
          {"'a'", "offset 0 [4294967297]", "beyond the range of an int"});
  refused(R"([{"name":"a","dims":1,"offsets":[[-2147483648]],"coefficients":[1]}])",
          {"'a'", "beyond the supported radius 32"});
  refused(R"([{"name":"a","dims":1,"offsets":5,"coefficients":[1]}])", {"field 'offsets' must be an array, found 5"});
  refused(R"([{"name":"a","dims":1,"offsets":[[0]],"coefficients":{}}])", {"field 'coefficients' must be an array"});
  refused(R"([{"name":"a","dims":1,"offsets":[[0]],"coefficients":["1"]}])", {"coefficient 0 (\"1\") is not a number"});
  // Numbers JSON cannot carry into a double: the whole text is refused, naming where.
  refused(R"([{"name":"a",)" + ok + R"(},{"name":"b","dims":1,"offsets":[[0]],"coefficients":[1e400]}])",
          {"entry 1 ('b')", "field 'coefficients[0]'", "number overflow parsing '1e400'"});
  refused(R"([{"name":"a","dims":1,"offsets":[[0]],"coefficients":[NaN]}])",
          {"entry 0 ('a')", "field 'coefficients[0]'", "not valid JSON"});
  refused(R"([{"name":"a","dims":1,"offsets":[[0]],"coefficients":[-Infinity]}])", {"entry 0", "not valid JSON"});
  refused(R"([{"dims":1,"offsets":[[0]],"coefficients":[1e999]}])", {"entry 0:", "field 'coefficients[0]'"});
  // Deeply nested values: messages show containers by their size (a recursive dump of
  // 100000 levels would overflow the stack).
  const std::string deep = std::string(100000, '[') + "0" + std::string(100000, ']');
  refused(R"([{"name":"a","dims":1,"offsets":[)" + deep + R"(],"coefficients":[1]}])",
          {"'a'", "offset 0 an array of 1"});
}

}  // namespace
}  // namespace sparstencil::test
