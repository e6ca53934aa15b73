// The command-line text form of stencils.
#include "test_utils.hpp"

namespace sparstencil::test {
namespace {

/// Expects a ParseError at `column` (0-based) whose message mentions `what`.
void expect_parse_error(const std::string& text, std::size_t column, const std::string& what) {
  try {
    parse_stencil(text);
    ADD_FAILURE() << "'" << text << "' parsed";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    // The caret line points at the column.
    EXPECT_NE(std::string(e.what()).find("\n  " + std::string(column, ' ') + "^"), std::string::npos) << e.what();
  }
}

TEST(Parse, Presets) {
  EXPECT_EQ(as<2>(parse_stencil("box2d49p")), presets::box_2d49p());
  EXPECT_EQ(as<1>(parse_stencil(" heat1d ")), presets::heat_1d());
  EXPECT_EQ(as<3>(parse_stencil("Box-3D27P")), presets::box_3d27p());
  EXPECT_EQ(as<1>(parse_stencil("1d5p")), presets::d1_5p());  // starts with a digit
}

TEST(Parse, Builders) {
  EXPECT_EQ(as<2>(parse_stencil("box2d:r=3")), box<2>(3));
  EXPECT_EQ(as<3>(parse_stencil("star3d:r=1")), star<3>(1));
  EXPECT_EQ(as<1>(parse_stencil("star1d:r=4")), star<1>(4));
}

TEST(Parse, ExplicitTerms) {
  const auto s = as<2>(parse_stencil("0,0:0.5 1,0:0.125; -1,0:0.125 ;0,1:.125 0,-1:1.25e-1"));
  EXPECT_EQ(s, presets::heat_2d());
  const auto one = as<1>(parse_stencil("-2:1 +3:-0.5"));
  EXPECT_EQ(one.weight({3}), -0.5);
  EXPECT_EQ(one.radius()[0], 3);
}

TEST(Parse, TextFormRoundTrips) {
  for (const AnyStencil& s : presets::standard_set()) {
    EXPECT_EQ(to_text(parse_stencil(to_text(s))), to_text(s)) << name(s);
    std::visit(
        [&](const auto& st) {
          using S = std::decay_t<decltype(st)>;
          EXPECT_EQ(std::get<S>(parse_stencil(to_text(s))), st) << name(s);  // exact weights
        },
        s);
  }
}

TEST(Parse, ErrorsPointAtTheFault) {
  expect_parse_error("", 0, "empty stencil text");
  expect_parse_error("0,0:0.5 1,x:0.1", 10, "expected an integer offset coordinate");
  expect_parse_error("0,0 0.5", 3, "expected ':'");
  expect_parse_error("0,0:abc", 4, "expected a number for the weight, found 'abc'");
  expect_parse_error("0,0:0.5 1:0.2", 8, "mixed dimensions");
  expect_parse_error("0,0,0,0:1", 6, "at most 3");
  expect_parse_error("box2d:r=0", 8, "radius 0 is outside");
  expect_parse_error("box2d:q=1", 6, "expected 'r='");
  expect_parse_error("cube2d:r=1", 0, "unknown builder 'cube2d'");
  // A one-letter word before ':' (a fuzz input: the dimension was read before the word's
  // start, which the sanitizer build reports).
  expect_parse_error("f:r=1", 0, "unknown builder 'f'");
  expect_parse_error("heat9d", 0, "unknown stencil name 'heat9d'");
  expect_parse_error("box2d:r=2 extra", 10, "unexpected text after the radius");
}

TEST(Parse, ValidSyntaxInvalidStencil) {
  EXPECT_ERROR_MENTIONS(parse_stencil("1,0:0.5 1,0:0.5"), "duplicate offset", "(1,0)");
  EXPECT_ERROR_MENTIONS(parse_stencil("0:nan"), "non-finite");
  EXPECT_ERROR_MENTIONS(parse_stencil("40,0:1"), "beyond the supported radius");
}

}  // namespace
}  // namespace sparstencil::test
