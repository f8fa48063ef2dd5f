// The attention of ONNX Runtime's com.microsoft Attention and MultiHeadAttention (its BERT- and
// GPT-2-like models) as every EP reads it: per (batch, head)
//   scores = attention_bias + mask term + scale * Q K^T      (the bias and mask are not scaled)
//   Y = softmax(scores over every key) V
// The mask term is mask_filter_value where the int32 mask hides a key (a finite value: a query
// that sees no key gets the probabilities of no mask, as in ONNX Runtime) and 0 elsewhere; causal
// attention gives the keys after a query's own position the lowest float instead.
//
// Attention projects Q, K and V with one product of the input and merged weights:
//   QKV = input [batch, seq, in] @ weights [in, D + D + Dv] + bias,
// columns Q | K | V with each head's contiguous; past ([2, batch, heads, past, head_size]) and the
// new keys and values make present ([2, batch, heads, past + seq, head_size]).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// The forms of an int32 mask over the keys that ONNX Runtime's BERT attention ops read.
enum class KeyMaskForm {
  kNone,
  kKeyLengths,  // [batch] (or [3 * batch + 2], whose first batch values are read): keys t < length
  kEndStart,    // [2 * batch]: ends, then starts; keys start <= t < end
  kRaw2D,       // [batch, total]: keys whose value is above 0
  kRaw3D,       // [batch, sequence, total]: per query, keys whose value is above 0
};

// The form of a mask of shape `mask`, or an error naming `op` when it is none of them for those
// sizes. `end_start`: [2 * batch] reads as ends and starts (Attention; MultiHeadAttention refuses
// it). `dummy`: a [batch or 1, 1] mask means no mask (Attention).
Expected<KeyMaskForm> bert_key_mask_form(std::string_view op, const Shape& mask, int64_t batch, int64_t q_seq,
                                         int64_t total, bool end_start, bool dummy);

// attention_bias [batch or 1, heads or 1, q_seq, total]: its strides (0 where broadcast), or an
// error naming `op` when its shape differs.
struct AttentionBiasStrides {
  int64_t batch = 0, head = 0;
};
Expected<AttentionBiasStrides> bert_attention_bias_strides(std::string_view op, const Shape& bias, int64_t batch,
                                                           int64_t heads, int64_t q_seq, int64_t total);

// com.microsoft Attention's (and QAttention's) attributes.
struct MicrosoftAttentionAttrs {
  int64_t heads = 0;
  bool causal = false;                // unidirectional
  std::vector<int64_t> hidden_sizes;  // qkv_hidden_sizes, or empty: three equal thirds
  float scale = 0.f;                  // 0: 1 / sqrt(head_size)
  float mask_filter_value = -10000.f;

  static MicrosoftAttentionAttrs of(const AttributeMap& attrs);
};

// Where Attention (mask 3, past 4, past_sequence_length 6) and QAttention (mask 5, past 8) have
// the inputs their family check reads.
struct MicrosoftAttentionInputs {
  std::string_view op;
  std::size_t mask, past;
  std::optional<std::size_t> past_sequence_length;
};

// Declines what no EP implements of Attention and QAttention: weights missing, a mask_index not
// int32 or of rank 4 (Megatron's), num_heads not positive, do_rotary, past_present_share_buffer
// with a past, past_sequence_length, qkv_hidden_sizes that are not 3 multiples of num_heads with Q's
// and K's equal (and V's too with past or present), input not [batch, seq, in] or weights not 2-D;
// `ep` names the EP in the reasons. The EPs add their types.
KernelMatch check_microsoft_attention_family(const NodeContext& ctx, const MicrosoftAttentionInputs& in,
                                             std::string_view ep);

// The sizes of one run of Attention or QAttention (`op`), from input's, weights', bias' and
// past's shapes (null: absent); an error names the shape that does not fit.
struct MicrosoftAttentionPlan {
  int64_t batch = 0, seq = 0, in = 0, columns = 0, hidden = 0, v_hidden = 0, past = 0;
  int64_t head_size(const MicrosoftAttentionAttrs& a) const { return hidden / a.heads; }
  int64_t v_head_size(const MicrosoftAttentionAttrs& a) const { return v_hidden / a.heads; }
  float scale(const MicrosoftAttentionAttrs& a) const;
};
Expected<MicrosoftAttentionPlan> plan_microsoft_attention(std::string_view op, const MicrosoftAttentionAttrs& attrs,
                                                          const Shape& input, const Shape& weights,
                                                          const Shape* bias, const Shape* past);

// ---- MultiHeadAttention ----
// query [batch, seq, D], key and value [batch, kv_seq, D] and [batch, kv_seq, Dv] (bias' three
// parts added), or key and value already split into heads [batch, heads, kv_seq, head_size] (a
// cross-attention cache: only bias' Q part is added, as ONNX Runtime reads it), or the packed forms
// ONNX Runtime's CUDA EP reads: query [batch, seq, heads, 3, head_size] holding Q, K and V, or key
// [batch, kv_seq, heads, 2, head_size] holding K and V (no bias with either); past_key and
// past_value [batch, heads, past, head_size] before the new keys. Outputs: output [batch, seq, Dv],
// present_key and present_value (past and new), qk (the scores before softmax). key_padding_mask:
// key lengths [batch] (or [3 * batch + 2]), raw masks [batch, total] and [batch, seq, total].
inline constexpr std::size_t kMhaQuery = 0, kMhaKey = 1, kMhaValue = 2, kMhaBias = 3, kMhaMask = 4,
                             kMhaAttentionBias = 5, kMhaPastKey = 6, kMhaPastValue = 7, kMhaPastSequenceLength = 8,
                             kMhaCacheIndirection = 9;

struct MultiHeadAttentionAttrs {
  int64_t heads = 0;
  bool causal = false;  // unidirectional
  float scale = 0.f;    // 0: 1 / sqrt(head_size)
  float mask_filter_value = -10000.f;

  static MultiHeadAttentionAttrs of(const AttributeMap& attrs);
};

// Declines what no EP implements: num_heads not positive, query of rank other than 3 (or 5,
// packed QKV), key and value given in a combination none of the forms has, a bias with packed
// inputs, past_sequence_length and cache_indirection (beam search), past_key without past_value,
// a key_padding_mask not int32; `ep` names the EP in the reasons. The EPs add their types.
KernelMatch check_multi_head_attention_node(const NodeContext& ctx, std::string_view ep);

// Where one of Q, K and V's heads are in the input that holds them: an element offset and strides
// along batch, head and sequence (the channel stride is 1).
struct HeadView {
  int64_t offset = 0, batch = 0, head = 0, seq = 0;
};

// The sizes and layout of one run.
struct MultiHeadAttentionPlan {
  int64_t batch = 0, seq = 0, kv_seq = 0, past = 0, hidden = 0, v_hidden = 0, head_size = 0, v_head_size = 0;
  enum class Layout {
    kSeparate,  // key and value [batch, kv_seq, hidden]
    kInHeads,   // key and value [batch, heads, kv_seq, head_size]
    kPackedKv,  // key [batch, kv_seq, heads, 2, head_size]
    kPackedQkv  // query [batch, seq, heads, 3, head_size]
  };
  Layout layout = Layout::kSeparate;
  int64_t heads = 0;
  int64_t total() const { return past + kv_seq; }
  float scale(const MultiHeadAttentionAttrs& a) const;
  // The new heads: Q in query; K in key (query when packed QKV); V in value (query or key when
  // packed).
  HeadView query_heads() const;
  HeadView key_heads() const;
  HeadView value_heads() const;
};

// The plan from the inputs' shapes (null: absent); an error names what does not fit.
struct MultiHeadAttentionShapes {
  const Shape* query = nullptr;
  const Shape* key = nullptr;
  const Shape* value = nullptr;
  const Shape* bias = nullptr;
  const Shape* past_key = nullptr;
  const Shape* past_value = nullptr;

  // A run's, from any context with has_input(i) and input(i) (the EPs' kernel and step contexts).
  template <class Context>
  static MultiHeadAttentionShapes of(const Context& ctx) {
    return {given_shape(ctx, kMhaQuery), given_shape(ctx, kMhaKey),     given_shape(ctx, kMhaValue),
            given_shape(ctx, kMhaBias),  given_shape(ctx, kMhaPastKey), given_shape(ctx, kMhaPastValue)};
  }
};
Expected<MultiHeadAttentionPlan> plan_multi_head_attention(const MultiHeadAttentionAttrs& attrs,
                                                           const MultiHeadAttentionShapes& shapes);

}  // namespace nxrt
