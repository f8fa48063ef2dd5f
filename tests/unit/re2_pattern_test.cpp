// RE2 → ECMAScript translation: matches agree with RE2's documented meaning on UTF-8 text,
// and constructs without an equivalent are refused with the construct and its offset.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "common/re2_pattern.h"

using nxrt::cpu::re2_to_ecmascript;

namespace {

bool full_match(const std::string& re2, const std::string& text) {
  auto ecma = re2_to_ecmascript(re2);
  REQUIRE(ecma);
  return std::regex_match(text, std::regex(*ecma, std::regex::ECMAScript));
}

std::string refusal(const std::string& re2) {
  auto ecma = re2_to_ecmascript(re2);
  REQUIRE_FALSE(ecma);
  return ecma.error();
}

}  // namespace

TEST_CASE("dot and negated classes consume one UTF-8 code point", "[cpu][strings][re2]") {
  CHECK(full_match("caf.", "caf\xC3\xA9"));
  CHECK_FALSE(full_match("caf..", "caf\xC3\xA9"));
  CHECK(full_match("..", "\xE2\x82\xAC\xF0\x9F\x98\x80"));  // U+20AC, U+1F600
  CHECK_FALSE(full_match(".", "\n"));
  CHECK(full_match("[^a]", "\n"));
  CHECK(full_match("[^a]", "\xC3\xA9"));
  CHECK_FALSE(full_match("[^a]", "a"));
  CHECK(full_match("\xC3\xA9+", "\xC3\xA9\xC3\xA9\xC3\xA9"));  // the quantifier repeats the code point
  CHECK_FALSE(full_match("\xC3\xA9+", "\xC3\xA9\xA9"));
}

TEST_CASE("perl and POSIX classes are RE2's ASCII ones", "[cpu][strings][re2]") {
  CHECK(full_match("\\s", "\t"));
  CHECK_FALSE(full_match("\\s", "\v"));  // RE2's \s is [\t\n\f\r ]
  CHECK(full_match("\\S", "\v"));
  CHECK(full_match("\\w+", "a_Z9"));
  CHECK_FALSE(full_match("\\w", "\xC3\xA9"));
  CHECK(full_match("\\W", "\xC3\xA9"));
  CHECK(full_match("\\D\\d", "x7"));
  CHECK(full_match("[[:alpha:][:digit:]_-]+", "a-1_B"));
  CHECK_FALSE(full_match("[[:punct:]]", "a"));
  CHECK(full_match("[\\d.]+", "1.5"));
}

TEST_CASE("literals, escapes, groups and repetitions keep RE2's meaning", "[cpu][strings][re2]") {
  CHECK(full_match("a{2}b{1,}c{0,1}", "aabbb"));
  CHECK(full_match("a{", "a{"));  // not a repetition: a literal brace, as in RE2
  CHECK(full_match("x{,2}", "x{,2}"));
  CHECK(full_match("(?P<year>\\d{4})-(?<mm>\\d\\d)", "2024-05"));
  CHECK(full_match("\\Qa.b*\\E!", "a.b*!"));
  CHECK_FALSE(full_match("\\Qa.b\\E", "axb"));
  CHECK(full_match("\\x41\\x{e9}", "A\xC3\xA9"));
  CHECK(full_match("\\Aab|cd\\z", "cd"));
  CHECK(full_match("a\\.b\\+\\(\\)", "a.b+()"));
  CHECK(full_match("[]a]+", "]a]"));
  CHECK(full_match("[a-]+", "a-a"));
  CHECK(full_match("a*?b", "aab"));
}

TEST_CASE("constructs without an ECMAScript equivalent are refused with their offset", "[cpu][strings][re2]") {
  CHECK(refusal("(?i)abc") == "'(?i)' at offset 0: inline flags (i, m, s, U), which std::regex cannot scope to part "
                              "of a pattern");
  CHECK(refusal("a(?s:.)") == "'(?s:' at offset 1: inline flags (i, m, s, U), which std::regex cannot scope to part "
                              "of a pattern");
  CHECK(refusal("\\pL+") == "'\\pL' at offset 0: a Unicode class, which std::regex cannot express");
  CHECK(refusal("a(?=b)") == "'(?=' at offset 1: lookaround, which RE2 does not support");
  CHECK(refusal("(a)\\1") == "'\\1' at offset 3: an octal escape or backreference, which this translation does not "
                             "support");
  CHECK(refusal("[\xC3\xA9]") == "'\xC3\xA9' at offset 1: the non-ASCII character U+00E9 inside brackets; std::regex "
                                 "matches bytes, not code points");
  CHECK(refusal("a{2,1001}") == "'{2,1001}' at offset 1: a repetition count above 1000, which RE2 rejects");
  CHECK(refusal("[abc") == "'[abc' at offset 0: a bracket expression without its ']', which RE2 rejects");
  CHECK(refusal("\\Z") == "'\\Z' at offset 0: an escape RE2 does not define");
  CHECK(refusal("a\xFF") == "'\xFF' at offset 1: the pattern is not valid UTF-8, which RE2 rejects");
}
