// ONNX Runtime's com.microsoft EmbedLayerNormalization (what it computes, and its claim check and
// run plan, in nxrt/ep/embed_layer_normalization.h): float and float16, computed in float,
// statistics in double. An id outside its table is an error naming it, before any output is
// written.
#include <fmt/format.h>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/row_norm.h"
#include "kernels/kernels.h"
#include "nxrt/ep/embed_layer_normalization.h"

namespace nxrt::cpu {
namespace {

using EmbedPlan = EmbedLayerNormalizationPlan;

KernelMatch check_embed_layer_norm(const NodeContext& ctx) {
  const DType t = ctx.input_dtype(kEmbedWordTable);
  NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat16,
               "EmbedLayerNormalization: word_embedding is {}; the cpu EP implements float and float16", dtype_name(t));
  NXRT_REQUIRE_MATCH(check_embed_layer_normalization_node(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, 8));
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
    auto plan = plan_embed_layer_normalization(EmbedLayerNormalizationShapes::of(ctx));
    if (!plan) return std::unexpected(plan.error());
    if (ctx.input(kEmbedWordTable).dtype() == DType::kFloat16) return run<Half>(ctx, *plan);
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
    const int32_t* words = ctx.input(kEmbedInputIds).data_as<int32_t>();
    auto ids_of = [&](std::size_t i) { return ctx.has_input(i) ? ctx.input(i).data_as<int32_t>() : nullptr; };
    const int32_t* segments = ids_of(kEmbedSegmentIds);
    const int32_t* positions = ids_of(kEmbedPositionIds);
    const int64_t word_rows = ctx.input(kEmbedWordTable).shape()[0];
    const int64_t position_rows = ctx.input(kEmbedPositionTable).shape()[0];
    const bool segment_table = ctx.has_input(kEmbedSegmentTable);
    const int64_t segment_rows = segment_table ? ctx.input(kEmbedSegmentTable).shape()[0] : 0;
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
      if (!segments) {  // the plan checked that the table has a first row
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
    const DType t = ctx.input(kEmbedWordTable).dtype();
    const Shape out_shape{p.batch, p.seq, p.hidden};
    auto y = ctx.output(0, t, out_shape);
    if (!y) return std::unexpected(y.error());
    if (ctx.wants_output(1)) {
      auto mask_index = ctx.output(1, DType::kInt32, {p.batch});
      if (!mask_index) return std::unexpected(mask_index.error());
      int32_t* counts = mask_index->mut_as<int32_t>();
      const int32_t* mask = ctx.has_input(kEmbedMask) ? ctx.input(kEmbedMask).data_as<int32_t>() : nullptr;
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
    const std::vector<float> gamma = float_or_half_as_floats(ctx.input(kEmbedGamma));
    const std::vector<float> beta =
        ctx.has_input(kEmbedBeta) ? float_or_half_as_floats(ctx.input(kEmbedBeta)) : std::vector<float>{};
    const T* words = ctx.input(kEmbedWordTable).data_as<T>();
    const T* positions = ctx.input(kEmbedPositionTable).data_as<T>();
    const T* segments = ctx.has_input(kEmbedSegmentTable) ? ctx.input(kEmbedSegmentTable).data_as<T>() : nullptr;
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
