// The cpu EP's kernels of ONNX Runtime's fused transformer ops (com.microsoft SkipLayerNormalization,
// SkipSimplifiedLayerNormalization, Gelu, FastGelu, BiasGelu, QuickGelu): what ONNX Runtime's
// outputs in testdata/com_microsoft leave out. Skip broadcast with leading ones, the statistics'
// shapes, QuickGelu's default alpha, declines and run-time errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

NodeSpec microsoft(std::string op, std::vector<Tensor> inputs, AttributeMap attributes = {}, std::size_t outputs = 1) {
  std::vector<bool> constant(inputs.size(), true);
  constant[0] = false;
  if (constant.size() > 1 && op.starts_with("Skip")) constant[1] = false;
  return {.op_type = std::move(op), .domain = "com.microsoft", .opset = 1, .inputs = std::move(inputs),
          .constant = std::move(constant), .attrs = std::move(attributes), .outputs = outputs};
}

}  // namespace

TEST_CASE("SkipLayerNormalization repeats a skip of the trailing dims over the batch, with its statistics",
          "[cpu][microsoft_fused]") {
  const Tensor x = random_tensor({3, 4, 8}, 1), gamma = random_tensor({8}, 2, 0.5f, 1.5f);
  const Tensor beta = random_tensor({8}, 3), bias = random_tensor({8}, 4);
  const Tensor skip = random_tensor({1, 4, 8}, 5);
  std::vector<float> repeated;
  for (int b = 0; b < 3; ++b) repeated.insert(repeated.end(), skip.data_as<float>(), skip.data_as<float>() + 32);
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    INFO(op);
    const bool simplified = std::string(op) == "SkipSimplifiedLayerNormalization";
    auto inputs = [&](const Tensor& s) {
      return simplified ? std::vector<Tensor>{x, s, gamma, bias} : std::vector<Tensor>{x, s, gamma, beta, bias};
    };
    auto broadcast = run_on_cpu(microsoft(op, inputs(skip), attrs({{"epsilon", 1e-5f}}), 4));
    REQUIRE(broadcast.has_value());
    auto full = run_on_cpu(microsoft(op, inputs(Tensor::from_vector<float>({3, 4, 8}, repeated)),
                                     attrs({{"epsilon", 1e-5f}}), 4));
    REQUIRE(full.has_value());
    for (std::size_t i = 0; i < 4; ++i) check_equal((*broadcast)[i], (*full)[i]);
    const Tensor& y = (*broadcast)[0];
    const Tensor& mean = (*broadcast)[1];
    const Tensor& inv = (*broadcast)[2];
    const Tensor& sum = (*broadcast)[3];
    REQUIRE(mean.shape() == Shape{3, 4, 1});
    REQUIRE(inv.shape() == Shape{3, 4, 1});
    REQUIRE(sum.shape() == Shape{3, 4, 8});
    // Row 5 by the definition, in double.
    const int64_t r = 5;
    double m = 0, sq = 0;
    std::vector<double> s(8);
    for (int64_t i = 0; i < 8; ++i) {
      s[i] = double{x.data_as<float>()[r * 8 + i]} + skip.data_as<float>()[(r % 4) * 8 + i] + bias.data_as<float>()[i];
      REQUIRE(std::abs(sum.data_as<float>()[r * 8 + i] - s[i]) < 1e-6);
      m += s[i] / 8;
    }
    if (simplified) m = 0;
    for (double v : s) sq += (v - m) * (v - m) / 8;
    const double k = 1 / std::sqrt(sq + 1e-5);
    CHECK(mean.data_as<float>()[r] == Approx(m).margin(1e-6));
    CHECK(inv.data_as<float>()[r] == Approx(k).epsilon(1e-6));
    for (int64_t i = 0; i < 8; ++i) {
      const double want = (s[i] - m) * k * gamma.data_as<float>()[i] + (simplified ? 0.0 : beta.data_as<float>()[i]);
      CHECK(y.data_as<float>()[r * 8 + i] == Approx(want).margin(1e-5));
    }
  }
}

TEST_CASE("QuickGelu's alpha defaults to 1.702", "[cpu][microsoft_fused]") {
  const Tensor x = random_tensor({5, 6}, 7, -4, 4);
  check_equal(run_one(microsoft("QuickGelu", {x})), run_one(microsoft("QuickGelu", {x}, attrs({{"alpha", 1.702f}}))));
  const Tensor y = run_one(microsoft("QuickGelu", {x}));
  const double v = x.data_as<float>()[3];
  CHECK(y.data_as<float>()[3] == Approx(v / (1 + std::exp(-1.702 * v))).epsilon(1e-6));
}

TEST_CASE("The fused transformer ops decline what the cpu EP does not implement, with the reason",
          "[cpu][microsoft_fused][claim]") {
  auto declined = [](const NodeSpec& spec) {
    const KernelMatch m = claim_on_cpu(spec);
    REQUIRE_FALSE(m);
    return m.reason();
  };
  const Tensor x = random_tensor({2, 3, 8}, 1), gamma = random_tensor({8}, 2);
  CHECK(declined(microsoft("SkipLayerNormalization", {random_tensor({1, 2, 3, 8}, 3), random_tensor({1, 2, 3, 8}, 4),
                                                      gamma})) ==
        "SkipLayerNormalization: input has rank 4; it must be 3 [batch, sequence, hidden] or 2 [tokens, hidden]");
  CHECK(declined(microsoft("SkipSimplifiedLayerNormalization", {x, random_tensor({2, 8}, 5), gamma})) ==
        "SkipSimplifiedLayerNormalization: skip has shape [2,8]; it must be input's [2,3,8] or its trailing dims");
  CHECK(declined(microsoft("SkipLayerNormalization", {x, x, random_tensor({4}, 6)})) ==
        "SkipLayerNormalization: input 2 has shape [4]; it must be [8], one value per element of the hidden dim");
  CHECK(declined(microsoft("SkipLayerNormalization", {x, Tensor::from_vector<double>({2, 3, 8}, std::vector<double>(48)),
                                                      gamma})) ==
        "SkipLayerNormalization: input 1 is double and input 0 float; all must be one type");
  CHECK(declined(microsoft("BiasGelu", {x})) == "BiasGelu: B (input 1) is required");
  CHECK(declined(microsoft("FastGelu", {x, random_tensor({3}, 7)})) ==
        "FastGelu: the bias has shape [3] for X [2,3,8]; it must hold one value per element of X's last dim");
  CHECK(declined(microsoft("Gelu", {Tensor::from_vector<double>({2}, {1.0, 2.0})})) ==
        "Gelu: X is double; the cpu EP implements float and float16 (bfloat16 is not implemented)");
}
