// EmbedLayerNormalization's claim check and run plan (nxrt/ep/embed_layer_normalization.h).
#include "nxrt/ep/embed_layer_normalization.h"

#include <fmt/format.h>

#include <string>

namespace nxrt {
namespace {

std::unexpected<Error> embed_misfit(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("EmbedLayerNormalization: {}", what), std::move(why),
              "give tensors of the shapes ONNX Runtime's definition of the op states");
}

}  // namespace

KernelMatch check_embed_layer_normalization_node(const NodeContext& ctx) {
  const DType t = ctx.input_dtype(kEmbedWordTable);
  NXRT_REQUIRE(ctx.has_input(kEmbedPositionTable) && ctx.has_input(kEmbedGamma),
               "EmbedLayerNormalization: position_embedding (input 3) and gamma (input 5) are required");
  for (std::size_t i : {kEmbedPositionTable, kEmbedSegmentTable, kEmbedGamma, kEmbedBeta})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == t,
                 "EmbedLayerNormalization: input {} is {} and word_embedding {}; they must be one type", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(t));
  for (std::size_t i : {kEmbedInputIds, kEmbedSegmentIds, kEmbedMask, kEmbedPositionIds})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == DType::kInt32,
                 "EmbedLayerNormalization: input {} is {}; ids and the mask are int32", i,
                 dtype_name(ctx.input_dtype(i)));
  NXRT_REQUIRE(!ctx.has_input(kEmbedSegmentIds) || ctx.has_input(kEmbedSegmentTable),
               "EmbedLayerNormalization: segment_ids (input 1) is given without segment_embedding (input 4); give "
               "both or neither");
  for (std::size_t i : {kEmbedInputIds, kEmbedSegmentIds, kEmbedMask, kEmbedPositionIds, kEmbedWordTable,
                        kEmbedPositionTable, kEmbedSegmentTable})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_rank(i).value_or(2) == 2,
                 "EmbedLayerNormalization: input {} has rank {}; ids, the mask and the tables are 2-D", i,
                 ctx.input_rank(i).value_or(2));
  return KernelMatch::supported();
}

Expected<EmbedLayerNormalizationPlan> plan_embed_layer_normalization(const EmbedLayerNormalizationShapes& in) {
  EmbedLayerNormalizationPlan p;
  const Shape& ids = *in.input_ids;
  const Shape& words = *in.word_table;
  if (ids.size() != 2)
    return embed_misfit(fmt::format("input_ids has shape {}", shape_to_string(ids)), "input_ids is [batch, sequence]");
  if (words.size() != 2)
    return embed_misfit(fmt::format("word_embedding has shape {}", shape_to_string(words)),
                        "word_embedding is [vocabulary, hidden]");
  p.batch = ids[0];
  p.seq = ids[1];
  p.hidden = words[1];
  for (auto [i, s] : {std::pair{kEmbedSegmentIds, in.segment_ids}, std::pair{kEmbedMask, in.mask}})
    if (s && *s != ids)
      return embed_misfit(
          fmt::format("input {} has shape {} and input_ids {}", i, shape_to_string(*s), shape_to_string(ids)),
          "segment_ids and mask have input_ids' shape");
  for (auto [i, s] :
       {std::pair{kEmbedPositionTable, in.position_table}, std::pair{kEmbedSegmentTable, in.segment_table}})
    if (s && (s->size() != 2 || (*s)[1] != p.hidden))
      return embed_misfit(fmt::format("input {} has shape {}", i, shape_to_string(*s)),
                          fmt::format("the embedding tables are [rows, {}], as word_embedding", p.hidden));
  for (auto [i, s] : {std::pair{kEmbedGamma, in.gamma}, std::pair{kEmbedBeta, in.beta}})
    if (s && *s != Shape{p.hidden})
      return embed_misfit(fmt::format("input {} has shape {}", i, shape_to_string(*s)),
                          fmt::format("gamma and beta are [{}], one value per hidden element", p.hidden));
  if (in.position_ids) {
    const Shape& pos = *in.position_ids;
    if (pos.size() != 2 || (pos[0] != p.batch && pos[0] != 1) || pos[1] != p.seq)
      return embed_misfit(
          fmt::format("position_ids has shape {} for input_ids {}", shape_to_string(pos), shape_to_string(ids)),
          "position_ids is [batch, sequence] or [1, sequence]");
    p.position_ids_per_batch = pos[0] == p.batch && p.batch != 1;
  }
  if (in.segment_table && !in.segment_ids && (*in.segment_table)[0] < 1)
    return embed_misfit("segment_embedding has no rows", "without segment_ids, every token adds segment_embedding's "
                                                         "first row");
  return p;
}

}  // namespace nxrt
