// Linear quantization ops and integer products against hand-computed values.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>

#include <catch2/catch.hpp>

#include "kernel_harness.h"
#include "kernels/kernels.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("QuantizeLinear rounds half to even and saturates", "[cpu][quantize]") {
  const Tensor x = Tensor::from_vector<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, 300, -10});
  auto u8 = run_on_cpu({.op_type = "QuantizeLinear", .inputs = {x, Tensor::from_vector<float>({}, {1})}});
  REQUIRE(u8);
  CHECK(compare_tensors((*u8)[0], Tensor::from_vector<uint8_t>({6}, {0, 2, 2, 0, 255, 0})).empty());

  // int8 with zero point -1 and scale 2: x/2 = 0.25, 0.75, 1.25, -0.25, 150, -5.
  auto i8 = run_on_cpu({.op_type = "QuantizeLinear",
                        .inputs = {x, Tensor::from_vector<float>({}, {2}), Tensor::from_vector<int8_t>({}, {-1})}});
  REQUIRE(i8);
  CHECK(compare_tensors((*i8)[0], Tensor::from_vector<int8_t>({6}, {-1, 0, 0, -1, 127, -6})).empty());
}

TEST_CASE("QuantizeLinear and DequantizeLinear per axis", "[cpu][quantize]") {
  // Axis 1 of [2, 2]: column 0 has scale 1 and zero point 10, column 1 scale 0.5 and 20.
  const Tensor x = Tensor::from_vector<float>({2, 2}, {1, 1, -3, 2});
  const Tensor scale = Tensor::from_vector<float>({2}, {1, 0.5f});
  const Tensor zp = Tensor::from_vector<uint8_t>({2}, {10, 20});
  auto q = run_on_cpu({.op_type = "QuantizeLinear", .inputs = {x, scale, zp}});
  REQUIRE(q);
  CHECK(compare_tensors((*q)[0], Tensor::from_vector<uint8_t>({2, 2}, {11, 22, 7, 24})).empty());
  auto d = run_on_cpu({.op_type = "DequantizeLinear", .inputs = {(*q)[0], scale, zp}});
  REQUIRE(d);
  CHECK(compare_tensors((*d)[0], x).empty());

  // Axis 0: rows scaled 1 and 10.
  auto d0 = run_on_cpu({.op_type = "DequantizeLinear",
                        .inputs = {Tensor::from_vector<int8_t>({2, 2}, {1, -2, 3, -4}),
                                   Tensor::from_vector<float>({2}, {1, 10}), Tensor::from_vector<int8_t>({2}, {0, 1})},
                        .attrs = attrs({{"axis", int64_t{0}}})});
  REQUIRE(d0);
  CHECK(compare_tensors((*d0)[0], Tensor::from_vector<float>({2, 2}, {1, -2, 20, -50})).empty());
}

TEST_CASE("DynamicQuantizeLinear covers the range including zero", "[cpu][quantize]") {
  // Range [-1, 2.5]: scale 3.5/255, zero point round(1 / scale) = round(72.857) = 73.
  auto y = run_on_cpu({.op_type = "DynamicQuantizeLinear",
                       .inputs = {Tensor::from_vector<float>({4}, {-1, 0, 1, 2.5f})},
                       .outputs = 3});
  REQUIRE(y);
  const float scale = 3.5f / 255;
  CHECK((*y)[1].data_as<float>()[0] == Approx(scale));
  CHECK((*y)[2].data_as<uint8_t>()[0] == 73);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<uint8_t>({4}, {0, 73, 146, 255})).empty());
}

TEST_CASE("MatMulInteger and QLinearMatMul subtract zero points", "[cpu][quantize]") {
  const Tensor a = Tensor::from_vector<uint8_t>({2, 2}, {11, 12, 13, 14});
  const Tensor b = Tensor::from_vector<int8_t>({2, 2}, {1, -1, 2, 0});
  // a_zp 10 per tensor, b_zp per column {1, -1}: (A - 10) = [[1,2],[3,4]], (B - zp) = [[0,0],[1,1]].
  auto y = run_on_cpu({.op_type = "MatMulInteger",
                       .opset = 10,
                       .inputs = {a, b, Tensor::from_vector<uint8_t>({}, {10}),
                                  Tensor::from_vector<int8_t>({2}, {1, -1})}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<int32_t>({2, 2}, {2, 2, 4, 4})).empty());

  // Same sums, scales 0.5 * 2 / 0.25 = 4, y_zp 3: [[11, 11], [19, 19]].
  auto q = run_on_cpu({.op_type = "QLinearMatMul",
                       .opset = 10,
                       .inputs = {a, Tensor::from_vector<float>({}, {0.5f}), Tensor::from_vector<uint8_t>({}, {10}), b,
                                  Tensor::from_vector<float>({}, {2}), Tensor::from_vector<int8_t>({2}, {1, -1}),
                                  Tensor::from_vector<float>({}, {0.25f}), Tensor::from_vector<uint8_t>({}, {3})}});
  REQUIRE(q);
  CHECK(compare_tensors((*q)[0], Tensor::from_vector<uint8_t>({2, 2}, {11, 11, 19, 19})).empty());
}

TEST_CASE("ConvInteger and QLinearConv with padding", "[cpu][quantize]") {
  // 1x1x2x2 input minus zero point 1: [[1,2],[3,4]]; 2x2 all-ones kernel, pads 1 on the
  // top/left only: outputs at (0,0) 1, (0,1) 3, (1,0) 4, (1,1) 10.
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {2, 3, 4, 5});
  const Tensor w = Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
  const AttributeMap pads = attrs({{"pads", ints{1, 1, 0, 0}}});
  auto y = run_on_cpu({.op_type = "ConvInteger",
                       .opset = 10,
                       .inputs = {x, w, Tensor::from_vector<uint8_t>({}, {1})},
                       .attrs = pads});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<int32_t>({1, 1, 2, 2}, {1, 3, 4, 10})).empty());

  // QLinearConv: scale 1 * 1 / 2, bias 2, y_zp 100: round((s + 2) / 2) + 100, halves to even.
  auto q = run_on_cpu({.op_type = "QLinearConv",
                       .opset = 10,
                       .inputs = {x, Tensor::from_vector<float>({}, {1}), Tensor::from_vector<uint8_t>({}, {1}), w,
                                  Tensor::from_vector<float>({1}, {1}), Tensor::from_vector<uint8_t>({1}, {0}),
                                  Tensor::from_vector<float>({}, {2}), Tensor::from_vector<uint8_t>({}, {100}),
                                  Tensor::from_vector<int32_t>({1}, {2})},
                       .attrs = pads});
  REQUIRE(q);
  CHECK(compare_tensors((*q)[0], Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {102, 102, 103, 106})).empty());
}

TEST_CASE("quantize ops decline unsupported types and ranks", "[cpu][quantize][claim]") {
  auto m = claim_on_cpu({.op_type = "QuantizeLinear",
                         .opset = 10,
                         .inputs = {Tensor::from_vector<float>({2}, {1, 2}), Tensor::from_vector<float>({2}, {1, 2})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "QuantizeLinear: the scale has rank 1; opset 10 supports rank <= 0");
  auto t = claim_on_cpu({.op_type = "MatMulInteger",
                         .opset = 10,
                         .inputs = {Tensor::from_vector<int32_t>({1, 1}, {1}), Tensor::from_vector<int8_t>({1, 1}, {1})}});
  REQUIRE_FALSE(t);
  CHECK(t.reason() == "MatMulInteger: input 0 has type int32; the cpu EP supports uint8, int8 for MatMulInteger");
}

namespace {

Tensor bytes_tensor(DType t, Shape shape, std::vector<uint8_t> bytes) {
  return Tensor::from_bytes(t, std::move(shape), std::as_bytes(std::span<const uint8_t>(bytes)));
}

// QuantizeLinear of x by scale into `type`, named by output_dtype, at `opset`.
NodeSpec quantize_to(const Tensor& x, const Tensor& scale, DType type, int64_t opset) {
  return {.op_type = "QuantizeLinear", .opset = opset, .inputs = {x, scale},
          .attrs = attrs({{"output_dtype", static_cast<int64_t>(type)}})};
}

}  // namespace

TEST_CASE("QuantizeLinear and DequantizeLinear with float8, saturate and int4", "[cpu][quantize][float8][int4]") {
  const Tensor x = Tensor::from_vector<float>({3}, {0.5f, 100, -3});
  const Tensor scale = Tensor::from_vector<float>({}, {0.5f});
  // x / 0.5 = 1, 200, -6: E4M3FNUZ's largest is 240; without saturation 200 still fits, with
  // scale 0.25 (400) it becomes NaN.
  const Tensor zero = bytes_tensor(DType::kFloat8E4M3FNUZ, {}, {0});
  auto q = run_on_cpu({.op_type = "QuantizeLinear", .opset = 19, .inputs = {x, scale, zero}});
  REQUIRE(q);
  CHECK((*q)[0].dtype() == DType::kFloat8E4M3FNUZ);
  auto back = run_on_cpu({.op_type = "DequantizeLinear", .opset = 19, .inputs = {(*q)[0], scale, zero}});
  REQUIRE(back);
  CHECK(compare_tensors((*back)[0], Tensor::from_vector<float>({3}, {0.5f, 96, -3})).empty());  // 192 is the nearest
  auto nan = run_on_cpu({.op_type = "QuantizeLinear", .opset = 19,
                         .inputs = {x, Tensor::from_vector<float>({}, {0.25f}), zero},
                         .attrs = attrs({{"saturate", int64_t{0}}})});
  REQUIRE(nan);
  CHECK((*nan)[0].data_as<uint8_t>()[1] == 0x80);

  // int4 output with zero point 1: round(x / 0.5) + 1 = 2, 201 -> 7, -5.
  const Tensor zp4 = bytes_tensor(DType::kInt4, {}, {1});
  auto q4 = run_on_cpu({.op_type = "QuantizeLinear", .opset = 21, .inputs = {x, scale, zp4}});
  REQUIRE(q4);
  CHECK((*q4)[0].to_int64_vector() == std::vector<int64_t>{2, 7, -5});
  auto u4 = run_on_cpu({.op_type = "QuantizeLinear", .opset = 21, .inputs = {x, scale},
                        .attrs = attrs({{"output_dtype", static_cast<int64_t>(DType::kUInt4)}})});
  REQUIRE(u4);
  CHECK((*u4)[0].to_int64_vector() == std::vector<int64_t>{1, 15, 0});
}

TEST_CASE("QuantizeLinear and DequantizeLinear with int2, uint2 and float4e2m1", "[cpu][quantize][int2][float4]") {
  const Tensor x = Tensor::from_vector<float>({5}, {0.5f, 100, -3, 1.25f, 0.75f});
  const Tensor scale = Tensor::from_vector<float>({}, {0.5f});
  // x / 0.5 = 1, 200, -6, 2.5, 1.5: int2 with zero point -1 gives 0, 1 (saturated), -2, 1 (2 ties
  // to even, +(-1)), 1; uint2 without one 1, 3, 0, 2, 2.
  auto q2 = run_on_cpu(
      {.op_type = "QuantizeLinear", .opset = 25, .inputs = {x, scale, bytes_tensor(DType::kInt2, {}, {0xff})}});
  REQUIRE(q2);
  CHECK((*q2)[0].dtype() == DType::kInt2);
  CHECK((*q2)[0].to_int64_vector() == std::vector<int64_t>{0, 1, -2, 1, 1});
  auto back2 = run_on_cpu({.op_type = "DequantizeLinear",
                           .opset = 25,
                           .inputs = {(*q2)[0], scale, bytes_tensor(DType::kInt2, {}, {0xff})}});
  REQUIRE(back2);
  CHECK(compare_tensors((*back2)[0], Tensor::from_vector<float>({5}, {0.5f, 1, -0.5f, 1, 1})).empty());
  auto u2 = run_on_cpu(quantize_to(x, scale, DType::kUInt2, 25));
  REQUIRE(u2);
  CHECK((*u2)[0].to_int64_vector() == std::vector<int64_t>{1, 3, 0, 2, 2});
  // float4e2m1 rounds x / scale as Cast does: 1, 6 (saturated), -6, 2 (2.5 ties to even), 1.5.
  auto f4 = run_on_cpu(quantize_to(x, scale, DType::kFloat4E2M1, 23));
  REQUIRE(f4);
  CHECK((*f4)[0].dtype() == DType::kFloat4E2M1);
  auto back4 = run_on_cpu({.op_type = "DequantizeLinear", .opset = 23, .inputs = {(*f4)[0], scale}});
  REQUIRE(back4);
  CHECK(compare_tensors((*back4)[0], Tensor::from_vector<float>({5}, {0.5f, 3, -3, 1, 0.75f})).empty());
  auto early = claim_on_cpu(quantize_to(x, scale, DType::kInt2, 24));
  REQUIRE_FALSE(early);
  CHECK(early.reason() ==
        "QuantizeLinear: output type int2 is not supported by the cpu EP at opset 24; it quantizes "
        "to uint8, int8, uint16, int16, uint4, int4, the float8 types and float4e2m1");
}

TEST_CASE("blocked quantization applies one scale per block of the axis", "[cpu][quantize]") {
  // x [2, 5], axis 1, block 2: scales [2, 3] cover columns {0,1}, {2,3}, {4}.
  const Tensor q = Tensor::from_vector<int8_t>({2, 5}, {1, 2, 3, 4, 5, -1, -2, -3, -4, -5});
  const Tensor scale = Tensor::from_vector<float>({2, 3}, {1, 10, 100, 2, 20, 200});
  const Tensor zp = Tensor::from_vector<int8_t>({2, 3}, {0, 1, 0, 0, 0, -5});
  auto y = run_on_cpu({.op_type = "DequantizeLinear", .opset = 21, .inputs = {q, scale, zp},
                       .attrs = attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({2, 5}, {1, 2, 20, 30, 500, -2, -4, -60, -80, 0})).empty());
  auto back = run_on_cpu({.op_type = "QuantizeLinear", .opset = 21, .inputs = {(*y)[0], scale, zp},
                          .attrs = attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}})});
  REQUIRE(back);
  CHECK(compare_tensors((*back)[0], q).empty());
  auto wrong = claim_on_cpu({.op_type = "DequantizeLinear", .opset = 21,
                             .inputs = {q, Tensor::from_vector<float>({2, 2}, {1, 1, 1, 1})},
                             .attrs = attrs({{"axis", int64_t{1}}, {"block_size", int64_t{2}}})});
  REQUIRE_FALSE(wrong);
  CHECK(wrong.reason() == "DequantizeLinear: the scale [2,2] does not fit x [2,5] with axis 1 and block_size 2; "
                          "blocked scales have x's shape with ceil(dim / block_size) at the axis: [2,3]");
}

TEST_CASE("QuantizeLinear declines types its opset does not have", "[cpu][quantize][claim]") {
  const Tensor x = Tensor::from_vector<float>({1}, {1});
  auto old = claim_on_cpu({.op_type = "QuantizeLinear", .opset = 19,
                           .inputs = {x, Tensor::from_vector<float>({}, {1}), bytes_tensor(DType::kInt4, {}, {0})}});
  REQUIRE_FALSE(old);
  CHECK(old.reason() == "QuantizeLinear: output type int4 is not supported by the cpu EP at opset 19; it quantizes to "
                        "uint8, int8 and the float8 types");
  const Tensor half_scale = Tensor::from_bytes(DType::kFloat16, {}, std::as_bytes(std::span<const uint16_t>(
                                                                        std::vector<uint16_t>{0x3c00})));
  auto half = claim_on_cpu({.op_type = "DequantizeLinear", .opset = 19,
                            .inputs = {Tensor::from_vector<int8_t>({1}, {1}), half_scale}});
  REQUIRE_FALSE(half);
  CHECK(half.reason() == "DequantizeLinear: the scale has type float16; the cpu EP takes float scales (opset 19's "
                         "float16 and bfloat16 scales are not implemented)");
}

namespace {

// One 2-D integer convolution and its direct sum, as the ONNX reference computes it.
struct IntConvCase {
  int64_t batch, channels, out_channels, group, h, w, kh, kw, stride, dilation, pad;
};

template <class TX, class TW>
Tensor direct_conv_integer(const IntConvCase& c, const Tensor& x, const Tensor& w, int32_t x_zp,
                           const std::vector<int32_t>& w_zp) {
  const int64_t oh = (c.h + 2 * c.pad - c.dilation * (c.kh - 1) - 1) / c.stride + 1;
  const int64_t ow = (c.w + 2 * c.pad - c.dilation * (c.kw - 1) - 1) / c.stride + 1;
  const int64_t gin = c.channels / c.group, gout = c.out_channels / c.group;
  std::vector<int32_t> y(static_cast<std::size_t>(c.batch * c.out_channels * oh * ow));
  const TX* xs = x.data_as<TX>();
  const TW* ws = w.data_as<TW>();
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t oc = 0; oc < c.out_channels; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int32_t sum = 0;
          for (int64_t ic = 0; ic < gin; ++ic)
            for (int64_t a = 0; a < c.kh; ++a)
              for (int64_t b = 0; b < c.kw; ++b) {
                const int64_t ih = i * c.stride - c.pad + a * c.dilation, iw = j * c.stride - c.pad + b * c.dilation;
                if (ih < 0 || ih >= c.h || iw < 0 || iw >= c.w) continue;
                const int32_t xv = xs[((n * c.channels + oc / gout * gin + ic) * c.h + ih) * c.w + iw] - x_zp;
                const int32_t wv = ws[((oc * gin + ic) * c.kh + a) * c.kw + b] -
                                   w_zp[w_zp.size() == 1 ? 0 : static_cast<std::size_t>(oc)];
                sum += xv * wv;
              }
          y[static_cast<std::size_t>(((n * c.out_channels + oc) * oh + i) * ow + j)] = sum;
        }
  return Tensor::from_vector<int32_t>({c.batch, c.out_channels, oh, ow}, std::move(y));
}

template <class TX, class TW>
void check_conv_integer(const IntConvCase& c, bool per_channel, std::mt19937& rng, bool constant_w = true) {
  const Tensor x = random_ints<TX>({c.batch, c.channels, c.h, c.w}, rng);
  const Tensor w = random_ints<TW>({c.out_channels, c.channels / c.group, c.kh, c.kw}, rng);
  const Tensor xz = random_ints<TX>({}, rng);
  const Tensor wz = random_ints<TW>(per_channel ? Shape{c.out_channels} : Shape{}, rng);
  const std::vector<int32_t> w_zp(wz.data_as<TW>(), wz.data_as<TW>() + wz.numel());
  auto y = run_on_cpu({.op_type = "ConvInteger",
                       .opset = 10,
                       .inputs = {x, w, xz, wz},
                       .constant = {false, constant_w, false, true},
                       .attrs = attrs({{"group", c.group},
                                       {"strides", ints{c.stride, c.stride}},
                                       {"dilations", ints{c.dilation, c.dilation}},
                                       {"pads", ints{c.pad, c.pad, c.pad, c.pad}}})});
  REQUIRE(y);
  check_equal((*y)[0], direct_conv_integer<TX, TW>(c, x, w, *xz.data_as<TX>(), w_zp));
}

}  // namespace

TEST_CASE("ConvInteger matches a direct loop for groups, pads, strides and dilations", "[cpu][quantize]") {
  std::mt19937 rng(5);
  const std::vector<IntConvCase> cases = {
      // batch, channels, out, group, h, w, kh, kw, stride, dilation, pad
      {1, 3, 16, 1, 9, 11, 3, 3, 1, 1, 1},    // im2col, one image
      {2, 5, 40, 1, 7, 7, 1, 1, 1, 1, 0},     // pointwise: X is the GEMM's operand
      {1, 16, 32, 2, 10, 9, 3, 3, 2, 1, 1},   // two groups of 16 outputs, strided
      {2, 8, 8, 8, 30, 30, 3, 3, 1, 2, 2},    // depthwise, dilated, on planes over 28x28 outputs: by phases
      {1, 4, 8, 4, 9, 9, 3, 3, 2, 1, 1},      // depthwise, two outputs per channel, strided
      {2, 5, 5, 5, 29, 29, 3, 3, 1, 1, 1},    // depthwise 3x3 "same": one loop over each plane
      {1, 4, 4, 4, 30, 33, 2, 5, 1, 1, 1},    // depthwise 2x5: one loop over the plane per tap
      {3, 6, 6, 3, 5, 5, 3, 3, 1, 1, 1},      // small groups side by side, one thread each
      {1, 4, 8, 1, 6, 5, 5, 2, 1, 1, 0},      // a kernel wider than tall
      {1, 2, 70, 1, 40, 40, 3, 3, 1, 1, 1},   // rows and pixels beyond one tile and strip
      {1, 64, 16, 1, 16, 16, 3, 3, 1, 1, 1},  // a whole chunk of 256 pixels of 576 bytes each
      {1, 3, 3, 3, 61, 60, 3, 3, 2, 2, 1},    // depthwise, stride 2 and dilation 2: every tap in one phase
      {2, 4, 4, 4, 60, 64, 2, 5, 2, 1, 2},    // depthwise 2x5 at stride 2: taps in both phases
      {1, 2, 2, 2, 90, 90, 3, 3, 3, 1, 1},    // depthwise at stride 3: one output row at a time
      {2, 24, 24, 24, 9, 9, 3, 3, 1, 1, 1},   // depthwise on small planes: channels-last, a vector and a tail
      {1, 36, 36, 36, 30, 31, 3, 3, 1, 1, 1},  // depthwise on planes over 28x28: channels-last with vpdpbusd
      {1, 17, 17, 17, 14, 14, 3, 3, 2, 2, 2},  // the same, strided and dilated
      {2, 40, 40, 40, 9, 10, 3, 3, 1, 1, 1},   // channels-last, two blocks of 16 for vpdpbusd and a tail
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    check_conv_integer<uint8_t, int8_t>(cases[i], i % 2 == 0, rng);
    check_conv_integer<int8_t, uint8_t>(cases[i], i % 2 == 1, rng);
    // W computed at run time: packed on every run instead of once.
    check_conv_integer<uint8_t, uint8_t>(cases[i], i % 2 == 0, rng, false);
  }
}

TEST_CASE("ConvInteger depthwise channels-last over one to three spatial dims matches a direct loop",
          "[cpu][quantize]") {
  std::mt19937 rng(23);
  struct Case {
    Shape x, kernel;
    ints strides, dilations, pads;
  };
  const std::vector<Case> cases = {
      {{2, 40, 23}, {5}, {2}, {1}, {2, 1}},                                 // 1-D: one kernel row of two quads
      {{1, 48, 5, 6, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},  // 3-D: nine kernel rows
      {{1, 33, 7, 6, 5}, {2, 3, 2}, {2, 1, 2}, {2, 2, 1}, {1, 2, 0, 1, 0, 1}},  // strided, dilated in depth
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    const Case& c = cases[i];
    const int64_t channels = c.x[1];
    const std::size_t rank = c.kernel.size();
    Shape ws = {channels, 1};
    ws.insert(ws.end(), c.kernel.begin(), c.kernel.end());
    const Tensor x = random_ints<uint8_t>(c.x, rng);
    const Tensor w = random_ints<int8_t>(ws, rng);
    const Tensor xz = random_ints<uint8_t>({}, rng);
    // Zero points of W that keep W - w_zp in int8 (vpdpbusd's blocks), except in the last case.
    const std::vector<int8_t> zeros(static_cast<std::size_t>(channels));
    const Tensor wz =
        i + 1 < cases.size() ? Tensor::from_vector<int8_t>({channels}, zeros) : random_ints<int8_t>({channels}, rng);
    auto y = run_on_cpu({.op_type = "ConvInteger",
                         .opset = 10,
                         .inputs = {x, w, xz, wz},
                         .constant = {false, true, false, true},
                         .attrs = attrs({{"group", channels},
                                         {"strides", c.strides},
                                         {"dilations", c.dilations},
                                         {"pads", c.pads}})});
    REQUIRE(y);
    // The direct loop, over three dims (the leading ones of size 1 where there are fewer).
    std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, p{0, 0, 0};
    Shape ys = {c.x[0], channels};
    for (std::size_t q = 0; q < rank; ++q) {
      const std::size_t at = 3 - rank + q;
      in[at] = c.x[2 + q], k[at] = c.kernel[q], s[at] = c.strides[q], d[at] = c.dilations[q], p[at] = c.pads[q];
      out[at] = (in[at] + c.pads[q] + c.pads[rank + q] - d[at] * (k[at] - 1) - 1) / s[at] + 1;
      ys.push_back(out[at]);
    }
    std::vector<int32_t> expected;
    const int32_t x_zp = *xz.data_as<uint8_t>();
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t ch = 0; ch < channels; ++ch)
        for (int64_t o0 = 0; o0 < out[0]; ++o0)
          for (int64_t o1 = 0; o1 < out[1]; ++o1)
            for (int64_t o2 = 0; o2 < out[2]; ++o2) {
              int32_t sum = 0;
              for (int64_t a = 0; a < k[0]; ++a)
                for (int64_t b = 0; b < k[1]; ++b)
                  for (int64_t e = 0; e < k[2]; ++e) {
                    const int64_t i0 = o0 * s[0] - p[0] + a * d[0], i1 = o1 * s[1] - p[1] + b * d[1];
                    const int64_t i2 = o2 * s[2] - p[2] + e * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    const int64_t at = (((n * channels + ch) * in[0] + i0) * in[1] + i1) * in[2] + i2;
                    const int32_t xv = x.data_as<uint8_t>()[at];
                    const int32_t wv = w.data_as<int8_t>()[((ch * k[0] + a) * k[1] + b) * k[2] + e];
                    sum += (xv - x_zp) * (wv - wz.data_as<int8_t>()[ch]);
                  }
              expected.push_back(sum);
            }
    check_equal((*y)[0], Tensor::from_vector<int32_t>(ys, std::move(expected)));
  }
}

namespace {

// QLinearConv of one case against requantizing the direct sums: per-channel w_scale and bias
// (or none), W's zero points all zero (symmetric weights) or random, uint8 or int8 Y; X and Y
// stored as `layout` says.
template <class TX, class TW, class Q>
void check_qlinear_conv(const IntConvCase& c, bool symmetric_w, std::mt19937& rng, bool with_bias = true,
                        cpu::ChannelsLast layout = {}) {
  const Tensor x = random_ints<TX>({c.batch, c.channels, c.h, c.w}, rng);
  const Tensor w = random_ints<TW>({c.out_channels, c.channels / c.group, c.kh, c.kw}, rng);
  const Tensor xz = random_ints<TX>({}, rng);
  const Tensor wz = symmetric_w ? Tensor::from_vector<TW>({c.out_channels}, std::vector<TW>(c.out_channels))
                                : random_ints<TW>({c.out_channels}, rng);
  std::uniform_real_distribution<float> w_scale_dist(0.001f, 0.01f);
  std::vector<float> w_scale(static_cast<std::size_t>(c.out_channels));
  for (float& v : w_scale) v = w_scale_dist(rng);
  std::uniform_int_distribution<int32_t> bias_dist(-5000, 5000);
  std::vector<int32_t> bias(static_cast<std::size_t>(c.out_channels));
  if (with_bias)
    for (int32_t& v : bias) v = bias_dist(rng);
  const float x_scale = 0.02f, y_scale = 0.25f;
  const Tensor yz = random_ints<Q>({}, rng);
  std::vector<Tensor> inputs = {x, Tensor::from_vector<float>({}, {x_scale}), xz, w,
                                Tensor::from_vector<float>({c.out_channels}, w_scale), wz,
                                Tensor::from_vector<float>({}, {y_scale}), yz};
  if (with_bias) inputs.push_back(Tensor::from_vector<int32_t>({c.out_channels}, bias));
  std::vector<bool> constant(inputs.size(), true);
  constant[0] = false;  // X is fed at run time
  const NodeSpec spec{.op_type = "QLinearConv",
                      .opset = 10,
                      .inputs = inputs,
                      .constant = constant,
                      .attrs = attrs({{"group", c.group},
                                      {"strides", ints{c.stride, c.stride}},
                                      {"dilations", ints{c.dilation, c.dilation}},
                                      {"pads", ints{c.pad, c.pad, c.pad, c.pad}}})};
  auto y = layout.any() ? run_in_layout(spec, layout, [&](const NodeContext& ctx) {
    return cpu::make_qlinear_conv(ctx, layout);
  })
                        : run_on_cpu(spec);
  if (!y) FAIL(y.error().render());
  const std::vector<int32_t> w_zp(wz.data_as<TW>(), wz.data_as<TW>() + wz.numel());
  const Tensor sums = direct_conv_integer<TX, TW>(c, x, w, *xz.data_as<TX>(), w_zp);
  const int64_t plane = sums.numel() / (c.batch * c.out_channels);
  std::vector<Q> expected(static_cast<std::size_t>(sums.numel()));
  auto saturated = [](float v) {
    return static_cast<Q>(std::clamp<float>(std::nearbyint(v), std::numeric_limits<Q>::lowest(),
                                            std::numeric_limits<Q>::max()));
  };
  for (int64_t i = 0; i < sums.numel() && (*y)[0].numel() == sums.numel(); ++i) {
    const auto oc = static_cast<std::size_t>(i / plane % c.out_channels);
    const float scale = x_scale * w_scale[oc] / y_scale;
    const float biased = static_cast<float>(sums.data_as<int32_t>()[i] + bias[oc]);
    const auto zero = static_cast<float>(*yz.data_as<Q>());
    // The product rounded, then moved by the zero point (ONNX Runtime's order).
    expected[static_cast<std::size_t>(i)] = saturated(std::nearbyint(biased * scale) + zero);
  }
  check_equal((*y)[0], Tensor::from_vector<Q>(sums.shape(), std::move(expected)));
}

}  // namespace

TEST_CASE("QLinearConv requantizes the sums of a direct loop, in the GEMM's epilogue or after it", "[cpu][quantize]") {
  std::mt19937 rng(11);
  const std::vector<IntConvCase> cases = {
      // batch, channels, out, group, h, w, kh, kw, stride, dilation, pad
      {1, 64, 64, 1, 20, 19, 3, 3, 1, 1, 1},  // the unrolled GEMM: chunks of 256 pixels, a partial one
      {2, 16, 40, 2, 9, 7, 3, 3, 2, 1, 1},    // two images, two groups of 20 outputs (a partial strip)
      {1, 8, 24, 1, 6, 6, 1, 1, 1, 1, 0},     // pointwise: X's channels-last rows, depth padded
      {1, 64, 40, 1, 20, 20, 1, 1, 1, 1, 0},  // pointwise: X's channels-last rows as they are, two chunks
      {1, 16, 8, 1, 9, 9, 1, 1, 2, 1, 0},     // 1x1, strided: unrolled
      {1, 6, 6, 6, 8, 8, 3, 3, 1, 1, 1},      // depthwise: requantized after the sums
      {1, 3, 16, 1, 23, 21, 7, 7, 2, 1, 3},   // ResNet's stem: kernel rows of 21 bytes, some in the padding
      {1, 2, 8, 1, 9, 9, 3, 3, 1, 1, 1},      // kernel rows of 6 bytes; 2-byte taps at the edges
      {1, 8, 8, 8, 15, 15, 3, 3, 2, 1, 1},    // depthwise on a small plane: channels-last
      {1, 20, 20, 20, 9, 9, 3, 3, 1, 1, 1},   // the same, requantized a vector of channels and a tail
      {1, 3, 3, 3, 61, 61, 3, 3, 2, 1, 1},    // depthwise at stride 2 on a larger plane: by stride phases
      {2, 20, 20, 20, 30, 30, 3, 3, 1, 1, 1},  // depthwise at stride 1, one flat pass per plane
      {1, 40, 40, 40, 30, 29, 3, 3, 1, 1, 1},  // depthwise, planes over 28x28 of two vpdpbusd blocks and a
                                               // tail: turned channels-last where vpdpbusd is built
      {2, 32, 32, 32, 61, 60, 3, 3, 2, 1, 1},  // the same at stride 2, two images
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    check_qlinear_conv<uint8_t, int8_t, uint8_t>(cases[i], true, rng);
    check_qlinear_conv<uint8_t, int8_t, int8_t>(cases[i], false, rng);
    check_qlinear_conv<int8_t, uint8_t, uint8_t>(cases[i], false, rng);
    check_qlinear_conv<int8_t, int8_t, int8_t>(cases[i], true, rng);
    check_qlinear_conv<uint8_t, int8_t, uint8_t>(cases[i], false, rng, false);  // without a bias
  }
}

TEST_CASE("QLinearConv reads X and writes Y channels-last where the cpu EP's layout step asks", "[cpu][quantize]") {
  std::mt19937 rng(17);
  const std::vector<IntConvCase> cases = {
      // batch, channels, out, group, h, w, kh, kw, stride, dilation, pad
      {2, 16, 96, 1, 12, 11, 1, 1, 1, 1, 0},    // pointwise: X's rows as they are, shallow (in registers)
      {1, 24, 40, 1, 7, 9, 1, 1, 1, 1, 0},      // shallow: a whole strip and 8 columns
      {1, 32, 12, 1, 5, 13, 1, 1, 1, 1, 0},     // shallow: less than a vector of columns
      {1, 64, 40, 1, 20, 19, 1, 1, 1, 1, 0},    // pointwise: two chunks, a partial strip of channels
      {1, 96, 24, 1, 7, 9, 1, 1, 1, 1, 0},      // pointwise: rows of 96 laid out 128 long, 16 + 8 outputs
      {1, 3, 32, 1, 23, 21, 3, 3, 2, 1, 1},     // unrolled from channels-last X, strided
      {1, 24, 24, 1, 9, 9, 3, 3, 1, 2, 2},      // unrolled, dilated
      {2, 32, 32, 32, 30, 29, 3, 3, 1, 1, 1},   // depthwise on a plane over 28x28: two vectors of channels
      {1, 96, 96, 96, 31, 30, 3, 3, 2, 1, 1},   // depthwise, stride 2, six vectors
      {1, 48, 48, 48, 9, 11, 3, 3, 1, 1, 1},    // depthwise, a pair of vectors and one more
      {1, 20, 20, 20, 9, 9, 5, 5, 2, 1, 2},     // depthwise 5x5: a vector and a tail of 4 channels
      {1, 7, 7, 7, 8, 8, 3, 3, 1, 3, 3},        // depthwise, no whole vector, taps mostly in the padding
      {1, 32, 32, 32, 12, 13, 3, 3, 1, 2, 2},   // depthwise, dilated: input rows kept over five output rows
      {1, 16, 16, 16, 20, 19, 3, 3, 3, 1, 1},   // depthwise, stride 3: input rows no later row reads
      {1, 16, 16, 16, 9, 10, 2, 6, 1, 1, 1},    // depthwise 2x6: two quads per kernel row, the second half
  };
  for (std::size_t i = 0; i < cases.size(); ++i)
    for (const cpu::ChannelsLast layout : {cpu::ChannelsLast{true, true}, cpu::ChannelsLast{true, false},
                                           cpu::ChannelsLast{false, true}}) {
      INFO("case " << i << ", X " << (layout.x ? "channels-last" : "planes") << ", Y "
                   << (layout.y ? "channels-last" : "planes"));
      check_qlinear_conv<uint8_t, int8_t, uint8_t>(cases[i], true, rng, true, layout);
      check_qlinear_conv<uint8_t, int8_t, int8_t>(cases[i], false, rng, true, layout);
      check_qlinear_conv<int8_t, uint8_t, uint8_t>(cases[i], false, rng, true, layout);
      check_qlinear_conv<int8_t, int8_t, int8_t>(cases[i], true, rng, false, layout);
    }
}

TEST_CASE("a channels-last QLinearConv of several groups that is not depthwise fails with the reason",
          "[cpu][quantize]") {
  std::mt19937 rng(3);
  const Tensor x = random_ints<uint8_t>({1, 4, 5, 5}, rng);
  const NodeSpec spec{.op_type = "QLinearConv",
                      .opset = 10,
                      .inputs = {x, Tensor::from_vector<float>({}, {0.5f}), Tensor::from_vector<uint8_t>({}, {3}),
                                 random_ints<int8_t>({4, 2, 3, 3}, rng), Tensor::from_vector<float>({}, {0.5f}),
                                 Tensor::from_vector<int8_t>({}, {0}), Tensor::from_vector<float>({}, {0.5f}),
                                 Tensor::from_vector<uint8_t>({}, {3})},
                      .constant = {false, true, true, true, true, true, true, true},
                      .attrs = attrs({{"group", 2}})};
  auto y = run_in_layout(spec, {true, true}, [](const NodeContext& ctx) {
    return cpu::make_qlinear_conv(ctx, {true, true});
  });
  REQUIRE_FALSE(y);
  const std::string text = y.error().render();
  CHECK_THAT(text, Catch::Matchers::Contains("QLinearConv: channels-last X or Y with 2 groups of 2 input and 2 output "
                                             "channels"));
  CHECK_THAT(text, Catch::Matchers::Contains("report this as a bug in the cpu EP's layout step"));
}

namespace {

// com.microsoft::QGemm of random A [m, k] and B ([k, n], or [n, k] with transB) against
// requantizing a direct loop's sums plus the bias: per-column b_scale and b_zero_point (or one
// of each), alpha, Y of Q.
template <class TA, class TB, class Q>
void check_qgemm(int64_t m, int64_t k, int64_t n, bool trans_b, bool per_column, std::mt19937& rng) {
  const Tensor a = random_ints<TA>({m, k}, rng);
  const Tensor b = random_ints<TB>(trans_b ? Shape{n, k} : Shape{k, n}, rng);
  const int64_t params = per_column ? n : 1;
  const Tensor az = random_ints<TA>({}, rng), bz = random_ints<TB>({params}, rng), yz = random_ints<Q>({}, rng);
  std::uniform_real_distribution<float> scale_dist(0.001f, 0.01f);
  std::vector<float> b_scale(static_cast<std::size_t>(params));
  for (float& v : b_scale) v = scale_dist(rng);
  std::uniform_int_distribution<int32_t> bias_dist(-5000, 5000);
  std::vector<int32_t> bias(static_cast<std::size_t>(n));
  for (int32_t& v : bias) v = bias_dist(rng);
  const float a_scale = 0.02f, y_scale = 0.05f, alpha = 0.75f;
  auto y = run_on_cpu({.op_type = "QGemm",
                       .domain = "com.microsoft",
                       .opset = 1,
                       .inputs = {a, Tensor::from_vector<float>({}, {a_scale}), az, b,
                                  Tensor::from_vector<float>({params}, b_scale), bz,
                                  Tensor::from_vector<int32_t>({n}, bias), Tensor::from_vector<float>({}, {y_scale}),
                                  yz},
                       .constant = {false, true, true, true, true, true, true, true, true},
                       .attrs = attrs({{"transB", int64_t{trans_b}}, {"alpha", alpha}})});
  if (!y) FAIL(y.error().render());
  REQUIRE((*y)[0].shape() == Shape{m, n});
  std::vector<Q> expected(static_cast<std::size_t>(m * n));
  auto saturated = [](float v) {
    return static_cast<Q>(std::clamp<float>(std::nearbyint(v), std::numeric_limits<Q>::lowest(),
                                            std::numeric_limits<Q>::max()));
  };
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const auto c = static_cast<std::size_t>(per_column ? j : 0);
      int32_t sum = bias[static_cast<std::size_t>(j)];
      for (int64_t p = 0; p < k; ++p) {
        const int32_t bv = b.data_as<TB>()[trans_b ? j * k + p : p * n + j];
        sum += (a.data_as<TA>()[i * k + p] - *az.data_as<TA>()) * (bv - bz.data_as<TB>()[c]);
      }
      const float scale = alpha * a_scale / y_scale * b_scale[c];
      const auto zero = static_cast<float>(*yz.data_as<Q>());
      // The product rounded, then moved by the zero point (ONNX Runtime's order).
      expected[static_cast<std::size_t>(i * n + j)] = saturated(std::nearbyint(static_cast<float>(sum) * scale) + zero);
    }
  check_equal((*y)[0], Tensor::from_vector<Q>({m, n}, std::move(expected)));
}

}  // namespace

TEST_CASE("QGemm requantizes a direct loop's sums and bias, B as it is or transposed", "[cpu][quantize]") {
  std::mt19937 rng(29);
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1280, 1000}, {5, 70, 33}, {40, 16, 8}}) {
    INFO(m << " x " << k << " x " << n);
    check_qgemm<uint8_t, int8_t, uint8_t>(m, k, n, true, true, rng);
    check_qgemm<uint8_t, int8_t, int8_t>(m, k, n, false, false, rng);
    check_qgemm<int8_t, uint8_t, uint8_t>(m, k, n, true, false, rng);
    check_qgemm<int8_t, int8_t, int8_t>(m, k, n, false, true, rng);
  }
}

TEST_CASE("QGemm declines what the cpu EP does not implement, with the reason", "[cpu][quantize][claim]") {
  std::mt19937 rng(31);
  NodeSpec spec{.op_type = "QGemm",
                .domain = "com.microsoft",
                .opset = 1,
                .inputs = {random_ints<uint8_t>({2, 3}, rng), Tensor::from_vector<float>({}, {0.1f}),
                           Tensor::from_vector<uint8_t>({}, {3}), random_ints<int8_t>({3, 4}, rng),
                           Tensor::from_vector<float>({}, {0.1f}), Tensor::from_vector<int8_t>({}, {0})}};
  const KernelMatch float_y = claim_on_cpu(spec);
  REQUIRE_FALSE(float_y);
  CHECK(float_y.reason() == "QGemm: without y_scale (input 7) Y is float; the cpu EP implements the quantized Y only");
  spec.inputs.push_back(Tensor());
  spec.inputs.push_back(Tensor::from_vector<float>({}, {0.2f}));
  spec.attrs = attrs({{"transA", int64_t{1}}});
  const KernelMatch trans_a = claim_on_cpu(spec);
  REQUIRE_FALSE(trans_a);
  CHECK(trans_a.reason() == "QGemm: transA 1 is not implemented by the cpu EP; transpose A before it (transB is)");
  spec.attrs = attrs({{"transB", int64_t{1}}});  // B [3, 4] transposed is 4 x 3: K 4 against A's 3
  const KernelMatch mismatch = claim_on_cpu(spec);
  REQUIRE_FALSE(mismatch);
  CHECK(mismatch.reason() == "QGemm: A [2,3] and B [3,4] (transposed) do not multiply");
}

TEST_CASE("QGemm names a C of another length than Y's columns, with how to fix it", "[cpu][quantize]") {
  std::mt19937 rng(37);
  auto y = run_on_cpu({.op_type = "QGemm",
                       .domain = "com.microsoft",
                       .opset = 1,
                       .inputs = {random_ints<uint8_t>({2, 3}, rng), Tensor::from_vector<float>({}, {0.1f}),
                                  Tensor::from_vector<uint8_t>({}, {3}), random_ints<int8_t>({3, 4}, rng),
                                  Tensor::from_vector<float>({}, {0.1f}), Tensor::from_vector<int8_t>({}, {0}),
                                  Tensor::from_vector<int32_t>({5}, {1, 2, 3, 4, 5}),
                                  Tensor::from_vector<float>({}, {0.2f}), Tensor::from_vector<uint8_t>({}, {0})},
                       .constant = {false, true, true, true, true, true, true, true, true}});
  REQUIRE_FALSE(y);
  const std::string text = y.error().render();
  CHECK_THAT(text, Catch::Matchers::Contains("QGemm: C has shape [5]"));
  CHECK_THAT(text, Catch::Matchers::Contains("one int32 bias per column of Y, 4 values"));
  CHECK_THAT(text, Catch::Matchers::Contains("give C of shape [4]"));
}

TEST_CASE("MatMulInteger batches, broadcasts and per-row zero points match a direct loop", "[cpu][quantize]") {
  std::mt19937 rng(9);
  // A [2, 3, 37, 45] with B [3, 45, 33]: B broadcasts over A's first dim. Then A [2, 37, 45]
  // with a constant 2-D B: one GEMM over both batches, per-row zero points repeating.
  for (const auto& [a_shape, b_shape, b_constant] :
       {std::tuple{Shape{2, 3, 37, 45}, Shape{3, 45, 33}, false}, std::tuple{Shape{2, 37, 45}, Shape{45, 33}, true}}) {
    const Tensor a = random_ints<uint8_t>(a_shape, rng);
    const Tensor b = random_ints<int8_t>(b_shape, rng);
    const Tensor az = random_ints<uint8_t>({37}, rng);
    const Tensor bz = random_ints<int8_t>({33}, rng);
    auto y = run_on_cpu({.op_type = "MatMulInteger",
                         .opset = 10,
                         .inputs = {a, b, az, bz},
                         .constant = {false, b_constant, false, false}});
    REQUIRE(y);
    const int64_t batches = shape_numel(a_shape) / (37 * 45), b_batches = shape_numel(b_shape) / (45 * 33);
    std::vector<int32_t> expected;
    for (int64_t bi = 0; bi < batches; ++bi) {
      const uint8_t* am = a.data_as<uint8_t>() + bi * 37 * 45;
      const int8_t* bm = b.data_as<int8_t>() + bi % b_batches * 45 * 33;
      for (int64_t i = 0; i < 37; ++i)
        for (int64_t j = 0; j < 33; ++j) {
          int32_t sum = 0;
          for (int64_t p = 0; p < 45; ++p)
            sum += (am[i * 45 + p] - az.data_as<uint8_t>()[i]) * (bm[p * 33 + j] - bz.data_as<int8_t>()[j]);
          expected.push_back(sum);
        }
    }
    Shape out = a_shape;
    out.back() = 33;
    check_equal((*y)[0], Tensor::from_vector<int32_t>(out, std::move(expected)));
  }
}

TEST_CASE("QLinearMatMul requantizes with per-row scales of A and per-column scales of B", "[cpu][quantize]") {
  std::mt19937 rng(13);
  // A [3, 20, 37] (three matrices) by a constant B [37, 40]: scales and zero points per row of A
  // and per column of B, Y int8.
  const int64_t batches = 3, m = 20, k = 37, n = 40;
  const Tensor a = random_ints<uint8_t>({batches, m, k}, rng);
  const Tensor b = random_ints<int8_t>({k, n}, rng);
  const Tensor az = random_ints<uint8_t>({m}, rng);
  const Tensor bz = random_ints<int8_t>({n}, rng);
  std::uniform_real_distribution<float> scale_dist(0.001f, 0.01f);
  std::vector<float> as(static_cast<std::size_t>(m)), bs(static_cast<std::size_t>(n));
  for (float& v : as) v = scale_dist(rng);
  for (float& v : bs) v = scale_dist(rng);
  const float ys = 0.05f;
  const int8_t yz = -7;
  auto y = run_on_cpu({.op_type = "QLinearMatMul",
                       .opset = 10,
                       .inputs = {a, Tensor::from_vector<float>({m}, as), az, b, Tensor::from_vector<float>({n}, bs), bz,
                                  Tensor::from_vector<float>({}, {ys}), Tensor::from_vector<int8_t>({}, {yz})},
                       .constant = {false, true, true, true, true, true, true, true}});
  REQUIRE(y);
  std::vector<int8_t> expected;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += (a.data_as<uint8_t>()[(bi * m + i) * k + p] - az.data_as<uint8_t>()[i]) *
                 (b.data_as<int8_t>()[p * n + j] - bz.data_as<int8_t>()[j]);
        const float scale = as[static_cast<std::size_t>(i)] * bs[static_cast<std::size_t>(j)] / ys;
        const float v = std::nearbyint(static_cast<float>(sum) * scale) + static_cast<float>(yz);
        expected.push_back(static_cast<int8_t>(std::clamp(v, -128.f, 127.f)));
      }
  check_equal((*y)[0], Tensor::from_vector<int8_t>({batches, m, n}, std::move(expected)));
}

TEST_CASE("integer products name a zero point or scale of the wrong length", "[cpu][quantize]") {
  const Tensor a = Tensor::from_vector<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Tensor::from_vector<int8_t>({3, 2}, {1, 2, 3, 4, 5, 6});
  auto y = run_on_cpu(
      {.op_type = "MatMulInteger", .opset = 10, .inputs = {a, b, Tensor::from_vector<uint8_t>({3}, {1, 2, 3})}});
  REQUIRE_FALSE(y);
  CHECK_THAT(y.error().render(),
             Catch::Contains("MatMulInteger: the zero point of A (input 2) has 3 values; it needs 1 or 2"));
  auto q = run_on_cpu({.op_type = "QLinearMatMul",
                       .opset = 10,
                       .inputs = {a, Tensor::from_vector<float>({}, {1}), Tensor::from_vector<uint8_t>({}, {0}), b,
                                  Tensor::from_vector<float>({3}, {1, 1, 1}), Tensor::from_vector<int8_t>({}, {0}),
                                  Tensor::from_vector<float>({}, {1}), Tensor::from_vector<uint8_t>({}, {0})}});
  REQUIRE_FALSE(q);
  CHECK_THAT(q.error().render(), Catch::Contains("QLinearMatMul: b_scale (input 4) has 3 values; it needs 1 or 2"));
  CHECK_THAT(q.error().render(), Catch::Contains("give one value, or 2 (one per column of b)"));

  // Convolutions: W's zero point and QLinearConv's w_scale, one per output channel (2 here).
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = Tensor::from_vector<int8_t>({2, 1, 1, 1}, {1, -1});
  auto c = run_on_cpu(
      {.op_type = "ConvInteger",
       .opset = 10,
       .inputs = {x, w, Tensor::from_vector<uint8_t>({}, {0}), Tensor::from_vector<int8_t>({3}, {0, 0, 0})}});
  REQUIRE_FALSE(c);
  CHECK_THAT(c.error().render(),
             Catch::Contains("ConvInteger: the zero point of W (input 3) has 3 values; it needs 1 or 2"));
  auto qc = run_on_cpu({.op_type = "QLinearConv",
                        .opset = 10,
                        .inputs = {x, Tensor::from_vector<float>({}, {1}), Tensor::from_vector<uint8_t>({}, {0}), w,
                                   Tensor::from_vector<float>({3}, {1, 1, 1}), Tensor::from_vector<int8_t>({}, {0}),
                                   Tensor::from_vector<float>({}, {1}), Tensor::from_vector<uint8_t>({}, {0})}});
  REQUIRE_FALSE(qc);
  CHECK_THAT(qc.error().render(), Catch::Contains("QLinearConv: w_scale (input 4) has 3 values; it needs 1 or 2"));
  // The bias has one value per output channel, never one for all.
  auto qb = run_on_cpu({.op_type = "QLinearConv",
                        .opset = 10,
                        .inputs = {x, Tensor::from_vector<float>({}, {1}), Tensor::from_vector<uint8_t>({}, {0}), w,
                                   Tensor::from_vector<float>({}, {1}), Tensor::from_vector<int8_t>({}, {0}),
                                   Tensor::from_vector<float>({}, {1}), Tensor::from_vector<uint8_t>({}, {0}),
                                   Tensor::from_vector<int32_t>({1}, {5})}});
  REQUIRE_FALSE(qb);
  CHECK_THAT(qb.error().render(), Catch::Contains("QLinearConv: the bias (input 8) has 1 value; it needs 2"));
  CHECK_THAT(qb.error().render(), Catch::Contains("give a bias of shape [2]"));
}

TEST_CASE("ConvInteger in 1-D and 3-D agrees with the same 2-D convolution", "[cpu][quantize]") {
  std::mt19937 rng(3);
  // [1, 6, 1, 20] with a 1x3 kernel, stride 2, in two groups (the unrolled GEMM) or six
  // (depthwise): as 1-D [1, 6, 20] and as 3-D [1, 6, 1, 1, 20] it must give the same sums,
  // reshaped.
  for (const auto& [group, out_channels] : {std::pair<int64_t, int64_t>{2, 16}, {6, 12}}) {
    INFO("group " << group);
    const IntConvCase c{1, 6, out_channels, group, 1, 20, 1, 3, 2, 1, 0};
    const Tensor x2 = random_ints<uint8_t>({1, 6, 1, 20}, rng);
    const Tensor w2 = random_ints<int8_t>({out_channels, 6 / group, 1, 3}, rng);
    const Tensor xz = Tensor::from_vector<uint8_t>({}, {100});
    const Tensor expected = direct_conv_integer<uint8_t, int8_t>(c, x2, w2, 100, {0});
    for (const Shape& extra : {Shape{}, Shape{1, 1}}) {
      Shape xs = {1, 6}, ws = {out_channels, 6 / group};
      xs.insert(xs.end(), extra.begin(), extra.end());
      ws.insert(ws.end(), extra.begin(), extra.end());
      xs.push_back(20);
      ws.push_back(3);
      auto y = run_on_cpu({.op_type = "ConvInteger",
                           .opset = 10,
                           .inputs = {x2.reshaped(xs), w2.reshaped(ws), xz},
                           .attrs = attrs({{"group", group}, {"strides", ints(xs.size() - 2, 2)}})});
      REQUIRE(y);
      Shape out = {1, out_channels};
      out.insert(out.end(), extra.begin(), extra.end());
      out.push_back(9);
      check_equal((*y)[0], expected.reshaped(out));
    }
  }
}

TEST_CASE("integer products of empty operands", "[cpu][quantize]") {
  // No rows: an empty result. No depth: every sum is 0, whatever the zero points.
  auto rows =
      run_on_cpu({.op_type = "MatMulInteger",
                  .opset = 10,
                  .inputs = {Tensor::from_vector<uint8_t>({0, 5}, {}),
                             Tensor::from_vector<int8_t>({5, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})},
                  .constant = {false, true}});
  REQUIRE(rows);
  check_equal((*rows)[0], Tensor::from_vector<int32_t>({0, 3}, {}));
  auto depth = run_on_cpu({.op_type = "MatMulInteger",
                           .opset = 10,
                           .inputs = {Tensor::from_vector<uint8_t>({2, 0}, {}), Tensor::from_vector<int8_t>({0, 3}, {}),
                                      Tensor::from_vector<uint8_t>({}, {9}), Tensor::from_vector<int8_t>({}, {-4})}});
  REQUIRE(depth);
  check_equal((*depth)[0], Tensor::from_vector<int32_t>({2, 3}, {0, 0, 0, 0, 0, 0}));
  auto quantized = run_on_cpu(
      {.op_type = "DynamicQuantizeLinear", .inputs = {Tensor::from_vector<float>({0, 4}, {})}, .outputs = 3});
  REQUIRE(quantized);
  CHECK((*quantized)[0].numel() == 0);
}
