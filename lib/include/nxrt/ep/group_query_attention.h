// ONNX Runtime's com.microsoft GroupQueryAttention as every EP reads it: the attention of its
// GenAI language models, causal attention of num_heads query heads over kv_num_heads key/value
// heads with a KV cache.
//
// Inputs: query [B, S, num_heads * H] (or Q, K and V packed along the last dim, key and value
// then absent), key and value [B, S, kv_num_heads * H], past_key and past_value [B, kv_num_heads,
// P, H] (the cache, P rows of which each entry uses its first ones), seqlens_k [B] int32 (each
// entry's total length - 1), total_sequence_length int32 (the longest total), cos_cache and
// sin_cache [positions, rotary_dim / 2] (with do_rotary). Outputs: output [B, S, num_heads * H],
// present_key and present_value [B, kv_num_heads, max(total_sequence_length, P), H].
//
// An entry b of total length L = seqlens_k[b] + 1 holds L - S cached rows (none in a first
// prompt, where S equals total_sequence_length), which present takes from past; the new keys and
// values follow them, the rest of present is zeros. With do_rotary the new queries and keys are
// rotated at positions L - S + s (0 + s in a first prompt), pairs (i, i + rotary_dim / 2) or,
// rotary_interleaved, (2i, 2i + 1), and stored rotated. Query s sees the keys up to its own
// position, L - S + s, and with local_window_size W > 0 only the last W of them (its own included,
// as ONNX Runtime 1.30 counts); scores are scale (1 / sqrt(H) by default) * q.k, softcap *
// tanh(score / softcap) with softcap > 0, then softmax (smooth_softmax: one more logit of 0 in the
// denominator).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

// The inputs' positions.
inline constexpr std::size_t kGqaQuery = 0, kGqaKey = 1, kGqaValue = 2, kGqaPastKey = 3, kGqaPastValue = 4,
                             kGqaSeqlensK = 5, kGqaTotal = 6, kGqaCos = 7, kGqaSin = 8;

struct GroupQueryAttentionAttrs {
  int64_t heads = 0, kv_heads = 0, local_window = -1;
  float scale = 0, softcap = 0;  // scale 0: 1 / sqrt(head_size)
  bool rotary = false, interleaved = false, smooth_softmax = false;

  static GroupQueryAttentionAttrs of(const AttributeMap& attrs);
  float scale_for(int64_t head_size) const;
};

// The geometry of one run.
struct GroupQueryAttentionPlan {
  int64_t batch = 0, seq = 0, head_size = 0, past_rows = 0, total = 0, present_rows = 0, rotary_dim = 0;
  bool packed = false, first_prompt = false;
  std::vector<int64_t> lengths;  // each entry's total length, seqlens_k + 1
  std::vector<int64_t> cached;   // each entry's cached rows (its length - seq, or 0 in a first prompt)

  // Elements between two tokens of query (its width: num_heads heads, or packed all three).
  int64_t query_width(const GroupQueryAttentionAttrs& a) const {
    return (packed ? a.heads + 2 * a.kv_heads : a.heads) * head_size;
  }
  // The keys query s of entry b sees, [begin, end): up to its own position, the last
  // local_window of them.
  std::pair<int64_t, int64_t> visible_keys(const GroupQueryAttentionAttrs& a, int64_t b, int64_t s) const;
};

// Declines what no EP implements: heads that do not group, key without value, past_key without
// past_value, seqlens_k or total_sequence_length missing or not int32, rotary caches missing with
// do_rotary, position_ids, attention_bias, head_sink, a quantized cache, q/k norm weights,
// output_qk, causal 0, sliding_window_cache, a negative softcap, query of rank other than 3, and
// key, value, the cache or the rotary caches of another type than query; `ep` names the EP in the
// reasons. The EPs add their types.
KernelMatch check_group_query_attention_node(const NodeContext& ctx, std::string_view ep);

// The plan from the inputs' shapes (null: absent) and the values of seqlens_k and
// total_sequence_length (int32 tensors on the host); an error names what does not fit and what
// it must be.
struct GroupQueryAttentionShapes {
  const Shape* query = nullptr;
  const Shape* key = nullptr;
  const Shape* value = nullptr;
  const Shape* past_key = nullptr;
  const Shape* past_value = nullptr;
  const Shape* cos = nullptr;
  const Shape* sin = nullptr;

  // A run's, from any context with has_input(i) and input(i) (the EPs' kernel and step contexts).
  template <class Context>
  static GroupQueryAttentionShapes of(const Context& ctx) {
    return {given_shape(ctx, kGqaQuery),   given_shape(ctx, kGqaKey),       given_shape(ctx, kGqaValue),
            given_shape(ctx, kGqaPastKey), given_shape(ctx, kGqaPastValue), given_shape(ctx, kGqaCos),
            given_shape(ctx, kGqaSin)};
  }
};
Expected<GroupQueryAttentionPlan> plan_group_query_attention(const GroupQueryAttentionAttrs& attrs,
                                                             const GroupQueryAttentionShapes& shapes,
                                                             const Tensor& seqlens_k,
                                                             const Tensor& total_sequence_length);

}  // namespace nxrt
