// GroupQueryAttention's claim checks and geometry (nxrt/ep/group_query_attention.h).
#include "nxrt/ep/group_query_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

namespace nxrt {
namespace {


std::unexpected<Error> gqa_misfit(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("GroupQueryAttention: {}", what), std::move(why),
              "give inputs of the shapes and lengths ONNX Runtime's definition of the op states");
}

}  // namespace

GroupQueryAttentionAttrs GroupQueryAttentionAttrs::of(const AttributeMap& a) {
  return {a.int_or("num_heads", 0),
          a.int_or("kv_num_heads", 0),
          a.int_or("local_window_size", -1),
          a.float_or("scale", 0.f),
          a.float_or("softcap", 0.f),
          a.int_or("do_rotary", 0) == 1,
          a.int_or("rotary_interleaved", 0) == 1,
          a.int_or("smooth_softmax", 0) == 1};
}

float GroupQueryAttentionAttrs::scale_for(int64_t head_size) const {
  return scale != 0.f ? scale : 1.f / std::sqrt(static_cast<float>(head_size));
}

std::pair<int64_t, int64_t> GroupQueryAttentionPlan::visible_keys(const GroupQueryAttentionAttrs& a, int64_t b,
                                                                  int64_t s) const {
  const auto at = static_cast<std::size_t>(b);
  const int64_t end = std::min(cached[at] + s + 1, lengths[at]);
  return {a.local_window > 0 ? std::max<int64_t>(0, end - a.local_window) : 0, end};
}

KernelMatch check_group_query_attention_node(const NodeContext& ctx, std::string_view ep) {
  const GroupQueryAttentionAttrs at = GroupQueryAttentionAttrs::of(ctx.attrs());
  const DType t = ctx.input_dtype(kGqaQuery);
  for (std::size_t i : {kGqaKey, kGqaValue, kGqaPastKey, kGqaPastValue, kGqaCos, kGqaSin})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == t,
                 "GroupQueryAttention: input {} is {} and query {}; the {} EP implements a cache and rotary caches of "
                 "query's type (not quantized)",
                 i, dtype_name(ctx.input_dtype(i)), dtype_name(t), ep);
  NXRT_REQUIRE(at.heads > 0 && at.kv_heads > 0 && at.heads % at.kv_heads == 0,
               "GroupQueryAttention: num_heads {} must be a positive multiple of kv_num_heads {}", at.heads,
               at.kv_heads);
  NXRT_REQUIRE(ctx.has_input(kGqaKey) == ctx.has_input(kGqaValue),
               "GroupQueryAttention: key and value must be both given or both absent (packed QKV)");
  NXRT_REQUIRE(ctx.has_input(kGqaPastKey) == ctx.has_input(kGqaPastValue),
               "GroupQueryAttention: past_key and past_value must be both given or both absent");
  NXRT_REQUIRE(ctx.has_input(kGqaSeqlensK) && ctx.input_dtype(kGqaSeqlensK) == DType::kInt32 &&
                   ctx.has_input(kGqaTotal) &&
                   ctx.input_dtype(kGqaTotal) == DType::kInt32,
               "GroupQueryAttention: seqlens_k (input 5) and total_sequence_length (input 6) are required, int32");
  NXRT_REQUIRE(ctx.has_input(kGqaCos) == ctx.has_input(kGqaSin) && (!at.rotary || ctx.has_input(kGqaCos)),
               "GroupQueryAttention: cos_cache and sin_cache must be both given or both absent, and given with "
               "do_rotary 1");
  static constexpr const char* kDeclinedInputs[] = {"position_ids", "attention_bias", "head_sink", "k_scale",
                                                   "v_scale",      "q_norm_weight",  "k_norm_weight"};
  for (std::size_t i = 9; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(!ctx.has_input(i) || i - 9 >= std::size(kDeclinedInputs),
                 "GroupQueryAttention: {} (input {}) is not implemented by the {} EP", kDeclinedInputs[i - 9], i,
                 ep);
  NXRT_REQUIRE(!ctx.has_output(3), "GroupQueryAttention: output_qk (output 3) is not implemented by the {} EP",
               ep);
  NXRT_REQUIRE(ctx.attrs().int_or("causal", 1) == 1,
               "GroupQueryAttention: causal {}; the {} EP implements causal attention (1)",
               ctx.attrs().int_or("causal", 1), ep);
  NXRT_REQUIRE(ctx.attrs().int_or("sliding_window_cache", 0) == 0 && ctx.attrs().int_or("qk_output", 0) == 0 &&
                   ctx.attrs().string_or("k_quant_type", "NONE") == "NONE" &&
                   ctx.attrs().string_or("v_quant_type", "NONE") == "NONE",
               "GroupQueryAttention: sliding_window_cache, qk_output and a quantized cache are not implemented by "
               "the {} EP",
               ep);
  NXRT_REQUIRE(at.softcap >= 0, "GroupQueryAttention: softcap {} must not be negative", at.softcap);
  NXRT_REQUIRE(ctx.input_rank(kGqaQuery).value_or(3) == 3, "GroupQueryAttention: query has rank {}; it must be 3",
               ctx.input_rank(kGqaQuery).value_or(3));
  return KernelMatch::supported();
}

Expected<GroupQueryAttentionPlan> plan_group_query_attention(const GroupQueryAttentionAttrs& at,
                                                             const GroupQueryAttentionShapes& in,
                                                             const Tensor& seqlens_k,
                                                             const Tensor& total_sequence_length) {
  const std::span<const int32_t> seqlens(seqlens_k.data_as<int32_t>(), static_cast<std::size_t>(seqlens_k.numel()));
  const std::span<const int32_t> total(total_sequence_length.data_as<int32_t>(),
                                       static_cast<std::size_t>(total_sequence_length.numel()));
  GroupQueryAttentionPlan p;
  const Shape& q = *in.query;
  if (q.size() != 3)
    return gqa_misfit(fmt::format("query has shape {}", shape_to_string(q)), "query is [batch, sequence, hidden]");
  p.batch = q[0];
  p.seq = q[1];
  p.packed = in.key == nullptr;
  const int64_t columns = p.packed ? at.heads + 2 * at.kv_heads : at.heads;
  if (q[2] % columns != 0)
    return gqa_misfit(fmt::format("query's last dim {} is not a multiple of {} heads", q[2], columns),
                      "query holds num_heads heads (and, packed, 2 * kv_num_heads more)");
  p.head_size = q[2] / columns;
  const Shape kv_shape{p.batch, p.seq, at.kv_heads * p.head_size};
  if (!p.packed)
    for (auto [name, s] : {std::pair{"key", in.key}, std::pair{"value", in.value}})
      if (*s != kv_shape)
        return gqa_misfit(fmt::format("{} has shape {}", name, shape_to_string(*s)),
                          fmt::format("key and value must be {}", shape_to_string(kv_shape)));
  if (in.past_key) {
    p.past_rows = in.past_key->size() == 4 ? (*in.past_key)[2] : -1;
    const Shape past{p.batch, at.kv_heads, p.past_rows, p.head_size};
    for (auto [name, s] : {std::pair{"past_key", in.past_key}, std::pair{"past_value", in.past_value}})
      if (*s != past)
        return gqa_misfit(fmt::format("{} has shape {}", name, shape_to_string(*s)),
                          "past_key and past_value must be [batch, kv_num_heads, rows, head_size], both of one shape");
  }
  if (total.size() != 1 || std::cmp_not_equal(seqlens.size(), p.batch))
    return gqa_misfit("total_sequence_length or seqlens_k has the wrong size",
                      "total_sequence_length holds one value and seqlens_k one per batch entry");
  p.total = total[0];
  p.present_rows = std::max(p.total, p.past_rows);
  p.first_prompt = p.seq == p.total;
  if (!p.first_prompt && p.seq > 1 && p.batch != 1)
    return gqa_misfit(fmt::format("{} new tokens after a cache, in a batch of {}", p.seq, p.batch),
                      "several new tokens after a cache (a later prompt) need a batch of one");
  for (int64_t b = 0; b < p.batch; ++b) {
    const int32_t seqlen = seqlens[static_cast<std::size_t>(b)];
    const int64_t length = int64_t{seqlen} + 1;
    const int64_t cached = p.first_prompt ? 0 : length - p.seq;
    if (length < 1 || length > p.present_rows || cached < 0 || cached > std::max<int64_t>(p.past_rows, 0) ||
        (p.first_prompt && length > p.seq))
      return gqa_misfit(fmt::format("seqlens_k[{}] is {} with {} new tokens, a cache of {} rows and "
                                    "total_sequence_length {}",
                                    b, seqlen, p.seq, std::max<int64_t>(p.past_rows, 0), p.total),
                        "each entry's length (seqlens_k + 1) must cover its new tokens, its cached rows fit in "
                        "past_key, and no length exceed total_sequence_length");
    p.lengths.push_back(length);
    p.cached.push_back(cached);
  }
  if (at.rotary) {
    const Shape& cos = *in.cos;
    p.rotary_dim = cos.size() == 2 ? 2 * cos[1] : -1;
    const int64_t positions = p.lengths.empty() ? 0 : *std::max_element(p.lengths.begin(), p.lengths.end());
    if (cos.size() != 2 || *in.sin != cos || p.rotary_dim > p.head_size || cos[0] < positions)
      return gqa_misfit(fmt::format("cos_cache has shape {} and sin_cache {}", shape_to_string(cos),
                                    shape_to_string(*in.sin)),
                        fmt::format("both must be [positions >= {}, rotary_dim / 2 <= {}]", positions,
                                    p.head_size / 2));
  }
  return p;
}

}  // namespace nxrt
