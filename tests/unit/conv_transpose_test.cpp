// ConvTranspose against hand-computed cases and a scatter-loop reference.
#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor floats1d(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>({1, 1, n}, std::move(v));
}

// One image, one channel, W = [1, 1] unless given: the hand-computed 1-D cases.
Expected<std::vector<Tensor>> transpose_1d(AttributeMap a, Tensor w = floats1d({1, 1})) {
  return run_on_cpu({.op_type = "ConvTranspose", .opset = 11, .inputs = {floats1d({1, 2, 3}), w}, .attrs = std::move(a)});
}

// 2-D ConvTranspose by its definition: every input pixel scatters W's taps into Y.
struct Geometry {
  int64_t group, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l, pad_b, pad_r, extra_h, extra_w;
};

Tensor reference_2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Geometry& g) {
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  const int64_t n = xs[0], c = xs[1], h = xs[2], wi = xs[3], mg = ws[1], kh = ws[2], kw = ws[3];
  const int64_t m = mg * g.group, cg = c / g.group;
  const int64_t oh = g.stride_h * (h - 1) + g.extra_h + (kh - 1) * g.dil_h + 1 - g.pad_t - g.pad_b;
  const int64_t ow = g.stride_w * (wi - 1) + g.extra_w + (kw - 1) * g.dil_w + 1 - g.pad_l - g.pad_r;
  std::vector<float> y(static_cast<std::size_t>(n * m * oh * ow));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < oh * ow; ++i) y[static_cast<std::size_t>((b * m + o) * oh * ow + i)] = bias.data_as<float>()[o];
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < c; ++ci) {
      const int64_t gi = ci / cg;
      for (int64_t mo = 0; mo < mg; ++mo)
        for (int64_t ih = 0; ih < h; ++ih)
          for (int64_t iw = 0; iw < wi; ++iw)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t yh = ih * g.stride_h + a * g.dil_h - g.pad_t, yw = iw * g.stride_w + e * g.dil_w - g.pad_l;
                if (yh < 0 || yh >= oh || yw < 0 || yw >= ow) continue;
                const int64_t o = gi * mg + mo;
                y[static_cast<std::size_t>(((b * m + o) * oh + yh) * ow + yw)] +=
                    x.data_as<float>()[((b * c + ci) * h + ih) * wi + iw] *
                    w.data_as<float>()[((ci * mg + mo) * kh + a) * kw + e];
              }
    }
  return Tensor::from_vector<float>({n, m, oh, ow}, y);
}

}  // namespace

TEST_CASE("ConvTranspose 1-D: strides, pads, output_padding, output_shape and bias", "[cpu][convt]") {
  auto y = transpose_1d({});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 3, 5, 3})).empty());
  y = transpose_1d(attrs({{"strides", ints{2}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 1, 2, 2, 3, 3})).empty());
  y = transpose_1d(attrs({{"strides", ints{2}}, {"pads", ints{1, 1}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 2, 2, 3})).empty());
  // output_padding grows the end; output_shape 7 asks for the same one extra position.
  y = transpose_1d(attrs({{"strides", ints{2}}, {"output_padding", ints{1}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 1, 2, 2, 3, 3, 0})).empty());
  y = transpose_1d(attrs({{"strides", ints{2}}, {"output_shape", ints{7}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 1, 2, 2, 3, 3, 0})).empty());
  // output_shape smaller than the full result crops like pads (the odd one at the start).
  y = transpose_1d(attrs({{"strides", ints{2}}, {"output_shape", ints{3}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({2, 2, 3})).empty());
  auto biased = run_on_cpu({.op_type = "ConvTranspose", .opset = 1,
                            .inputs = {floats1d({1, 2, 3}), floats1d({1, 1}), Tensor::from_vector<float>({1}, {10})},
                            .attrs = attrs({{"dilations", ints{2}}})});
  REQUIRE(biased);
  CHECK(compare_tensors((*biased)[0], floats1d({11, 12, 14, 12, 13})).empty());
}

TEST_CASE("ConvTranspose auto_pad cuts the window's overhang past the stride", "[cpu][convt]") {
  // Full result of x = 1, 2, 3 with W = 1, 1, 1 and stride 2: 1 1 3 2 5 3 3.
  const Tensor w = floats1d({1, 1, 1});
  auto y = transpose_1d(attrs({{"strides", ints{2}}, {"auto_pad", std::string("SAME_UPPER")}}), w);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 1, 3, 2, 5, 3})).empty());
  y = transpose_1d(attrs({{"strides", ints{2}}, {"auto_pad", std::string("SAME_LOWER")}}), w);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 3, 2, 5, 3, 3})).empty());
  y = transpose_1d(attrs({{"strides", ints{2}}, {"auto_pad", std::string("VALID")}}), w);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], floats1d({1, 1, 3, 2, 5, 3, 3})).empty());
}

TEST_CASE("ConvTranspose with groups keeps each group's channels apart", "[cpu][convt]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = Tensor::from_vector<float>({2, 1, 1}, {2, 10});
  auto y = run_on_cpu({.op_type = "ConvTranspose", .inputs = {x, w}, .attrs = attrs({{"group", int64_t{2}}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 2, 2}, {2, 4, 30, 40})).empty());
}

TEST_CASE("ConvTranspose 2-D matches the scatter loop, weights packed or fed at run time", "[cpu][convt]") {
  const std::array<Geometry, 4> cases = {{
      {1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0},
      {1, 2, 3, 1, 1, 1, 0, 0, 2, 1, 2},
      {2, 2, 2, 2, 1, 0, 1, 1, 0, 0, 1},
      {3, 1, 2, 1, 2, 2, 2, 1, 1, 0, 0},
  }};
  unsigned seed = 1;
  for (const Geometry& g : cases) {
    const int64_t c = 3 * g.group, mg = 2;
    const Tensor x = Tensor::from_vector<float>({2, c, 5, 4}, random_floats(static_cast<std::size_t>(2 * c * 20), seed++));
    const Tensor w = Tensor::from_vector<float>({c, mg, 3, 2}, random_floats(static_cast<std::size_t>(c * mg * 6), seed++));
    const Tensor b = Tensor::from_vector<float>({mg * g.group}, random_floats(static_cast<std::size_t>(mg * g.group), seed++));
    const AttributeMap a = attrs({{"group", g.group},
                                  {"strides", ints{g.stride_h, g.stride_w}},
                                  {"dilations", ints{g.dil_h, g.dil_w}},
                                  {"pads", ints{g.pad_t, g.pad_l, g.pad_b, g.pad_r}},
                                  {"output_padding", ints{g.extra_h, g.extra_w}}});
    const Tensor want = reference_2d(x, w, b, g);
    for (bool constant : {false, true}) {
      auto y = run_on_cpu({.op_type = "ConvTranspose", .inputs = {x, w, b}, .constant = {false, constant, constant},
                           .attrs = a});
      REQUIRE(y);
      CHECK(compare_tensors((*y)[0], want, 1e-4, 1e-5).empty());
    }
  }
}

TEST_CASE("ConvTranspose runs double and 3-D", "[cpu][convt]") {
  const Tensor x = Tensor::from_vector<double>({1, 1, 2}, {1, 2});
  const Tensor w = Tensor::from_vector<double>({1, 1, 2}, {1, -1});
  auto y = run_on_cpu({.op_type = "ConvTranspose", .inputs = {x, w}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<double>({1, 1, 3}, {1, 1, -2})).empty());
  // A 1x1x1 input with a 2x2x2 kernel of ones writes the kernel times x.
  const Tensor x3 = Tensor::from_vector<float>({1, 1, 1, 1, 1}, {3});
  const Tensor w3 = Tensor::from_vector<float>({1, 1, 2, 2, 2}, std::vector<float>(8, 1));
  auto y3 = run_on_cpu({.op_type = "ConvTranspose", .inputs = {x3, w3}});
  REQUIRE(y3);
  CHECK(compare_tensors((*y3)[0], Tensor::from_vector<float>({1, 1, 2, 2, 2}, std::vector<float>(8, 3))).empty());
}

TEST_CASE("ConvTranspose declines what it cannot run with the reason", "[cpu][convt][claim]") {
  const Tensor x = floats1d({1, 2, 3});
  auto m = claim_on_cpu({.op_type = "ConvTranspose", .inputs = {x, Tensor::from_vector<double>({1, 1, 2}, {1, 1})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ConvTranspose: W has type double and X float; they must match");
  m = claim_on_cpu({.op_type = "ConvTranspose", .inputs = {x, floats1d({1, 1})},
                    .attrs = attrs({{"output_padding", ints{-1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ConvTranspose: output_padding [-1] has a negative value");
  m = claim_on_cpu({.op_type = "ConvTranspose", .inputs = {x, Tensor::from_vector<float>({2, 1, 2}, {1, 1, 1, 1})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ConvTranspose: X [1,1,3] and W [2,1,2] do not fit group 1");
  m = claim_on_cpu({.op_type = "ConvTranspose",
                    .inputs = {Tensor::from_vector<float>({1, 1, 1, 1, 1, 1}, {1}),
                               Tensor::from_vector<float>({1, 1, 1, 1, 1, 1}, {1})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() ==
        "ConvTranspose: 4-D is not supported by the cpu EP; it supports 1-D, 2-D and 3-D (X of rank 3 to 5)");
}
