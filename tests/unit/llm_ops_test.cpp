// The transformer ops of opsets 23 and 24 on the cpu EP, against hand-computed values:
// RMSNormalization, RotaryEmbedding, Attention (with Attention-24's nonpad_kv_seqlen), Swish and
// TensorScatter (ONNX Runtime's outputs for more cases are in testdata/opset18plus), and lib's
// plans, errors included.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "kernel_harness.h"
#include "nxrt/ep/attention.h"
#include "nxrt/ep/rotary_embedding.h"
#include "nxrt/ep/tensor_scatter.h"

using namespace nxrt;
using namespace nxrt::test;
using Catch::Matchers::Contains;

namespace {

Tensor llm_floats(Shape shape, std::vector<float> values) { return Tensor::from_vector<float>(std::move(shape), values); }

std::vector<float> llm_values(const Tensor& t) { return {t.data_as<float>(), t.data_as<float>() + t.numel()}; }

NodeSpec attention(std::vector<Tensor> inputs, AttributeMap a = {}, std::size_t outputs = 1) {
  return {.op_type = "Attention", .opset = 23, .inputs = std::move(inputs), .attrs = std::move(a), .outputs = outputs};
}

}  // namespace

TEST_CASE("Attention's plan reads packed heads, groups query heads and broadcasts the mask", "[lib][attention]") {
  AttentionAttrs a;
  a.q_heads = 4, a.kv_heads = 2;
  const Shape mask{3, 1, 7};  // [q_heads or 1, q_seq, total_seq] after left-padding to rank 4
  auto p = plan_attention(a, {2, 3, 32}, {2, 5, 16}, {2, 5, 12}, nullptr, nullptr, nullptr);
  REQUIRE(p);
  CHECK(p->head_size == 8);
  CHECK(p->v_head_size == 6);
  CHECK(p->packed_heads);
  CHECK(p->q.batch == 96);
  CHECK(p->q.head == 8);
  CHECK(p->q.seq == 32);
  CHECK(p->y_shape == Shape{2, 3, 24});
  CHECK(p->present_key_shape == Shape{2, 2, 5, 8});
  CHECK(p->qk_shape == Shape{2, 4, 3, 5});
  CHECK(p->kv_head_of(1) == 0);
  CHECK(p->kv_head_of(2) == 1);
  CHECK(p->scale == Approx(1 / std::sqrt(8.0)));

  a = {};
  const Shape past_k{1, 2, 4, 8}, past_v{1, 2, 4, 3}, m2{1, 7};
  auto with_past = plan_attention(a, {1, 2, 3, 8}, {1, 2, 3, 8}, {1, 2, 3, 3}, &m2, &past_k, &past_v);
  REQUIRE(with_past);
  CHECK(with_past->total_seq == 7);
  CHECK(with_past->present_value_shape == Shape{1, 2, 7, 3});
  CHECK(with_past->mask_strides == std::array<int64_t, 4>{0, 0, 0, 1});  // one row for every query
  CHECK(with_past->visible_keys(true, 7, 0) == 5);  // query 0 follows the 4 past keys
  CHECK(with_past->visible_keys(true, 7, 2) == 7);
  CHECK(with_past->visible_keys(false, 7, 0) == 7);
  CHECK(with_past->visible_keys(false, 6, 0) == 6);  // padding from key 6 on

  const Shape bad_mask{2, 3, 6};
  auto misfit = plan_attention(a, {1, 2, 3, 8}, {1, 2, 3, 8}, {1, 2, 3, 3}, &bad_mask, &past_k, &past_v);
  REQUIRE_FALSE(misfit);
  CHECK(misfit.error().what == "Attention: attn_mask has shape [2,3,6], which does not broadcast to [1,2,3,7]");
  const Shape short_past{1, 2, 4, 5};
  auto past = plan_attention(a, {1, 2, 3, 8}, {1, 2, 3, 8}, {1, 2, 3, 3}, nullptr, &short_past, &past_v);
  REQUIRE_FALSE(past);
  CHECK(past.error().what == "Attention: past_key has shape [1,2,4,5]; expected [1,2,4,8]");
  a.q_heads = 3, a.kv_heads = 2;
  auto groups = plan_attention(a, {1, 3, 12}, {1, 3, 8}, {1, 3, 8}, nullptr, nullptr, nullptr);
  REQUIRE_FALSE(groups);
  CHECK(groups.error().what == "Attention: 3 query heads do not group over 2 key/value heads");
  (void)mask;
}

TEST_CASE("RotaryEmbedding's plan pairs halves or neighbours and checks the caches", "[lib][rotary]") {
  AttributeMap a = attrs({{"num_heads", int64_t{2}}, {"rotary_embedding_dim", int64_t{4}}});
  const Shape ids{1, 3};
  auto p = plan_rotary_embedding(a, {1, 3, 12}, {9, 2}, {9, 2}, &ids);
  REQUIRE(p);
  CHECK(p->head_size == 6);
  CHECK(p->seq_stride == 12);
  CHECK(p->head_stride == 6);
  CHECK(p->cache_rows == 9);
  CHECK(p->first_of_pair(1) == 1);
  CHECK(p->second_of_pair(1) == 3);
  auto interleaved = plan_rotary_embedding(attrs({{"interleaved", int64_t{1}}}), {1, 2, 3, 4}, {1, 3, 2}, {1, 3, 2},
                                           nullptr);
  REQUIRE(interleaved);
  CHECK(interleaved->second_of_pair(1) == 3);
  CHECK(interleaved->first_of_pair(1) == 2);
  auto cache = plan_rotary_embedding(attrs({}), {1, 2, 3, 4}, {1, 3, 4}, {1, 3, 4}, nullptr);
  REQUIRE_FALSE(cache);
  CHECK(cache.error().what == "RotaryEmbedding: cos_cache and sin_cache have shape [1,3,4]; expected [1,3,2]");
  CHECK(cache.error().why == "without position_ids the caches are [batch, seq, rotary_dim / 2]");
  auto heads = plan_rotary_embedding(attrs({{"num_heads", int64_t{5}}}), {1, 3, 12}, {9, 2}, {9, 2}, &ids);
  REQUIRE_FALSE(heads);
  CHECK_THAT(heads.error().what, Contains("hidden size 12 does not split into num_heads 5"));
}

TEST_CASE("RMSNormalization divides by the root mean square, then scales", "[cpu][opset23][normalization]") {
  const Tensor y = run_one({.op_type = "RMSNormalization", .opset = 23,
                            .inputs = {llm_floats({2, 2}, {3, 4, 1, -1}), llm_floats({2}, {1, 10})},
                            .attrs = attrs({{"epsilon", 0.5f}})});
  const double first = std::sqrt(12.5 + 0.5), second = std::sqrt(1 + 0.5);
  CHECK_THAT(llm_values(y), Catch::Matchers::Approx(std::vector<float>{
                               float(3 / first), float(40 / first), float(1 / second), float(-10 / second)}));
  KernelMatch stash = claim_on_cpu({.op_type = "RMSNormalization", .opset = 23,
                                    .inputs = {llm_floats({2}, {1, 2}), llm_floats({2}, {1, 1})},
                                    .attrs = attrs({{"stash_type", int64_t{10}}})});
  REQUIRE_FALSE(stash);
  CHECK_THAT(stash.reason(), Contains("stash_type 10 is not supported by the cpu EP"));
}

TEST_CASE("RotaryEmbedding rotates pairs by each position's angle", "[cpu][opset23][rotary]") {
  // One head of 4 channels, two tokens; position 0 has angle 0 (identity), position 1 a quarter
  // turn on pair 0 and half a turn on pair 1.
  const Tensor cos = llm_floats({2, 2}, {1, 1, 0, -1}), sin = llm_floats({2, 2}, {0, 0, 1, 0});
  const Tensor x = llm_floats({1, 1, 2, 4}, {1, 2, 3, 4, 1, 2, 3, 4});
  const Tensor ids = Tensor::from_vector<int64_t>({1, 2}, {0, 1});
  // Halves: pair i is (x[i], x[i + 2]); a quarter turn maps (a, b) to (-b, a), half a turn to (-a, -b).
  CHECK(llm_values(run_one({.op_type = "RotaryEmbedding", .opset = 23, .inputs = {x, cos, sin, ids}})) ==
        std::vector<float>{1, 2, 3, 4, -3, -2, 1, -4});
  // Neighbours: pair i is (x[2i], x[2i + 1]).
  CHECK(llm_values(run_one({.op_type = "RotaryEmbedding", .opset = 23, .inputs = {x, cos, sin, ids},
                           .attrs = attrs({{"interleaved", int64_t{1}}})})) ==
        std::vector<float>{1, 2, 3, 4, -2, 1, -3, -4});
  auto far = run_on_cpu({.op_type = "RotaryEmbedding", .opset = 23,
                         .inputs = {x, cos, sin, Tensor::from_vector<int64_t>({1, 2}, {0, 2})}});
  REQUIRE_FALSE(far);
  CHECK(far.error().what == "RotaryEmbedding: position_ids[0][1] is 2, outside the 2 rows of cos_cache");
  KernelMatch odd = claim_on_cpu({.op_type = "RotaryEmbedding", .opset = 23, .inputs = {x, cos, sin, ids},
                                  .attrs = attrs({{"rotary_embedding_dim", int64_t{3}}})});
  REQUIRE_FALSE(odd);
  CHECK(odd.reason() ==
        "RotaryEmbedding: rotary_embedding_dim 3 must be 0 (the whole head) or a positive even number");
  KernelMatch packed = claim_on_cpu({.op_type = "RotaryEmbedding", .opset = 23,
                                     .inputs = {llm_floats({1, 2, 4}, std::vector<float>(8)), cos, sin, ids}});
  REQUIRE_FALSE(packed);
  CHECK(packed.reason() == "RotaryEmbedding: X has rank 3, so the num_heads attribute must be given and positive");
}

TEST_CASE("Attention weighs values by the softmax of scaled scores", "[cpu][opset23][attention]") {
  // One head of size 1: scores are scale * q * k; with scale 1, q = 1 and keys 0 and ln 3 the
  // weights are 1/4 and 3/4.
  const float ln3 = std::log(3.f);
  const Tensor q = llm_floats({1, 1, 1, 1}, {1}), k = llm_floats({1, 1, 2, 1}, {0, ln3}), v = llm_floats({1, 1, 2, 1}, {4, 8});
  const AttributeMap unit_scale = attrs({{"scale", 1.f}});
  CHECK(llm_values(run_one(attention({q, k, v}, unit_scale)))[0] == Approx(7));
  // A bool mask hiding key 1 leaves key 0 alone; a float mask of ln 3 on key 0 evens the weights.
  const Tensor hide = bools({1, 2}, {1, 0});
  CHECK(llm_values(run_one(attention({q, k, v, hide}, unit_scale)))[0] == Approx(4));
  CHECK(llm_values(run_one(attention({q, k, v, llm_floats({1, 2}, {ln3, 0})}, unit_scale)))[0] == Approx(6));
  // Every key hidden: softmax over no finite score gives NaN, as the op's definition does.
  const Tensor none = bools({1, 2}, {0, 0});
  CHECK(std::isnan(llm_values(run_one(attention({q, k, v, none}, unit_scale)))[0]));
  // The default scale is 1 / sqrt(head_size): head size 4 halves the scores.
  const Tensor q4 = llm_floats({1, 1, 1, 4}, {1, 1, 1, 1}), k4 = llm_floats({1, 1, 2, 4}, {0, 0, 0, 0, 1, 1, 1, 1});
  const double w = std::exp(2.0) / (1 + std::exp(2.0));
  CHECK(llm_values(run_one(attention({q4, k4, v})))[0] == Approx(4 * (1 - w) + 8 * w));
}

TEST_CASE("Attention with a cache appends the keys and hides later ones causally", "[cpu][opset23][attention]") {
  // Two new queries after one past key: query 0 sees keys 0 and 1, query 1 all three.
  const Tensor q = llm_floats({1, 1, 2, 1}, {0, 0}), k = llm_floats({1, 1, 2, 1}, {5, 6});
  const Tensor v = llm_floats({1, 1, 2, 1}, {20, 30}), past_k = llm_floats({1, 1, 1, 1}, {4});
  const Tensor past_v = llm_floats({1, 1, 1, 1}, {10});
  auto out = run_on_cpu(attention({q, k, v, Tensor(), past_k, past_v}, attrs({{"is_causal", int64_t{1}}, {"qk_matmul_output_mode", int64_t{2}}}), 4));
  REQUIRE(out);
  CHECK(llm_values((*out)[0]) == std::vector<float>{15, 20});  // zero scores: plain means of the visible values
  CHECK(llm_values((*out)[1]) == std::vector<float>{4, 5, 6});
  CHECK(llm_values((*out)[2]) == std::vector<float>{10, 20, 30});
  // qk_matmul_output_mode 2: the scores after the mask, -inf where causally hidden.
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(llm_values((*out)[3]) == std::vector<float>{0, 0, -inf, 0, 0, 0});
}

TEST_CASE("Attention declines what it cannot run, saying why", "[cpu][opset23][attention]") {
  const Tensor q = llm_floats({1, 2, 8}, std::vector<float>(16)), k = q, v = q;
  KernelMatch heads = claim_on_cpu(attention({q, k, v}));
  REQUIRE_FALSE(heads);
  CHECK(heads.reason() == "Attention: Q has rank 3, so q_num_heads and kv_num_heads must be given and positive");
  KernelMatch mode = claim_on_cpu(attention({q, k, v}, attrs({{"q_num_heads", int64_t{2}}, {"kv_num_heads", int64_t{2}},
                                                            {"qk_matmul_output_mode", int64_t{4}}})));
  REQUIRE_FALSE(mode);
  CHECK_THAT(mode.reason(), Contains("qk_matmul_output_mode 4 is not defined"));
  KernelMatch mask = claim_on_cpu(attention({q, k, v, Tensor::from_vector<int64_t>({2, 2}, {1, 1, 1, 1})},
                                            attrs({{"q_num_heads", int64_t{2}}, {"kv_num_heads", int64_t{2}}})));
  REQUIRE_FALSE(mask);
  CHECK(mask.reason() == "Attention: attn_mask has type int64; expected bool or Q's type float");
  const Tensor wide = llm_floats({1, 2, 16}, std::vector<float>(32));
  KernelMatch groups =
      claim_on_cpu(attention({q, wide, wide}, attrs({{"q_num_heads", int64_t{2}}, {"kv_num_heads", int64_t{4}}})));
  REQUIRE_FALSE(groups);
  CHECK(groups.reason() == "Attention: 2 query heads do not group over 4 key/value heads; fix the shapes of the node's "
                           "inputs or its q_num_heads and kv_num_heads");
}

TEST_CASE("Attention-24's nonpad_kv_seqlen hides padding keys and aligns is_causal to the last valid one",
          "[cpu][opset24][attention]") {
  // One query, head size 1, zero scores: Y is the mean of the visible values. Entry 0 has 2 valid
  // keys of 3, entry 1 all 3.
  const Tensor q = llm_floats({2, 1, 1, 1}, {0, 0}), k = llm_floats({2, 1, 3, 1}, {0, 0, 0, 0, 0, 0});
  const Tensor v = llm_floats({2, 1, 3, 1}, {3, 5, 100, 1, 2, 6});
  const Tensor valid = Tensor::from_vector<int64_t>({2}, {2, 3});
  NodeSpec spec = attention({q, k, v, Tensor(), Tensor(), Tensor(), valid});
  spec.opset = 24;
  CHECK(llm_values(run_one(spec)) == std::vector<float>{4, 3});
  // With is_causal the one query is the last valid token: it still sees every valid key (at
  // opset 23's alignment it would see key 0 alone).
  spec.attrs = attrs({{"is_causal", int64_t{1}}});
  CHECK(llm_values(run_one(spec)) == std::vector<float>{4, 3});
  spec.inputs[6] = Tensor::from_vector<int64_t>({2}, {2, 4});
  auto long_count = run_on_cpu(spec);
  REQUIRE_FALSE(long_count);
  CHECK(long_count.error().what == "Attention: nonpad_kv_seqlen[1] is 4, outside [0, 3]");
  NodeSpec at23 = attention({q, k, v, Tensor(), Tensor(), Tensor(), valid});
  KernelMatch old = claim_on_cpu(at23);
  REQUIRE_FALSE(old);
  CHECK(old.reason() == "Attention-23: expected inputs Q, K, V and optional attn_mask, past_key, past_value, got 7");
}

TEST_CASE("Swish-24 is x * sigmoid(alpha * x)", "[cpu][opset24][activation]") {
  const Tensor y = run_one({.op_type = "Swish", .opset = 24, .inputs = {llm_floats({3}, {-2, 0, 3})},
                            .attrs = attrs({{"alpha", 0.5f}})});
  const auto swish = [](double x) { return x / (1 + std::exp(-0.5 * x)); };
  CHECK_THAT(llm_values(y), Catch::Matchers::Approx(std::vector<float>{float(swish(-2)), 0.f, float(swish(3))}));
}

TEST_CASE("TensorScatter writes update's rows at each entry's index, wrapping in circular mode",
          "[cpu][opset24][tensor_scatter]") {
  // Caches of 2 entries x 4 positions x 1 channel; updates of 2 rows.
  const Tensor cache = llm_floats({2, 4, 1}, {0, 1, 2, 3, 10, 11, 12, 13});
  const Tensor update = llm_floats({2, 2, 1}, {-1, -2, -3, -4});
  const Tensor at = Tensor::from_vector<int64_t>({2}, {1, 3});
  const AttributeMap circular = attrs({{"axis", int64_t{1}}, {"mode", std::string("circular")}});
  CHECK(llm_values(run_one({.op_type = "TensorScatter", .opset = 24, .inputs = {cache, update, at}, .attrs = circular})) ==
        std::vector<float>{0, -1, -2, 3, -4, 11, 12, -3});
  auto linear = run_on_cpu({.op_type = "TensorScatter", .opset = 24, .inputs = {cache, update, at},
                            .attrs = attrs({{"axis", int64_t{1}}})});
  REQUIRE_FALSE(linear);
  CHECK(linear.error().what ==
        "TensorScatter: write_indices[1] is 3, so 2 rows do not fit the cache's 4 in linear mode");
  // Without write_indices every entry writes from position 0.
  CHECK(llm_values(run_one({.op_type = "TensorScatter", .opset = 24, .inputs = {cache, update},
                            .attrs = attrs({{"axis", int64_t{1}}})})) ==
        std::vector<float>{-1, -2, 2, 3, -3, -4, 12, 13});
  KernelMatch batch_axis = claim_on_cpu({.op_type = "TensorScatter", .opset = 24, .inputs = {cache, update},
                                         .attrs = attrs({{"axis", int64_t{0}}})});
  REQUIRE_FALSE(batch_axis);
  CHECK(batch_axis.reason() ==
        "TensorScatter: axis 0 of a rank-3 past_cache must name a dim after the batch (dim 0)");
  auto wide = plan_tensor_scatter(attrs({}), {2, 3, 4}, {2, 3, 5}, nullptr);
  REQUIRE_FALSE(wide);
  CHECK(wide.error().what == "TensorScatter: update has shape [2,3,5] and past_cache [2,3,4]");
}

TEST_CASE("Attention skips the keys a block of causal queries cannot see, with the same results",
          "[cpu][opset23][attention]") {
  // 70 queries (three row blocks) after 5 past keys, causal, with and without padding: asking
  // for the scores (qk_matmul_output_mode 3) scores every key; without it the hidden ones are
  // skipped. Y must agree.
  const Tensor q = random_tensor({2, 2, 70, 8}, 71), k = random_tensor({2, 2, 70, 8}, 72);
  const Tensor v = random_tensor({2, 2, 70, 4}, 73);
  const Tensor past_k = random_tensor({2, 2, 5, 8}, 74), past_v = random_tensor({2, 2, 5, 4}, 75);
  const AttributeMap causal = attrs({{"is_causal", int64_t{1}}, {"qk_matmul_output_mode", int64_t{3}}});
  NodeSpec skipping = attention({q, k, v, Tensor(), past_k, past_v}, causal, 3);
  NodeSpec scoring_all = attention({q, k, v, Tensor(), past_k, past_v}, causal, 4);
  auto a = run_on_cpu(skipping), b = run_on_cpu(scoring_all);
  REQUIRE(a);
  REQUIRE(b);
  check_equal((*a)[0], (*b)[0]);
  NodeSpec padded = attention({q, k, v, Tensor(), Tensor(), Tensor(), Tensor::from_vector<int64_t>({2}, {40, 70})},
                              causal, 1);
  padded.opset = 24;
  NodeSpec padded_all = padded;
  padded_all.outputs = 4;
  auto c = run_on_cpu(padded), d = run_on_cpu(padded_all);
  REQUIRE(c);
  REQUIRE(d);
  check_equal((*c)[0], (*d)[0]);
  // Entry 0 has 40 valid keys for 70 queries: the first 30 queries see none (NaN), the rest do.
  const float* y = (*c)[0].data_as<float>();
  CHECK(std::isnan(y[0]));
  CHECK(std::isnan(y[29 * 4]));
  CHECK_FALSE(std::isnan(y[30 * 4]));
}
