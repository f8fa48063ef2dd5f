// Normalization ops (BatchNormalization, LayerNormalization, InstanceNormalization, MVN, LRN,
// LpNormalization) against their formulas and hand-computed cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Expected<std::vector<Tensor>> run(const NodeSpec& spec) { return run_on_cpu(spec); }

// y = (x - mean[p]) / sqrt(var[p] + eps) * scale[p] + B[p], p = (i / inner) % channels.
Tensor batch_norm_reference(const Tensor& x, const std::vector<Tensor>& p, int64_t channels, int64_t inner, float eps) {
  std::vector<float> y(static_cast<std::size_t>(x.numel()));
  for (std::size_t i = 0; i < y.size(); ++i) {
    const auto c = static_cast<std::size_t>((static_cast<int64_t>(i) / inner) % channels);
    const double norm = (x.data_as<float>()[i] - p[2].data_as<float>()[c]) /
                        std::sqrt(static_cast<double>(p[3].data_as<float>()[c]) + eps);
    y[i] = static_cast<float>(norm * p[0].data_as<float>()[c] + p[1].data_as<float>()[c]);
  }
  return Tensor::from_vector<float>(x.shape(), y);
}

std::vector<Tensor> batch_norm_params(Shape shape, unsigned seed) {
  const auto n = static_cast<std::size_t>(shape_numel(shape));
  return {Tensor::from_vector<float>(shape, random_floats(n, seed)), Tensor::from_vector<float>(shape, random_floats(n, seed + 1)),
          Tensor::from_vector<float>(shape, random_floats(n, seed + 2)),
          Tensor::from_vector<float>(shape, random_floats(n, seed + 3, 0.1f, 3))};
}

}  // namespace

TEST_CASE("BatchNormalization applies running statistics per channel", "[cpu][normalization]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 4, 5}, random_floats(120, 1));
  const auto p = batch_norm_params({3}, 10);
  for (int64_t opset : {7, 9, 14, 15}) {
    auto y = run({.op_type = "BatchNormalization", .opset = opset, .inputs = {x, p[0], p[1], p[2], p[3]},
                  .constant = {false, true, true, true, true}, .attrs = attrs({{"epsilon", 1e-3f}})});
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], batch_norm_reference(x, p, 3, 20, 1e-3f)).empty());
  }
  // [N, C] input, default epsilon, statistics fed at run time.
  const Tensor x2 = Tensor::from_vector<float>({4, 3}, random_floats(12, 2));
  auto y2 = run({.op_type = "BatchNormalization", .opset = 15, .inputs = {x2, p[0], p[1], p[2], p[3]}});
  REQUIRE(y2);
  CHECK(compare_tensors((*y2)[0], batch_norm_reference(x2, p, 3, 1, 1e-5f)).empty());
}

TEST_CASE("BatchNormalization-7 with spatial=0 keeps statistics per position", "[cpu][normalization]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 2, 2}, random_floats(24, 3));
  const auto p = batch_norm_params({3, 2, 2}, 20);
  auto y = run({.op_type = "BatchNormalization", .opset = 7, .inputs = {x, p[0], p[1], p[2], p[3]},
                .attrs = attrs({{"spatial", int64_t{0}}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], batch_norm_reference(x, p, 12, 1, 1e-5f)).empty());
}

TEST_CASE("BatchNormalization training mode normalizes with batch statistics and moves the running ones",
          "[cpu][normalization][convt]") {
  // Channel 0 holds 1, 3, 5, 7 (mean 4, biased variance 5); channel 1 is constant 2.
  const Tensor x = Tensor::from_vector<float>({2, 2, 2}, {1, 3, 2, 2, 5, 7, 2, 2});
  const Tensor scale = Tensor::from_vector<float>({2}, {1, 2}), bias = Tensor::from_vector<float>({2}, {0, 1});
  const Tensor mean = Tensor::from_vector<float>({2}, {0, 0}), var = Tensor::from_vector<float>({2}, {1, 1});
  const float k = 1 / std::sqrt(6.f);  // 1 / sqrt(5 + epsilon 1)
  const Tensor want_y = Tensor::from_vector<float>({2, 2, 2}, {-3 * k, -k, 1, 1, k, 3 * k, 1, 1});
  auto y = run({.op_type = "BatchNormalization", .opset = 15, .inputs = {x, scale, bias, mean, var},
                .attrs = attrs({{"training_mode", int64_t{1}}, {"epsilon", 1.f}}), .outputs = 3});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], want_y).empty());
  // running = input * momentum (0.9 by default) + batch * 0.1
  CHECK(compare_tensors((*y)[1], Tensor::from_vector<float>({2}, {0.4f, 0.2f})).empty());
  CHECK(compare_tensors((*y)[2], Tensor::from_vector<float>({2}, {1.4f, 0.9f})).empty());

  // Opset 6 trains when is_test=0 and also returns the batch mean and variance.
  auto legacy = run({.op_type = "BatchNormalization", .opset = 6, .inputs = {x, scale, bias, mean, var},
                     .attrs = attrs({{"is_test", int64_t{0}}, {"epsilon", 1.f}, {"momentum", 0.5f}}), .outputs = 5});
  REQUIRE(legacy);
  CHECK(compare_tensors((*legacy)[0], want_y).empty());
  CHECK(compare_tensors((*legacy)[1], Tensor::from_vector<float>({2}, {2, 1})).empty());
  CHECK(compare_tensors((*legacy)[2], Tensor::from_vector<float>({2}, {3, 0.5f})).empty());
  CHECK(compare_tensors((*legacy)[3], Tensor::from_vector<float>({2}, {4, 2})).empty());
  CHECK(compare_tensors((*legacy)[4], Tensor::from_vector<float>({2}, {5, 0})).empty());
}

TEST_CASE("BatchNormalization-1 and -6 with is_test=1 apply the running statistics", "[cpu][normalization][convt]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 2, 2}, random_floats(24, 4));
  const auto p = batch_norm_params({3}, 30);
  for (int64_t opset : {1, 6}) {
    auto y = run({.op_type = "BatchNormalization", .opset = opset, .inputs = {x, p[0], p[1], p[2], p[3]},
                  .attrs = attrs({{"is_test", int64_t{1}}, {"consumed_inputs", ints{0, 0, 0, 1, 1}}})});
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], batch_norm_reference(x, p, 3, 4, 1e-5f)).empty());
  }
}

TEST_CASE("BatchNormalization declines what it cannot run", "[cpu][normalization][claim][convt]") {
  const Tensor x = Tensor::from_vector<float>({1, 3, 1, 1}, {1, 2, 3});
  const auto p = batch_norm_params({3}, 1);
  auto outputs = claim_on_cpu({.op_type = "BatchNormalization", .opset = 15, .inputs = {x, p[0], p[1], p[2], p[3]},
                               .attrs = attrs({{"training_mode", int64_t{1}}}), .outputs = 5});
  REQUIRE_FALSE(outputs);
  CHECK(outputs.reason() ==
        "BatchNormalization: 5 outputs requested; opset 15 defines Y, running_mean and running_var");
  auto types = claim_on_cpu({.op_type = "BatchNormalization", .opset = 15,
                             .inputs = {x, p[0], p[1], p[2], Tensor::from_vector<double>({3}, {1, 1, 1})}});
  REQUIRE_FALSE(types);
  CHECK(types.reason() == "BatchNormalization: input 4 (input_var) has type double and X float; the cpu EP needs them equal");
}

TEST_CASE("InstanceNormalization normalizes every (image, channel) plane", "[cpu][normalization][convt]") {
  // Channel 0: 1, 3 (mean 2, std 1); channel 1: 4, 8 (mean 6, std 2).
  const Tensor x = Tensor::from_vector<float>({1, 2, 2}, {1, 3, 4, 8});
  const Tensor scale = Tensor::from_vector<float>({2}, {2, 1}), bias = Tensor::from_vector<float>({2}, {1, 0});
  for (int64_t opset : {1, 6}) {
    auto y = run({.op_type = "InstanceNormalization", .opset = opset, .inputs = {x, scale, bias},
                  .attrs = attrs({{"epsilon", 0.f}})});
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 2, 2}, {-1, 3, -1, 1})).empty());
  }
  const Tensor xd = Tensor::from_vector<double>({1, 1, 2}, {1, 3});
  auto yd = run({.op_type = "InstanceNormalization", .opset = 6,
                 .inputs = {xd, Tensor::from_vector<double>({1}, {1}), Tensor::from_vector<double>({1}, {0})},
                 .attrs = attrs({{"epsilon", 0.f}})});
  REQUIRE(yd);
  CHECK(compare_tensors((*yd)[0], Tensor::from_vector<double>({1, 1, 2}, {-1, 1})).empty());
  auto m = claim_on_cpu({.op_type = "InstanceNormalization", .opset = 6,
                         .inputs = {Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}), scale, bias}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "InstanceNormalization: X has rank 2; expected N x C x at least one spatial dim");
}

TEST_CASE("MeanVarianceNormalization over the default and explicit axes", "[cpu][normalization][convt]") {
  const Tensor x = Tensor::from_vector<float>({2, 1, 1, 2}, {1, 3, 5, 7});
  auto y = run({.op_type = "MeanVarianceNormalization", .opset = 13, .inputs = {x}});
  REQUIRE(y);
  const float s = std::sqrt(5.f);  // mean 4, biased variance 5 over axes 0, 2, 3
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({2, 1, 1, 2}, {-3 / s, -1 / s, 1 / s, 3 / s})).empty());
  y = run({.op_type = "MeanVarianceNormalization", .opset = 9, .inputs = {x}, .attrs = attrs({{"axes", ints{3}}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({2, 1, 1, 2}, {-1, 1, -1, 1})).empty());
  auto m = claim_on_cpu({.op_type = "MeanVarianceNormalization", .opset = 13, .inputs = {x},
                         .attrs = attrs({{"axes", ints{4}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason().starts_with("MeanVarianceNormalization: axis 4"));
}

TEST_CASE("LRN sums squares over a window of channels", "[cpu][normalization][convt]") {
  const Tensor x = Tensor::from_vector<float>({1, 3, 1, 1}, {1, 2, 3});
  // alpha / size = 1, beta 1, bias 1: y = x / (1 + sum of squares in the window).
  auto y = run({.op_type = "LRN", .opset = 13, .inputs = {x},
                .attrs = attrs({{"size", int64_t{3}}, {"alpha", 3.f}, {"beta", 1.f}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 3, 1, 1}, {1.f / 6, 2.f / 15, 3.f / 14})).empty());
  // An even size reaches one channel further up than down: windows {0,1}, {1,2}, {2}.
  y = run({.op_type = "LRN", .opset = 1, .inputs = {x},
           .attrs = attrs({{"size", int64_t{2}}, {"alpha", 2.f}, {"beta", 1.f}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 3, 1, 1}, {1.f / 6, 2.f / 14, 3.f / 10})).empty());
  auto m = claim_on_cpu({.op_type = "LRN", .opset = 13, .inputs = {x}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "LRN: the size attribute is missing; it is required");
}

TEST_CASE("LpNormalization divides by the L1 or L2 norm along the axis", "[cpu][normalization][convt]") {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {3, 4, 0, 0});
  auto y = run({.op_type = "LpNormalization", .opset = 1, .inputs = {x}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({2, 2}, {0.6f, 0.8f, 0, 0})).empty());
  y = run({.op_type = "LpNormalization", .opset = 1, .inputs = {x},
           .attrs = attrs({{"axis", int64_t{0}}, {"p", int64_t{1}}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({2, 2}, {1, 1, 0, 0})).empty());
  auto m = claim_on_cpu({.op_type = "LpNormalization", .opset = 1, .inputs = {x}, .attrs = attrs({{"p", int64_t{3}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "LpNormalization: p 3 is not supported; the op defines p = 1 or 2");
}

namespace {

// LayerNormalization by its definition, with statistics over the trailing `len` elements;
// scale and bias already expanded to `len` values.
struct LayerNormReference {
  Tensor y, mean, inv_std;
};

LayerNormReference layer_norm_reference(const Tensor& x, int64_t len, const std::vector<float>& scale,
                                        const std::vector<float>& bias, float eps, Shape stat_shape) {
  const int64_t rows = x.numel() / len;
  std::vector<float> y(static_cast<std::size_t>(x.numel())), mean(static_cast<std::size_t>(rows)), inv(mean.size());
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data_as<float>() + r * len;
    double m = 0, v = 0;
    for (int64_t i = 0; i < len; ++i) m += xr[i];
    m /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i) v += (xr[i] - m) * (xr[i] - m);
    v /= static_cast<double>(len);
    const double k = 1 / std::sqrt(v + eps);
    mean[static_cast<std::size_t>(r)] = static_cast<float>(m);
    inv[static_cast<std::size_t>(r)] = static_cast<float>(k);
    for (int64_t i = 0; i < len; ++i)
      y[static_cast<std::size_t>(r * len + i)] =
          static_cast<float>((xr[i] - m) * k * scale[static_cast<std::size_t>(i)] + (bias.empty() ? 0 : bias[static_cast<std::size_t>(i)]));
  }
  return {Tensor::from_vector<float>(x.shape(), y), Tensor::from_vector<float>(stat_shape, mean),
          Tensor::from_vector<float>(stat_shape, inv)};
}

}  // namespace

TEST_CASE("LayerNormalization normalizes the trailing axes and returns its statistics", "[cpu][normalization]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 8}, random_floats(48, 5, -3, 5));
  const auto scale = random_floats(8, 6), bias = random_floats(8, 7);
  auto y = run({.op_type = "LayerNormalization", .opset = 17,
                .inputs = {x, Tensor::from_vector<float>({8}, scale), Tensor::from_vector<float>({8}, bias)},
                .attrs = attrs({{"epsilon", 1e-3f}}), .outputs = 3});
  REQUIRE(y);
  const auto ref = layer_norm_reference(x, 8, scale, bias, 1e-3f, {2, 3, 1});
  CHECK(compare_tensors((*y)[0], ref.y).empty());
  CHECK(compare_tensors((*y)[1], ref.mean).empty());
  CHECK(compare_tensors((*y)[2], ref.inv_std).empty());

  // axis 1: statistics over [3, 8]; a [8] scale broadcasts over the 3 rows, no bias.
  std::vector<float> scale24;
  for (int r = 0; r < 3; ++r) scale24.insert(scale24.end(), scale.begin(), scale.end());
  auto y1 = run({.op_type = "LayerNormalization", .opset = 17, .inputs = {x, Tensor::from_vector<float>({8}, scale)},
                 .attrs = attrs({{"axis", int64_t{1}}}), .outputs = 2});
  REQUIRE(y1);
  const auto ref1 = layer_norm_reference(x, 24, scale24, {}, 1e-5f, {2, 1, 1});
  CHECK(compare_tensors((*y1)[0], ref1.y).empty());
  CHECK(compare_tensors((*y1)[1], ref1.mean).empty());
}

TEST_CASE("LayerNormalization over many rows in parallel and in double", "[cpu][normalization]") {
  const Tensor x = Tensor::from_vector<float>({512, 768}, random_floats(512 * 768, 8, -1, 3));
  const auto scale = random_floats(768, 9), bias = random_floats(768, 10);
  auto y = run({.op_type = "LayerNormalization", .opset = 17,
                .inputs = {x, Tensor::from_vector<float>({768}, scale), Tensor::from_vector<float>({768}, bias)},
                .constant = {false, true, true}, .threads = 4});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], layer_norm_reference(x, 768, scale, bias, 1e-5f, {512, 1}).y, 1e-4, 1e-5).empty());

  const Tensor xd = Tensor::from_vector<double>({2, 2}, {1, 3, -1, 1});
  auto yd = run({.op_type = "LayerNormalization", .opset = 17,
                 .inputs = {xd, Tensor::from_vector<double>({2}, {1, 2}), Tensor::from_vector<double>({2}, {0, 1})},
                 .attrs = attrs({{"epsilon", 0.0f}})});
  REQUIRE(yd);
  CHECK(compare_tensors((*yd)[0], Tensor::from_vector<double>({2, 2}, {-1, 3, -1, 3})).empty());
}

TEST_CASE("LayerNormalization declines other stash types and mixed types", "[cpu][normalization][claim]") {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  const Tensor s = Tensor::from_vector<float>({2}, {1, 1});
  auto stash = claim_on_cpu({.op_type = "LayerNormalization", .inputs = {x, s}, .attrs = attrs({{"stash_type", int64_t{10}}})});
  REQUIRE_FALSE(stash);
  CHECK(stash.reason() == "LayerNormalization: stash_type 10 is not supported by the cpu EP; it computes statistics "
                          "in float (stash_type 1) or double (11)");
  auto mixed = claim_on_cpu({.op_type = "LayerNormalization", .inputs = {x, Tensor::from_vector<double>({2}, {1, 1})}});
  REQUIRE_FALSE(mixed);
  CHECK(mixed.reason() == "LayerNormalization: Scale has type double and X float; the cpu EP needs them equal");
  auto axis = claim_on_cpu({.op_type = "LayerNormalization", .inputs = {x, s}, .attrs = attrs({{"axis", int64_t{-3}}})});
  REQUIRE_FALSE(axis);
  CHECK(axis.reason() == "LayerNormalization: axis -3 is out of range for X of rank 2; valid axes are [-2, 1]");
}

TEST_CASE("LayerNormalization with stash_type 11 returns double statistics", "[cpu][normalization]") {
  // Row [1, 2, 3, 4]: mean 2.5, variance 1.25; epsilon 0 keeps the numbers exact.
  const Tensor x = Tensor::from_vector<float>({1, 4}, {1, 2, 3, 4});
  auto r = run_on_cpu({.op_type = "LayerNormalization",
                       .inputs = {x, Tensor::from_vector<float>({4}, {1, 1, 1, 2}), Tensor::from_vector<float>({4}, {0, 0, 0, 1})},
                       .attrs = attrs({{"stash_type", int64_t{11}}, {"epsilon", 0.0f}}),
                       .outputs = 3});
  REQUIRE(r);
  const double inv = 1 / std::sqrt(1.25);
  CHECK((*r)[1].dtype() == DType::kFloat64);
  CHECK(compare_tensors((*r)[1], Tensor::from_vector<double>({1, 1}, {2.5})).empty());
  CHECK(compare_tensors((*r)[2], Tensor::from_vector<double>({1, 1}, {inv})).empty());
  CHECK(compare_tensors((*r)[0], Tensor::from_vector<float>({1, 4}, {static_cast<float>(-1.5 * inv), static_cast<float>(-0.5 * inv),
                                                                     static_cast<float>(0.5 * inv),
                                                                     static_cast<float>(1.5 * inv) * 2 + 1})).empty());
}
