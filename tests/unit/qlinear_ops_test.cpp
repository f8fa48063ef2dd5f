// The cpu EP's kernels of ONNX Runtime's quantized com.microsoft ops (QLinearAdd, QLinearMul,
// QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool, QLinearAveragePool):
// what ONNX Runtime's outputs in testdata/com_microsoft leave out. Omitted zero points, every
// byte through the tables, saturation, the layouts, and the declines and run-time errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor scale(float s) { return Tensor::from_vector<float>({}, {s}); }

template <class T>
Tensor zero(int v) {
  return Tensor::from_vector<T>({}, {static_cast<T>(v)});
}

// A com.microsoft node of opset 1, every input but the first (and, for binary ops, the fourth)
// an initializer.
NodeSpec microsoft(std::string op, std::vector<Tensor> inputs, AttributeMap attributes = {}) {
  std::vector<bool> constant(inputs.size(), true);
  constant[0] = false;
  if ((op == "QLinearAdd" || op == "QLinearMul") && constant.size() > 3) constant[3] = false;
  return {.op_type = std::move(op), .domain = "com.microsoft", .opset = 1, .inputs = std::move(inputs),
          .constant = std::move(constant), .attrs = std::move(attributes)};
}

}  // namespace

TEST_CASE("QLinearAdd and QLinearMul read omitted zero points as 0 and stay within one step of the definition",
          "[cpu][qlinear]") {
  std::mt19937 rng(41);
  for (const char* op : {"QLinearAdd", "QLinearMul"}) {
    INFO(op);
    const bool add = std::string(op) == "QLinearAdd";
    const Tensor a = random_ints<int8_t>({2, 3, 5, 7}, rng), b = random_ints<int8_t>({3, 1, 7}, rng);
    const float sa = 0.03f, sb = 0.02f, sc = add ? 0.05f : 0.9f;
    const Tensor omitted = run_one(microsoft(op, {a, scale(sa), Tensor(), b, scale(sb), Tensor(), scale(sc)}));
    const Tensor zeros = run_one(microsoft(
        op, {a, scale(sa), zero<int8_t>(0), b, scale(sb), zero<int8_t>(0), scale(sc), zero<int8_t>(0)}));
    check_equal(omitted, zeros);
    REQUIRE(omitted.shape() == Shape{2, 3, 5, 7});
    // (sa a + sb b) / sc, or sa a sb b / sc, rounded: the kernels round as ONNX Runtime does, so
    // they may differ from this by one step, never more.
    const int8_t* y = omitted.data_as<int8_t>();
    for (int64_t i = 0; i < omitted.numel(); ++i) {
      const int64_t col = i % 7, plane = i / 35 % 3;
      const double av = a.data_as<int8_t>()[i], bv = b.data_as<int8_t>()[plane * 7 + col];
      const double real = add ? (sa * av + sb * bv) / sc : sa * av * sb * bv / sc;
      const double expected = std::clamp(std::nearbyint(real), -128.0, 127.0);
      REQUIRE(std::abs(y[i] - expected) <= 1);
    }
  }
}

TEST_CASE("QLinearAdd saturates at both ends of uint8", "[cpu][qlinear]") {
  const Tensor a = Tensor::from_vector<uint8_t>({4}, {255, 0, 128, 200});
  const Tensor b = Tensor::from_vector<uint8_t>({4}, {255, 0, 128, 10});
  const Tensor y = run_one(
      microsoft("QLinearAdd", {a, scale(1.f), zero<uint8_t>(128), b, scale(1.f), zero<uint8_t>(128), scale(0.5f),
                               zero<uint8_t>(128)}));
  // (127 + 127) / 0.5 + 128 = 636 -> 255; (-128 - 128) / 0.5 + 128 -> 0; 0 -> 128; (72 - 118) * 2 + 128 = 36.
  CHECK(std::vector<uint8_t>(y.data_as<uint8_t>(), y.data_as<uint8_t>() + 4) == std::vector<uint8_t>{255, 0, 128, 36});
}

TEST_CASE("QLinearSigmoid and QLinearLeakyRelu give every byte dequantize, f, quantize", "[cpu][qlinear]") {
  std::vector<uint8_t> all(256);
  for (int v = 0; v < 256; ++v) all[static_cast<std::size_t>(v)] = static_cast<uint8_t>(v);
  const Tensor x = Tensor::from_vector<uint8_t>({16, 16}, all);
  const float sx = 0.05f, sy = 0.01f;
  const int zx = 100, zy = 20;
  for (const bool leaky : {false, true}) {
    INFO((leaky ? "QLinearLeakyRelu" : "QLinearSigmoid"));
    const Tensor y =
        run_one(microsoft(leaky ? "QLinearLeakyRelu" : "QLinearSigmoid",
                          {x, scale(sx), zero<uint8_t>(zx), scale(sy), zero<uint8_t>(zy)},
                          leaky ? attrs({{"alpha", 0.3f}}) : AttributeMap{}));
    for (int v = 0; v < 256; ++v) {
      const float real = static_cast<float>(v - zx) * sx;
      const float f = leaky ? (real >= 0 ? real : real * 0.3f) : 1.f / (1.f + std::exp(-real));
      const float expected = std::clamp(std::nearbyint(f / sy) + static_cast<float>(zy), 0.f, 255.f);
      INFO("x " << v);
      REQUIRE(static_cast<float>(y.data_as<uint8_t>()[v]) == expected);
    }
  }
}

TEST_CASE("QLinearConcat copies inputs quantized as Y and requantizes the others", "[cpu][qlinear]") {
  const Tensor x0 = Tensor::from_vector<int8_t>({2, 2}, {-128, 1, 2, 127});
  const Tensor x1 = Tensor::from_vector<int8_t>({2, 1}, {10, -10});
  const Tensor y = run_one(
      microsoft("QLinearConcat",
                {scale(0.5f), zero<int8_t>(0), x0, scale(0.5f), zero<int8_t>(0), x1, scale(0.25f), zero<int8_t>(2)},
                attrs({{"axis", int64_t{-1}}})));
  REQUIRE(y.shape() == Shape{2, 3});
  // x1: (10 - 2) * 0.25 / 0.5 = 4, (-10 - 2) * 0.25 / 0.5 = -6.
  CHECK(std::vector<int8_t>(y.data_as<int8_t>(), y.data_as<int8_t>() + 6) ==
        std::vector<int8_t>{-128, 1, 4, 2, 127, -6});
}

TEST_CASE("QLinearGlobalAveragePool reads channels-last X with channels_last 1", "[cpu][qlinear]") {
  std::mt19937 rng(43);
  const Tensor x = random_ints<uint8_t>({2, 3, 4, 5}, rng);
  const std::vector<Tensor> quantization = {scale(0.1f), zero<uint8_t>(7), scale(0.05f), zero<uint8_t>(9)};
  std::vector<Tensor> planar = {x}, last = {channels_last_bytes(x, false)};
  planar.insert(planar.end(), quantization.begin(), quantization.end());
  last.insert(last.end(), quantization.begin(), quantization.end());
  const Tensor y = run_one(microsoft("QLinearGlobalAveragePool", planar));
  const Tensor y_last =
      run_one(microsoft("QLinearGlobalAveragePool", last, attrs({{"channels_last", int64_t{1}}})));
  REQUIRE(y.shape() == Shape{2, 3, 1, 1});
  REQUIRE(y_last.shape() == Shape{2, 1, 1, 3});
  CHECK(std::equal(y.data_as<uint8_t>(), y.data_as<uint8_t>() + 6, y_last.data_as<uint8_t>()));
  // Channel 0 of image 0: the sum of x - 7 over its 20 pixels, times 0.1 / (0.05 * 20), + 9.
  int32_t sum = 0;
  for (int i = 0; i < 20; ++i) sum += x.data_as<uint8_t>()[i] - 7;
  CHECK(static_cast<float>(y.data_as<uint8_t>()[0]) ==
        std::clamp(std::nearbyint(static_cast<float>(sum) * (0.1f / (0.05f * 20.f))) + 9.f, 0.f, 255.f));
}

TEST_CASE("QLinearAveragePool with count_include_pad divides by the kernel's size, as ONNX Runtime does",
          "[cpu][qlinear]") {
  // 1 x 1 x 3 x 3 of 10s, 2 x 2 windows at stride 2 with ceil_mode: the last window of each row
  // and column reaches past X (no padding at all): it has 2 or 1 taps inside.
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 3, 3}, std::vector<uint8_t>(9, 10));
  const std::vector<Tensor> inputs = {x, scale(1.f), zero<uint8_t>(0), scale(1.f), zero<uint8_t>(0)};
  const AttributeMap counted = attrs({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}},
                                      {"ceil_mode", int64_t{1}}, {"count_include_pad", int64_t{1}}});
  const Tensor y = run_one(microsoft("QLinearAveragePool", inputs, counted));
  REQUIRE(y.shape() == Shape{1, 1, 2, 2});
  // 40 / 4, 20 / 4 = 5, 20 / 4, 10 / 4 = 2.5 -> 2 (half to even).
  CHECK(std::vector<uint8_t>(y.data_as<uint8_t>(), y.data_as<uint8_t>() + 4) == std::vector<uint8_t>{10, 5, 5, 2});
  const Tensor valid = run_one(microsoft(
      "QLinearAveragePool", inputs,
      attrs({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}, {"ceil_mode", int64_t{1}}})));
  CHECK(std::vector<uint8_t>(valid.data_as<uint8_t>(), valid.data_as<uint8_t>() + 4) ==
        std::vector<uint8_t>(4, 10));
}

TEST_CASE("The QLinear ops decline what the cpu EP does not implement, with the reason", "[cpu][qlinear][claim]") {
  std::mt19937 rng(47);
  const Tensor u8 = random_ints<uint8_t>({2, 3}, rng), s8 = random_ints<int8_t>({2, 3}, rng);
  const KernelMatch mixed = claim_on_cpu(
      microsoft("QLinearAdd", {u8, scale(1.f), zero<uint8_t>(0), s8, scale(1.f), zero<int8_t>(0), scale(1.f)}));
  REQUIRE_FALSE(mixed);
  CHECK(mixed.reason() == "QLinearAdd: A is uint8 and B int8; both must be one type");
  const KernelMatch per_channel = claim_on_cpu(microsoft(
      "QLinearMul", {u8, Tensor::from_vector<float>({3}, {1.f, 2.f, 3.f}), Tensor(), u8, scale(1.f), Tensor(),
                     scale(1.f)}));
  REQUIRE_FALSE(per_channel);
  CHECK(per_channel.reason() ==
        "QLinearMul: the scale of A (input 1) has 3 values; the cpu EP implements one scale per tensor");
  const KernelMatch zero_type = claim_on_cpu(
      microsoft("QLinearSigmoid", {u8, scale(1.f), zero<int8_t>(0), scale(1.f), zero<uint8_t>(0)}));
  REQUIRE_FALSE(zero_type);
  CHECK(zero_type.reason() == "QLinearSigmoid: the zero point of X (input 2) is int8; it must be uint8, as X is");
  const KernelMatch axis = claim_on_cpu(
      microsoft("QLinearConcat", {scale(1.f), zero<uint8_t>(0), u8, scale(1.f), zero<uint8_t>(0)},
                attrs({{"axis", int64_t{2}}})));
  REQUIRE_FALSE(axis);
  CHECK(axis.reason() == "QLinearConcat: axis 2 is outside rank 2");
  const Tensor image = random_ints<uint8_t>({1, 2, 3, 3}, rng);
  const KernelMatch layout = claim_on_cpu(
      microsoft("QLinearGlobalAveragePool", {image, scale(1.f), zero<uint8_t>(0), scale(1.f), zero<uint8_t>(0)},
                attrs({{"channels_last", int64_t{2}}})));
  REQUIRE_FALSE(layout);
  CHECK(layout.reason() == "QLinearGlobalAveragePool: channels_last 2 is not 0 or 1");
  const KernelMatch no_kernel = claim_on_cpu(
      microsoft("QLinearAveragePool", {image, scale(1.f), zero<uint8_t>(0), scale(1.f), zero<uint8_t>(0)}));
  REQUIRE_FALSE(no_kernel);
  CHECK(no_kernel.reason() == "QLinearAveragePool: the kernel_shape attribute is missing; it is required");
  const KernelMatch rank = claim_on_cpu(
      microsoft("QLinearAveragePool", {image, scale(1.f), zero<uint8_t>(0), scale(1.f), zero<uint8_t>(0)},
                attrs({{"kernel_shape", ints{3}}})));
  REQUIRE_FALSE(rank);
  CHECK(rank.reason() == "QLinearAveragePool: X has rank 4 but kernel_shape [3] has 1 dims");
}

TEST_CASE("QLinearConcat names tensors that differ off the axis, with how to fix it", "[cpu][qlinear]") {
  std::mt19937 rng(53);
  auto y = run_on_cpu(microsoft("QLinearConcat",
                                {scale(1.f), zero<uint8_t>(0), random_ints<uint8_t>({2, 3}, rng), scale(1.f),
                                 zero<uint8_t>(0), random_ints<uint8_t>({3, 3}, rng), scale(1.f), zero<uint8_t>(0)},
                                attrs({{"axis", int64_t{1}}})));
  REQUIRE_FALSE(y);
  const std::string text = y.error().render();
  CHECK_THAT(text, Catch::Matchers::Contains("QLinearConcat: input 5 is [3,3] and input 2 [2,3]"));
  CHECK_THAT(text, Catch::Matchers::Contains("the tensors must agree in every dim but the axis (1)"));
}

TEST_CASE("MatMulIntegerToFloat and DynamicQuantizeMatMul decline what the cpu EP does not implement",
          "[cpu][qlinear][claim]") {
  std::mt19937 rng(59);
  const Tensor a = random_ints<uint8_t>({3, 8}, rng), b = random_ints<int8_t>({8, 4}, rng);
  NodeSpec spec = microsoft("MatMulIntegerToFloat", {a, b, Tensor::from_vector<float>({2}, {0.1f, 0.2f}), scale(0.1f)});
  spec.constant = {false, true, true, true};
  const KernelMatch per_row = claim_on_cpu(spec);
  REQUIRE_FALSE(per_row);
  CHECK(per_row.reason() == "MatMulIntegerToFloat: a_scale has 2 values; the cpu EP implements one");
  spec.inputs[2] = scale(0.1f);
  spec.inputs.push_back(zero<uint8_t>(3));
  spec.inputs.push_back(zero<uint8_t>(0));  // B is int8
  spec.constant = {false, true, true, true, true, true};
  const KernelMatch b_zero = claim_on_cpu(spec);
  REQUIRE_FALSE(b_zero);
  CHECK(b_zero.reason() == "MatMulIntegerToFloat: b_zero_point has type uint8 and B int8; they must match");
  const Tensor x = random_tensor({3, 8}, 61);
  const KernelMatch bias = claim_on_cpu(microsoft(
      "DynamicQuantizeMatMul", {x, b, scale(0.1f), Tensor(), Tensor::from_vector<int32_t>({4}, {1, 2, 3, 4})}));
  REQUIRE_FALSE(bias);
  CHECK(bias.reason() ==
        "DynamicQuantizeMatMul: the bias is int32 of rank 1; it must be float, one value per column of B");
}

TEST_CASE("DynamicQuantizeMatMul names a bias of another length than B's columns, with how to fix it",
          "[cpu][qlinear]") {
  std::mt19937 rng(67);
  auto y = run_on_cpu(microsoft("DynamicQuantizeMatMul", {random_tensor({3, 8}, 71), random_ints<int8_t>({8, 4}, rng),
                                                          scale(0.1f), Tensor(), random_tensor({5}, 73)}));
  REQUIRE_FALSE(y);
  const std::string text = y.error().render();
  CHECK_THAT(text, Catch::Matchers::Contains("DynamicQuantizeMatMul: the bias has 5 values; Y has 4 columns"));
  CHECK_THAT(text, Catch::Matchers::Contains("give a bias of 4 values"));
}
