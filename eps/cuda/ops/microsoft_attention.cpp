// ONNX Runtime's com.microsoft Attention (nxrt/ep/bert_attention.h, which plans a run): Q, K and V
// from one cuBLASLt product of the input and the merged weights into scratch (the bias broadcast
// into it first), past and the new keys and values copied into present when there is a past or
// present is asked for, then a block per (batch, head, query) row attends over every key
// (kernel_library's bert_attention: attention_bias, the int32 mask's term, unidirectional).
// Float, float16 and bfloat16 (ONNX Runtime's CUDA EP has float16 too), computed in float. A key
// length below 0 hides every key (the cpu EP reports it; reading the mask back would wait for
// the stream).
#include <fmt/format.h>

#include <algorithm>

#include "blas.h"
#include "nxrt/ep/bert_attention.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

constexpr std::size_t kMsInput = 0, kMsWeights = 1, kMsBias = 2, kMsMask = 3, kMsPast = 4, kMsAttentionBias = 5;
constexpr MicrosoftAttentionInputs kMsAttentionInputs{"Attention", kMsMask, kMsPast, 6};

// Scores of at most this many (row, key) pairs per launch: 64 MiB of float scratch.
constexpr int64_t kBertScoresPerChunk = int64_t{1} << 24;

KernelMatch check_cuda_microsoft_attention(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {kMsInput, kMsWeights, kMsBias, kMsPast, kMsAttentionBias}));
  return check_microsoft_attention_family(ctx, kMsAttentionInputs, "cuda");
}

KernelDims bert_strides(int64_t batch, int64_t head, int64_t seq) {
  return to_kernel_dims(std::vector<int64_t>{batch, head, seq});
}

// The int32 mask's form as the kernel numbers it (0: none).
int mask_form_code(KeyMaskForm form) {
  switch (form) {
    case KeyMaskForm::kKeyLengths: return 1;
    case KeyMaskForm::kEndStart: return 2;
    case KeyMaskForm::kRaw2D: return 3;
    case KeyMaskForm::kRaw3D: return 4;
    default: return 0;
  }
}

Expected<void> build_microsoft_attention(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[kMsInput]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "bert_attention", t,
      fmt::format("i64 row0, i64 rows, i64 batch, i64 heads, i64 q_seq, i64 total, i64 past, i64 head, i64 v_head, "
                  "const {0}* q, Dims qs, const {0}* k, Dims ks, const {0}* v, Dims vs, int mask_form, "
                  "const int* mask, const {0}* bias, i64 bias_batch, i64 bias_head, float scale, float mask_filter, "
                  "int causal, float* scores, {0}* qk, {0}* y, Dims ys",
                  t),
      "row0, rows, batch, heads, q_seq, total, past, head, v_head, q, qs, k, ks, v, vs, mask_form, mask, bias, "
      "bias_batch, bias_head, scale, mask_filter, causal, scores, qk, y, ys");
  const std::string copy = strided_copy_kernel(b, dtype);
  const MicrosoftAttentionAttrs at = MicrosoftAttentionAttrs::of(node.attributes);
  b.add_step(make_step(node, "cublasLt+nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto shape = [&](std::size_t i) { return ctx.has_input(i) ? &ctx.input(i).shape() : nullptr; };
    auto planned = plan_microsoft_attention("Attention", at, ctx.input(kMsInput).shape(), ctx.input(kMsWeights).shape(),
                                            shape(kMsBias), shape(kMsPast));
    if (!planned) return forward_error(std::move(planned), ctx.where());
    const MicrosoftAttentionPlan& p = *planned;
    const int64_t hs = p.head_size(at), vhs = p.v_head_size(at), total = p.past + p.seq, tokens = p.batch * p.seq;
    KeyMaskForm mask_form = KeyMaskForm::kNone;
    if (ctx.has_input(kMsMask)) {
      auto form = bert_key_mask_form("Attention", ctx.input(kMsMask).shape(), p.batch, p.seq, total, true, true);
      if (!form) return forward_error(std::move(form), ctx.where());
      mask_form = *form;
    }
    AttentionBiasStrides bias_strides;
    if (ctx.has_input(kMsAttentionBias)) {
      auto strides = bert_attention_bias_strides("Attention", ctx.input(kMsAttentionBias).shape(), p.batch, at.heads,
                                                 p.seq, total);
      if (!strides) return forward_error(std::move(strides), ctx.where());
      bias_strides = *strides;
    }
    auto y = ctx.output(0, dtype, {p.batch, p.seq, p.v_hidden});
    if (!y) return std::unexpected(y.error());
    // QKV = input @ weights (+ bias, broadcast into it first): one row of columns per token.
    auto qkv = ctx.scratch(static_cast<std::size_t>(tokens * p.columns) * dtype_size(dtype));
    if (!qkv) return std::unexpected(qkv.error());
    const bool with_bias = ctx.has_input(kMsBias);
    if (with_bias && tokens > 0) {
      const Shape rows{tokens, p.columns};
      if (auto r = strided_copy(ctx, copy, rows, Shape{0, 1}, 0, dev(ctx.input(kMsBias)), contiguous_strides(rows), 0,
                                dev_mut(*qkv));
          !r)
        return r;
    }
    MatmulProblem product;
    product.dtype = dtype;
    product.m = tokens, product.n = p.columns, product.k = p.in;
    product.beta = with_bias ? 1.f : 0.f;
    product.a = dev(ctx.input(kMsInput)), product.b = dev(ctx.input(kMsWeights)), product.d = dev_mut(*qkv);
    if (auto r = run_matmul(ctx, product); !r) return r;
    // Keys and values: the new ones where the product left them, or past and new in present.
    const void* k = advance(dev(*qkv), p.hidden, dtype);
    const void* v = advance(dev(*qkv), 2 * p.hidden, dtype);
    KernelDims ks = bert_strides(p.seq * p.columns, hs, p.columns);
    KernelDims vs = bert_strides(p.seq * p.columns, vhs, p.columns);
    Tensor present;
    if (ctx.has_input(kMsPast) || ctx.wants_output(1)) {
      const Shape present_shape{2, p.batch, at.heads, total, hs};
      const auto bytes = static_cast<std::size_t>(shape_numel(present_shape)) * dtype_size(dtype);
      auto out = ctx.wants_output(1) ? ctx.output(1, dtype, present_shape) : ctx.scratch(bytes);
      if (!out) return std::unexpected(out.error());
      present = std::move(*out);
      const Shape out_strides = contiguous_strides(present_shape);
      if (ctx.has_input(kMsPast) && p.past > 0) {
        const Shape past_shape{2, p.batch, at.heads, p.past, hs};
        if (auto r = strided_copy(ctx, copy, past_shape, contiguous_strides(past_shape), 0, dev(ctx.input(kMsPast)),
                                  out_strides, 0, dev_mut(present));
            !r)
          return r;
      }
      // The new keys and values, [2, batch, heads, seq, hs] read from QKV's K and V columns.
      if (auto r = strided_copy(ctx, copy, Shape{2, p.batch, at.heads, p.seq, hs},
                                Shape{p.hidden, p.seq * p.columns, hs, p.columns, 1}, p.hidden, dev(*qkv), out_strides,
                                p.past * hs, dev_mut(present));
          !r)
        return r;
      const int64_t half = p.batch * at.heads * total * hs;
      k = dev(present), v = advance(dev(present), half, dtype);
      ks = vs = bert_strides(at.heads * total * hs, total * hs, hs);
    }
    const int64_t rows = p.batch * at.heads * p.seq;
    if (rows == 0 || vhs == 0) return {};
    if (total == 0) return ctx.zero(dev_mut(*y), static_cast<std::size_t>(y->numel()) * dtype_size(dtype));
    const int64_t chunk = std::max<int64_t>(1, kBertScoresPerChunk / total);
    auto scores = ctx.scratch(static_cast<std::size_t>(std::min(chunk, rows) * total) * sizeof(float));
    if (!scores) return std::unexpected(scores.error());
    for (int64_t row0 = 0; row0 < rows; row0 += chunk) {
      KernelArgs args;
      args.add(row0).add(std::min(chunk, rows - row0)).add(p.batch).add(at.heads).add(p.seq).add(total).add(p.past);
      args.add(hs).add(vhs).ptr(dev(*qkv)).add(bert_strides(p.seq * p.columns, hs, p.columns)).ptr(k).add(ks);
      args.ptr(v).add(vs).add(mask_form_code(mask_form));
      args.ptr(mask_form == KeyMaskForm::kNone ? nullptr : dev(ctx.input(kMsMask)));
      args.ptr(ctx.has_input(kMsAttentionBias) ? dev(ctx.input(kMsAttentionBias)) : nullptr);
      args.add(bias_strides.batch).add(bias_strides.head).add(p.scale(at)).add(at.mask_filter_value);
      args.add(int{at.causal}).ptr(dev_mut(*scores)).ptr(nullptr).ptr(dev_mut(*y));
      args.add(bert_strides(p.seq * p.v_hidden, vhs, p.v_hidden));
      if (auto r = ctx.launch_rows(kernel, std::min(chunk, rows - row0), kRowBlockThreads, args); !r) return r;
    }
    return {};
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> microsoft_attention_ops() {
  return {make_microsoft_op("Attention", check_cuda_microsoft_attention, build_microsoft_attention)};
}

}  // namespace nxrt::cuda
