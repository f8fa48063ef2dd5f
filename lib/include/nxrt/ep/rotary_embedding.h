// RotaryEmbedding's geometry as every EP reads it, for ONNX's RotaryEmbedding-23 and ONNX
// Runtime's com.microsoft RotaryEmbedding: which elements of X rotate together, and which row of
// cos_cache and sin_cache rotates them. X is [batch, seq, heads * head_size]
// (rank 3, with the num_heads attribute) or [batch, heads, seq, head_size] (rank 4); the first
// rotary_dim channels of each head rotate in pairs (channel i with i + rotary_dim / 2, or, with
// interleaved=1, channel 2i with 2i + 1) by the angle of pair i, and the rest are copied.
#pragma once

#include <cstdint>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct RotaryEmbeddingPlan {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t head_size = 0;
  int64_t rotary_dim = 0;  // rotated channels per head (even, at most head_size)
  bool interleaved = false;
  // Element strides of X (and Y, which has X's shape) along batch, sequence and head.
  int64_t batch_stride = 0;
  int64_t seq_stride = 0;
  int64_t head_stride = 0;
  // Rows of cos_cache and sin_cache: positions (with position_ids, which then pick the row of
  // each token) or batch * seq (without, one row per token).
  int64_t cache_rows = 0;
  bool with_position_ids = false;
  // com.microsoft's position_ids of one value: the first token's position, each batch entry's
  // next tokens following (token s of an entry takes row position_ids[0] + s).
  bool first_position_only = false;

  int64_t half() const { return rotary_dim / 2; }
  // The element offsets, within a head, of pair i's two channels.
  int64_t first_of_pair(int64_t i) const { return interleaved ? 2 * i : i; }
  int64_t second_of_pair(int64_t i) const { return interleaved ? 2 * i + 1 : i + half(); }
};

// Declines inputs other than (X, cos_cache, sin_cache[, position_ids]), a negative or odd
// rotary_embedding_dim, X of rank other than 3 or 4, rank 3 without a positive num_heads, caches
// of the wrong rank for the presence of position_ids, and, where shapes are static, what
// plan_rotary_embedding would refuse.
KernelMatch check_rotary_embedding_node(const NodeContext& ctx);

// The plan for X, the caches and (when given) position_ids, from the node's attributes; an
// error names the shape that does not fit and what it must be.
Expected<RotaryEmbeddingPlan> plan_rotary_embedding(const AttributeMap& attrs, const Shape& x, const Shape& cos,
                                                    const Shape& sin, const Shape* position_ids);

// ONNX Runtime's com.microsoft RotaryEmbedding: inputs X, position_ids, cos_cache, sin_cache
// (in that order); position_ids int64 [batch, seq] or one value (first_position_only); a partial
// rotary_embedding_dim needs num_heads; a rank-4 X is [batch, heads, seq, head_size]; the caches
// are [positions, rotary_dim / 2]. Declines a missing input, position_ids not int64, caches of
// another type than X, and, where shapes are static, what plan_microsoft_rotary_embedding would
// refuse. The EPs add their dtypes.
KernelMatch check_microsoft_rotary_embedding_node(const NodeContext& ctx);
Expected<RotaryEmbeddingPlan> plan_microsoft_rotary_embedding(const AttributeMap& attrs, const Shape& x,
                                                              const Shape& position_ids, const Shape& cos,
                                                              const Shape& sin);

}  // namespace nxrt
