// Kernels of op versions opsets 18 to 21 introduced, against hand-computed values: Gelu-20,
// GroupNormalization-18/21, Col2Im-18, CenterCropPad-18, ReduceMax/Min-20 on booleans and
// QuantizeLinear-21's output_dtype (ONNX Runtime's outputs are in testdata/opset18plus).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;
using Catch::Matchers::Contains;

TEST_CASE("Gelu-20 uses the exact normal CDF or its tanh form", "[cpu][opset18plus][activation]") {
  const Tensor x = Tensor::from_vector<float>({3}, {-1.0f, 0.0f, 2.0f});
  const Tensor exact = run_one({.op_type = "Gelu", .opset = 20, .inputs = {x}});
  const Tensor tanh_form = run_one({.op_type = "Gelu", .opset = 20, .inputs = {x}, .attrs = attrs({{"approximate",
                                                                                                    std::string("tanh")}})});
  for (int i = 0; i < 3; ++i) {
    const double v = x.data_as<float>()[i];
    CHECK(exact.data_as<float>()[i] == Approx(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))).margin(1e-6));
    CHECK(tanh_form.data_as<float>()[i] ==
          Approx(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))).margin(1e-6));
  }
  KernelMatch bad = claim_on_cpu({.op_type = "Gelu", .opset = 20, .inputs = {x},
                                  .attrs = attrs({{"approximate", std::string("erf")}})});
  REQUIRE_FALSE(bad);
  CHECK(bad.reason() == "Gelu: approximate 'erf' is not valid; use none or tanh");
}

TEST_CASE("GroupNormalization scales per group at opset 18 and per channel at 21", "[cpu][opset18plus][normalization]") {
  // Two groups of two channels with one element each: group 0 = {0, 2}, group 1 = {4, 8}.
  const Tensor x = Tensor::from_vector<float>({1, 4, 1}, {0, 2, 4, 8});
  const auto norm = [](double v, double mean, double var) { return (v - mean) / std::sqrt(var + 1e-5); };
  const Tensor y18 = run_one({.op_type = "GroupNormalization", .opset = 18,
                              .inputs = {x, Tensor::from_vector<float>({2}, {1, 2}),
                                         Tensor::from_vector<float>({2}, {0, 10})},
                              .attrs = attrs({{"num_groups", int64_t{2}}})});
  CHECK(y18.data_as<float>()[0] == Approx(norm(0, 1, 1)));
  CHECK(y18.data_as<float>()[3] == Approx(2 * norm(8, 6, 4) + 10));
  const Tensor y21 = run_one({.op_type = "GroupNormalization", .opset = 21,
                              .inputs = {x, Tensor::from_vector<float>({4}, {1, 2, 3, 4}),
                                         Tensor::from_vector<float>({4}, {0, 0, 0, 1})},
                              .attrs = attrs({{"num_groups", int64_t{2}}})});
  CHECK(y21.data_as<float>()[1] == Approx(2 * norm(2, 1, 1)));
  CHECK(y21.data_as<float>()[3] == Approx(4 * norm(8, 6, 4) + 1));
  KernelMatch per_group_at_21 = claim_on_cpu({.op_type = "GroupNormalization", .opset = 21,
                                              .inputs = {x, Tensor::from_vector<float>({2}, {1, 2}),
                                                         Tensor::from_vector<float>({2}, {0, 1})},
                                              .constant = {false, true, true},
                                              .attrs = attrs({{"num_groups", int64_t{2}}})});
  REQUIRE_FALSE(per_group_at_21);
  CHECK(per_group_at_21.reason() ==
        "GroupNormalization-21: input 1 has 2 values; expected 4 (one per channel)");
}

TEST_CASE("Col2Im sums overlapping blocks back into the image", "[cpu][opset18plus][col2im]") {
  // A 1x3 image from 2-wide blocks at stride 1: columns [a0 a1] and [b0 b1] overlap at x=1.
  const Tensor cols = Tensor::from_vector<float>({1, 2, 2}, {1, 10, 2, 20});
  const Tensor y = run_one({.op_type = "Col2Im", .opset = 18,
                            .inputs = {cols, int64s({1, 3}), int64s({1, 2})}, .constant = {false, true, true}});
  CHECK(y.shape() == Shape{1, 1, 1, 3});
  CHECK(std::vector<float>(y.data_as<float>(), y.data_as<float>() + 3) == std::vector<float>{1, 12, 20});
  KernelMatch wrong_columns = claim_on_cpu({.op_type = "Col2Im", .opset = 18,
                                            .inputs = {cols, int64s({1, 4}), int64s({1, 2})},
                                            .constant = {false, true, true}});
  REQUIRE_FALSE(wrong_columns);
  CHECK_THAT(wrong_columns.reason(), Contains("the input has 2 columns; image_shape [1,4] and block_shape [1,2] give 3"));
}

TEST_CASE("CenterCropPad crops around the centre and pads with zeros", "[cpu][opset18plus][pad]") {
  const Tensor x = Tensor::from_vector<float>({5}, {1, 2, 3, 4, 5});
  const Tensor crop = run_one({.op_type = "CenterCropPad", .opset = 18, .inputs = {x, int64s({2})},
                               .constant = {false, true}});
  CHECK(std::vector<float>(crop.data_as<float>(), crop.data_as<float>() + 2) == std::vector<float>{2, 3});
  const Tensor pad = run_one({.op_type = "CenterCropPad", .opset = 18, .inputs = {x, int64s({8})},
                              .constant = {false, true}});
  CHECK(std::vector<float>(pad.data_as<float>(), pad.data_as<float>() + 8) ==
        std::vector<float>{0, 1, 2, 3, 4, 5, 0, 0});
}

TEST_CASE("ReduceMax-20 and ReduceMin-20 reduce booleans as any and all", "[cpu][opset18plus][reduce]") {
  const std::vector<uint8_t> values = {1, 0, 0, 0};
  const Tensor x = Tensor::from_bytes(DType::kBool, {2, 2}, std::as_bytes(std::span(values)));
  const Tensor any = run_one({.op_type = "ReduceMax", .opset = 20, .inputs = {x, int64s({1})},
                              .constant = {false, true}, .attrs = attrs({{"keepdims", int64_t{0}}})});
  const Tensor all = run_one({.op_type = "ReduceMin", .opset = 20, .inputs = {x, int64s({0})},
                              .constant = {false, true}, .attrs = attrs({{"keepdims", int64_t{0}}})});
  CHECK(any.dtype() == DType::kBool);
  CHECK(std::vector<bool>{any.data_as<bool>()[0], any.data_as<bool>()[1]} == std::vector<bool>{true, false});
  CHECK(std::vector<bool>{all.data_as<bool>()[0], all.data_as<bool>()[1]} == std::vector<bool>{false, false});
  KernelMatch at_18 = claim_on_cpu({.op_type = "ReduceMax", .opset = 18, .inputs = {x, int64s({1})},
                                    .constant = {false, true}});
  REQUIRE_FALSE(at_18);
  CHECK_THAT(at_18.reason(), Contains("input 0 has type bool"));
}

TEST_CASE("QuantizeLinear-21 quantizes to output_dtype without a zero point", "[cpu][opset18plus][quantize]") {
  const Tensor x = Tensor::from_vector<float>({3}, {-3.0f, 0.4f, 300.0f});
  const Tensor y = run_one({.op_type = "QuantizeLinear", .opset = 21, .inputs = {x, Tensor::from_vector<float>({}, {1.0f})},
                            .attrs = attrs({{"output_dtype", int64_t{3}}})});
  REQUIRE(y.dtype() == DType::kInt8);
  CHECK(std::vector<int8_t>(y.data_as<int8_t>(), y.data_as<int8_t>() + 3) == std::vector<int8_t>{-3, 0, 127});
}
