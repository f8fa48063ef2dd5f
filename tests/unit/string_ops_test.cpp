// StringNormalizer, TfIdfVectorizer, StringConcat, StringSplit and RegexFullMatch against
// hand-computed results.
#include <catch2/catch.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor strings(Shape shape, const std::vector<std::string>& values) {
  Tensor t = Tensor::empty(DType::kString, std::move(shape));
  std::copy(values.begin(), values.end(), t.mut_as<std::string>());
  return t;
}

std::vector<std::string> string_values(const Tensor& t) {
  const std::string* p = t.data_as<std::string>();
  return {p, p + t.numel()};
}

using strs = std::vector<std::string>;

}  // namespace

TEST_CASE("StringNormalizer filters stopwords and maps case", "[cpu][strings]") {
  const Tensor x = strings({4}, {"monday", "tuesday", "Monday", "WEDNESDAY"});
  SECTION("case sensitive stopwords, lower case") {
    const Tensor y = run_one({.op_type = "StringNormalizer",
                              .inputs = {x},
                              .attrs = attrs({{"case_change_action", std::string("LOWER")},
                                              {"is_case_sensitive", int64_t{1}},
                                              {"stopwords", strs{"monday"}}})});
    CHECK(y.shape() == Shape{3});
    CHECK(string_values(y) == strs{"tuesday", "monday", "wednesday"});
  }
  SECTION("case insensitive stopwords, upper case, 2-D") {
    const Tensor y = run_one({.op_type = "StringNormalizer",
                              .inputs = {strings({1, 4}, string_values(x))},
                              .attrs = attrs({{"case_change_action", std::string("UPPER")},
                                              {"stopwords", strs{"MONDAY"}}})});
    CHECK(y.shape() == Shape{1, 2});
    CHECK(string_values(y) == strs{"TUESDAY", "WEDNESDAY"});
  }
  SECTION("no change keeps the text") {
    const Tensor y = run_one({.op_type = "StringNormalizer", .inputs = {x}});
    CHECK(string_values(y) == string_values(x));
  }
  SECTION("everything filtered gives one empty string") {
    const Tensor y = run_one({.op_type = "StringNormalizer",
                              .inputs = {strings({2}, {"monday", "MONDAY"})},
                              .attrs = attrs({{"stopwords", strs{"monday"}}})});
    CHECK(y.shape() == Shape{1});
    CHECK(string_values(y) == strs{""});
  }
  SECTION("bytes that are not UTF-8 get ASCII case mapping") {
    const Tensor y = run_one({.op_type = "StringNormalizer",
                              .inputs = {strings({1}, {"ab\xff"})},
                              .attrs = attrs({{"case_change_action", std::string("UPPER")}})});
    CHECK(string_values(y) == strs{"AB\xff"});
  }
}

TEST_CASE("StringNormalizer declines unknown actions and wide 2-D inputs", "[cpu][strings][claim]") {
  auto m = claim_on_cpu({.op_type = "StringNormalizer",
                         .inputs = {strings({1}, {"a"})},
                         .attrs = attrs({{"case_change_action", std::string("TITLE")}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "StringNormalizer: case_change_action 'TITLE' is not one of LOWER, UPPER, NONE");
  m = claim_on_cpu({.op_type = "StringNormalizer", .inputs = {strings({2, 1}, {"a", "b"})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() ==
        "StringNormalizer: input shape [2,1] is 2-D with a first dim other than 1; the spec allows [C] or [1, C]");
}

namespace {

// Pool: unigrams {2, 3, 5, 4} -> columns 0..3, bigrams {(5,6), (7,8), (6,7)} -> 4..6.
AttributeMap tfidf_attrs(std::string mode, int64_t min_n, int64_t max_n, int64_t skip) {
  return attrs({{"mode", std::move(mode)},
                {"min_gram_length", min_n},
                {"max_gram_length", max_n},
                {"max_skip_count", skip},
                {"ngram_counts", ints{0, 4}},
                {"ngram_indexes", ints{0, 1, 2, 3, 4, 5, 6}},
                {"pool_int64s", ints{2, 3, 5, 4, 5, 6, 7, 8, 6, 7}}});
}

}  // namespace

TEST_CASE("TfIdfVectorizer counts n-grams with skips", "[cpu][strings]") {
  const Tensor x = Tensor::from_vector<int32_t>({12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  SECTION("bigrams without skips") {
    // Adjacent pairs: (7,8) at 5, (6,7) at 7, (5,6) at 9.
    const Tensor y = run_one({.op_type = "TfIdfVectorizer", .inputs = {x}, .attrs = tfidf_attrs("TF", 2, 2, 0)});
    CHECK(compare_tensors(y, Tensor::from_vector<float>({7}, {0, 0, 0, 0, 1, 1, 1})).empty());
  }
  SECTION("unigrams and bigrams with up to 5 skipped tokens") {
    // Unigrams once: 3 x3, 5 x1. Bigrams at distances 1..6: (5,6): 9-10; (7,8): 5-6, 5-11, 8-11;
    // (6,7): 7-8 only.
    const Tensor y = run_one({.op_type = "TfIdfVectorizer", .inputs = {x}, .attrs = tfidf_attrs("TF", 1, 2, 5)});
    CHECK(compare_tensors(y, Tensor::from_vector<float>({7}, {0, 3, 1, 0, 1, 3, 1})).empty());
  }
  SECTION("a batch of rows, IDF and TFIDF weights") {
    const Tensor batch = Tensor::from_vector<int64_t>({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
    AttributeMap a = tfidf_attrs("TFIDF", 1, 2, 0);
    a.set("weights", Attribute{floats{1, 2, 3, 4, 5, 6, 7}});
    Tensor y = run_one({.op_type = "TfIdfVectorizer", .inputs = {batch}, .attrs = a});
    CHECK(compare_tensors(y, Tensor::from_vector<float>({2, 7}, {0, 6, 0, 0, 0, 0, 0,  //
                                                                  0, 0, 3, 0, 5, 0, 7}))
              .empty());
    a.set("mode", Attribute{std::string("IDF")});
    y = run_one({.op_type = "TfIdfVectorizer", .inputs = {batch}, .attrs = a});
    CHECK(compare_tensors(y, Tensor::from_vector<float>({2, 7}, {0, 2, 0, 0, 0, 0, 0,  //
                                                                  0, 0, 3, 0, 5, 0, 7}))
              .empty());
  }
  SECTION("string tokens") {
    const Tensor words = strings({5}, {"a", "b", "a", "b", "c"});
    const Tensor y = run_one({.op_type = "TfIdfVectorizer",
                              .inputs = {words},
                              .attrs = attrs({{"mode", std::string("TF")},
                                              {"min_gram_length", int64_t{1}},
                                              {"max_gram_length", int64_t{2}},
                                              {"max_skip_count", int64_t{0}},
                                              {"ngram_counts", ints{0, 2}},
                                              {"ngram_indexes", ints{1, 0, 2}},
                                              {"pool_strings", strs{"a", "c", "a", "b"}}})});
    CHECK(compare_tensors(y, Tensor::from_vector<float>({3}, {1, 2, 2})).empty());
  }
}

TEST_CASE("TfIdfVectorizer declines inconsistent pools", "[cpu][strings][claim]") {
  AttributeMap a = tfidf_attrs("TF", 1, 2, 0);
  a.set("ngram_indexes", Attribute{ints{0, 1, 2}});
  auto m = claim_on_cpu({.op_type = "TfIdfVectorizer", .inputs = {int64s({1, 2})}, .attrs = a});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "TfIdfVectorizer: ngram_indexes has 3 entries for 7 n-grams in the pool");
  m = claim_on_cpu({.op_type = "TfIdfVectorizer", .inputs = {int64s({1})}, .attrs = tfidf_attrs("BM25", 1, 1, 0)});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "TfIdfVectorizer: mode 'BM25' is not one of TF, IDF, TFIDF");
}

TEST_CASE("StringConcat broadcasts", "[cpu][strings]") {
  const Tensor y = run_one({.op_type = "StringConcat", .opset = 20,
                            .inputs = {strings({2, 1}, {"a", "b"}), strings({3}, {"1", "", "\xC3\xA9"})}});
  CHECK(y.shape() == Shape{2, 3});
  CHECK(string_values(y) == strs{"a1", "a", "a\xC3\xA9", "b1", "b", "b\xC3\xA9"});
}

TEST_CASE("StringSplit pads to the most substrings and counts them", "[cpu][strings]") {
  SECTION("a delimiter keeps empty substrings; an empty string has none") {
    auto r = run_on_cpu({.op_type = "StringSplit", .opset = 20,
                         .inputs = {strings({3}, {"a,,b", "", ",x"})},
                         .attrs = attrs({{"delimiter", std::string(",")}}),
                         .outputs = 2});
    REQUIRE(r);
    CHECK((*r)[0].shape() == Shape{3, 3});
    CHECK(string_values((*r)[0]) == strs{"a", "", "b", "", "", "", "", "x", ""});
    CHECK(compare_tensors((*r)[1], Tensor::from_vector<int64_t>({3}, {3, 0, 2})).empty());
  }
  SECTION("whitespace runs separate, maxsplit leaves a trimmed remainder") {
    auto r = run_on_cpu({.op_type = "StringSplit", .opset = 20,
                         .inputs = {strings({2}, {" a\tb  c d \n", "\v"})},
                         .attrs = attrs({{"maxsplit", int64_t{2}}}),
                         .outputs = 2});
    REQUIRE(r);
    CHECK(string_values((*r)[0]) == strs{"a", "b", "c d", "", "", ""});
    CHECK(compare_tensors((*r)[1], Tensor::from_vector<int64_t>({2}, {3, 0})).empty());
  }
  SECTION("maxsplit 0 keeps the string whole") {
    auto r = run_on_cpu({.op_type = "StringSplit", .opset = 20,
                         .inputs = {strings({1}, {"a-b"})},
                         .attrs = attrs({{"delimiter", std::string("-")}, {"maxsplit", int64_t{0}}}),
                         .outputs = 2});
    REQUIRE(r);
    CHECK(string_values((*r)[0]) == strs{"a-b"});
  }
}

TEST_CASE("RegexFullMatch matches whole strings with RE2's meaning", "[cpu][strings]") {
  const Tensor y = run_one({.op_type = "RegexFullMatch", .opset = 20,
                            .inputs = {strings({4}, {"ab12", "ab12x", "\xC3\xA9" "b1", "b"})},
                            .attrs = attrs({{"pattern", std::string(".b\\d*")}})});
  CHECK(compare_tensors(y, bools({4}, {1, 0, 1, 0})).empty());
}

TEST_CASE("RegexFullMatch declines patterns std::regex cannot run as RE2 would", "[cpu][strings][claim]") {
  auto m = claim_on_cpu({.op_type = "RegexFullMatch", .opset = 20,
                         .inputs = {strings({1}, {"a"})},
                         .attrs = attrs({{"pattern", std::string("\\p{Greek}+")}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "RegexFullMatch: the cpu EP runs RE2 patterns with std::regex and cannot run '\\p{Greek}+': "
                      "'\\p{' at offset 0: a Unicode class, which std::regex cannot express; rewrite the pattern "
                      "without that construct");
}

TEST_CASE("RegexFullMatch refuses strings too long for std::regex's recursion", "[cpu][strings]") {
  auto r = run_on_cpu({.op_type = "RegexFullMatch", .opset = 20,
                       .inputs = {strings({2}, {"a", std::string(16385, 'a')})},
                       .attrs = attrs({{"pattern", std::string("a*")}})});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().render(), Catch::Contains("RegexFullMatch: element 1 is 16385 bytes long"));
}

TEST_CASE("RegexFullMatch runs the longest accepted string", "[cpu][strings]") {
  const Tensor y = run_one({.op_type = "RegexFullMatch", .opset = 20,
                            .inputs = {strings({1}, {std::string(16384, 'a')})},
                            .attrs = attrs({{"pattern", std::string("(((((((((a)))))))))*")}})});
  CHECK(compare_tensors(y, bools({1}, {1})).empty());
}
