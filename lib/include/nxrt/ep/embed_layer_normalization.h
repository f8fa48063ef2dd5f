// ONNX Runtime's com.microsoft EmbedLayerNormalization as every EP reads it: the embedding layer
// its transformer optimizer fuses in BERT-like models, per token (b, s)
//   e = word_embedding[input_ids[b, s]] + position_embedding[p] (+ segment_embedding[g])
//   output = (e - mean(e)) / sqrt(variance(e) + epsilon) * gamma + beta
// where p is position_ids[b or 0, s] when given ([batch, seq] or [1, seq]), else s, and g is
// segment_ids[b, s] (0 without segment_ids, as ONNX Runtime reads it). Optional outputs:
// mask_index (int32 [batch]: how many of mask[b, :] are exactly 1, as ONNX Runtime counts; zeros
// without a mask) and embedding_sum (e). Ids are int32, the tables, gamma and beta one type;
// epsilon defaults to 1e-12.
#pragma once

#include <cstdint>
#include <string_view>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// The inputs' positions.
inline constexpr std::size_t kEmbedInputIds = 0, kEmbedSegmentIds = 1, kEmbedWordTable = 2, kEmbedPositionTable = 3,
                             kEmbedSegmentTable = 4, kEmbedGamma = 5, kEmbedBeta = 6, kEmbedMask = 7,
                             kEmbedPositionIds = 8;

// Declines what no EP implements: position_embedding or gamma missing, tables, gamma and beta of
// more than one type, ids or the mask not int32, segment_ids without segment_embedding, ids, the
// mask or a table not 2-D (1-D position_ids crash ONNX Runtime 1.30). The EPs add their types.
KernelMatch check_embed_layer_normalization_node(const NodeContext& ctx);

// The sizes of one run, checked against each other.
struct EmbedLayerNormalizationPlan {
  int64_t batch = 0, seq = 0, hidden = 0;
  bool position_ids_per_batch = false;  // [batch, seq] position_ids (batch above 1); else one row
};

// The plan from the inputs' shapes (null: absent); an error names what does not fit.
struct EmbedLayerNormalizationShapes {
  const Shape* input_ids = nullptr;
  const Shape* segment_ids = nullptr;
  const Shape* word_table = nullptr;
  const Shape* position_table = nullptr;
  const Shape* segment_table = nullptr;
  const Shape* gamma = nullptr;
  const Shape* beta = nullptr;
  const Shape* mask = nullptr;
  const Shape* position_ids = nullptr;

  // A run's, from any context with has_input(i) and input(i) (the EPs' kernel and step contexts).
  template <class Context>
  static EmbedLayerNormalizationShapes of(const Context& ctx) {
    return {given_shape(ctx, kEmbedInputIds),     given_shape(ctx, kEmbedSegmentIds),
            given_shape(ctx, kEmbedWordTable),    given_shape(ctx, kEmbedPositionTable),
            given_shape(ctx, kEmbedSegmentTable), given_shape(ctx, kEmbedGamma),
            given_shape(ctx, kEmbedBeta),         given_shape(ctx, kEmbedMask),
            given_shape(ctx, kEmbedPositionIds)};
  }
};
Expected<EmbedLayerNormalizationPlan> plan_embed_layer_normalization(const EmbedLayerNormalizationShapes& shapes);

}  // namespace nxrt
