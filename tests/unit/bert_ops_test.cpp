// The cpu EP's kernels of ONNX Runtime's BERT-family ops (com.microsoft EmbedLayerNormalization,
// Attention, MultiHeadAttention, RotaryEmbedding): what ONNX Runtime's outputs in
// testdata/com_microsoft leave out. Equivalent forms give equal outputs (weights computed or
// constant, the mask forms, a prompt and a decoding step, key and value in heads or not,
// Attention and MultiHeadAttention on the same projections, positions as an offset or a list),
// the qk output by its definition, float16, declines and run-time errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/vector_math.h"
#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

// One named namespace: the unit tests build in unity files, so helpers need names of their own.
namespace bert_ops_test {


Tensor int32s(Shape shape, std::vector<int32_t> values) { return Tensor::from_vector<int32_t>(std::move(shape), values); }

// A com.microsoft node; inputs are graph inputs unless `constant` says otherwise.
NodeSpec microsoft(std::string op, std::vector<Tensor> inputs, AttributeMap attributes = {}, std::size_t outputs = 1,
                   std::vector<bool> constant = {}) {
  constant.resize(inputs.size(), false);
  return {.op_type = std::move(op), .domain = "com.microsoft", .opset = 1, .inputs = std::move(inputs),
          .constant = std::move(constant), .attrs = std::move(attributes), .outputs = outputs};
}

std::vector<Tensor> run(const NodeSpec& spec) {
  auto out = run_on_cpu(spec);
  if (!out) FAIL(out.error().render());
  return std::move(*out);
}

std::string declined(const NodeSpec& spec) {
  const KernelMatch m = claim_on_cpu(spec);
  REQUIRE_FALSE(m);
  return m.reason();
}

std::string run_error(const NodeSpec& spec) {
  auto out = run_on_cpu(spec);
  REQUIRE_FALSE(out);
  return out.error().render();
}

// Rows [first, first + count) of axis 1 of a [batch, seq, width] float tensor.
Tensor rows(const Tensor& t, int64_t first, int64_t count) {
  const Shape& s = t.shape();
  std::vector<float> out;
  for (int64_t b = 0; b < s[0]; ++b)
    out.insert(out.end(), t.data_as<float>() + (b * s[1] + first) * s[2],
               t.data_as<float>() + (b * s[1] + first + count) * s[2]);
  return Tensor::from_vector<float>({s[0], count, s[2]}, out);
}

Tensor to_float16(const Tensor& t) {
  Tensor h = Tensor::empty(DType::kFloat16, t.shape());
  cpu::floats_to_halves(t.data_as<float>(), h.mut_as<uint16_t>(), t.numel());
  return h;
}

Tensor to_float32(const Tensor& t) {
  Tensor f = Tensor::empty(DType::kFloat32, t.shape());
  cpu::halves_to_floats(t.data_as<uint16_t>(), f.mut_as<float>(), t.numel());
  return f;
}

Tensor zeros(Shape shape) { return Tensor::from_vector<float>(shape, std::vector<float>(shape_numel(shape))); }

constexpr int64_t kBatch = 2, kSeq = 5, kIn = 24, kHidden = 32, kHeads = 4;

// ---- EmbedLayerNormalization ----

NodeSpec embed(const Tensor& ids, const Tensor& words, const Tensor& mask = {}, const Tensor& positions = {}) {
  return microsoft("EmbedLayerNormalization",
                   {ids, Tensor(), words, random_tensor({8, 16}, 12), Tensor(), random_tensor({16}, 13, 0.5f, 1.5f),
                    random_tensor({16}, 14), mask, positions},
                   attrs({{"epsilon", 1e-5f}}), 3, {false, false, true, true, false, true, true, false, false});
}

TEST_CASE("EmbedLayerNormalization counts the mask's ones, and its float16 form follows float", "[cpu][bert]") {
  const Tensor ids = int32s({2, 4}, {1, 0, 9, 3, 4, 4, 2, 5}), words = random_tensor({10, 16}, 11);
  const auto out = run(embed(ids, words, int32s({2, 4}, {1, 1, 2, 0, 0, 1, 1, -1})));
  REQUIRE(out[1].shape() == Shape{2});
  CHECK(out[1].data_as<int32_t>()[0] == 2);
  CHECK(out[1].data_as<int32_t>()[1] == 2);
  // Without a mask: zeros, as ONNX Runtime writes them.
  const auto unmasked = run(embed(ids, words));
  CHECK(unmasked[1].data_as<int32_t>()[0] == 0);
  // Token (1, 2): word 2 at position 2, normalized by the definition.
  const auto* w = words.data_as<float>() + 2 * 16;
  const NodeSpec spec = embed(ids, words);
  const auto* pos = spec.inputs[3].data_as<float>() + 2 * 16;
  std::vector<double> e(16);
  double mean = 0, var = 0;
  for (int d = 0; d < 16; ++d) mean += (e[d] = double{w[d]} + pos[d]) / 16;
  for (double v : e) var += (v - mean) * (v - mean) / 16;
  for (int d = 0; d < 16; ++d) {
    CHECK(unmasked[2].data_as<float>()[6 * 16 + d] == Approx(e[d]).margin(1e-6));
    const double want = (e[d] - mean) / std::sqrt(var + 1e-5) * spec.inputs[5].data_as<float>()[d] +
                        spec.inputs[6].data_as<float>()[d];
    CHECK(unmasked[0].data_as<float>()[6 * 16 + d] == Approx(want).margin(1e-5));
  }
  // float16 tables: the float computation, rounded.
  NodeSpec half = spec;
  for (std::size_t i : {2, 3, 5, 6}) half.inputs[i] = to_float16(half.inputs[i]);
  const auto halves = run(half);
  REQUIRE(halves[0].dtype() == DType::kFloat16);
  CHECK(compare_tensors(to_float32(halves[0]), unmasked[0], 1e-2, 1e-2) == "");
}

TEST_CASE("EmbedLayerNormalization names an id outside its table and a misshapen input", "[cpu][bert]") {
  const Tensor words = random_tensor({10, 16}, 11);
  CHECK_THAT(run_error(embed(int32s({1, 3}, {1, 10, 2}), words)),
             Catch::Matchers::Contains("EmbedLayerNormalization: input_ids[0][1] is 10, outside the 10 rows of "
                                       "word_embedding"));
  CHECK_THAT(run_error(embed(int32s({1, 3}, {1, 2, 3}), words, {}, int32s({1, 3}, {0, 8, 1}))),
             Catch::Matchers::Contains("position_ids[0][1] is 8, outside the 8 rows of position_embedding"));
  // Nine tokens without position_ids: positions 0 to 8, the table has 8.
  CHECK_THAT(run_error(embed(int32s({1, 9}, std::vector<int32_t>(9, 1)), words)),
             Catch::Matchers::Contains("the position (no position_ids)[0][8] is 8, outside the 8 rows"));
  CHECK_THAT(run_error(embed(int32s({2, 3}, std::vector<int32_t>(6, 1)), words, {},
                             int32s({3, 3}, std::vector<int32_t>(9, 0)))),
             Catch::Matchers::Contains("position_ids has shape [3,3] for input_ids [2,3]"));
  CHECK(declined(embed(int32s({2, 3}, std::vector<int32_t>(6, 1)), words, {}, int32s({3}, {0, 1, 2}))) ==
        "EmbedLayerNormalization: input 8 has rank 1; ids, the mask and the tables are 2-D");
  NodeSpec segments = embed(int32s({1, 3}, {1, 2, 3}), words);
  segments.inputs[1] = int32s({1, 3}, {0, 1, 0});
  CHECK(declined(segments) == "EmbedLayerNormalization: segment_ids (input 1) is given without segment_embedding "
                              "(input 4); give both or neither");
}

// ---- Attention ----

NodeSpec attention(const Tensor& x, const Tensor& weights, const Tensor& bias, const Tensor& mask = {},
                   const Tensor& past = {}, std::vector<std::pair<std::string, Attribute::Value>> extra = {},
                   bool constant_weights = true) {
  std::vector<std::pair<std::string, Attribute::Value>> a = {{"num_heads", kHeads}};
  a.insert(a.end(), extra.begin(), extra.end());
  std::vector<Tensor> inputs = {x, weights, bias, mask};
  if (past.defined()) inputs.push_back(past);
  return microsoft("Attention", inputs, attrs(std::move(a)), past.defined() ? 2 : 1,
                   {false, constant_weights, true, false, false});
}

TEST_CASE("Attention: computed and constant weights, a bias or none, and every mask form agree", "[cpu][bert]") {
  const Tensor x = random_tensor({kBatch, kSeq, kIn}, 1), w = random_tensor({kIn, 3 * kHidden}, 2, -0.3f, 0.3f);
  const Tensor bias = random_tensor({3 * kHidden}, 3, -0.2f, 0.2f);
  const Tensor lengths = int32s({kBatch}, {5, 3});
  const Tensor packed = run(attention(x, w, bias, lengths))[0];
  CHECK(compare_tensors(run(attention(x, w, bias, lengths, {}, {}, false))[0], packed) == "");
  // Right padding as key lengths, as a raw mask, as ends and starts.
  CHECK(compare_tensors(run(attention(x, w, bias, int32s({kBatch, kSeq}, {1, 1, 1, 1, 1, 1, 1, 1, 0, 0})))[0],
                        packed) == "");
  CHECK(compare_tensors(run(attention(x, w, bias, int32s({2 * kBatch}, {5, 3, 0, 0})))[0], packed) == "");
  // No bias is a zero bias.
  check_equal(run(attention(x, w, Tensor(), lengths))[0], run(attention(x, w, zeros({3 * kHidden}), lengths))[0]);
}

TEST_CASE("Attention: a unidirectional prompt of n + 1 tokens equals a prompt of n and a step over its present",
          "[cpu][bert]") {
  const Tensor x = random_tensor({kBatch, kSeq + 1, kIn}, 4), w = random_tensor({kIn, 3 * kHidden}, 5, -0.3f, 0.3f);
  const Tensor bias = random_tensor({3 * kHidden}, 6, -0.2f, 0.2f);
  const std::vector<std::pair<std::string, Attribute::Value>> causal = {{"unidirectional", int64_t{1}}};
  const Tensor empty_past = zeros({2, kBatch, kHeads, 0, kHidden / kHeads});
  const auto whole = run(attention(x, w, bias, {}, empty_past, causal));
  const auto prompt = run(attention(rows(x, 0, kSeq), w, bias, {}, empty_past, causal));
  REQUIRE(prompt[1].shape() == Shape{2, kBatch, kHeads, kSeq, kHidden / kHeads});
  const auto step = run(attention(rows(x, kSeq, 1), w, bias, {}, prompt[1], causal));
  CHECK(compare_tensors(rows(whole[0], 0, kSeq), prompt[0]) == "");
  CHECK(compare_tensors(step[0], rows(whole[0], kSeq, 1)) == "");
  check_equal(step[1], whole[1]);
}

TEST_CASE("Attention declines what the cpu EP does not implement and names a negative key length",
          "[cpu][bert][claim]") {
  const Tensor x = random_tensor({1, 3, kIn}, 1), w = random_tensor({kIn, 3 * kHidden}, 2);
  const Tensor bias = random_tensor({3 * kHidden}, 3);
  CHECK_THAT(declined(attention(x, w, bias, {}, {}, {{"do_rotary", int64_t{1}}})),
             Catch::Matchers::StartsWith("Attention: do_rotary is not implemented by the cpu EP"));
  CHECK_THAT(declined(attention(x, w, bias, int32s({1, 1, 3, 3}, std::vector<int32_t>(9, 1)))),
             Catch::Matchers::StartsWith("Attention: a mask_index of rank 4 (Megatron's"));
  CHECK(declined(attention(to_float16(x), to_float16(w), to_float16(bias))) ==
        "Attention: input is float16 and weights float16; the cpu EP implements float (as ONNX Runtime's CPU EP "
        "does)");
  CHECK(declined(attention(x, w, bias, {}, {}, {{"qkv_hidden_sizes", std::vector<int64_t>{32, 16, 32}}})) ==
        "Attention: qkv_hidden_sizes must be 3 positive multiples of num_heads 4, the first two equal (Q and K)");
  CHECK_THAT(run_error(attention(x, w, bias, int32s({1}, {-1}))),
             Catch::Matchers::Contains("Attention: mask value -1 at index 0 is negative"));
  CHECK_THAT(run_error(attention(x, w, bias, int32s({1, 4}, {1, 1, 1, 1}))),
             Catch::Matchers::Contains("Attention: the mask has shape [1,4]"));
  // Shapes a claim cannot see (the tensors here are graph inputs of static shape, checked at run).
  NodeSpec with_bias = attention(x, w, bias);
  with_bias.inputs.insert(with_bias.inputs.end(), {Tensor(), random_tensor({1, kHeads, 3, 2}, 5)});
  with_bias.constant.resize(with_bias.inputs.size(), false);
  CHECK_THAT(run_error(with_bias), Catch::Matchers::Contains("Attention: attention_bias has shape [1,4,3,2]"));
  CHECK_THAT(run_error(with_bias), Catch::Matchers::Contains("it must be [1 or 1, 4 or 1, 3, 3]"));
  CHECK_THAT(run_error(attention(x, w, bias, {}, random_tensor({2, 1, kHeads, 2, 5}, 6))),
             Catch::Matchers::Contains("Attention: past has shape [2,1,4,2,5]"));
  CHECK_THAT(run_error(attention(x, random_tensor({kIn, 95}, 7), Tensor())),
             Catch::Matchers::Contains("Attention: weights has 95 columns for 4 heads"));
}

TEST_CASE("QAttention equals Attention on its dequantized input and weights, packed once or per run",
          "[cpu][bert]") {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127);
  std::vector<uint8_t> xq(kBatch * kSeq * kIn);
  std::vector<int8_t> wq(kIn * 3 * kHidden);
  for (auto& v : xq) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : wq) v = static_cast<int8_t>(weight(rng));
  std::vector<float> w_scale(3 * kHidden);
  for (std::size_t j = 0; j < w_scale.size(); ++j) w_scale[j] = 0.002f + 0.0001f * static_cast<float>(j % 9);
  const float x_scale = 0.01f;
  const uint8_t x_zero = 120;
  std::vector<float> x(xq.size()), w(wq.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (static_cast<float>(xq[i]) - x_zero) * x_scale;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(wq[i]) * w_scale[i % w_scale.size()];
  const Tensor bias = random_tensor({3 * kHidden}, 18, -0.2f, 0.2f), lengths = int32s({kBatch}, {5, 2});
  const Tensor want = run(attention(Tensor::from_vector<float>({kBatch, kSeq, kIn}, x),
                                    Tensor::from_vector<float>({kIn, 3 * kHidden}, w), bias, lengths))[0];
  for (bool constant : {true, false}) {
    INFO("constant weights: " << constant);
    const NodeSpec q = microsoft(
        "QAttention",
        {Tensor::from_vector<uint8_t>({kBatch, kSeq, kIn}, xq), Tensor::from_vector<int8_t>({kIn, 3 * kHidden}, wq),
         bias, Tensor::from_vector<float>({}, {x_scale}), Tensor::from_vector<float>({3 * kHidden}, w_scale), lengths,
         Tensor::from_vector<uint8_t>({}, {x_zero})},
        attrs({{"num_heads", kHeads}}), 1, {false, constant, true, true, true, false, true});
    CHECK(compare_tensors(run(q)[0], want, 1e-4, 1e-5) == "");
  }
  NodeSpec five_scales = microsoft(
      "QAttention",
      {Tensor::from_vector<uint8_t>({kBatch, kSeq, kIn}, xq), Tensor::from_vector<int8_t>({kIn, 3 * kHidden}, wq),
       bias, Tensor::from_vector<float>({}, {x_scale}), random_tensor({5}, 19, 0.001f, 0.002f)},
      attrs({{"num_heads", kHeads}}), 1, {false, true, true, true, false});
  CHECK_THAT(run_error(five_scales), Catch::Matchers::Contains("QAttention: weight_scale (input 4) has 5 values"));
  CHECK(declined(microsoft("QAttention", {random_tensor({1, 2, kIn}, 1), random_tensor({kIn, 3 * kHidden}, 2)},
                           attrs({{"num_heads", kHeads}}))) ==
        "QAttention: input 0 is float; input and weight are uint8 or int8");
}

// ---- MultiHeadAttention ----

NodeSpec mha(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias = {}, const Tensor& mask = {},
             std::vector<std::pair<std::string, Attribute::Value>> extra = {}, std::size_t outputs = 1) {
  std::vector<std::pair<std::string, Attribute::Value>> a = {{"num_heads", kHeads}};
  a.insert(a.end(), extra.begin(), extra.end());
  return microsoft("MultiHeadAttention", {q, k, v, bias, mask}, attrs(std::move(a)), outputs,
                   {false, false, false, true, false});
}

// [batch, seq, heads * size] as [batch, heads, seq, size].
Tensor in_heads(const Tensor& t) {
  const Shape& s = t.shape();
  const int64_t size = s[2] / kHeads;
  std::vector<float> out;
  for (int64_t b = 0; b < s[0]; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t r = 0; r < s[1]; ++r)
        out.insert(out.end(), t.data_as<float>() + (b * s[1] + r) * s[2] + h * size,
                   t.data_as<float>() + (b * s[1] + r) * s[2] + (h + 1) * size);
  return Tensor::from_vector<float>({s[0], kHeads, s[1], size}, out);
}

TEST_CASE("MultiHeadAttention over Attention's projections equals Attention, with key and value in heads or not",
          "[cpu][bert]") {
  const Tensor x = random_tensor({kBatch, kSeq, kIn}, 7), w = random_tensor({kIn, 3 * kHidden}, 8, -0.3f, 0.3f);
  const Tensor lengths = int32s({kBatch}, {4, 5});
  const Tensor want = run(attention(x, w, zeros({3 * kHidden}), lengths))[0];
  // The projections, by a bias-free Attention's own product: Q, K and V as MatMul would give them.
  std::vector<float> qkv[3];
  for (int64_t t = 0; t < kBatch * kSeq; ++t)
    for (int64_t c = 0; c < 3 * kHidden; ++c) {
      double sum = 0;
      for (int64_t i = 0; i < kIn; ++i) sum += double{x.data_as<float>()[t * kIn + i]} * w.data_as<float>()[i * 3 * kHidden + c];
      qkv[c / kHidden].push_back(static_cast<float>(sum));
    }
  const Tensor q = Tensor::from_vector<float>({kBatch, kSeq, kHidden}, qkv[0]);
  const Tensor k = Tensor::from_vector<float>({kBatch, kSeq, kHidden}, qkv[1]);
  const Tensor v = Tensor::from_vector<float>({kBatch, kSeq, kHidden}, qkv[2]);
  CHECK(compare_tensors(run(mha(q, k, v, {}, lengths))[0], want, 1e-4, 1e-5) == "");
  CHECK(compare_tensors(run(mha(q, in_heads(k), in_heads(v), {}, lengths))[0], want, 1e-4, 1e-5) == "");
  // A bias on Q alone: in heads, K's and V's parts are not added.
  std::vector<float> q_bias(3 * kHidden, 0.f);
  for (int64_t c = 0; c < 3 * kHidden; ++c) q_bias[c] = 0.1f * static_cast<float>(c % 7) + (c < kHidden ? 0.f : 2.f);
  const Tensor bias = Tensor::from_vector<float>({3 * kHidden}, q_bias);
  std::vector<float> shifted(qkv[0]);
  for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] += q_bias[i % kHidden];
  CHECK(compare_tensors(run(mha(q, in_heads(k), in_heads(v), bias, lengths))[0],
                        run(mha(Tensor::from_vector<float>({kBatch, kSeq, kHidden}, shifted), k, v, {}, lengths))[0],
                        1e-5, 1e-6) == "");
}

TEST_CASE("MultiHeadAttention: packed QKV and packed KV equal separate Q, K and V", "[cpu][bert]") {
  const int64_t hs = kHidden / kHeads;
  const Tensor q = random_tensor({kBatch, kSeq, kHidden}, 31), k = random_tensor({kBatch, kSeq, kHidden}, 32);
  const Tensor v = random_tensor({kBatch, kSeq, kHidden}, 33);
  // [batch, seq, heads, parts, head_size] from the parts' [batch, seq, heads * head_size].
  auto pack = [&](std::vector<const Tensor*> parts) {
    std::vector<float> out;
    for (int64_t t = 0; t < kBatch * kSeq; ++t)
      for (int64_t h = 0; h < kHeads; ++h)
        for (const Tensor* part : parts)
          out.insert(out.end(), part->data_as<float>() + t * kHidden + h * hs,
                     part->data_as<float>() + t * kHidden + (h + 1) * hs);
    return Tensor::from_vector<float>({kBatch, kSeq, kHeads, static_cast<int64_t>(parts.size()), hs}, out);
  };
  const std::vector<std::pair<std::string, Attribute::Value>> causal = {{"unidirectional", int64_t{1}}};
  const auto want = run(mha(q, k, v, {}, int32s({kBatch}, {5, 4}), causal, 3));
  for (const bool qkv : {true, false}) {
    INFO((qkv ? "packed QKV" : "packed KV"));
    const auto got = run(qkv ? mha(pack({&q, &k, &v}), Tensor(), Tensor(), {}, int32s({kBatch}, {5, 4}), causal, 3)
                             : mha(q, pack({&k, &v}), Tensor(), {}, int32s({kBatch}, {5, 4}), causal, 3));
    for (std::size_t i = 0; i < 3; ++i) check_equal(got[i], want[i]);
  }
}

TEST_CASE("MultiHeadAttention's qk output holds the scores before softmax", "[cpu][bert]") {
  const Tensor q = random_tensor({1, 3, kHidden}, 9), k = random_tensor({1, 4, kHidden}, 10);
  const Tensor v = random_tensor({1, 4, 16}, 11);
  const auto out = run(mha(q, k, v, {}, int32s({1, 4}, {1, 0, 1, 1}), {{"scale", 0.5f}, {"mask_filter_value", -7.f}}, 4));
  REQUIRE(out[0].shape() == Shape{1, 3, 16});
  REQUIRE(out[3].shape() == Shape{1, kHeads, 3, 4});
  const int64_t hs = kHidden / kHeads;
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t s = 0; s < 3; ++s)
      for (int64_t t = 0; t < 4; ++t) {
        double dot = 0;
        for (int64_t d = 0; d < hs; ++d)
          dot += double{q.data_as<float>()[s * kHidden + h * hs + d]} * k.data_as<float>()[t * kHidden + h * hs + d];
        CHECK(out[3].data_as<float>()[(h * 3 + s) * 4 + t] == Approx(0.5 * dot + (t == 1 ? -7.0 : 0.0)).margin(1e-5));
      }
}

TEST_CASE("MultiHeadAttention declines a bias with packed inputs, names a causal cross-attention and a mask it does "
          "not read",
          "[cpu][bert][claim]") {
  const Tensor q = random_tensor({1, 3, kHidden}, 1), kv = random_tensor({1, 5, kHidden}, 2);
  NodeSpec packed = mha(random_tensor({1, 3, kHeads, 3, kHidden / kHeads}, 3), Tensor(), Tensor(),
                        random_tensor({3 * kHidden}, 4));
  CHECK(declined(packed) == "MultiHeadAttention: a bias with packed QKV or KV is not implemented by the cpu EP");
  CHECK_THAT(run_error(mha(q, kv, kv, {}, {}, {{"unidirectional", int64_t{1}}})),
             Catch::Matchers::Contains("MultiHeadAttention: unidirectional attention of 3 queries over 5 new keys"));
  CHECK_THAT(run_error(mha(q, kv, kv, {}, int32s({2}, {5, 0}))),
             Catch::Matchers::Contains("MultiHeadAttention: the mask has shape [2]"));
}

// ---- com.microsoft RotaryEmbedding ----

NodeSpec ms_rotary(const Tensor& x, const Tensor& positions, int64_t rows, int64_t half,
                   std::vector<std::pair<std::string, Attribute::Value>> extra = {}) {
  return microsoft("RotaryEmbedding",
                   {x, positions, random_tensor({rows, half}, 21, -1, 1), random_tensor({rows, half}, 22, -1, 1)},
                   attrs(std::move(extra)), 1, {false, false, true, true});
}

TEST_CASE("com.microsoft RotaryEmbedding: one offset equals the positions it starts, rank 4 equals rank 3",
          "[cpu][bert][rotary]") {
  const Tensor x = random_tensor({2, 3, kHidden}, 20);
  const Tensor listed = run(ms_rotary(x, Tensor::from_vector<int64_t>({2, 3}, {4, 5, 6, 4, 5, 6}), 10, 4,
                                      {{"num_heads", kHeads}}))[0];
  check_equal(run(ms_rotary(x, Tensor::from_vector<int64_t>({1}, {4}), 10, 4, {{"num_heads", kHeads}}))[0], listed);
  check_equal(run(ms_rotary(in_heads(x), Tensor::from_vector<int64_t>({1}, {4}), 10, 4))[0], in_heads(listed));
  CHECK_THAT(run_error(ms_rotary(x, Tensor::from_vector<int64_t>({1}, {8}), 10, 4, {{"num_heads", kHeads}})),
             Catch::Matchers::Contains("com.microsoft RotaryEmbedding: position_ids is 8, so token 2 is at position "
                                       "10, outside the 10 rows of cos_cache"));
  // A cache as wide as half a head with a partial rotary_embedding_dim: refused.
  CHECK_THAT(declined(ms_rotary(x, Tensor::from_vector<int64_t>({1}, {0}), 10, 4,
                                {{"num_heads", kHeads}, {"rotary_embedding_dim", int64_t{4}}})),
             Catch::Matchers::StartsWith("com.microsoft RotaryEmbedding: input has shape [2,3,32], cos_cache [10,4], "
                                         "num_heads 4 and rotary_embedding_dim 4"));
}

}  // namespace bert_ops_test
