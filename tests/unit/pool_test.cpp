// Pooling ops against the ONNX backend tests' precomputed cases and a reference loop.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "kernel_harness.h"
#include "kernels/kernels.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// 1, 2, ..., n*n as a 1 x 1 x n x n image.
Tensor counting_image(int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n * n));
  std::iota(v.begin(), v.end(), 1.f);
  return Tensor::from_vector<float>({1, 1, n, n}, v);
}

Expected<std::vector<Tensor>> pool(const std::string& op, const Tensor& x, AttributeMap a, std::size_t outputs = 1,
                                   int64_t opset = 17) {
  return run_on_cpu({.op_type = op, .opset = opset, .inputs = {x}, .attrs = std::move(a), .outputs = outputs});
}

}  // namespace

TEST_CASE("MaxPool reproduces the ONNX backend tests' precomputed outputs", "[cpu][pool]") {
  auto y = pool("MaxPool", counting_image(4),
                attrs({{"kernel_shape", ints{3, 3}}, {"strides", ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {11, 12, 15, 16})).empty());

  y = pool("MaxPool", counting_image(4), attrs({{"kernel_shape", ints{2, 2}}, {"dilations", ints{2, 2}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {11, 12, 15, 16})).empty());

  // maxpool_with_argmax_2d_precomputed_pads
  y = pool("MaxPool", counting_image(5), attrs({{"kernel_shape", ints{5, 5}}, {"pads", ints{2, 2, 2, 2}}}), 2);
  REQUIRE(y);
  const std::vector<float> row_max = {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                                      25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25};
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 5, 5}, row_max)).empty());
  std::vector<int64_t> idx;
  for (float v : row_max) idx.push_back(static_cast<int64_t>(v) - 1);
  CHECK(compare_tensors((*y)[1], Tensor::from_vector<int64_t>({1, 1, 5, 5}, idx)).empty());

  // maxpool_with_argmax_2d_precomputed_strides: column-major indices
  y = pool("MaxPool", counting_image(5),
           attrs({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}, {"storage_order", int64_t{1}}}), 2);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {7, 9, 17, 19})).empty());
  CHECK(compare_tensors((*y)[1], Tensor::from_vector<int64_t>({1, 1, 2, 2}, {6, 16, 8, 18})).empty());
}

TEST_CASE("AveragePool reproduces the ONNX backend tests' precomputed outputs", "[cpu][pool]") {
  auto y = pool("AveragePool", counting_image(4),
                attrs({{"kernel_shape", ints{3, 3}}, {"strides", ints{2, 2}}, {"ceil_mode", int64_t{1}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {6, 7.5f, 12, 13.5f})).empty());

  y = pool("AveragePool", counting_image(5),
           attrs({{"kernel_shape", ints{3, 3}}, {"strides", ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
  REQUIRE(y);
  CHECK(
      compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 3, 3}, {4, 5.5f, 7, 11.5f, 13, 14.5f, 19, 20.5f, 22}))
          .empty());

  y = pool("AveragePool", counting_image(5),
           attrs({{"kernel_shape", ints{5, 5}}, {"pads", ints{2, 2, 2, 2}}, {"count_include_pad", int64_t{1}}}));
  REQUIRE(y);
  const std::vector<float> include_pad = {2.52f, 3.6f, 4.8f,  4.08f,  3.24f,  //
                                          4.56f, 6.4f, 8.4f,  7.04f,  5.52f,  //
                                          7.2f,  10,   13,    10.8f,  8.4f,   //
                                          6.96f, 9.6f, 12.4f, 10.24f, 7.92f,  //
                                          6.12f, 8.4f, 10.8f, 8.88f,  6.84f};
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 5, 5}, include_pad)).empty());

  y = pool("AveragePool", counting_image(5), attrs({{"kernel_shape", ints{5, 5}}, {"pads", ints{2, 2, 2, 2}}}));
  REQUIRE(y);
  const std::vector<float> exclude_pad = {7,  7.5f,  8,  8.5f,  9,  9.5f,  10, 10.5f, 11, 11.5f, 12, 12.5f, 13, 13.5f,
                                          14, 14.5f, 15, 15.5f, 16, 16.5f, 17, 17.5f, 18, 18.5f, 19};
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 5, 5}, exclude_pad)).empty());
}

namespace {

struct PoolCase {
  Shape x;
  ints kernel, strides, dilations, pads;
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false, count_pad = false, column_major = false;
};

// One spatial dim per the ONNX definition: begin pad, end pad and output size.
std::array<int64_t, 3> resolve_dim(const PoolCase& c, std::size_t i) {
  const std::size_t r = c.kernel.size();
  const int64_t in = c.x[2 + i], s = c.strides[i], span = (c.kernel[i] - 1) * c.dilations[i] + 1;
  if (c.auto_pad.starts_with("SAME")) {
    const int64_t out = (in + s - 1) / s, total = std::max<int64_t>(0, (out - 1) * s + span - in);
    const int64_t begin = c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
    return {begin, total - begin, out};
  }
  const int64_t pb = c.auto_pad == "VALID" ? 0 : c.pads[i], pe = c.auto_pad == "VALID" ? 0 : c.pads[i + r];
  const double exact = double(in + pb + pe - span) / double(s);
  int64_t out = static_cast<int64_t>(c.ceil_mode ? std::ceil(exact) : std::floor(exact)) + 1;
  if (c.ceil_mode && (out - 1) * s >= in + pb) --out;  // windows starting in the end padding
  return {pb, pe, out};
}

// Max (with row- or column-major argmax) and average over every window, as loops.
std::array<Tensor, 3> reference_pool(const PoolCase& c, const Tensor& x) {
  const std::size_t r = c.kernel.size();
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, pe{0, 0, 0};
  for (std::size_t i = 0; i < r; ++i) {
    const std::size_t j = 3 - r + i;
    in[j] = c.x[2 + i];
    k[j] = c.kernel[i];
    s[j] = c.strides[i];
    d[j] = c.dilations[i];
    const auto [b, e, o] = resolve_dim(c, i);
    pb[j] = b;
    pe[j] = e;
    out[j] = o;
  }
  Shape ys{c.x[0], c.x[1]};
  for (std::size_t i = 3 - r; i < 3; ++i) ys.push_back(out[i]);
  std::vector<float> mx, avg;
  std::vector<int64_t> arg;
  const int64_t planes = c.x[0] * c.x[1], plane_size = in[0] * in[1] * in[2];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          float best = -std::numeric_limits<float>::infinity(), sum = 0;
          int64_t best_at = -1, valid = 0, padded = 0;
          for (int64_t k0 = 0; k0 < k[0]; ++k0)
            for (int64_t k1 = 0; k1 < k[1]; ++k1)
              for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                const std::array<int64_t, 3> pos{o0 * s[0] - pb[0] + k0 * d[0], o1 * s[1] - pb[1] + k1 * d[1],
                                                 o2 * s[2] - pb[2] + k2 * d[2]};
                bool inside = true, in_padded = true;
                for (int q = 0; q < 3; ++q) {
                  inside = inside && pos[q] >= 0 && pos[q] < in[q];
                  in_padded = in_padded && pos[q] < in[q] + pe[q];
                }
                padded += in_padded;
                if (!inside) continue;
                const float v = x.data_as<float>()[p * plane_size + (pos[0] * in[1] + pos[1]) * in[2] + pos[2]];
                ++valid;
                sum += v;
                if (v > best) {
                  best = v;
                  best_at = c.column_major ? pos[0] + pos[1] * in[0] + pos[2] * in[0] * in[1]
                                           : (pos[0] * in[1] + pos[1]) * in[2] + pos[2];
                }
              }
          mx.push_back(best);
          arg.push_back(p * plane_size + best_at);
          avg.push_back(sum / static_cast<float>(c.count_pad ? padded : valid));
        }
  return {Tensor::from_vector<float>(ys, mx), Tensor::from_vector<int64_t>(ys, arg),
          Tensor::from_vector<float>(ys, avg)};
}

AttributeMap pool_attrs(const PoolCase& c) {
  AttributeMap a = attrs({{"kernel_shape", c.kernel},
                          {"strides", c.strides},
                          {"dilations", c.dilations},
                          {"auto_pad", c.auto_pad},
                          {"ceil_mode", int64_t{c.ceil_mode}}});
  if (c.auto_pad == "NOTSET") a.set("pads", Attribute{c.pads});
  return a;
}

PoolCase random_pool_case(std::mt19937& rng, std::size_t rank) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  static const std::vector<std::string> modes = {"NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  for (;;) {
    PoolCase c;
    c.x = {pick(1, 2), pick(1, 3)};
    c.auto_pad = modes[static_cast<std::size_t>(pick(0, 5))];
    c.ceil_mode = pick(0, 1) == 1;
    c.count_pad = pick(0, 1) == 1;
    c.column_major = pick(0, 1) == 1;
    for (std::size_t i = 0; i < rank; ++i) {
      c.x.push_back(pick(1, rank == 3 ? 6 : 11));
      c.kernel.push_back(pick(1, 4));
      c.strides.push_back(pick(1, 3));
      c.dilations.push_back(pick(1, 2));
    }
    for (std::size_t i = 0; i < 2 * rank; ++i) c.pads.push_back(pick(0, c.kernel[i % rank] - 1));
    bool valid = true;
    for (std::size_t i = 0; i < rank; ++i) {
      const int64_t span = (c.kernel[i] - 1) * c.dilations[i] + 1;
      const int64_t padded = c.x[2 + i] + (c.auto_pad == "NOTSET" ? c.pads[i] + c.pads[i + rank] : 0);
      valid = valid && (c.auto_pad.starts_with("SAME") || padded >= span);
    }
    // Every window must see at least one input element (an empty window has no max or mean).
    for (std::size_t i = 0; valid && i < rank; ++i) {
      const auto [pb, pe, out] = resolve_dim(c, i);
      for (int64_t o = 0; o < out; ++o) {
        bool seen = false;
        for (int64_t t = 0; t < c.kernel[i]; ++t) {
          const int64_t pos = o * c.strides[i] - pb + t * c.dilations[i];
          seen = seen || (pos >= 0 && pos < c.x[2 + i]);
        }
        valid = valid && seen;
      }
    }
    if (valid) return c;
  }
}

}  // namespace

TEST_CASE("MaxPool and AveragePool match a reference loop for random windows, 1-D to 3-D", "[cpu][pool]") {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int i = 0; i < 120; ++i) {
    const PoolCase c = random_pool_case(rng, static_cast<std::size_t>(1 + i % 3));
    std::vector<float> v(static_cast<std::size_t>(shape_numel(c.x)));
    for (float& f : v) f = dist(rng);
    const Tensor x = Tensor::from_vector<float>(c.x, v);
    const auto [want_max, want_arg, want_avg] = reference_pool(c, x);
    INFO(fmt::format("x {} kernel {} strides {} dilations {} pads {} auto_pad {} ceil {} include_pad {} col-major {}",
                     shape_to_string(c.x), c.kernel, c.strides, c.dilations, c.pads, c.auto_pad, c.ceil_mode,
                     c.count_pad, c.column_major));
    AttributeMap max_attrs = pool_attrs(c);
    max_attrs.set("storage_order", Attribute{int64_t{c.column_major}});
    auto y = pool("MaxPool", x, max_attrs, 2);
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], want_max).empty());
    CHECK(compare_tensors((*y)[1], want_arg).empty());
    AttributeMap avg_attrs = pool_attrs(c);
    avg_attrs.set("count_include_pad", Attribute{int64_t{c.count_pad}});
    y = pool("AveragePool", x, avg_attrs, 1, 19);
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], want_avg, 1e-5, 1e-6).empty());
  }
}

TEST_CASE("MaxPool of int8 and uint8 without Indices (by rows) matches the reference loop, 1-D and 2-D",
          "[cpu][pool]") {
  std::mt19937 rng(23);
  for (int i = 0; i < 120; ++i) {
    PoolCase c = random_pool_case(rng, static_cast<std::size_t>(1 + i % 2));
    if (i % 3 == 0) c.x[1] = 67;  // channels-last: a vector of 64 channels and a tail
    const bool is_signed = i % 4 < 2;
    std::uniform_int_distribution<int> dist(is_signed ? -128 : 0, is_signed ? 127 : 255);
    std::vector<float> v(static_cast<std::size_t>(shape_numel(c.x)));
    for (float& f : v) f = static_cast<float>(dist(rng));
    const Tensor x = Tensor::from_vector<float>(c.x, v);
    const Tensor want = reference_pool(c, x)[0];
    INFO(fmt::format("{} x {} kernel {} strides {} dilations {} pads {} auto_pad {} ceil {}",
                     is_signed ? "int8" : "uint8", shape_to_string(c.x), c.kernel, c.strides, c.dilations, c.pads,
                     c.auto_pad, c.ceil_mode));
    auto as_bytes = [&](const Tensor& t) {
      const float* f = t.data_as<float>();
      if (is_signed) return Tensor::from_vector<int8_t>(t.shape(), std::vector<int8_t>(f, f + t.numel()));
      return Tensor::from_vector<uint8_t>(t.shape(), std::vector<uint8_t>(f, f + t.numel()));
    };
    auto y = pool("MaxPool", as_bytes(x), pool_attrs(c), 1, 12);
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], as_bytes(want)).empty());
    if (c.kernel.size() != 2) continue;
    // The same stored channels-last, as the cpu EP's layout step runs it between convolutions.
    y = run_in_layout({.op_type = "MaxPool", .opset = 12, .inputs = {as_bytes(x)}, .attrs = pool_attrs(c)},
                      {true, true}, [](const NodeContext& ctx) { return cpu::make_max_pool_channels_last(ctx); });
    if (!y) FAIL(y.error().render());
    CHECK(compare_tensors((*y)[0], as_bytes(want)).empty());
  }
}

TEST_CASE("the cpu EP's channels-last pools refuse what its layout step never gives them", "[cpu][pool]") {
  const auto max_pool = [](const NodeContext& ctx) { return cpu::make_max_pool_channels_last(ctx); };
  auto y = run_in_layout({.op_type = "MaxPool",
                          .opset = 12,
                          .inputs = {Tensor::from_vector<int8_t>({1, 1, 2, 2}, {1, 2, 3, 4}).reshaped({1, 4})},
                          .attrs = attrs({{"kernel_shape", ints{2, 2}}})},
                         {false, false}, max_pool);
  REQUIRE_FALSE(y);
  CHECK_THAT(y.error().render(), Catch::Matchers::Contains("MaxPool: channels-last X [1,4] with kernel_shape [2, 2]"));
  CHECK_THAT(y.error().render(), Catch::Matchers::Contains("report this as a bug in the cpu EP's layout step"));
  const Tensor bytes = Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4});
  y = run_in_layout({.op_type = "GlobalAveragePool", .inputs = {bytes}}, {true, false},
                    [](const NodeContext&) { return cpu::make_global_average_pool_channels_last(); });
  REQUIRE_FALSE(y);
  CHECK_THAT(y.error().render(),
             Catch::Matchers::Contains("GlobalAveragePool: channels-last X of type uint8 and shape [1,2,2,1]"));
  CHECK_THAT(y.error().render(), Catch::Matchers::Contains("report this as a bug in the cpu EP's layout step"));
}

TEST_CASE("MaxPool runs double and, from opset 12, int8 and uint8", "[cpu][pool]") {
  const Tensor x = Tensor::from_vector<int8_t>({1, 1, 4}, {-5, 3, -1, 7});
  auto y = pool("MaxPool", x, attrs({{"kernel_shape", ints{2}}, {"strides", ints{2}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<int8_t>({1, 1, 2}, {3, 7})).empty());
  const Tensor xd = Tensor::from_vector<double>({1, 1, 3}, {0.5, -1, 2});
  y = pool("MaxPool", xd, attrs({{"kernel_shape", ints{2}}, {"pads", ints{1, 0}}}));
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<double>({1, 1, 3}, {0.5, 0.5, 2})).empty());
  auto m =
      claim_on_cpu({.op_type = "MaxPool", .opset = 11, .inputs = {x}, .attrs = attrs({{"kernel_shape", ints{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MaxPool: input 0 has type int8; the cpu EP supports float, double for MaxPool");
}

TEST_CASE("GlobalAveragePool and GlobalMaxPool reduce every spatial dim", "[cpu][pool]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -9});
  auto y = run_on_cpu({.op_type = "GlobalAveragePool", .inputs = {x}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 2, 1, 1}, {3.5f, -4})).empty());
  y = run_on_cpu({.op_type = "GlobalMaxPool", .inputs = {x}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 2, 1, 1}, {6, -1})).empty());
  const Tensor x3 = Tensor::from_vector<double>({2, 1, 2}, {1, 4, -2, 8});
  y = run_on_cpu({.op_type = "GlobalAveragePool", .inputs = {x3}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<double>({2, 1, 1}, {2.5, 3})).empty());
}

TEST_CASE("pooling declines bad attributes with the reason", "[cpu][pool][claim]") {
  const Tensor x = counting_image(4);
  auto m = claim_on_cpu({.op_type = "MaxPool", .inputs = {x}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MaxPool: the kernel_shape attribute is missing; it is required");
  m = claim_on_cpu({.op_type = "AveragePool",
                    .inputs = {x},
                    .attrs = attrs({{"kernel_shape", ints{2, 2}}, {"auto_pad", std::string("SAME")}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "AveragePool: auto_pad 'SAME' is not an ONNX value; use NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  m = claim_on_cpu({.op_type = "MaxPool", .inputs = {x}, .attrs = attrs({{"kernel_shape", ints{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MaxPool: X has rank 4 but kernel_shape [2] has 1 dims; X must be N x C x 1 spatial dims");
  m = claim_on_cpu({.op_type = "MaxPool",
                    .inputs = {x},
                    .attrs = attrs({{"kernel_shape", ints{2, 2}}, {"storage_order", int64_t{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MaxPool: storage_order 2 is not 0 (row major) or 1 (column major)");
  m = claim_on_cpu({.op_type = "GlobalMaxPool", .inputs = {Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "GlobalMaxPool: X has rank 2; it must be N x C x at least one spatial dim");
}

TEST_CASE("LpPool takes the p-norm of every window, pads adding nothing", "[cpu][pool][convt]") {
  const Tensor x = counting_image(3);
  auto y = pool("LpPool", x, attrs({{"kernel_shape", ints{2, 2}}}), 1, 11);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {std::sqrt(46.f), std::sqrt(74.f),
                                                                           std::sqrt(154.f), std::sqrt(206.f)}))
            .empty());
  y = pool("LpPool", x, attrs({{"kernel_shape", ints{2, 2}}, {"p", int64_t{3}}}), 1, 18);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {std::cbrt(198.f), std::cbrt(376.f),
                                                                           std::cbrt(1044.f), std::cbrt(1582.f)}))
            .empty());
  // Windows starting in the padding see 1 tap, 2 taps, 2 taps and 4 taps.
  y = pool("LpPool", x, attrs({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}), 1,
           2);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {1, std::sqrt(13.f), std::sqrt(65.f),
                                                                           std::sqrt(206.f)}))
            .empty());
  // LpPool-1 takes p as a float.
  y = pool("LpPool", x, attrs({{"kernel_shape", ints{3, 3}}, {"p", 1.f}}), 1, 1);
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 1, 1}, {45})).empty());
  auto m = claim_on_cpu({.op_type = "LpPool", .opset = 11, .inputs = {x},
                         .attrs = attrs({{"kernel_shape", ints{2, 2}}, {"p", int64_t{0}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "LpPool: p 0 is not positive");
}

TEST_CASE("GlobalLpPool takes the p-norm of every plane", "[cpu][pool][convt]") {
  const Tensor x = Tensor::from_vector<float>({1, 2, 2}, {3, 4, 1, 1});
  auto y = run_on_cpu({.op_type = "GlobalLpPool", .opset = 2, .inputs = {x}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 2, 1}, {5, std::sqrt(2.f)})).empty());
  y = run_on_cpu({.op_type = "GlobalLpPool", .opset = 1, .inputs = {x}, .attrs = attrs({{"p", 1.f}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 2, 1}, {7, 2})).empty());
}

TEST_CASE("MaxUnpool scatters values to MaxPool's indices", "[cpu][pool][convt]") {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {5, 6, 7, 8});
  const Tensor i = Tensor::from_vector<int64_t>({1, 1, 2, 2}, {5, 7, 13, 15});
  const AttributeMap a = attrs({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}});
  auto y = run_on_cpu({.op_type = "MaxUnpool", .opset = 11, .inputs = {x, i}, .attrs = a});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 4, 4}, {0, 0, 0, 0, 0, 5, 0, 6,  //
                                                                           0, 0, 0, 0, 0, 7, 0, 8}))
            .empty());
  // A larger output_shape keeps every value at its row and column.
  y = run_on_cpu({.op_type = "MaxUnpool", .opset = 9, .inputs = {x, i, int64s({1, 1, 5, 5})}, .attrs = a});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 1, 5, 5}, {0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0,
                                                                           0, 0, 0, 7, 0, 8, 0, 0, 0, 0, 0, 0}))
            .empty());
  auto bad = run_on_cpu({.op_type = "MaxUnpool", .opset = 11,
                         .inputs = {x, Tensor::from_vector<int64_t>({1, 1, 2, 2}, {5, 7, 13, 16})}, .attrs = a});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "MaxUnpool: index 16 at position 3 of I is outside the unpooled output [1,1,4,4]");
  auto m = claim_on_cpu({.op_type = "MaxUnpool", .opset = 11, .inputs = {x, i}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MaxUnpool: the kernel_shape attribute is missing; it is required");
}
