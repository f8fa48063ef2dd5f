// RNN, GRU and LSTM against hand-computed steps and their decline reasons.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

float sigmoid(float x) { return 1 / (1 + std::exp(-x)); }

Tensor scalar3(float v) { return Tensor::from_vector<float>({1, 1, 1}, {v}); }

}  // namespace

TEST_CASE("LSTM: one step with peepholes and an initial state matches the gate equations", "[cpu][rnn]") {
  // Gates in W, R and B are ordered i, o, f, c; peepholes i, o, f.
  const float x = 0.5f, h0 = 0.3f, c0 = -0.2f;
  const float wi = 0.1f, wo = 0.2f, wf = 0.3f, wc = 0.4f, ri = -0.5f, ro = 0.6f, rf = -0.7f, rc = 0.8f;
  const float bi = 0.01f, bo = 0.02f, bf = 0.03f, bc = 0.04f, pi = 0.5f, po = -0.25f, pf = 0.75f;
  auto y = run_on_cpu({.op_type = "LSTM",
                       .opset = 14,
                       .inputs = {scalar3(x), Tensor::from_vector<float>({1, 4, 1}, {wi, wo, wf, wc}),
                                  Tensor::from_vector<float>({1, 4, 1}, {ri, ro, rf, rc}),
                                  Tensor::from_vector<float>({1, 8}, {bi, bo, bf, bc, 0, 0, 0, 0}), Tensor{},
                                  scalar3(h0), scalar3(c0), Tensor::from_vector<float>({1, 3}, {pi, po, pf})},
                       .attrs = attrs({{"hidden_size", int64_t{1}}}),
                       .outputs = 3});
  REQUIRE(y);
  const float i = sigmoid(wi * x + ri * h0 + pi * c0 + bi);
  const float f = sigmoid(wf * x + rf * h0 + pf * c0 + bf);
  const float c = f * c0 + i * std::tanh(wc * x + rc * h0 + bc);
  const float o = sigmoid(wo * x + ro * h0 + po * c + bo);
  const float h = o * std::tanh(c);
  CHECK((*y)[0].shape() == Shape{1, 1, 1, 1});
  CHECK((*y)[0].data_as<float>()[0] == Approx(h));
  CHECK((*y)[1].data_as<float>()[0] == Approx(h));
  CHECK((*y)[2].data_as<float>()[0] == Approx(c));
}

TEST_CASE("GRU: linear_before_reset applies the reset gate after the recurrent product", "[cpu][rnn]") {
  const float x = 0.7f, h0 = -0.4f;
  const float wz = 0.2f, wr = -0.3f, wh = 0.5f, rz = 0.4f, rr = 0.6f, rh = -0.8f;
  const float wbz = 0.1f, wbr = 0.2f, wbh = 0.3f, rbz = -0.1f, rbr = 0.05f, rbh = 0.4f;
  for (int64_t lbr : {0, 1}) {
    auto y = run_on_cpu({.op_type = "GRU",
                         .opset = 14,
                         .inputs = {scalar3(x), Tensor::from_vector<float>({1, 3, 1}, {wz, wr, wh}),
                                    Tensor::from_vector<float>({1, 3, 1}, {rz, rr, rh}),
                                    Tensor::from_vector<float>({1, 6}, {wbz, wbr, wbh, rbz, rbr, rbh}), Tensor{},
                                    scalar3(h0)},
                         .attrs = attrs({{"hidden_size", int64_t{1}}, {"linear_before_reset", lbr}}),
                         .outputs = 2});
    REQUIRE(y);
    const float z = sigmoid(wz * x + rz * h0 + wbz + rbz);
    const float r = sigmoid(wr * x + rr * h0 + wbr + rbr);
    const float pre = lbr ? wh * x + r * (rh * h0 + rbh) + wbh : wh * x + rh * (r * h0) + rbh + wbh;
    const float h = (1 - z) * std::tanh(pre) + z * h0;
    INFO("linear_before_reset " << lbr);
    CHECK((*y)[1].data_as<float>()[0] == Approx(h));
  }
}

TEST_CASE("RNN: bidirectional with sequence_lens, Relu and layout 1", "[cpu][rnn]") {
  // h_t = relu(x_t + 0.5 h_{t-1}) forward and reverse; batch row 1 has length 1.
  const Tensor x = Tensor::from_vector<float>({3, 2, 1}, {1, 10, 2, 20, 3, 30});
  const Tensor w = Tensor::from_vector<float>({2, 1, 1}, {1, 1});
  const Tensor r = Tensor::from_vector<float>({2, 1, 1}, {0.5f, 0.5f});
  const Tensor lens = Tensor::from_vector<int32_t>({2}, {3, 1});
  const AttributeMap a = attrs({{"hidden_size", int64_t{1}},
                                {"direction", std::string("bidirectional")},
                                {"activations", std::vector<std::string>{"Relu", "Relu"}}});
  auto y = run_on_cpu({.op_type = "RNN", .inputs = {x, w, r, Tensor{}, lens}, .attrs = a, .outputs = 2});
  REQUIRE(y);
  // Forward row 0: 1, 2.5, 4.25; reverse row 0: t2 = 3, t1 = 3.5, t0 = 2.75. Row 1: only t0 = 10.
  // Y is [seq, dirs, batch, hidden]; steps past a row's length are zeros.
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({3, 2, 2, 1}, {1, 10, 2.75f, 10, 2.5f, 0, 3.5f, 0, 4.25f,
                                                                           0, 3, 0}))
            .empty());
  CHECK(compare_tensors((*y)[1], Tensor::from_vector<float>({2, 2, 1}, {4.25f, 10, 2.75f, 10})).empty());

  // The same in layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden].
  const Tensor xb = Tensor::from_vector<float>({2, 3, 1}, {1, 2, 3, 10, 20, 30});
  AttributeMap ab = a;
  ab.set("layout", Attribute{int64_t{1}});
  auto yb = run_on_cpu({.op_type = "RNN", .opset = 14, .inputs = {xb, w, r, Tensor{}, lens}, .attrs = ab, .outputs = 2});
  REQUIRE(yb);
  CHECK(compare_tensors((*yb)[0], Tensor::from_vector<float>({2, 3, 2, 1}, {1, 2.75f, 2.5f, 3.5f, 4.25f, 3, 10, 10,
                                                                            0, 0, 0, 0}))
            .empty());
  CHECK(compare_tensors((*yb)[1], Tensor::from_vector<float>({2, 2, 1}, {4.25f, 2.75f, 10, 10})).empty());
}

TEST_CASE("RNN: layout 1 reads initial_h as [batch, dirs, hidden]", "[cpu][rnn]") {
  // The same layer in both layouts, each initial state given per (direction, batch row).
  const Tensor w = Tensor::from_vector<float>({2, 1, 1}, {1, 1});
  const Tensor r = Tensor::from_vector<float>({2, 1, 1}, {0.9f, 0.8f});
  AttributeMap a = attrs({{"hidden_size", int64_t{1}}, {"direction", std::string("bidirectional")}});
  const Tensor x = Tensor::from_vector<float>({3, 2, 1}, {0.1f, -0.2f, 0.2f, 0.1f, -0.1f, 0.3f});
  const Tensor h0 = Tensor::from_vector<float>({2, 2, 1}, {0.1f, 0.2f, 0.3f, 0.4f});  // dir 0 rows, dir 1 rows
  auto seq_major = run_on_cpu({.op_type = "RNN", .opset = 14, .inputs = {x, w, r, Tensor{}, Tensor{}, h0}, .attrs = a,
                               .outputs = 2});
  REQUIRE(seq_major);
  a.set("layout", Attribute{int64_t{1}});
  const Tensor xb = Tensor::from_vector<float>({2, 3, 1}, {0.1f, 0.2f, -0.1f, -0.2f, 0.1f, 0.3f});
  const Tensor h0b = Tensor::from_vector<float>({2, 2, 1}, {0.1f, 0.3f, 0.2f, 0.4f});  // row 0's dirs, row 1's
  auto batch_major = run_on_cpu({.op_type = "RNN", .opset = 14, .inputs = {xb, w, r, Tensor{}, Tensor{}, h0b},
                                 .attrs = a, .outputs = 2});
  REQUIRE(batch_major);
  const float* h = (*seq_major)[1].data_as<float>();
  CHECK(compare_tensors((*batch_major)[1], Tensor::from_vector<float>({2, 2, 1}, {h[0], h[2], h[1], h[3]})).empty());
  // Forward row 0 from 0.1, reverse row 1 from 0.4.
  CHECK(std::abs((*seq_major)[0].data_as<float>()[0] - std::tanh(0.1f + 0.9f * 0.1f)) < 1e-6f);
  CHECK(std::abs((*seq_major)[0].data_as<float>()[11] - std::tanh(0.3f + 0.8f * 0.4f)) < 1e-6f);
}

TEST_CASE("RNN: double inputs and parameterized activations", "[cpu][rnn]") {
  // ScaledTanh(alpha=2, beta=0.5) on one step: h = 2 tanh(0.5 * (w x + r h0)).
  auto y = run_on_cpu({.op_type = "RNN",
                       .inputs = {Tensor::from_vector<double>({1, 1, 1}, {0.8}),
                                  Tensor::from_vector<double>({1, 1, 1}, {1.5}),
                                  Tensor::from_vector<double>({1, 1, 1}, {-0.5}), Tensor{}, Tensor{},
                                  Tensor::from_vector<double>({1, 1, 1}, {0.4})},
                       .attrs = attrs({{"hidden_size", int64_t{1}},
                                       {"activations", std::vector<std::string>{"ScaledTanh"}},
                                       {"activation_alpha", floats{2}},
                                       {"activation_beta", floats{0.5f}}}),
                       .outputs = 2});
  REQUIRE(y);
  CHECK((*y)[1].data_as<double>()[0] == Approx(2 * std::tanh(0.5 * (1.5 * 0.8 - 0.5 * 0.4))));
}

TEST_CASE("recurrent ops decline unknown activations and layout before opset 14", "[cpu][rnn][claim]") {
  const Tensor x = scalar3(1), w = scalar3(1), r = scalar3(1);
  auto m = claim_on_cpu({.op_type = "RNN",
                         .inputs = {x, w, r},
                         .attrs = attrs({{"activations", std::vector<std::string>{"Swish"}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() ==
        "RNN: activation 'Swish' is not supported; use Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
        "ScaledTanh, HardSigmoid, Elu, Softsign or Softplus");
  auto layout = claim_on_cpu({.op_type = "GRU",
                              .opset = 7,
                              .inputs = {x, Tensor::from_vector<float>({1, 3, 1}, {1, 1, 1}),
                                         Tensor::from_vector<float>({1, 3, 1}, {1, 1, 1})},
                              .attrs = attrs({{"layout", int64_t{1}}})});
  REQUIRE_FALSE(layout);
  CHECK(layout.reason() == "GRU: the layout attribute needs opset 14, the node has opset 7");
  auto dirs = claim_on_cpu({.op_type = "LSTM",
                            .inputs = {x, Tensor::from_vector<float>({1, 4, 1}, {1, 1, 1, 1}),
                                       Tensor::from_vector<float>({1, 4, 1}, {1, 1, 1, 1})},
                            .attrs = attrs({{"direction", std::string("bidirectional")}})});
  REQUIRE_FALSE(dirs);
  CHECK(dirs.reason() == "LSTM: W [1,4,1] has 1 directions; direction 'bidirectional' needs 2");
}
