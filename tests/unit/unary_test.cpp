// The unary elementwise family against std:: references.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("Relu, Sigmoid and Clip match their definitions", "[cpu][unary]") {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {-2, -0.5f, 0, 0.5f, 1, 3});
  auto relu = run_on_cpu({.op_type = "Relu", .inputs = {x}});
  REQUIRE(relu);
  check_equal((*relu)[0], Tensor::from_vector<float>({2, 3}, {0, 0, 0, 0.5f, 1, 3}));

  auto sig = run_on_cpu({.op_type = "Sigmoid", .inputs = {x}});
  REQUIRE(sig);
  for (int i = 0; i < 6; ++i)
    CHECK((*sig)[0].data_as<float>()[i] == Approx(1 / (1 + std::exp(-x.data_as<float>()[i]))));

  auto clip = run_on_cpu({.op_type = "Clip", .inputs = {x, Tensor::from_vector<float>({}, {-1}),
                                                          Tensor::from_vector<float>({}, {1})}});
  REQUIRE(clip);
  check_equal((*clip)[0], Tensor::from_vector<float>({2, 3}, {-1, -0.5f, 0, 0.5f, 1, 1}));
}

TEST_CASE("Sigmoid's float vectors stay within 2 ulp of the formula, in the tails and at NaN", "[cpu][unary]") {
  // 1001 values from -100 to 100 (vector bodies and a tail), then infinities and NaN.
  std::vector<float> v;
  for (int i = 0; i <= 1000; ++i) v.push_back(-100.f + 0.2f * static_cast<float>(i));
  v.insert(v.end(), {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::quiet_NaN()});
  const Tensor y = run_one({.op_type = "Sigmoid", .inputs = {Tensor::from_vector<float>({std::ssize(v)}, v)}});
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float want = 1 / (1 + std::exp(-v[i])), got = y.data_as<float>()[i];
    INFO("x = " << v[i] << ": " << got << " against " << want);
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
    } else {
      CHECK(std::abs(got - want) <= 2 * std::numeric_limits<float>::epsilon() * want + 1e-37f);
    }
  }
  // float16 and double keep the formula.
  const Tensor d = run_one({.op_type = "Sigmoid", .inputs = {Tensor::from_vector<double>({2}, {-1, 3})}});
  CHECK(d.data_as<double>()[0] == 1 / (1 + std::exp(1.0)));
  CHECK(d.data_as<double>()[1] == 1 / (1 + std::exp(-3.0)));
}

TEST_CASE("math and rounding ops match std, Round rounds halves to even", "[cpu][unary][elementwise]") {
  const std::vector<float> v = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.4f, 2.6f};
  const Tensor x = Tensor::from_vector<float>({8}, v);
  check_equal(run_one({.op_type = "Round", .inputs = {x}}),
              Tensor::from_vector<float>({8}, {-2, -2, -0.f, 0, 2, 2, 0, 3}));
  check_equal(run_one({.op_type = "Floor", .opset = 1, .inputs = {x}}),
              Tensor::from_vector<float>({8}, {-3, -2, -1, 0, 1, 2, 0, 2}));
  check_equal(run_one({.op_type = "Ceil", .inputs = {x}}),
              Tensor::from_vector<float>({8}, {-2, -1, -0.f, 1, 2, 3, 1, 3}));
  const Tensor unit = Tensor::from_vector<double>({3}, {-0.5, 0.25, 0.75});
  const Tensor s = run_one({.op_type = "Asin", .inputs = {unit}});
  const Tensor t = run_one({.op_type = "Atanh", .inputs = {unit}});
  const Tensor r = run_one({.op_type = "Reciprocal", .opset = 6, .inputs = {unit}});
  for (int i = 0; i < 3; ++i) {
    CHECK(s.data_as<double>()[i] == Approx(std::asin(unit.data_as<double>()[i])));
    CHECK(t.data_as<double>()[i] == Approx(std::atanh(unit.data_as<double>()[i])));
    CHECK(r.data_as<double>()[i] == Approx(1 / unit.data_as<double>()[i]));
  }
}

TEST_CASE("Sign Abs Neg Relu take integers; IsInf and IsNaN give bool", "[cpu][unary][elementwise]") {
  const Tensor i8 = Tensor::from_vector<int8_t>({4}, {-7, 0, 3, -1});
  check_equal(run_one({.op_type = "Sign", .inputs = {i8}}), Tensor::from_vector<int8_t>({4}, {-1, 0, 1, -1}));
  check_equal(run_one({.op_type = "Abs", .inputs = {i8}}), Tensor::from_vector<int8_t>({4}, {7, 0, 3, 1}));
  check_equal(run_one({.op_type = "Neg", .opset = 1, .inputs = {i8}}),
              Tensor::from_vector<int8_t>({4}, {7, 0, -3, 1}));
  check_equal(run_one({.op_type = "Relu", .opset = 14, .inputs = {i8}}),
              Tensor::from_vector<int8_t>({4}, {0, 0, 3, 0}));

  // float16 runs in float: |-2| and |0.5| as binary16 bits.
  const std::vector<uint16_t> half_bits = {0xC000, 0x3800};
  const Tensor half = run_one({.op_type = "Abs", .inputs = {Tensor::from_bytes(DType::kFloat16, {2}, std::as_bytes(std::span(half_bits)))}});
  CHECK(std::vector<uint16_t>(half.data_as<uint16_t>(), half.data_as<uint16_t>() + 2) == std::vector<uint16_t>{0x4000, 0x3800});

  constexpr float kInf = std::numeric_limits<float>::infinity();
  const Tensor x = Tensor::from_vector<float>({4}, {kInf, -kInf, NAN, 1});
  auto bools = [](const Tensor& t) { return std::vector<bool>(t.data_as<bool>(), t.data_as<bool>() + t.numel()); };
  CHECK(bools(run_one({.op_type = "IsInf", .inputs = {x}})) == std::vector<bool>{true, true, false, false});
  CHECK(bools(run_one({.op_type = "IsInf", .inputs = {x}, .attrs = attrs({{"detect_positive", int64_t{0}}})})) ==
        std::vector<bool>{false, true, false, false});
  CHECK(bools(run_one({.op_type = "IsInf", .inputs = {x}, .attrs = attrs({{"detect_negative", int64_t{0}}})})) ==
        std::vector<bool>{true, false, false, false});
  CHECK(bools(run_one({.op_type = "IsNaN", .inputs = {x}})) == std::vector<bool>{false, false, true, false});
}

TEST_CASE("Clip takes attributes before opset 11, inputs after, and every integer type", "[cpu][unary][elementwise]") {
  const Tensor x = Tensor::from_vector<float>({4}, {-3, -0.5f, 0.5f, 3});
  check_equal(run_one({.op_type = "Clip", .opset = 6, .inputs = {x}, .attrs = attrs({{"min", -1.0f}})}),
              Tensor::from_vector<float>({4}, {-1, -0.5f, 0.5f, 3}));
  check_equal(run_one({.op_type = "Clip", .opset = 1, .inputs = {x}, .attrs = attrs({{"max", 0.0f}})}),
              Tensor::from_vector<float>({4}, {-3, -0.5f, 0, 0}));
  const Tensor i8 = Tensor::from_vector<int8_t>({4}, {-128, -5, 5, 127});
  check_equal(run_one({.op_type = "Clip", .inputs = {i8, Tensor(), Tensor::from_vector<int8_t>({}, {6})}}),
              Tensor::from_vector<int8_t>({4}, {-128, -5, 5, 6}));
  // min > max: every element becomes max.
  check_equal(run_one({.op_type = "Clip", .inputs = {i8, Tensor::from_vector<int8_t>({}, {3}),
                                                      Tensor::from_vector<int8_t>({}, {1})}}),
              Tensor::from_vector<int8_t>({4}, {1, 1, 1, 1}));
}

TEST_CASE("unary ops decline integer inputs with the supported types", "[cpu][unary][claim][elementwise]") {
  auto m = claim_on_cpu({.op_type = "Sin", .inputs = {Tensor::from_vector<int32_t>({2}, {1, -1})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Sin: input 0 has type int32; the cpu EP supports float, double, float16 for Sin");
  auto clip = claim_on_cpu({.op_type = "Clip", .opset = 11, .inputs = {Tensor::from_vector<int32_t>({2}, {1, -1})}});
  REQUIRE_FALSE(clip);
  CHECK(clip.reason() == "Clip: input 0 has type int32; the cpu EP supports float, double, float16 for Clip");
}
