// Random ops and Dropout: statistics over many draws, seed reproducibility, inference mode.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

template <class T>
std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<double>(t.data_as<T>()[i]));
  return out;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double stddev(const std::vector<double>& v) {
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

}  // namespace

TEST_CASE("RandomUniform and RandomNormal draw the requested distribution", "[cpu][random]") {
  const Tensor u = run_one({.op_type = "RandomUniform",
                            .opset = 1,
                            .attrs = attrs({{"shape", ints{100, 100}}, {"low", -1.0f}, {"high", 3.0f}, {"seed", 5.0f}})});
  REQUIRE(u.shape() == Shape{100, 100});
  const auto uv = values<float>(u);
  for (double x : uv) REQUIRE((x >= -1 && x < 3));
  CHECK(mean(uv) == Approx(1.0).margin(0.05));                      // (low + high) / 2
  CHECK(stddev(uv) == Approx(4 / std::sqrt(12.0)).margin(0.05));  // (high - low) / sqrt(12)

  const Tensor n = run_one({.op_type = "RandomNormal",
                            .opset = 1,
                            .attrs = attrs({{"shape", ints{10000}}, {"mean", 2.0f}, {"scale", 0.5f},
                                            {"dtype", int64_t{11}}})});
  REQUIRE(n.dtype() == DType::kFloat64);
  CHECK(mean(values<double>(n)) == Approx(2.0).margin(0.03));
  CHECK(stddev(values<double>(n)) == Approx(0.5).margin(0.03));
}

TEST_CASE("a seed makes the draws reproducible", "[cpu][random]") {
  auto draw = [](float seed) {
    return run_one({.op_type = "RandomUniformLike",
                    .opset = 1,
                    .inputs = {iota_float({4, 8})},
                    .attrs = attrs({{"seed", seed}})});
  };
  const Tensor a = draw(1.0f), b = draw(1.0f), c = draw(2.0f);
  CHECK(a.shape() == Shape{4, 8});
  CHECK(compare_tensors(a, b, 0, 0).empty());
  CHECK_FALSE(compare_tensors(a, c, 0, 0).empty());
}

TEST_CASE("Bernoulli draws ones with the given probabilities", "[cpu][random]") {
  std::vector<float> p(20000, 0.3f);
  p[0] = 0.0f;
  p[1] = 1.0f;
  const Tensor y = run_one({.op_type = "Bernoulli",
                            .opset = 15,
                            .inputs = {Tensor::from_vector<float>({20000}, p)},
                            .attrs = attrs({{"dtype", int64_t{6}}, {"seed", 7.0f}})});
  REQUIRE(y.dtype() == DType::kInt32);
  const auto v = values<int32_t>(y);
  CHECK(v[0] == 0);
  CHECK(v[1] == 1);
  for (double x : v) REQUIRE((x == 0 || x == 1));
  CHECK(mean(v) == Approx(0.3).margin(0.015));
}

TEST_CASE("Multinomial samples classes by their probabilities", "[cpu][random]") {
  // Row 0: probabilities 0.2 / 0.8 as log-probabilities; row 1: class 0 has probability 0.
  const Tensor logits = Tensor::from_vector<float>({2, 2}, {std::log(0.2f), std::log(0.8f), -INFINITY, 0.0f});
  const Tensor y = run_one({.op_type = "Multinomial",
                            .opset = 7,
                            .inputs = {logits},
                            .attrs = attrs({{"sample_size", int64_t{5000}}, {"dtype", int64_t{7}}, {"seed", 1.0f}})});
  REQUIRE(y.shape() == Shape{2, 5000});
  REQUIRE(y.dtype() == DType::kInt64);
  const auto v = values<int64_t>(y);
  CHECK(mean({v.begin(), v.begin() + 5000}) == Approx(0.8).margin(0.02));
  CHECK(mean({v.begin() + 5000, v.end()}) == 1.0);
}

TEST_CASE("Dropout is the identity in inference with an all-true mask", "[cpu][random]") {
  const Tensor x = iota_float({3, 4});
  SECTION("opset 13 without training_mode") {
    auto out = run_on_cpu({.op_type = "Dropout", .opset = 13, .inputs = {x, Tensor::from_vector<float>({}, {0.7f})},
                           .outputs = 2});
    REQUIRE(out);
    CHECK(compare_tensors((*out)[0], x, 0, 0).empty());
    REQUIRE((*out)[1].dtype() == DType::kBool);
    for (double k : values<bool>((*out)[1])) CHECK(k == 1);
  }
  SECTION("opset 7 has no training mode and a mask of the data's type") {
    auto out = run_on_cpu({.op_type = "Dropout", .opset = 7, .inputs = {x}, .attrs = attrs({{"ratio", 0.9f}}),
                           .outputs = 2});
    REQUIRE(out);
    CHECK(compare_tensors((*out)[0], x, 0, 0).empty());
    CHECK(compare_tensors((*out)[1], Tensor::from_vector<float>({3, 4}, std::vector<float>(12, 1.0f)), 0, 0).empty());
  }
  SECTION("opset 6 with is_test") {
    const Tensor y = run_one({.op_type = "Dropout", .opset = 6, .inputs = {x}, .attrs = attrs({{"is_test", int64_t{1}}})});
    CHECK(compare_tensors(y, x, 0, 0).empty());
  }
}

TEST_CASE("Dropout in training mode drops and rescales", "[cpu][random]") {
  const Tensor x = Tensor::from_vector<float>({10000}, std::vector<float>(10000, 2.0f));
  const Tensor training = Tensor::empty(DType::kBool, {});
  training.mut_as<bool>()[0] = true;
  auto run = [&](float seed) {
    auto out = run_on_cpu({.op_type = "Dropout",
                           .opset = 13,
                           .inputs = {x, Tensor::from_vector<float>({}, {0.25f}), training},
                           .attrs = attrs({{"seed", seed}}),
                           .outputs = 2});
    REQUIRE(out);
    return *out;
  };
  const auto out = run(3.0f);
  const auto y = values<float>(out[0]);
  const auto mask = values<bool>(out[1]);
  CHECK(mean(mask) == Approx(0.75).margin(0.015));
  for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(y[i] == Approx(mask[i] ? 2.0 / 0.75 : 0.0));
  CHECK(compare_tensors(run(3.0f)[1], out[1], 0, 0).empty());
}

TEST_CASE("random ops decline unsupported types and missing shapes", "[cpu][random][claim]") {
  auto m = claim_on_cpu({.op_type = "RandomUniform", .opset = 1,
                         .attrs = attrs({{"shape", ints{2}}, {"dtype", int64_t{6}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "RandomUniform: output type int32 is not supported; the cpu EP draws float, double, float16");
  m = claim_on_cpu({.op_type = "RandomNormal", .opset = 1});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "RandomNormal: the ints attribute shape is required");
  m = claim_on_cpu({.op_type = "Dropout", .opset = 13, .inputs = {int64s({1, 2})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Dropout: input 0 has type int64; the cpu EP supports float, double, float16 for Dropout");
}
