// Conv against a naive direct convolution for many shapes and attribute combinations.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <random>
#include <tuple>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

struct ConvCase {
  Shape x;  // N, C, spatial...
  int64_t out_channels = 1, group = 1;
  ints kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad = "NOTSET";
  bool bias = false;
};

Tensor random_floats(Shape shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (float& f : v) f = dist(rng);
  return Tensor::from_vector<float>(std::move(shape), v);
}

// The begin pad and output size of one dim, from the ONNX operator definition.
std::pair<int64_t, int64_t> pad_and_out(const ConvCase& c, std::size_t i) {
  const std::size_t r = c.kernel.size();
  const int64_t in = c.x[2 + i], span = (c.kernel[i] - 1) * c.dilations[i] + 1, s = c.strides[i];
  if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
    const int64_t out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
    return {c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2, out};
  }
  const int64_t begin = c.auto_pad == "VALID" ? 0 : c.pads[i], end = c.auto_pad == "VALID" ? 0 : c.pads[i + r];
  return {begin, (in + begin + end - span) / s + 1};
}

// y[n, m, o...] = bias[m] + sum over the group's channels and the kernel taps.
Tensor reference_conv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor* bias) {
  const std::size_t r = c.kernel.size();
  // Spatial dims as three (leading 1s), so one loop nest covers 1-D to 3-D.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pad{0, 0, 0};
  for (std::size_t i = 0; i < r; ++i) {
    const std::size_t j = 3 - r + i;
    in[j] = c.x[2 + i];
    k[j] = c.kernel[i];
    s[j] = c.strides[i];
    d[j] = c.dilations[i];
    std::tie(pad[j], out[j]) = pad_and_out(c, i);
  }
  const int64_t n_count = c.x[0], ch = c.x[1], cg = ch / c.group, mg = c.out_channels / c.group;
  Shape ys{n_count, c.out_channels};
  for (std::size_t i = 3 - r; i < 3; ++i) ys.push_back(out[i]);
  std::vector<float> y(static_cast<std::size_t>(shape_numel(ys)));
  const float* xd = x.data_as<float>();
  const float* wd = w.data_as<float>();
  std::size_t at = 0;
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t m = 0; m < c.out_channels; ++m)
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            double sum = bias ? bias->data_as<float>()[m] : 0.0;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i0 = o0 * s[0] - pad[0] + k0 * d[0], i1 = o1 * s[1] - pad[1] + k1 * d[1],
                                  i2 = o2 * s[2] - pad[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    const int64_t channel = (m / mg) * cg + ci;
                    sum += double(xd[(((n * ch + channel) * in[0] + i0) * in[1] + i1) * in[2] + i2]) *
                           wd[(((m * cg + ci) * k[0] + k0) * k[1] + k1) * k[2] + k2];
                  }
            y[at++] = static_cast<float>(sum);
          }
  return Tensor::from_vector<float>(ys, y);
}

AttributeMap conv_attrs(const ConvCase& c, bool with_kernel_shape) {
  AttributeMap a = attrs({{"group", c.group}, {"strides", c.strides}, {"dilations", c.dilations}});
  if (c.auto_pad == "NOTSET")
    a.set("pads", Attribute{c.pads});
  else
    a.set("auto_pad", Attribute{c.auto_pad});
  if (with_kernel_shape) a.set("kernel_shape", Attribute{c.kernel});
  return a;
}

std::string describe(const ConvCase& c) {
  return fmt::format("x {} M {} group {} kernel {} strides {} dilations {} pads {} auto_pad {} bias {}",
                     shape_to_string(c.x), c.out_channels, c.group, c.kernel, c.strides, c.dilations, c.pads,
                     c.auto_pad, c.bias);
}

// Runs the case with W as a constant (packed) and as a graph input.
void check_conv(const ConvCase& c, std::mt19937& rng, int threads) {
  Shape ws{c.out_channels, c.x[1] / c.group};
  ws.insert(ws.end(), c.kernel.begin(), c.kernel.end());
  const Tensor x = random_floats(c.x, rng), w = random_floats(ws, rng);
  const Tensor b = random_floats({c.out_channels}, rng);
  const Tensor want = reference_conv(c, x, w, c.bias ? &b : nullptr);
  for (bool constant : {true, false}) {
    INFO(describe(c) << " constant W " << constant << " threads " << threads);
    NodeSpec spec{.op_type = "Conv",
                  .inputs = {x, w},
                  .constant = {false, constant, constant},
                  .attrs = conv_attrs(c, !constant),
                  .threads = threads};
    if (c.bias) spec.inputs.push_back(b);
    auto y = run_on_cpu(spec);
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], want, 1e-4, 1e-4) == "");
  }
}

// A random valid case of `rank` spatial dims; depthwise when asked.
ConvCase random_case(std::mt19937& rng, std::size_t rank, bool depthwise) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  static const std::vector<std::string> modes = {"NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  for (;;) {
    ConvCase c;
    c.group = depthwise ? pick(2, 6) : std::vector<int64_t>{1, 1, 2, 3}[static_cast<std::size_t>(pick(0, 3))];
    const int64_t cg = depthwise ? 1 : pick(1, 4);
    c.x = {pick(1, 2), c.group * cg};
    c.out_channels = c.group * (depthwise ? pick(1, 2) : pick(1, 5));
    c.auto_pad = modes[static_cast<std::size_t>(pick(0, 4))];
    c.bias = pick(0, 1) == 1;
    const int64_t max_in = rank == 3 ? 7 : 13;
    for (std::size_t i = 0; i < rank; ++i) {
      c.x.push_back(pick(1, max_in));
      c.kernel.push_back(pick(1, rank == 3 ? 3 : 5));
      c.strides.push_back(pick(1, 3));
      c.dilations.push_back(pick(1, 2));
    }
    for (std::size_t i = 0; i < 2 * rank; ++i) c.pads.push_back(pick(0, 2));
    bool valid = true;
    for (std::size_t i = 0; i < rank; ++i) {
      const int64_t span = (c.kernel[i] - 1) * c.dilations[i] + 1;
      const int64_t padded = c.x[2 + i] + (c.auto_pad == "NOTSET" ? c.pads[i] + c.pads[i + rank] : 0);
      valid = valid && (c.auto_pad.starts_with("SAME") || padded >= span);
    }
    if (valid) return c;
  }
}

}  // namespace

TEST_CASE("Conv 2-D matches a direct convolution for random attributes", "[cpu][conv]") {
  std::mt19937 rng(2024);
  for (int i = 0; i < 80; ++i) check_conv(random_case(rng, 2, false), rng, 1 + i % 2);
}

TEST_CASE("Conv depthwise (with channel multipliers) matches a direct convolution", "[cpu][conv]") {
  std::mt19937 rng(99);
  for (int i = 0; i < 40; ++i) check_conv(random_case(rng, 2, true), rng, 1 + i % 2);
}

TEST_CASE("Conv 1-D and 3-D match a direct convolution", "[cpu][conv]") {
  std::mt19937 rng(5);
  for (int i = 0; i < 30; ++i) check_conv(random_case(rng, 1, i % 3 == 0), rng, 1 + i % 2);
  for (int i = 0; i < 20; ++i) check_conv(random_case(rng, 3, i % 4 == 0), rng, 1 + i % 2);
}

TEST_CASE("Conv on larger images: 1x1, strided 3x3 and many small groups", "[cpu][conv]") {
  std::mt19937 rng(11);
  ConvCase pointwise{.x = {2, 24, 17, 19},
                     .out_channels = 40,
                     .kernel = {1, 1},
                     .strides = {1, 1},
                     .dilations = {1, 1},
                     .pads = {0, 0, 0, 0},
                     .bias = true};
  check_conv(pointwise, rng, 2);
  ConvCase strided{.x = {1, 16, 30, 29},
                   .out_channels = 33,
                   .kernel = {3, 3},
                   .strides = {2, 2},
                   .dilations = {1, 1},
                   .pads = {1, 1, 1, 1},
                   .bias = true};
  check_conv(strided, rng, 2);
  ConvCase grouped{.x = {3, 32, 9, 9},
                   .out_channels = 64,
                   .group = 16,
                   .kernel = {3, 3},
                   .strides = {1, 1},
                   .dilations = {1, 1},
                   .pads = {1, 1, 1, 1}};
  check_conv(grouped, rng, 2);
  ConvCase depthwise{.x = {1, 12, 40, 37},
                     .out_channels = 12,
                     .group = 12,
                     .kernel = {3, 3},
                     .strides = {1, 1},
                     .dilations = {1, 1},
                     .pads = {1, 1, 1, 1},
                     .bias = true};
  check_conv(depthwise, rng, 2);
}

TEST_CASE("Conv declines unsupported types, ranks and inconsistent shapes with the reason", "[cpu][conv][claim]") {
  std::mt19937 rng(1);
  const Tensor xd = Tensor::from_vector<double>({1, 1, 3, 3}, std::vector<double>(9, 1.0));
  auto m = claim_on_cpu({.op_type = "Conv", .inputs = {xd, xd}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Conv: input 0 has type double; the cpu EP supports float for Conv");

  const Tensor x4 = random_floats({1, 1, 2, 2, 2, 2}, rng);
  m = claim_on_cpu({.op_type = "Conv", .inputs = {x4, x4}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() ==
        "Conv: 4-D convolution is not supported by the cpu EP; it supports 1-D, 2-D and 3-D (X of rank 3 to 5)");

  m = claim_on_cpu({.op_type = "Conv",
                    .inputs = {random_floats({1, 4, 5, 5}, rng), random_floats({6, 3, 3, 3}, rng)},
                    .attrs = attrs({{"group", int64_t{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Conv: X [1,4,5,5] and W [6,3,3,3] do not fit group 2");

  m = claim_on_cpu({.op_type = "Conv",
                    .inputs = {random_floats({1, 1, 5, 5}, rng), random_floats({1, 1, 3, 3}, rng)},
                    .attrs = attrs({{"strides", ints{1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Conv: strides [1] has 1 values for 2 spatial dims");

  m = claim_on_cpu({.op_type = "Conv", .inputs = {random_floats({1, 1, 2, 2}, rng), random_floats({1, 1, 3, 3}, rng)}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() ==
        "Conv: the window of spatial dim 0 (kernel 3, dilation 1) is larger than the padded input (2 + "
        "pads 0 and 0)");
}
