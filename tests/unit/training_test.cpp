// The ai.onnx.preview.training optimizers against the spec's update formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

constexpr const char* kDomain = "ai.onnx.preview.training";

Tensor scalar_f(float v) { return Tensor::from_vector<float>({}, {v}); }
Tensor scalar_i(int64_t v) { return Tensor::from_vector<int64_t>({}, {v}); }
Tensor vec(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>({n}, v);
}

}  // namespace

TEST_CASE("Adagrad updates X and H for two tensors", "[cpu][training]") {
  const float r = 0.1f, decay = 0.1f, eps = 1e-5f, norm = 0.001f;
  const int64_t t = 3;
  const std::vector<float> x1{1.0f, 2.0f}, g1{-1.0f, 1.0f}, h1{2.0f, 3.0f};
  const std::vector<float> x2{-0.5f}, g2{0.25f}, h2{0.0f};
  auto out = run_on_cpu({.op_type = "Adagrad",
                         .domain = kDomain,
                         .opset = 1,
                         .inputs = {scalar_f(r), scalar_i(t), vec(x1), vec(x2), vec(g1), vec(g2), vec(h1), vec(h2)},
                         .attrs = attrs({{"decay_factor", decay}, {"epsilon", eps}, {"norm_coefficient", norm}}),
                         .outputs = 4});
  REQUIRE(out);
  // r / (1 + T * decay) = 0.1 / 1.3; g' = norm * x + g; H' = H + g'^2; X' = X - r' g' / (sqrt(H') + eps).
  const double rate = 0.1 / 1.3;
  auto expect = [&](float x, float g, float h, float x_new, float h_new) {
    const double gr = 0.001 * x + g;
    const double hn = h + gr * gr;
    CHECK(h_new == Approx(hn));
    CHECK(x_new == Approx(x - rate * gr / (std::sqrt(hn) + 1e-5)));
  };
  expect(x1[0], g1[0], h1[0], (*out)[0].data_as<float>()[0], (*out)[2].data_as<float>()[0]);
  expect(x1[1], g1[1], h1[1], (*out)[0].data_as<float>()[1], (*out)[2].data_as<float>()[1]);
  expect(x2[0], g2[0], h2[0], (*out)[1].data_as<float>()[0], (*out)[3].data_as<float>()[0]);
  // Hand-computed first element: g' = -0.999, H' = 2.998001, X' = 1 + 0.076923 * 0.999 / 1.731484.
  CHECK((*out)[0].data_as<float>()[0] == Approx(1.0443817).epsilon(1e-6));
}

TEST_CASE("Momentum standard and Nesterov modes", "[cpu][training]") {
  const std::vector<float> x{1.2f, 2.8f}, g{-0.94f, -2.5f}, v{1.7f, 3.6f};
  const float r = 0.1f, alpha = 0.95f, beta = 0.1f, norm = 0.001f;
  for (const char* mode : {"standard", "nesterov"}) {
    for (int64_t t : {0, 5}) {
      CAPTURE(mode, t);
      auto out = run_on_cpu({.op_type = "Momentum",
                             .domain = kDomain,
                             .opset = 1,
                             .inputs = {scalar_f(r), scalar_i(t), vec(x), vec(g), vec(v)},
                             .attrs = attrs({{"alpha", alpha},
                                             {"beta", beta},
                                             {"norm_coefficient", norm},
                                             {"mode", std::string(mode)}}),
                             .outputs = 2});
      REQUIRE(out);
      const double beta_adj = t > 0 ? beta : 1.0;  // the first step takes the full gradient
      for (std::size_t i = 0; i < 2; ++i) {
        const double gr = norm * x[i] + g[i];
        const double vn = alpha * v[i] + beta_adj * gr;
        const double xn = std::string(mode) == "nesterov" ? x[i] - r * (gr + alpha * vn) : x[i] - r * vn;
        CHECK((*out)[0].data_as<float>()[i] == Approx(xn));
        CHECK((*out)[1].data_as<float>()[i] == Approx(vn));
      }
    }
  }
}

TEST_CASE("Adam with bias correction and post-update decay", "[cpu][training]") {
  const std::vector<float> x{1.2f, 2.8f}, g{-0.94f, -2.5f}, v{1.7f, 3.6f}, h{0.1f, 0.1f};
  // The attributes are floats: the reference uses their float values.
  const double r = 0.1, alpha = 0.95f, beta = 0.1f, eps = 1e-7f, norm = 0.001f, post = 0.01f;
  const int64_t t = 3;
  auto out = run_on_cpu({.op_type = "Adam",
                         .domain = kDomain,
                         .opset = 1,
                         .inputs = {Tensor::from_vector<double>({}, {r}), scalar_i(t), vec(x), vec(g), vec(v), vec(h)},
                         .attrs = attrs({{"alpha", 0.95f},
                                         {"beta", 0.1f},
                                         {"epsilon", 1e-7f},
                                         {"norm_coefficient", 0.001f},
                                         {"norm_coefficient_post", 0.01f}}),
                         .outputs = 3});
  REQUIRE(out);
  const double rate = r * std::sqrt(1 - std::pow(beta, 3)) / (1 - std::pow(alpha, 3));
  for (std::size_t i = 0; i < 2; ++i) {
    const double gr = norm * x[i] + g[i];
    const double vn = alpha * v[i] + (1 - alpha) * gr;
    const double hn = beta * h[i] + (1 - beta) * gr * gr;
    const double xn = (1 - post) * (x[i] - rate * vn / (std::sqrt(hn) + eps));
    CHECK((*out)[0].data_as<float>()[i] == Approx(xn).epsilon(1e-5));
    CHECK((*out)[1].data_as<float>()[i] == Approx(vn).epsilon(1e-5));
    CHECK((*out)[2].data_as<float>()[i] == Approx(hn).epsilon(1e-5));
  }
}

TEST_CASE("optimizers decline malformed input groups and modes", "[cpu][training][claim]") {
  auto m = claim_on_cpu({.op_type = "Adagrad",
                         .domain = kDomain,
                         .opset = 1,
                         .inputs = {scalar_f(0.1f), scalar_i(0), vec({1}), vec({1})},
                         .outputs = 1});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Adagrad: 4 inputs do not form R, T and 3 groups of n tensors (X, G, state)");
  m = claim_on_cpu({.op_type = "Momentum",
                    .domain = kDomain,
                    .opset = 1,
                    .inputs = {scalar_f(0.1f), scalar_i(0), vec({1}), vec({1}), vec({1})},
                    .attrs = attrs({{"alpha", 0.9f}, {"beta", 0.1f}, {"norm_coefficient", 0.0f},
                                    {"mode", std::string("heavy-ball")}}),
                    .outputs = 2});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Momentum: mode 'heavy-ball' is not one of standard, nesterov");
}
