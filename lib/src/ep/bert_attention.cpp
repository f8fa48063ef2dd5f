// The BERT attention ops' shapes (nxrt/ep/bert_attention.h).
#include "nxrt/ep/bert_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace nxrt {
namespace {

std::unexpected<Error> bert_shape_error(std::string_view op, std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("{}: {}", op, what), std::move(why),
              "give tensors of the shapes ONNX Runtime's definition of the op states");
}

}  // namespace

Expected<KeyMaskForm> bert_key_mask_form(std::string_view op, const Shape& mask, int64_t batch, int64_t q_seq,
                                         int64_t total, bool end_start, bool dummy) {
  if (mask.size() == 1 && (mask[0] == batch || mask[0] == 3 * batch + 2)) return KeyMaskForm::kKeyLengths;
  if (mask.size() == 1 && end_start && mask[0] == 2 * batch) return KeyMaskForm::kEndStart;
  if (mask.size() == 2 && dummy && mask[1] == 1 && (mask[0] == batch || mask[0] == 1)) return KeyMaskForm::kNone;
  if (mask.size() == 2 && mask[0] == batch && mask[1] == total) return KeyMaskForm::kRaw2D;
  if (mask.size() == 3 && mask == Shape{batch, q_seq, total}) return KeyMaskForm::kRaw3D;
  return fail(ErrorCode::kRuntime, fmt::format("{}: the mask has shape {}", op, shape_to_string(mask)),
              fmt::format("with batch {}, {} queries and {} keys it must be [{}] (key lengths){}, [{}, {}] or [{}, {}, "
                          "{}] (1 where a key is seen)",
                          batch, q_seq, total, batch, end_start ? fmt::format(", [{}] (ends, then starts)", 2 * batch)
                                                                 : std::string(),
                          batch, total, batch, q_seq, total),
              "give a mask of one of those shapes");
}

Expected<AttentionBiasStrides> bert_attention_bias_strides(std::string_view op, const Shape& s, int64_t batch,
                                                           int64_t heads, int64_t q_seq, int64_t total) {
  if (s.size() != 4 || (s[0] != batch && s[0] != 1) || (s[1] != heads && s[1] != 1) || s[2] != q_seq ||
      s[3] != total)
    return bert_shape_error(op, fmt::format("attention_bias has shape {}", shape_to_string(s)),
                            fmt::format("it must be [{} or 1, {} or 1, {}, {}]", batch, heads, q_seq, total));
  return AttentionBiasStrides{.batch = s[0] == 1 ? 0 : s[1] * q_seq * total, .head = s[1] == 1 ? 0 : q_seq * total};
}

MicrosoftAttentionAttrs MicrosoftAttentionAttrs::of(const AttributeMap& a) {
  return {a.int_or("num_heads", 0), a.int_or("unidirectional", 0) != 0, a.ints_or("qkv_hidden_sizes", {}),
          a.float_or("scale", 0.f), a.float_or("mask_filter_value", -10000.f)};
}

float MicrosoftAttentionPlan::scale(const MicrosoftAttentionAttrs& a) const {
  return a.scale != 0.f ? a.scale : 1.f / std::sqrt(static_cast<float>(head_size(a)));
}

KernelMatch check_microsoft_attention_family(const NodeContext& ctx, const MicrosoftAttentionInputs& f,
                                             std::string_view ep) {
  const MicrosoftAttentionAttrs at = MicrosoftAttentionAttrs::of(ctx.attrs());
  const std::string_view op = f.op;
  NXRT_REQUIRE(ctx.has_input(1), "{}: weights (input 1) is required", op);
  NXRT_REQUIRE(!ctx.has_input(f.mask) || ctx.input_dtype(f.mask) == DType::kInt32,
               "{}: mask_index is {}; it must be int32", op, dtype_name(ctx.input_dtype(f.mask)));
  NXRT_REQUIRE(at.heads > 0, "{}: num_heads is {}; it must be positive", op, at.heads);
  NXRT_REQUIRE(ctx.attrs().int_or("do_rotary", 0) == 0,
               "{}: do_rotary is not implemented by the {} EP; write the model with MultiHeadAttention and "
               "RotaryEmbedding",
               op, ep);
  const bool share_buffer_input = f.past_sequence_length && ctx.has_input(*f.past_sequence_length);
  NXRT_REQUIRE(ctx.attrs().int_or("past_present_share_buffer", 0) == 0 ||
                   (!ctx.has_input(f.past) && !share_buffer_input),
               "{}: past_present_share_buffer (one buffer for past and present) is not implemented by the {} EP", op,
               ep);
  NXRT_REQUIRE(!share_buffer_input, "{}: past_sequence_length (input {}) is not implemented by the {} EP", op,
               f.past_sequence_length.value_or(0), ep);
  NXRT_REQUIRE(at.hidden_sizes.empty() ||
                   (at.hidden_sizes.size() == 3 && at.hidden_sizes[0] == at.hidden_sizes[1] &&
                    std::all_of(at.hidden_sizes.begin(), at.hidden_sizes.end(),
                                [&](int64_t d) { return d > 0 && d % at.heads == 0; })),
               "{}: qkv_hidden_sizes must be 3 positive multiples of num_heads {}, the first two equal (Q and K)", op,
               at.heads);
  NXRT_REQUIRE(at.hidden_sizes.empty() || at.hidden_sizes[0] == at.hidden_sizes[2] ||
                   (!ctx.has_input(f.past) && !ctx.has_output(1)),
               "{}: past and present need V's hidden size equal to Q's and K's (qkv_hidden_sizes {} {} {})", op,
               at.hidden_sizes[0], at.hidden_sizes[1], at.hidden_sizes[2]);
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) == 3 && ctx.input_rank(1).value_or(2) == 2,
               "{}: input must be [batch, sequence, input_hidden] and weights [input_hidden, D + D + Dv]", op);
  NXRT_REQUIRE(!ctx.has_input(f.mask) || ctx.input_rank(f.mask).value_or(1) <= 3,
               "{}: a mask_index of rank 4 (Megatron's [batch, 1, max, max]) is not implemented by the {} EP", op, ep);
  return KernelMatch::supported();
}

Expected<MicrosoftAttentionPlan> plan_microsoft_attention(std::string_view op, const MicrosoftAttentionAttrs& at,
                                                          const Shape& x, const Shape& w, const Shape* bias,
                                                          const Shape* past) {
  MicrosoftAttentionPlan p;
  if (x.size() != 3 || w.size() != 2 || w[0] != x[2])
    return bert_shape_error(op,
                            fmt::format("input has shape {} and weights {}", shape_to_string(x), shape_to_string(w)),
                            "input is [batch, sequence, input_hidden] and weights [input_hidden, D + D + Dv]");
  p.batch = x[0];
  p.seq = x[1];
  p.in = x[2];
  p.columns = w[1];
  if (at.hidden_sizes.empty()) {
    p.hidden = p.v_hidden = p.columns / 3;
  } else {
    p.hidden = at.hidden_sizes[0];
    p.v_hidden = at.hidden_sizes[2];
  }
  if (2 * p.hidden + p.v_hidden != p.columns || p.hidden % at.heads != 0 || p.v_hidden % at.heads != 0)
    return bert_shape_error(op, fmt::format("weights has {} columns for {} heads{}", p.columns, at.heads,
                                            at.hidden_sizes.empty() ? std::string()
                                                                    : fmt::format(" and qkv_hidden_sizes {} {} {}",
                                                                                  p.hidden, p.hidden, p.v_hidden)),
                            "the columns are Q, K and V's hidden sizes (equal thirds without qkv_hidden_sizes), each "
                            "a multiple of num_heads");
  if (bias && *bias != Shape{p.columns})
    return bert_shape_error(op, fmt::format("bias has shape {}", shape_to_string(*bias)),
                            fmt::format("bias holds one value per column of weights, [{}]", p.columns));
  if (past) {
    const int64_t hs = p.hidden / at.heads;
    if (past->size() != 5 || (*past)[0] != 2 || (*past)[1] != p.batch || (*past)[2] != at.heads || (*past)[4] != hs)
      return bert_shape_error(op, fmt::format("past has shape {}", shape_to_string(*past)),
                              fmt::format("past is [2, {}, {}, past_sequence, {}]", p.batch, at.heads, hs));
    p.past = (*past)[3];
  }
  return p;
}

// ---- MultiHeadAttention ----

namespace {

std::unexpected<Error> mha_misfit(std::string what, std::string why) {
  return bert_shape_error("MultiHeadAttention", std::move(what), std::move(why));
}

}  // namespace

MultiHeadAttentionAttrs MultiHeadAttentionAttrs::of(const AttributeMap& a) {
  return {a.int_or("num_heads", 0), a.int_or("unidirectional", 0) != 0, a.float_or("scale", 0.f),
          a.float_or("mask_filter_value", -10000.f)};
}

KernelMatch check_multi_head_attention_node(const NodeContext& ctx, std::string_view ep) {
  const MultiHeadAttentionAttrs at = MultiHeadAttentionAttrs::of(ctx.attrs());
  NXRT_REQUIRE(at.heads > 0, "MultiHeadAttention: num_heads is {}; it must be positive", at.heads);
  const bool packed_qkv = ctx.input_rank(kMhaQuery) == 5;
  const bool packed_kv = ctx.has_input(kMhaKey) && ctx.input_rank(kMhaKey) == 5;
  NXRT_REQUIRE(packed_qkv || ctx.input_rank(kMhaQuery).value_or(3) == 3,
               "MultiHeadAttention: query has rank {}; it must be [batch, seq, hidden] or packed QKV [batch, seq, "
               "heads, 3, head_size]",
               ctx.input_rank(kMhaQuery).value_or(3));
  NXRT_REQUIRE(packed_qkv ? !ctx.has_input(kMhaKey) && !ctx.has_input(kMhaValue)
                          : ctx.has_input(kMhaKey) && ctx.has_input(kMhaValue) != packed_kv,
               "MultiHeadAttention: give key and value, key alone as packed KV [batch, kv_seq, heads, 2, head_size], "
               "or neither with packed QKV");
  NXRT_REQUIRE(!(packed_qkv || packed_kv) || !ctx.has_input(kMhaBias),
               "MultiHeadAttention: a bias with packed QKV or KV is not implemented by the {} EP", ep);
  NXRT_REQUIRE(!ctx.has_input(kMhaPastSequenceLength) && !ctx.has_input(kMhaCacheIndirection),
               "MultiHeadAttention: past_sequence_length (input 8) and cache_indirection (input 9), a shared past and "
               "present buffer for beam search, are not implemented by the {} EP",
               ep);
  NXRT_REQUIRE(ctx.has_input(kMhaPastKey) == ctx.has_input(kMhaPastValue),
               "MultiHeadAttention: past_key and past_value must be both given or both absent");
  NXRT_REQUIRE(!ctx.has_input(kMhaMask) || ctx.input_dtype(kMhaMask) == DType::kInt32,
               "MultiHeadAttention: key_padding_mask is {}; it must be int32", dtype_name(ctx.input_dtype(kMhaMask)));
  return KernelMatch::supported();
}

float MultiHeadAttentionPlan::scale(const MultiHeadAttentionAttrs& a) const {
  return a.scale != 0.f ? a.scale : 1.f / std::sqrt(static_cast<float>(head_size));
}

HeadView MultiHeadAttentionPlan::query_heads() const {
  if (layout == Layout::kPackedQkv) {
    const int64_t row = heads * 3 * head_size;
    return {0, seq * row, 3 * head_size, row};
  }
  return {0, seq * hidden, head_size, hidden};
}

HeadView MultiHeadAttentionPlan::key_heads() const {
  switch (layout) {
    case Layout::kPackedQkv: return {head_size, query_heads().batch, 3 * head_size, query_heads().seq};
    case Layout::kPackedKv: return {0, kv_seq * heads * 2 * head_size, 2 * head_size, heads * 2 * head_size};
    case Layout::kInHeads: return {0, heads * kv_seq * head_size, kv_seq * head_size, head_size};
    default: return {0, kv_seq * hidden, head_size, hidden};
  }
}

HeadView MultiHeadAttentionPlan::value_heads() const {
  switch (layout) {
    case Layout::kPackedQkv: return {2 * head_size, query_heads().batch, 3 * head_size, query_heads().seq};
    case Layout::kPackedKv: return {head_size, key_heads().batch, key_heads().head, key_heads().seq};
    case Layout::kInHeads: return {0, heads * kv_seq * v_head_size, kv_seq * v_head_size, v_head_size};
    default: return {0, kv_seq * v_hidden, v_head_size, v_hidden};
  }
}

Expected<MultiHeadAttentionPlan> plan_multi_head_attention(const MultiHeadAttentionAttrs& at,
                                                           const MultiHeadAttentionShapes& in) {
  using Layout = MultiHeadAttentionPlan::Layout;
  MultiHeadAttentionPlan p;
  const int64_t n = at.heads;
  p.heads = n;
  const Shape& q = *in.query;
  if (q.size() == 5) {  // packed QKV
    if (q[2] != n || q[3] != 3)
      return mha_misfit(fmt::format("query has shape {} for {} heads", shape_to_string(q), n),
                        "packed QKV is [batch, sequence, num_heads, 3, head_size]");
    p.layout = Layout::kPackedQkv;
    p.batch = q[0];
    p.seq = p.kv_seq = q[1];
    p.head_size = p.v_head_size = q[4];
    p.hidden = p.v_hidden = n * q[4];
  } else {
    if (q.size() != 3 || q[2] % n != 0)
      return mha_misfit(fmt::format("query has shape {} for {} heads", shape_to_string(q), n),
                        "query is [batch, sequence, hidden], hidden a multiple of num_heads");
    p.batch = q[0];
    p.seq = q[1];
    p.hidden = q[2];
    p.head_size = p.hidden / n;
    const Shape& k = *in.key;
    const Shape empty;
    const Shape& v = in.value ? *in.value : empty;
    p.layout = k.size() == 5 ? Layout::kPackedKv : k.size() == 4 ? Layout::kInHeads : Layout::kSeparate;
    if (p.layout == Layout::kPackedKv) {
      if (k != Shape{p.batch, k[1], n, 2, p.head_size})
        return mha_misfit(fmt::format("key has shape {} for query {}", shape_to_string(k), shape_to_string(q)),
                          fmt::format("packed KV is [{}, kv_sequence, {}, 2, {}]", p.batch, n, p.head_size));
      p.kv_seq = k[1];
      p.v_head_size = p.head_size;
      p.v_hidden = p.hidden;
    } else if (p.layout == Layout::kInHeads) {
      if (k != Shape{p.batch, n, k[2], p.head_size} || v.size() != 4 || v[0] != p.batch || v[1] != n || v[2] != k[2])
        return mha_misfit(fmt::format("key has shape {} and value {}", shape_to_string(k), shape_to_string(v)),
                          fmt::format("key and value in heads are [{}, {}, kv_sequence, {}] and [{}, {}, "
                                      "kv_sequence, v_head_size]",
                                      p.batch, n, p.head_size, p.batch, n));
      p.kv_seq = k[2];
      p.v_head_size = v[3];
      p.v_hidden = n * p.v_head_size;
      if (in.past_key)
        return mha_misfit("past_key is given with key and value in heads",
                          "key and value of shape [batch, heads, kv_sequence, head_size] are a whole cache already");
    } else {
      if (k.size() != 3 || k[0] != p.batch || k[2] != p.hidden || v.size() != 3 || v[0] != p.batch || v[1] != k[1] ||
          v[2] % n != 0)
        return mha_misfit(fmt::format("query has shape {}, key {} and value {}", shape_to_string(q), shape_to_string(k),
                                      shape_to_string(v)),
                          fmt::format("key is [{}, kv_sequence, {}] and value [{}, kv_sequence, Dv], Dv a multiple "
                                      "of num_heads",
                                      p.batch, p.hidden, p.batch));
      p.kv_seq = k[1];
      p.v_hidden = v[2];
      p.v_head_size = p.v_hidden / n;
    }
  }
  if (in.bias && *in.bias != Shape{2 * p.hidden + p.v_hidden})
    return mha_misfit(fmt::format("bias has shape {}", shape_to_string(*in.bias)),
                      fmt::format("bias holds Q's, K's and V's, [{}]", 2 * p.hidden + p.v_hidden));
  if (in.past_key) {
    const Shape& pk = *in.past_key;
    const Shape& pv = *in.past_value;
    if (pk.size() != 4 || pk != Shape{p.batch, n, pk[2], p.head_size} || pv != Shape{p.batch, n, pk[2], p.v_head_size})
      return mha_misfit(
          fmt::format("past_key has shape {} and past_value {}", shape_to_string(pk), shape_to_string(pv)),
          fmt::format("they are [{}, {}, past, {}] and [{}, {}, past, {}]", p.batch, n, p.head_size, p.batch, n,
                      p.v_head_size));
    p.past = pk[2];
  }
  if (at.causal && p.seq > 1 && p.kv_seq != p.seq)
    return mha_misfit(fmt::format("unidirectional attention of {} queries over {} new keys", p.seq, p.kv_seq),
                      "causal attention needs as many new keys as queries (self-attention)");
  return p;
}

}  // namespace nxrt
