// ONNX Runtime's com.microsoft MultiHeadAttention, the attention its transformer optimizer fuses
// once Q, K and V are projected (self- and cross-attention, encoder-decoder models); its input
// forms, outputs and plan are lib's (nxrt/ep/bert_attention.h), the attention common/bert_attention.h's.
// Float, as ONNX Runtime's CPU EP (which refuses the packed forms its CUDA EP reads; nxrt takes
// them).
#include <fmt/format.h>

#include <cmath>

#include "common/bert_attention.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using MhaAttrs = MultiHeadAttentionAttrs;
using MhaPlan = MultiHeadAttentionPlan;

KernelMatch check_multi_head_attention(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_dtype(kMhaQuery) == DType::kFloat32,
               "MultiHeadAttention: query is {}; the cpu EP implements float (as ONNX Runtime's CPU EP does)",
               dtype_name(ctx.input_dtype(kMhaQuery)));
  for (std::size_t i : {kMhaKey, kMhaValue, kMhaBias, kMhaAttentionBias, kMhaPastKey, kMhaPastValue})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == DType::kFloat32,
                 "MultiHeadAttention: input {} is {}; it must be float as the query", i,
                 dtype_name(ctx.input_dtype(i)));
  NXRT_REQUIRE_MATCH(check_multi_head_attention_node(ctx, "cpu"));
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

class MultiHeadAttentionKernel final : public Kernel {
 public:
  explicit MultiHeadAttentionKernel(MhaAttrs attrs) : at_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_multi_head_attention(at_, MultiHeadAttentionShapes::of(ctx));
    if (!plan) return std::unexpected(plan.error());
    const MhaPlan& p = *plan;
    const int64_t total = p.total(), n = at_.heads;
    BertAttention a;
    a.batch = p.batch;
    a.heads = n;
    a.q_seq = p.seq;
    a.total = total;
    a.past = p.past;
    a.head_size = p.head_size;
    a.v_head_size = p.v_head_size;
    a.scale = p.scale(at_);
    a.mask_filter_value = at_.mask_filter_value;
    a.causal = at_.causal;
    if (ctx.has_input(kMhaMask))
      if (auto read = read_key_mask("MultiHeadAttention", ctx.input(kMhaMask), false, false, a); !read) return read;
    if (ctx.has_input(kMhaAttentionBias))
      if (auto read = read_attention_bias("MultiHeadAttention", ctx.input(kMhaAttentionBias), a); !read) return read;

    // Q (and, from [batch, kv_seq, hidden], K and V) with bias' part added.
    const float* bias = ctx.has_input(kMhaBias) ? ctx.input(kMhaBias).data_as<float>() : nullptr;
    std::vector<float> biased[3];
    auto with_bias = [&](std::size_t input, int64_t offset, int64_t width) -> const float* {
      const float* data = ctx.input(input).data_as<float>();
      if (!bias) return data;
      std::vector<float>& out = biased[input];
      out.resize(static_cast<std::size_t>(ctx.input(input).numel()));
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = data[i] + bias[offset + static_cast<int64_t>(i) % width];
      return out.data();
    };
    // The new Q, K and V heads where they are (Q, and K and V in separate inputs, with bias' part).
    using Layout = MhaPlan::Layout;
    auto heads_of = [](const float* data, HeadView view) {
      return HeadMatrix{data + view.offset, view.batch, view.head, view.seq};
    };
    const bool packed_qkv = p.layout == Layout::kPackedQkv, separate = p.layout == Layout::kSeparate;
    const std::size_t k_in = packed_qkv ? kMhaQuery : kMhaKey;
    const std::size_t v_in = packed_qkv ? kMhaQuery : p.layout == Layout::kPackedKv ? kMhaKey : kMhaValue;
    a.q = heads_of(packed_qkv ? ctx.input(kMhaQuery).data_as<float>() : with_bias(kMhaQuery, 0, p.hidden),
                   p.query_heads());
    a.k = heads_of(separate ? with_bias(kMhaKey, p.hidden, p.hidden) : ctx.input(k_in).data_as<float>(), p.key_heads());
    a.v = heads_of(separate ? with_bias(kMhaValue, 2 * p.hidden, p.v_hidden) : ctx.input(v_in).data_as<float>(),
                   p.value_heads());
    // Present key and value: past rows then the new ones (read from there when there is a past).
    std::vector<float> scratch[2];
    for (int i = 0; i < 2; ++i) {
      const auto out = static_cast<std::size_t>(1 + i);
      if (!ctx.wants_output(out) && !ctx.has_input(kMhaPastKey)) continue;
      const int64_t size = i == 0 ? p.head_size : p.v_head_size;
      const Shape shape{p.batch, n, total, size};
      float* present;
      if (ctx.wants_output(out)) {
        auto t = ctx.output(out, DType::kFloat32, shape);
        if (!t) return std::unexpected(t.error());
        present = t->mut_as<float>();
      } else {
        scratch[i].resize(static_cast<std::size_t>(shape_numel(shape)));
        present = scratch[i].data();
      }
      const float* past =
          ctx.has_input(kMhaPastKey) ? ctx.input(i == 0 ? kMhaPastKey : kMhaPastValue).data_as<float>() : nullptr;
      const HeadMatrix fresh = i == 0 ? a.k : a.v;
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < n; ++h) {
          float* dst = present + (b * n + h) * total * size;
          if (past) std::copy_n(past + (b * n + h) * p.past * size, p.past * size, dst);
          for (int64_t s = 0; s < p.kv_seq; ++s)
            std::copy_n(fresh.at(b, h) + s * fresh.row_stride, size, dst + (p.past + s) * size);
        }
      (i == 0 ? a.k : a.v) = {present, n * total * size, total * size, size};
    }
    auto y = ctx.output(0, DType::kFloat32, {p.batch, p.seq, p.v_hidden});
    if (!y) return std::unexpected(y.error());
    a.y = y->mut_as<float>();
    if (ctx.wants_output(3)) {
      auto qk = ctx.output(3, DType::kFloat32, {p.batch, n, p.seq, total});
      if (!qk) return std::unexpected(qk.error());
      a.qk = qk->mut_as<float>();
    }
    attend(a, ctx.parallel());
    return {};
  }

  std::string_view variant() const override { return "gemm"; }

 private:
  MhaAttrs at_;
};

}  // namespace

std::vector<KernelDef> multi_head_attention_kernels() {
  return {KernelDef{{"com.microsoft", "MultiHeadAttention", 1}, 0, check_multi_head_attention,
                    [](const NodeContext& ctx) {
                      return make_kernel<MultiHeadAttentionKernel>(MhaAttrs::of(ctx.attrs()));
                    }}};
}

}  // namespace nxrt::cpu
