// ONNX Runtime's com.microsoft EmbedLayerNormalization, the embedding layer its transformer
// optimizer fuses in BERT-like models: per token (b, s)
//   e = word_embedding[input_ids[b, s]] + position_embedding[p] (+ segment_embedding[g])
//   output = (e - mean(e)) / sqrt(variance(e) + epsilon) * gamma + beta
// where p is position_ids[b or 0, s] when given ([batch, seq] or [1, seq]), else s, and g is
// segment_ids[b, s] (0 without segment_ids, as ONNX Runtime reads it). Optional outputs:
// mask_index (int32 [batch]: how many of mask[b, :] are exactly 1, as ONNX Runtime counts; zeros
// without a mask) and embedding_sum (e). Ids are int32, the tables, gamma and beta one type
// (float or float16, computed in float, statistics in double); epsilon defaults to 1e-12. An id
// outside its table is an error naming it.
#include <fmt/format.h>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/row_norm.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr std::size_t kInputIds = 0, kSegmentIds = 1, kWordTable = 2, kPositionTable = 3, kSegmentTable = 4,
                      kGamma = 5, kBeta = 6, kMask = 7, kPositionIds = 8;

KernelMatch check_embed_layer_norm(const NodeContext& ctx) {
  const DType t = ctx.input_dtype(kWordTable);
  NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat16,
               "EmbedLayerNormalization: word_embedding is {}; the cpu EP implements float and float16", dtype_name(t));
  NXRT_REQUIRE(ctx.has_input(kPositionTable) && ctx.has_input(kGamma),
               "EmbedLayerNormalization: position_embedding (input 3) and gamma (input 5) are required");
  for (std::size_t i : {kPositionTable, kSegmentTable, kGamma, kBeta})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == t,
                 "EmbedLayerNormalization: input {} is {} and word_embedding {}; they must be one type", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(t));
  for (std::size_t i : {kInputIds, kSegmentIds, kMask, kPositionIds})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == DType::kInt32,
                 "EmbedLayerNormalization: input {} is {}; ids and the mask are int32", i,
                 dtype_name(ctx.input_dtype(i)));
  NXRT_REQUIRE(!ctx.has_input(kSegmentIds) || ctx.has_input(kSegmentTable),
               "EmbedLayerNormalization: segment_ids (input 1) is given without segment_embedding (input 4); give "
               "both or neither");
  for (std::size_t i : {kInputIds, kSegmentIds, kMask, kPositionIds, kWordTable, kPositionTable, kSegmentTable})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_rank(i).value_or(2) == 2,
                 "EmbedLayerNormalization: input {} has rank {}; ids, the mask and the tables are 2-D", i,
                 ctx.input_rank(i).value_or(2));
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

// The sizes of one run, checked against each other.
struct EmbedPlan {
  int64_t batch = 0, seq = 0, hidden = 0;
  bool position_ids_per_batch = false;
};

std::unexpected<Error> embed_error(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("EmbedLayerNormalization: {}", what), std::move(why),
              "give tensors of the shapes ONNX Runtime's definition of the op states");
}

Expected<EmbedPlan> plan_embedding(const KernelContext& ctx) {
  EmbedPlan p;
  const Shape& ids = ctx.input(kInputIds).shape();
  const Shape& words = ctx.input(kWordTable).shape();
  if (ids.size() != 2) return embed_error(fmt::format("input_ids has shape {}", shape_to_string(ids)),
                                          "input_ids is [batch, sequence]");
  if (words.size() != 2) return embed_error(fmt::format("word_embedding has shape {}", shape_to_string(words)),
                                            "word_embedding is [vocabulary, hidden]");
  p.batch = ids[0];
  p.seq = ids[1];
  p.hidden = words[1];
  for (std::size_t i : {kSegmentIds, kMask})
    if (ctx.has_input(i) && ctx.input(i).shape() != ids)
      return embed_error(fmt::format("input {} has shape {} and input_ids {}", i,
                                     shape_to_string(ctx.input(i).shape()), shape_to_string(ids)),
                         "segment_ids and mask have input_ids' shape");
  for (std::size_t i : {kPositionTable, kSegmentTable})
    if (ctx.has_input(i) && (ctx.input(i).shape().size() != 2 || ctx.input(i).shape()[1] != p.hidden))
      return embed_error(fmt::format("input {} has shape {}", i, shape_to_string(ctx.input(i).shape())),
                         fmt::format("the embedding tables are [rows, {}], as word_embedding", p.hidden));
  for (std::size_t i : {kGamma, kBeta})
    if (ctx.has_input(i) && ctx.input(i).shape() != Shape{p.hidden})
      return embed_error(fmt::format("input {} has shape {}", i, shape_to_string(ctx.input(i).shape())),
                         fmt::format("gamma and beta are [{}], one value per hidden element", p.hidden));
  if (ctx.has_input(kPositionIds)) {
    const Shape& pos = ctx.input(kPositionIds).shape();
    if (pos.size() != 2 || (pos[0] != p.batch && pos[0] != 1) || pos[1] != p.seq)
      return embed_error(fmt::format("position_ids has shape {} for input_ids {}", shape_to_string(pos),
                                     shape_to_string(ids)),
                         "position_ids is [batch, sequence] or [1, sequence]");
    p.position_ids_per_batch = pos[0] == p.batch && p.batch != 1;
  }
  return p;
}

// The row ids[i] of a table of `rows`, or an error naming the input, the token and the value.
Expected<int64_t> table_row(const int32_t* ids, int64_t i, int64_t seq, int64_t rows, std::string_view input,
                            std::string_view table) {
  const int64_t id = ids[i];
  if (id >= 0 && id < rows) return id;
  return fail(ErrorCode::kRuntime,
              fmt::format("EmbedLayerNormalization: {}[{}][{}] is {}, outside the {} rows of {}", input, i / seq,
                          i % seq, id, rows, table),
              "each id picks a row of its embedding table", fmt::format("give {} in [0, {})", input, rows));
}

class EmbedLayerNormKernel final : public Kernel {
 public:
  explicit EmbedLayerNormKernel(float epsilon) : epsilon_(epsilon) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_embedding(ctx);
    if (!plan) return std::unexpected(plan.error());
    if (ctx.input(kWordTable).dtype() == DType::kFloat16) return run<Half>(ctx, *plan);
    return run<float>(ctx, *plan);
  }
  std::string_view variant() const override { return "rows"; }

 private:
  // Each token's three table rows (segment -1 without a segment table), ids checked first so
  // that a bad one fails before any output is written.
  struct TokenRows {
    std::vector<int64_t> word, position, segment;
  };

  static Expected<TokenRows> token_rows(const KernelContext& ctx, const EmbedPlan& p) {
    const int64_t tokens = p.batch * p.seq;
    TokenRows rows{std::vector<int64_t>(static_cast<std::size_t>(tokens)),
                   std::vector<int64_t>(static_cast<std::size_t>(tokens)),
                   std::vector<int64_t>(static_cast<std::size_t>(tokens), -1)};
    const int32_t* words = ctx.input(kInputIds).data_as<int32_t>();
    const int32_t* segments = ctx.has_input(kSegmentIds) ? ctx.input(kSegmentIds).data_as<int32_t>() : nullptr;
    const int32_t* positions = ctx.has_input(kPositionIds) ? ctx.input(kPositionIds).data_as<int32_t>() : nullptr;
    const int64_t word_rows = ctx.input(kWordTable).shape()[0];
    const int64_t position_rows = ctx.input(kPositionTable).shape()[0];
    const bool segment_table = ctx.has_input(kSegmentTable);
    const int64_t segment_rows = segment_table ? ctx.input(kSegmentTable).shape()[0] : 0;
    const std::vector<int32_t> own_positions = [&] {
      std::vector<int32_t> v(static_cast<std::size_t>(p.seq));
      for (int64_t s = 0; s < p.seq; ++s) v[static_cast<std::size_t>(s)] = static_cast<int32_t>(s);
      return v;
    }();
    for (int64_t i = 0; i < tokens; ++i) {
      const auto at = static_cast<std::size_t>(i);
      auto word = table_row(words, i, p.seq, word_rows, "input_ids", "word_embedding");
      if (!word) return std::unexpected(word.error());
      rows.word[at] = *word;
      const int64_t s = i % p.seq;
      const int32_t* position_ids = positions ? positions : own_positions.data();
      auto position = table_row(position_ids, positions && p.position_ids_per_batch ? i : s, p.seq, position_rows,
                                positions ? "position_ids" : "the position (no position_ids)", "position_embedding");
      if (!position) return std::unexpected(position.error());
      rows.position[at] = *position;
      if (!segment_table) continue;
      if (!segments) {
        if (segment_rows < 1) return embed_error("segment_embedding has no rows", "without segment_ids, every token "
                                                 "adds segment_embedding's first row");
        rows.segment[at] = 0;
        continue;
      }
      auto segment = table_row(segments, i, p.seq, segment_rows, "segment_ids", "segment_embedding");
      if (!segment) return std::unexpected(segment.error());
      rows.segment[at] = *segment;
    }
    return rows;
  }

  template <class T>
  Expected<void> run(KernelContext& ctx, const EmbedPlan& p) const {
    auto rows = token_rows(ctx, p);
    if (!rows) return std::unexpected(rows.error());
    const DType t = ctx.input(kWordTable).dtype();
    const Shape out_shape{p.batch, p.seq, p.hidden};
    auto y = ctx.output(0, t, out_shape);
    if (!y) return std::unexpected(y.error());
    if (ctx.wants_output(1)) {
      auto mask_index = ctx.output(1, DType::kInt32, {p.batch});
      if (!mask_index) return std::unexpected(mask_index.error());
      int32_t* counts = mask_index->mut_as<int32_t>();
      const int32_t* mask = ctx.has_input(kMask) ? ctx.input(kMask).data_as<int32_t>() : nullptr;
      for (int64_t b = 0; b < p.batch; ++b) {
        counts[b] = 0;
        if (mask)
          for (int64_t s = 0; s < p.seq; ++s) counts[b] += mask[b * p.seq + s] == 1 ? 1 : 0;
      }
    }
    T* sum_out = nullptr;
    if (ctx.wants_output(2)) {
      auto sum = ctx.output(2, t, out_shape);
      if (!sum) return std::unexpected(sum.error());
      sum_out = sum->template mut_as<T>();
    }
    const std::vector<float> gamma = float_or_half_as_floats(ctx.input(kGamma));
    const std::vector<float> beta =
        ctx.has_input(kBeta) ? float_or_half_as_floats(ctx.input(kBeta)) : std::vector<float>{};
    const T* words = ctx.input(kWordTable).data_as<T>();
    const T* positions = ctx.input(kPositionTable).data_as<T>();
    const T* segments = ctx.has_input(kSegmentTable) ? ctx.input(kSegmentTable).data_as<T>() : nullptr;
    T* out = y->template mut_as<T>();
    const int64_t h = p.hidden;
    ctx.parallel().for_range(p.batch * p.seq, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(h, 1)),
                             [&](int64_t i0, int64_t i1) {
      std::vector<float> e(static_cast<std::size_t>(h));
      for (int64_t i = i0; i < i1; ++i) {
        const auto at = static_cast<std::size_t>(i);
        const T* w = words + rows->word[at] * h;
        const T* pos = positions + rows->position[at] * h;
        for (int64_t d = 0; d < h; ++d)
          e[static_cast<std::size_t>(d)] = static_cast<float>(w[d]) + static_cast<float>(pos[d]);
        if (rows->segment[at] >= 0) {
          const T* seg = segments + rows->segment[at] * h;
          for (int64_t d = 0; d < h; ++d) e[static_cast<std::size_t>(d)] += static_cast<float>(seg[d]);
        }
        if (sum_out)
          for (int64_t d = 0; d < h; ++d) sum_out[i * h + d] = static_cast<T>(e[static_cast<std::size_t>(d)]);
        normalize_row_to(e.data(), h, row_statistics(e.data(), h, epsilon_, false), gamma, beta, out + i * h);
      }
    });
    return {};
  }

  float epsilon_;
};

}  // namespace

std::vector<KernelDef> embed_layer_normalization_kernels() {
  return {KernelDef{{"com.microsoft", "EmbedLayerNormalization", 1}, 0, check_embed_layer_norm,
                    [](const NodeContext& ctx) {
                      return make_kernel<EmbedLayerNormKernel>(ctx.attrs().float_or("epsilon", 1e-12f));
                    }}};
}

}  // namespace nxrt::cpu
