// Comparisons, logic ops and Where against hand-computed and reference-loop results.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor strings(Shape shape, const std::vector<std::string>& values) {
  Tensor t = Tensor::empty(DType::kString, std::move(shape));
  std::copy(values.begin(), values.end(), t.mut_as<std::string>());
  return t;
}

}  // namespace

TEST_CASE("comparisons broadcast and return bool", "[cpu][compare]") {
  const Tensor a = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, std::numeric_limits<float>::quiet_NaN()});
  const Tensor b = Tensor::from_vector<float>({3}, {2, 2, 2});
  CHECK(compare_tensors(run_one({.op_type = "Equal", .inputs = {a, b}}), bools({2, 3}, {0, 1, 0, 0, 0, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Less", .inputs = {a, b}}), bools({2, 3}, {1, 0, 0, 0, 0, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Greater", .opset = 9, .inputs = {a, b}}),
                        bools({2, 3}, {0, 0, 1, 1, 1, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "LessOrEqual", .opset = 12, .inputs = {a, b}}),
                        bools({2, 3}, {1, 1, 0, 0, 0, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "GreaterOrEqual", .opset = 16, .inputs = {a, b}}),
                        bools({2, 3}, {0, 1, 1, 1, 1, 0})).empty());

  const Tensor i = Tensor::from_vector<int64_t>({3, 1}, {-1, 0, 7});
  const Tensor j = Tensor::from_vector<int64_t>({2}, {0, 7});
  CHECK(compare_tensors(run_one({.op_type = "Less", .inputs = {i, j}}), bools({3, 2}, {1, 1, 0, 1, 0, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Equal", .opset = 11, .inputs = {i, j}}),
                        bools({3, 2}, {0, 0, 1, 0, 0, 1})).empty());
  const Tensor u = Tensor::from_vector<uint8_t>({2}, {200, 3});
  CHECK(compare_tensors(run_one({.op_type = "Greater", .inputs = {u, Tensor::from_vector<uint8_t>({}, {100})}}),
                        bools({2}, {1, 0})).empty());
}

TEST_CASE("Equal accepts bool and string", "[cpu][compare]") {
  CHECK(compare_tensors(run_one({.op_type = "Equal", .inputs = {bools({4}, {0, 0, 1, 1}), bools({4}, {0, 1, 0, 1})}}),
                        bools({4}, {1, 0, 0, 1})).empty());
  const Tensor s = strings({3}, {"a", "bb", ""});
  CHECK(compare_tensors(run_one({.op_type = "Equal", .opset = 19, .inputs = {s, strings({}, {"bb"})}}),
                        bools({3}, {0, 1, 0})).empty());
}

TEST_CASE("Not And Or Xor follow their truth tables with broadcasting", "[cpu][compare]") {
  const Tensor a = bools({2, 2}, {0, 0, 1, 1});
  const Tensor b = bools({2}, {0, 1});
  CHECK(compare_tensors(run_one({.op_type = "Not", .inputs = {a}}), bools({2, 2}, {1, 1, 0, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "And", .inputs = {a, b}}), bools({2, 2}, {0, 0, 0, 1})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Or", .inputs = {a, b}}), bools({2, 2}, {0, 1, 1, 1})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Xor", .inputs = {a, b}}), bools({2, 2}, {0, 1, 1, 0})).empty());
}

TEST_CASE("Where broadcasts condition, X and Y three ways", "[cpu][compare]") {
  const Tensor c = bools({2, 1, 3}, {1, 0, 1, 0, 1, 0});
  const Tensor x = Tensor::from_vector<int64_t>({4, 1}, {10, 20, 30, 40});
  const Tensor y = Tensor::from_vector<int64_t>({}, {-1});
  std::vector<int64_t> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(c.data_as<bool>()[i * 3 + k] ? x.data_as<int64_t>()[j] : -1);
  CHECK(compare_tensors(run_one({.op_type = "Where", .opset = 16, .inputs = {c, x, y}}),
                        Tensor::from_vector<int64_t>({2, 4, 3}, expected)).empty());

  // Strings and float16 (copied by bits).
  const Tensor sx = strings({2}, {"yes", "oui"});
  CHECK(compare_tensors(run_one({.op_type = "Where", .inputs = {bools({2, 1}, {1, 0}), sx, strings({}, {"no"})}}),
                        strings({2, 2}, {"yes", "oui", "no", "no"})).empty());
  const std::vector<uint16_t> hx{0x3c00, 0x4000}, hy{0xbc00, 0xc000};
  const Tensor fx = Tensor::from_bytes(DType::kFloat16, {2}, std::as_bytes(std::span(hx)));
  const Tensor fy = Tensor::from_bytes(DType::kFloat16, {2}, std::as_bytes(std::span(hy)));
  const Tensor h = run_one({.op_type = "Where", .inputs = {bools({2}, {0, 1}), fx, fy}});
  REQUIRE(h.dtype() == DType::kFloat16);
  CHECK(h.data_as<uint16_t>()[0] == 0xbc00);
  CHECK(h.data_as<uint16_t>()[1] == 0x4000);
}

TEST_CASE("Where over a large masked-scores pattern matches a reference loop", "[cpu][compare]") {
  const int64_t b = 3, s = 97;
  std::mt19937 rng(11);
  std::vector<uint8_t> mask(static_cast<std::size_t>(s * s));
  for (auto& m : mask) m = rng() % 2;
  std::vector<float> scores(static_cast<std::size_t>(b * s * s));
  for (auto& v : scores) v = static_cast<float>(rng() % 1000) / 10.0f;
  const float fill = -std::numeric_limits<float>::infinity();
  std::vector<float> expected(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) expected[i] = mask[i % mask.size()] ? scores[i] : fill;
  for (int threads : {1, 4}) {
    const Tensor out = run_one({.op_type = "Where",
                                .inputs = {bools({1, s, s}, mask), Tensor::from_vector<float>({b, s, s}, scores),
                                           Tensor::from_vector<float>({}, {fill})},
                                .threads = threads});
    CHECK(compare_tensors(out, Tensor::from_vector<float>({b, s, s}, expected)).empty());
    // Swapped branches: scalar X, tensor Y.
    const Tensor swapped = run_one({.op_type = "Where",
                                    .inputs = {bools({1, s, s}, mask), Tensor::from_vector<float>({}, {fill}),
                                               Tensor::from_vector<float>({b, s, s}, scores)},
                                    .threads = threads});
    for (std::size_t i = 0; i < scores.size(); ++i)
      if (swapped.data_as<float>()[i] != (mask[i % mask.size()] ? fill : scores[i])) FAIL("element " << i);
  }
}

TEST_CASE("comparison and logic ops decline unsupported types", "[cpu][compare][claim]") {
  auto less = claim_on_cpu({.op_type = "Less", .inputs = {strings({1}, {"a"}), strings({1}, {"b"})}});
  REQUIRE_FALSE(less);
  CHECK(less.reason() == "Less: input 0 has type string; the cpu EP supports float, double, float16, int8, uint8, int16, "
                         "uint16, int32, uint32, int64, uint64, bool for Less");
  auto and_op = claim_on_cpu({.op_type = "And", .inputs = {Tensor::from_vector<int32_t>({1}, {1}),
                                                           Tensor::from_vector<int32_t>({1}, {1})}});
  REQUIRE_FALSE(and_op);
  CHECK(and_op.reason() == "And: input 0 has type int32; the cpu EP supports bool for And");
  auto where = claim_on_cpu({.op_type = "Where", .inputs = {Tensor::from_vector<float>({1}, {1}),
                                                            Tensor::from_vector<float>({1}, {1}),
                                                            Tensor::from_vector<float>({1}, {1})}});
  REQUIRE_FALSE(where);
  CHECK(where.reason() == "Where: input 0 has type float; the cpu EP supports bool for Where");
  auto mixed = claim_on_cpu({.op_type = "Where", .inputs = {bools({1}, {1}), Tensor::from_vector<float>({1}, {1}),
                                                            Tensor::from_vector<double>({1}, {1})}});
  REQUIRE_FALSE(mixed);
  CHECK(mixed.reason() == "Where: X has type float and Y double; both must have the same type (insert a Cast)");
}

TEST_CASE("opset 1-6 comparisons and logic broadcast per the axis attribute", "[cpu][compare][elementwise]") {
  const Tensor a = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Tensor::from_vector<float>({2}, {2, 5});
  const Tensor less = run_one({.op_type = "Less", .opset = 1, .inputs = {a, b},
                               .attrs = attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{0}}})});
  CHECK(compare_tensors(less, bools({2, 3}, {1, 0, 0, 1, 0, 0})).empty());
  const Tensor x = run_one({.op_type = "Xor", .opset = 1, .inputs = {bools({2, 2}, {1, 0, 1, 0}), bools({2}, {1, 1})},
                            .attrs = attrs({{"broadcast", int64_t{1}}})});
  CHECK(compare_tensors(x, bools({2, 2}, {0, 1, 0, 1})).empty());
}
