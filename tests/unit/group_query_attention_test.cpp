// The cpu EP's com.microsoft GroupQueryAttention: what ONNX Runtime's outputs in
// testdata/com_microsoft leave out. A prompt of n + 1 tokens equals a prompt of n and a decoding
// step over its cache (rotary positions and the causal mask continue); an entry of a batch equals
// the same entry alone; declines and run-time errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

constexpr int64_t kHeads = 4, kKvHeads = 2, kHead = 16;

Tensor int32s(Shape shape, std::vector<int32_t> values) { return Tensor::from_vector<int32_t>(std::move(shape), values); }

// Rows [first, first + count) of the sequence axis of a [batch, seq, width] tensor.
Tensor rows(const Tensor& t, int64_t first, int64_t count, int64_t batch_index = -1) {
  const Shape& s = t.shape();
  const int64_t b0 = batch_index < 0 ? 0 : batch_index, batches = batch_index < 0 ? s[0] : 1;
  std::vector<float> out;
  for (int64_t b = b0; b < b0 + batches; ++b)
    out.insert(out.end(), t.data_as<float>() + (b * s[1] + first) * s[2],
               t.data_as<float>() + (b * s[1] + first + count) * s[2]);
  return Tensor::from_vector<float>({batches, count, s[2]}, out);
}

// GroupQueryAttention over q, k, v (past: key and value caches or none), every entry `lengths`
// long in total, rotary caches given.
NodeSpec gqa(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<Tensor>& past,
             std::vector<int32_t> lengths, int32_t total,
             std::vector<std::pair<std::string, Attribute::Value>> extra = {}) {
  std::vector<int32_t> seqlens;
  for (int32_t n : lengths) seqlens.push_back(n - 1);
  const Tensor cos = random_tensor({32, kHead / 2}, 91, -1, 1), sin = random_tensor({32, kHead / 2}, 92, -1, 1);
  NodeSpec spec{.op_type = "GroupQueryAttention", .domain = "com.microsoft", .opset = 1,
                .inputs = {q, k, v, past.empty() ? Tensor() : past[0], past.empty() ? Tensor() : past[1],
                           int32s({static_cast<int64_t>(seqlens.size())}, seqlens), int32s({}, {total}), cos, sin},
                .constant = {false, false, false, false, false, true, true, true, true},
                .outputs = 3};
  std::vector<std::pair<std::string, Attribute::Value>> all = {
      {"num_heads", kHeads}, {"kv_num_heads", kKvHeads}, {"do_rotary", int64_t{1}}};
  for (auto& e : extra) std::erase_if(all, [&](const auto& a) { return a.first == e.first; });
  all.insert(all.end(), extra.begin(), extra.end());
  spec.attrs = attrs(std::move(all));
  return spec;
}

}  // namespace

TEST_CASE("GroupQueryAttention: a prompt of n + 1 tokens equals a prompt of n and a decoding step",
          "[cpu][gqa]") {
  // 5: every query one by one; 20: the prompts' queries on the GEMM, the step's one by one.
  const int32_t n = GENERATE(5, 20);
  const Tensor q = random_tensor({1, n + 1, kHeads * kHead}, 1), k = random_tensor({1, n + 1, kKvHeads * kHead}, 2);
  const Tensor v = random_tensor({1, n + 1, kKvHeads * kHead}, 3);
  auto whole = run_on_cpu(gqa(q, k, v, {}, {n + 1}, n + 1));
  REQUIRE(whole.has_value());
  auto prompt = run_on_cpu(gqa(rows(q, 0, n), rows(k, 0, n), rows(v, 0, n), {}, {n}, n));
  REQUIRE(prompt.has_value());
  REQUIRE((*prompt)[1].shape() == Shape{1, kKvHeads, n, kHead});
  auto step = run_on_cpu(gqa(rows(q, n, 1), rows(k, n, 1), rows(v, n, 1), {(*prompt)[1], (*prompt)[2]}, {n + 1}, n + 1));
  REQUIRE(step.has_value());
  const Tensor want = rows((*whole)[0], n, 1);
  for (int64_t i = 0; i < want.numel(); ++i)
    REQUIRE((*step)[0].data_as<float>()[i] == Approx(want.data_as<float>()[i]).margin(1e-6));
  // Causality: the first n queries do not see the last token.
  const Tensor first = rows((*whole)[0], 0, n);
  for (int64_t i = 0; i < first.numel(); ++i)
    REQUIRE((*prompt)[0].data_as<float>()[i] == Approx(first.data_as<float>()[i]).margin(1e-6));
  check_equal((*step)[1], (*whole)[1]);  // the cache continues with the new key, rotated at position n
  check_equal((*step)[2], (*whole)[2]);
}

TEST_CASE("GroupQueryAttention: each entry of a decoding batch equals that entry alone", "[cpu][gqa]") {
  const int64_t cache = 7;
  const Tensor q = random_tensor({2, 1, kHeads * kHead}, 4), k = random_tensor({2, 1, kKvHeads * kHead}, 5);
  const Tensor v = random_tensor({2, 1, kKvHeads * kHead}, 6);
  const Tensor past_k = random_tensor({2, kKvHeads, cache, kHead}, 7), past_v = random_tensor({2, kKvHeads, cache, kHead}, 8);
  // Entry 0 has cached 3 tokens (the rest of its cache rows are stale), entry 1 all 7.
  auto batch = run_on_cpu(gqa(q, k, v, {past_k, past_v}, {4, 8}, 8, {{"local_window_size", int64_t{3}}}));
  REQUIRE(batch.has_value());
  REQUIRE((*batch)[1].shape() == Shape{2, kKvHeads, 8, kHead});
  for (int64_t b = 0; b < 2; ++b) {
    INFO("entry " << b);
    const int64_t length = b == 0 ? 4 : 8;
    auto cache_of = [&](const Tensor& t) {
      std::vector<float> out;
      for (int64_t h = 0; h < kKvHeads; ++h)
        out.insert(out.end(), t.data_as<float>() + ((b * kKvHeads + h) * cache) * kHead,
                   t.data_as<float>() + ((b * kKvHeads + h) * cache + length - 1) * kHead);
      return Tensor::from_vector<float>({1, kKvHeads, length - 1, kHead}, out);
    };
    auto alone = run_on_cpu(gqa(rows(q, 0, 1, b), rows(k, 0, 1, b), rows(v, 0, 1, b),
                                {cache_of(past_k), cache_of(past_v)}, {static_cast<int32_t>(length)},
                                static_cast<int32_t>(length), {{"local_window_size", int64_t{3}}}));
    REQUIRE(alone.has_value());
    for (int64_t h = 0; h < kHeads * kHead; ++h)
      CHECK((*batch)[0].data_as<float>()[b * kHeads * kHead + h] == Approx((*alone)[0].data_as<float>()[h]).margin(1e-6));
  }
}

TEST_CASE("GroupQueryAttention declines what the cpu EP does not implement, and names bad lengths",
          "[cpu][gqa][claim]") {
  const Tensor q = random_tensor({1, 3, kHeads * kHead}, 1), k = random_tensor({1, 3, kKvHeads * kHead}, 2);
  auto declined = [](const NodeSpec& spec) {
    const KernelMatch m = claim_on_cpu(spec);
    REQUIRE_FALSE(m);
    return m.reason();
  };
  CHECK(declined(gqa(q, k, k, {}, {3}, 3, {{"causal", int64_t{0}}})) ==
        "GroupQueryAttention: causal 0; the cpu EP implements causal attention (1)");
  CHECK(declined(gqa(q, k, k, {}, {3}, 3, {{"kv_num_heads", int64_t{3}}})) ==
        "GroupQueryAttention: num_heads 4 must be a positive multiple of kv_num_heads 3");
  NodeSpec positions = gqa(q, k, k, {}, {3}, 3);
  positions.inputs.push_back(Tensor::from_vector<int64_t>({1, 3}, {0, 1, 2}));
  positions.constant.push_back(true);
  CHECK(declined(positions) == "GroupQueryAttention: position_ids (input 9) is not implemented by the cpu EP");
  NodeSpec int8_cache = gqa(q, k, k, {Tensor::from_vector<int8_t>({1, kKvHeads, 4, kHead}, std::vector<int8_t>(128)),
                                      Tensor::from_vector<int8_t>({1, kKvHeads, 4, kHead}, std::vector<int8_t>(128))},
                            {3}, 3);
  CHECK_THAT(declined(int8_cache), Catch::Matchers::StartsWith("GroupQueryAttention: input 3 is int8 and query float"));
  auto too_long = run_on_cpu(gqa(q, k, k, {}, {9}, 3));
  REQUIRE_FALSE(too_long);
  CHECK_THAT(too_long.error().render(), Catch::Matchers::Contains(
                                            "GroupQueryAttention: seqlens_k[0] is 8 with 3 new tokens, a cache of 0 rows "
                                            "and total_sequence_length 3"));
  // A value of another shape than key's, named (a claim without static shapes cannot see it).
  auto wrong_value = run_on_cpu(gqa(q, k, random_tensor({1, 2, kKvHeads * kHead}, 3), {}, {3}, 3));
  REQUIRE_FALSE(wrong_value);
  CHECK_THAT(wrong_value.error().render(),
             Catch::Matchers::Contains("GroupQueryAttention: value has shape [1,2,32]"));
}
