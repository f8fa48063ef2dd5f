// Attention's geometry (opsets 23 and 24) as every EP reads it: the heads, sequence lengths and element
// strides of Q, K, V and Y, the shapes of the four outputs, and how attn_mask broadcasts.
//
// Q is [batch, q_heads, q_seq, head_size] or, packed, [batch, q_seq, q_heads * head_size]
// (rank 3, with the q_num_heads and kv_num_heads attributes); K and V likewise with kv_heads
// and kv_seq (V's head size may differ). past_key and past_value ([batch, kv_heads, past_seq,
// ...]) go before K and V, giving present_key and present_value of total_seq = past_seq + kv_seq
// rows. Query head h reads key/value head h / (q_heads / kv_heads) (grouped-query attention).
// Per (batch, head): scores = scale * Q K^T; softcap * tanh(scores / softcap) when softcap > 0;
// + attn_mask (a bool mask adds 0 or -inf) and -inf on the keys after visible_keys(); softmax over
// the keys; Y = probabilities V. qk_matmul_output_mode picks which of the scores (0: scaled
// product, 1: after softcap, 2: after the mask, 3: after softmax) output 3 holds. Attention-24's
// nonpad_kv_seqlen (an external cache, [batch] valid key counts) hides each entry's padding keys
// and aligns is_causal to its last valid key.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct AttentionAttrs {
  bool causal = false;
  int64_t q_heads = 0;   // 0: read from a rank-4 Q
  int64_t kv_heads = 0;  // 0: read from a rank-4 K
  std::optional<float> scale;
  float softcap = 0;
  int64_t qk_output_mode = 0;
  // softmax_precision float or double: the scores enter softmax unrounded (float16 and bfloat16
  // inputs otherwise round them to their type first, as the function body does).
  bool softmax_in_float = false;

  static AttentionAttrs of(const AttributeMap& attrs);
};

// Element strides of a tensor seen as [batch, heads, seq, channel] (the channel stride is 1).
struct HeadStrides {
  int64_t batch = 0;
  int64_t head = 0;
  int64_t seq = 0;
};

struct AttentionPlan {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  int64_t q_seq = 0;
  int64_t kv_seq = 0;
  int64_t past_seq = 0;
  int64_t total_seq = 0;
  int64_t head_size = 0;
  int64_t v_head_size = 0;
  bool packed_heads = false;  // rank-3 Q, K, V and Y
  float scale = 1;
  HeadStrides q, k, v, y;
  Shape y_shape, present_key_shape, present_value_shape, qk_shape;
  // Strides of attn_mask broadcast to [batch, q_heads, q_seq, total_seq] (0 along broadcast dims).
  std::array<int64_t, 4> mask_strides{};
  bool nonpad_lengths = false;  // Attention-24's nonpad_kv_seqlen is given

  // The key/value head that query head `q_head` attends with.
  int64_t kv_head_of(int64_t q_head) const { return q_head / (q_heads / kv_heads); }
  // Present key/value rows are [batch, kv_heads, total_seq, size] (contiguous).
  HeadStrides present_strides(int64_t size) const { return {kv_heads * total_seq * size, total_seq * size, size}; }

  // How many keys query `s` of a batch entry with `valid` keys (its nonpad_kv_seqlen, else
  // total_seq) sees: they are a prefix. Hidden are the padding keys from `valid` on, and with
  // is_causal the keys after the query's own position (past_seq + s, or valid - q_seq + s with
  // nonpad_kv_seqlen).
  int64_t visible_keys(bool causal, int64_t valid, int64_t s) const {
    const int64_t seen = causal ? s + (nonpad_lengths ? valid - q_seq : past_seq) + 1 : valid;
    return std::clamp<int64_t>(std::min(valid, seen), 0, total_seq);
  }
};

// Declines inputs other than (Q, K, V[, attn_mask[, past_key, past_value[, nonpad_kv_seqlen (opset
// 24)]]]), nonpad_kv_seqlen with past_key or of a type other than int64, more than 4
// outputs, past_key without past_value, Q, K and V of different ranks or ranks other than 3 and
// 4, rank 3 without positive q_num_heads and kv_num_heads, a qk_matmul_output_mode other than
// 0 to 3, a negative softcap, a softmax_precision that is not a float type, attn_mask of rank
// outside 2 to 4 or of a type other than bool and Q's, and, where shapes are static, what
// plan_attention would refuse. Where they are static, the verdict carries the cost of the two
// products and of the bytes read and written.
KernelMatch check_attention_node(const NodeContext& ctx);

// The plan for the inputs' shapes (mask, past_key, past_value and nonpad_kv_seqlen: nullptr when
// absent); an error names the shape that does not fit.
Expected<AttentionPlan> plan_attention(const AttentionAttrs& attrs, const Shape& q, const Shape& k, const Shape& v,
                                       const Shape* mask, const Shape* past_key, const Shape* past_value,
                                       const Shape* nonpad_kv_seqlen = nullptr);

// The run-time check of nonpad_kv_seqlen's values: each in [0, total_seq].
Expected<void> check_nonpad_lengths(const AttentionPlan& plan, const int64_t* lengths);

}  // namespace nxrt
