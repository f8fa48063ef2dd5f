// Attention's geometry, opsets 23 and 24 (nxrt/ep/attention.h).
#include "nxrt/ep/attention.h"

#include <fmt/format.h>

#include <cmath>

namespace nxrt {
namespace {

Error attention_misfit(std::string what, std::string why) {
  return Error{ErrorCode::kRuntime,
               "Attention: " + std::move(what),
               std::move(why),
               "fix the shapes of the node's inputs or its q_num_heads and kv_num_heads",
               {}};
}

constexpr const char* kInputNames[] = {"Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"};

// Heads, sequence length, head size and strides of Q, K or V (`heads`: the attribute, 0 if absent).
struct Layout {
  int64_t heads = 0, seq = 0, size = 0;
  HeadStrides strides;
};

Expected<Layout> layout_of(const char* name, const Shape& s, int64_t heads) {
  if (s.size() == 4) {
    if (heads > 0 && heads != s[1])
      return fail(attention_misfit(fmt::format("{} has shape {}, {} heads, but the node's attribute says {}", name,
                                               shape_to_string(s), s[1], heads),
                                   "a rank-4 input is [batch, heads, seq, head_size]"));
    return Layout{s[1], s[2], s[3], {s[1] * s[2] * s[3], s[2] * s[3], s[3]}};
  }
  if (heads <= 0 || s[2] % heads != 0)
    return fail(
        attention_misfit(fmt::format("{} has shape {}, whose hidden size {} does not split into {} heads", name,
                                     shape_to_string(s), s[2], heads),
                         "a rank-3 input is [batch, seq, heads * head_size], with q_num_heads and kv_num_heads given"));
  const int64_t size = s[2] / heads;
  return Layout{heads, s[1], size, {s[1] * s[2], size, s[2]}};
}

}  // namespace

AttentionAttrs AttentionAttrs::of(const AttributeMap& attrs) {
  AttentionAttrs a;
  a.causal = attrs.int_or("is_causal", 0) != 0;
  a.q_heads = attrs.int_or("q_num_heads", 0);
  a.kv_heads = attrs.int_or("kv_num_heads", 0);
  a.scale = attrs.get_float("scale");
  a.softcap = attrs.float_or("softcap", 0.f);
  a.qk_output_mode = attrs.int_or("qk_matmul_output_mode", 0);
  const auto precision = dtype_from_onnx(static_cast<int32_t>(attrs.int_or("softmax_precision", 0)));
  a.softmax_in_float = precision == DType::kFloat32 || precision == DType::kFloat64;
  return a;
}

KernelMatch check_attention_node(const NodeContext& ctx) {
  const std::size_t most = ctx.opset() >= 24 ? 7 : 6;
  NXRT_REQUIRE(
      ctx.input_count() >= 3 && ctx.input_count() <= most && ctx.has_input(0) && ctx.has_input(1) && ctx.has_input(2),
      "Attention-{}: expected inputs Q, K, V and optional attn_mask, past_key, past_value{}, got {}",
      ctx.opset() >= 24 ? 24 : 23, most == 7 ? " and nonpad_kv_seqlen" : "", ctx.input_count());
  NXRT_REQUIRE(ctx.output_count() >= 1 && ctx.output_count() <= 4,
               "Attention: {} outputs requested; the op defines Y, present_key, present_value and qk_matmul_output",
               ctx.output_count());
  NXRT_REQUIRE(ctx.has_input(4) == ctx.has_input(5),
               "Attention: past_key and past_value must be given together (only {} is)",
               ctx.has_input(4) ? "past_key" : "past_value");
  NXRT_REQUIRE(!ctx.has_input(6) || !ctx.has_input(4),
               "Attention: nonpad_kv_seqlen (an external cache's valid lengths) cannot be used with past_key and "
               "past_value");
  NXRT_REQUIRE(!ctx.has_input(6) || ctx.input_dtype(6) == DType::kInt64 || ctx.input_dtype(6) == DType::kUndefined,
               "Attention: nonpad_kv_seqlen has type {}; expected int64", dtype_name(ctx.input_dtype(6)));
  const AttentionAttrs a = AttentionAttrs::of(ctx.attrs());
  NXRT_REQUIRE(a.qk_output_mode >= 0 && a.qk_output_mode <= 3,
               "Attention: qk_matmul_output_mode {} is not defined; it is 0 (scaled Q K^T), 1 (after softcap), 2 "
               "(after the mask) or 3 (after softmax)",
               a.qk_output_mode);
  NXRT_REQUIRE(a.softcap >= 0 && std::isfinite(a.softcap), "Attention: softcap {} must be 0 (off) or positive",
               a.softcap);
  NXRT_REQUIRE(!a.scale || std::isfinite(*a.scale), "Attention: scale {} is not finite", a.scale.value_or(0.f));
  if (const auto p = ctx.attrs().get_int("softmax_precision")) {
    const auto t = dtype_from_onnx(static_cast<int32_t>(*p));
    NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat64,
                 "Attention: softmax_precision {} is not float, float16, bfloat16 or double", *p);
  }
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 3 || *rank == 4,
               "Attention: Q has rank {}; expected [batch, heads, seq, head_size] or [batch, seq, hidden]", *rank);
  for (std::size_t i : {1, 2})
    NXRT_REQUIRE(!rank || !ctx.input_rank(i) || *ctx.input_rank(i) == *rank,
                 "Attention: {} has rank {} and Q {}; they must match", kInputNames[i], *ctx.input_rank(i), *rank);
  NXRT_REQUIRE(rank != 3 || (a.q_heads > 0 && a.kv_heads > 0),
               "Attention: Q has rank 3, so q_num_heads and kv_num_heads must be given and positive");
  for (std::size_t i : {1, 2, 4, 5})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == ctx.input_dtype(0),
                 "Attention: {} has type {} and Q {}; they must match", kInputNames[i], dtype_name(ctx.input_dtype(i)),
                 dtype_name(ctx.input_dtype(0)));
  if (ctx.has_input(3)) {
    const DType m = ctx.input_dtype(3);
    NXRT_REQUIRE(m == DType::kBool || m == ctx.input_dtype(0),
                 "Attention: attn_mask has type {}; expected bool or Q's type {}", dtype_name(m),
                 dtype_name(ctx.input_dtype(0)));
    const auto r = ctx.input_rank(3);
    NXRT_REQUIRE(!r || (*r >= 2 && *r <= 4), "Attention: attn_mask has rank {}; expected 2 to 4", r.value_or(0));
  }
  std::optional<Shape> shapes[7];
  for (std::size_t i = 0; i < 7; ++i)
    if (ctx.has_input(i)) {
      shapes[i] = ctx.input_static_shape(i);
      if (!shapes[i]) return KernelMatch::supported();
    }
  auto shape = [&](std::size_t i) { return shapes[i] ? &*shapes[i] : nullptr; };
  auto p = plan_attention(a, *shapes[0], *shapes[1], *shapes[2], shape(3), shape(4), shape(5), shape(6));
  if (!p) return declined_by(p.error());
  // Two products per (batch, query head): [q_seq x head_size] by [head_size x total_seq], then
  // [q_seq x total_seq] by [total_seq x v_head_size]; every input read, Y written.
  Cost cost;
  cost.flops = 2.0 * static_cast<double>(p->batch * p->q_heads * p->q_seq * p->total_seq) *
               static_cast<double>(p->head_size + p->v_head_size);
  cost.bytes_moved = static_cast<double>(shape_numel(p->y_shape)) * static_cast<double>(dtype_size(ctx.input_dtype(0)));
  for (std::size_t i = 0; i < 7; ++i)
    if (shapes[i])
      cost.bytes_moved +=
          static_cast<double>(shape_numel(*shapes[i])) * static_cast<double>(dtype_size(ctx.input_dtype(i)));
  return KernelMatch::supported(cost);
}

Expected<AttentionPlan> plan_attention(const AttentionAttrs& attrs, const Shape& q, const Shape& k, const Shape& v,
                                       const Shape* mask, const Shape* past_key, const Shape* past_value,
                                       const Shape* nonpad_kv_seqlen) {
  if ((q.size() != 3 && q.size() != 4) || k.size() != q.size() || v.size() != q.size())
    return fail(attention_misfit(
        fmt::format("Q, K and V have shapes {}, {} and {}", shape_to_string(q), shape_to_string(k), shape_to_string(v)),
        "they must all be rank 4 ([batch, heads, seq, head_size]) or all rank 3 ([batch, seq, hidden])"));
  auto ql = layout_of("Q", q, attrs.q_heads);
  if (!ql) return std::unexpected(std::move(ql.error()));
  auto kl = layout_of("K", k, attrs.kv_heads);
  if (!kl) return std::unexpected(std::move(kl.error()));
  auto vl = layout_of("V", v, attrs.kv_heads);
  if (!vl) return std::unexpected(std::move(vl.error()));
  AttentionPlan p;
  p.packed_heads = q.size() == 3;
  p.batch = q[0], p.q_heads = ql->heads, p.kv_heads = kl->heads, p.q_seq = ql->seq, p.kv_seq = kl->seq;
  p.head_size = ql->size, p.v_head_size = vl->size;
  p.q = ql->strides, p.k = kl->strides, p.v = vl->strides;
  if (k[0] != p.batch || v[0] != p.batch || vl->heads != p.kv_heads || vl->seq != p.kv_seq || kl->size != p.head_size)
    return fail(
        attention_misfit(fmt::format("Q {}, K {} and V {} do not fit together", shape_to_string(q), shape_to_string(k),
                                     shape_to_string(v)),
                         "they share the batch, K and V share heads and sequence length, and Q and K the head size"));
  if (p.kv_heads <= 0 || p.q_heads % p.kv_heads != 0)
    return fail(
        attention_misfit(fmt::format("{} query heads do not group over {} key/value heads", p.q_heads, p.kv_heads),
                         "q_num_heads must be a multiple of kv_num_heads"));
  if (past_key) {
    const Shape want_k{p.batch, p.kv_heads, past_key->size() == 4 ? (*past_key)[2] : 0, p.head_size};
    if (*past_key != want_k)
      return fail(attention_misfit(
          fmt::format("past_key has shape {}; expected {}", shape_to_string(*past_key), shape_to_string(want_k)),
          "past_key is [batch, kv_heads, past_seq, head_size]"));
    p.past_seq = want_k[2];
    const Shape want_v{p.batch, p.kv_heads, p.past_seq, p.v_head_size};
    if (!past_value || *past_value != want_v)
      return fail(
          attention_misfit(fmt::format("past_value has shape {}; expected {}",
                                       past_value ? shape_to_string(*past_value) : "none", shape_to_string(want_v)),
                           "past_value is [batch, kv_heads, past_seq, v_head_size], past_seq as in past_key"));
  }
  p.total_seq = p.past_seq + p.kv_seq;
  if (nonpad_kv_seqlen) {
    if (past_key)
      return fail(attention_misfit("nonpad_kv_seqlen is given with past_key and past_value",
                                   "nonpad_kv_seqlen describes an external cache passed as K and V"));
    if (*nonpad_kv_seqlen != Shape{p.batch})
      return fail(attention_misfit(
          fmt::format("nonpad_kv_seqlen has shape {}; expected [{}]", shape_to_string(*nonpad_kv_seqlen), p.batch),
          "nonpad_kv_seqlen holds one valid key count per batch entry"));
    p.nonpad_lengths = true;
  }
  p.scale = attrs.scale.value_or(static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_size))));
  if (p.packed_heads) {
    p.y_shape = {p.batch, p.q_seq, p.q_heads * p.v_head_size};
    p.y = {p.q_seq * p.q_heads * p.v_head_size, p.v_head_size, p.q_heads * p.v_head_size};
  } else {
    p.y_shape = {p.batch, p.q_heads, p.q_seq, p.v_head_size};
    p.y = {p.q_heads * p.q_seq * p.v_head_size, p.q_seq * p.v_head_size, p.v_head_size};
  }
  p.present_key_shape = {p.batch, p.kv_heads, p.total_seq, p.head_size};
  p.present_value_shape = {p.batch, p.kv_heads, p.total_seq, p.v_head_size};
  p.qk_shape = {p.batch, p.q_heads, p.q_seq, p.total_seq};
  if (mask) {
    if (mask->size() < 2 || mask->size() > 4)
      return fail(attention_misfit(fmt::format("attn_mask has shape {}", shape_to_string(*mask)),
                                   "attn_mask has rank 2 to 4 and broadcasts to [batch, q_heads, q_seq, total_seq]"));
    const std::size_t pad = 4 - mask->size();
    int64_t stride = 1;
    for (std::size_t d = 4; d-- > 0;) {
      const int64_t full = p.qk_shape[d];
      const int64_t dim = d < pad ? 1 : (*mask)[d - pad];
      if (dim != full && dim != 1)
        return fail(attention_misfit(
            fmt::format("attn_mask has shape {}, which does not broadcast to {}", shape_to_string(*mask),
                        shape_to_string(p.qk_shape)),
            "attn_mask broadcasts to [batch, q_heads, q_seq, total_seq], total_seq counting past_key"));
      p.mask_strides[d] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
  }
  return p;
}

Expected<void> check_nonpad_lengths(const AttentionPlan& plan, const int64_t* lengths) {
  for (int64_t b = 0; b < plan.batch; ++b)
    if (lengths[b] < 0 || lengths[b] > plan.total_seq)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Attention: nonpad_kv_seqlen[{}] is {}, outside [0, {}]", b, lengths[b], plan.total_seq),
                  "each entry counts the valid keys of its batch entry in K",
                  "give counts no larger than K's sequence length");
  return {};
}

}  // namespace nxrt
