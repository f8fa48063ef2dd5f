// ONNX Runtime's com.microsoft Attention, QAttention and MultiHeadAttention (nxrt/ep/bert_attention.h,
// which plans their runs). Attention: Q, K and V from one cuBLASLt product of the input and the
// merged weights into scratch (the bias broadcast into it first); QAttention: from one integer
// product scaled to float (matmul_integer_to_float). MultiHeadAttention: Q, K and V where
// their form holds them (bias' parts added into scratch). Then past and the new keys and values
// are copied into present when there is a past or present is asked for, and a block per (batch,
// head, query) row attends over every key (kernel_library's bert_attention: attention_bias, the
// int32 mask's term, unidirectional, MultiHeadAttention's qk). Float, float16 and bfloat16 (ONNX
// Runtime's CUDA EP has float16 too), computed in float. A key length below 0 hides every key
// (the cpu EP reports it; reading the mask back would wait for the stream).
#include <fmt/format.h>

#include <algorithm>

#include "blas.h"
#include "nxrt/ep/bert_attention.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelDims bert_strides(int64_t batch, int64_t head, int64_t seq) {
  return to_kernel_dims(std::vector<int64_t>{batch, head, seq});
}
KernelDims bert_strides(HeadView view) { return bert_strides(view.batch, view.head, view.seq); }

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

std::string bert_attention_kernel(PlanBuilder& b, DType dtype) {
  const std::string t(float_type(dtype));
  return b.instantiate(
      "bert_attention", t,
      fmt::format("i64 row0, i64 rows, i64 batch, i64 heads, i64 q_seq, i64 total, i64 past, i64 head, i64 v_head, "
                  "const {0}* q, Dims qs, const {0}* k, Dims ks, const {0}* v, Dims vs, int mask_form, "
                  "const int* mask, const {0}* bias, i64 bias_batch, i64 bias_head, float scale, float mask_filter, "
                  "int causal, float* scores, {0}* qk, {0}* y, Dims ys",
                  t),
      "row0, rows, batch, heads, q_seq, total, past, head, v_head, q, qs, k, ks, v, vs, mask_form, mask, bias, "
      "bias_batch, bias_head, scale, mask_filter, causal, scores, qk, y, ys");
}

// What the bert_attention launches of one step read and write.
struct BertAttentionRun {
  int64_t batch = 0, heads = 0, q_seq = 0, total = 0, past = 0, head_size = 0, v_head_size = 0;
  const void* q = nullptr;
  KernelDims qs{};
  const void* k = nullptr;
  KernelDims ks{};
  const void* v = nullptr;
  KernelDims vs{};
  KeyMaskForm mask_form = KeyMaskForm::kNone;
  const void* mask = nullptr;
  const void* bias = nullptr;  // attention_bias
  AttentionBiasStrides bias_strides;
  float scale = 1.f, mask_filter = -10000.f;
  bool causal = false;
  void* qk = nullptr;
  void* y = nullptr;
  KernelDims ys{};
};

// The int32 key mask (input `mask`, when the node has it) and attention_bias (input `bias`, when
// given) into `r`, whose sizes are set: their forms and strides for those sizes, or an error
// naming `op`. `attention_forms`: a [2 * batch] mask holds ends and starts and a [batch or 1, 1]
// one means no mask (Attention's and QAttention's mask_index).
Expected<void> read_mask_and_bias(StepContext& ctx, std::string_view op, std::size_t mask,
                                  std::optional<std::size_t> bias, bool attention_forms, BertAttentionRun& r) {
  if (ctx.has_input(mask)) {
    auto form = bert_key_mask_form(op, ctx.input(mask).shape(), r.batch, r.q_seq, r.total, attention_forms,
                                   attention_forms);
    if (!form) return forward_error(std::move(form), ctx.where());
    r.mask_form = *form;
    if (r.mask_form != KeyMaskForm::kNone) r.mask = dev(ctx.input(mask));
  }
  if (bias && ctx.has_input(*bias)) {
    auto strides = bert_attention_bias_strides(op, ctx.input(*bias).shape(), r.batch, r.heads, r.q_seq, r.total);
    if (!strides) return forward_error(std::move(strides), ctx.where());
    r.bias = dev(ctx.input(*bias)), r.bias_strides = *strides;
  }
  return {};
}

// The run's rows in chunks whose scores fit kAttentionScoresPerChunk (Y, of `y_bytes`, zeros
// when there is no key).
Expected<void> launch_bert_attention(StepContext& ctx, const std::string& kernel, const BertAttentionRun& r,
                                     std::size_t y_bytes) {
  const int64_t rows = r.batch * r.heads * r.q_seq;
  if (rows == 0 || r.v_head_size == 0) return {};
  if (r.total == 0) return ctx.zero(r.y, y_bytes);
  const int64_t chunk = std::max<int64_t>(1, kAttentionScoresPerChunk / r.total);
  auto scores = ctx.scratch(static_cast<std::size_t>(std::min(chunk, rows) * r.total) * sizeof(float));
  if (!scores) return std::unexpected(scores.error());
  for (int64_t row0 = 0; row0 < rows; row0 += chunk) {
    KernelArgs args;
    args.add(row0).add(std::min(chunk, rows - row0)).add(r.batch).add(r.heads).add(r.q_seq).add(r.total).add(r.past);
    args.add(r.head_size).add(r.v_head_size).ptr(r.q).add(r.qs).ptr(r.k).add(r.ks).ptr(r.v).add(r.vs);
    args.add(mask_form_code(r.mask_form)).ptr(r.mask).ptr(r.bias).add(r.bias_strides.batch).add(r.bias_strides.head);
    args.add(r.scale).add(r.mask_filter).add(int{r.causal}).ptr(dev_mut(*scores)).ptr(r.qk).ptr(r.y).add(r.ys);
    if (auto done = ctx.launch_rows(kernel, std::min(chunk, rows - row0), kRowBlockThreads, args); !done) return done;
  }
  return {};
}

// present ([batch, heads, past + kv_seq, size]): past's rows ([batch, heads, past, size], when
// given), then the new heads `fresh` of `data`.
Expected<void> fill_present(StepContext& ctx, const std::string& copy, const Shape& present_shape, int64_t past,
                            const void* past_data, const void* data, HeadView fresh, void* present) {
  const Shape out_strides = contiguous_strides(present_shape);
  const int64_t batch = present_shape[0], heads = present_shape[1], size = present_shape[3];
  if (past_data && past > 0) {
    const Shape past_shape{batch, heads, past, size};
    if (auto r = strided_copy(ctx, copy, past_shape, contiguous_strides(past_shape), 0, past_data, out_strides, 0,
                              present);
        !r)
      return r;
  }
  return strided_copy(ctx, copy, Shape{batch, heads, present_shape[2] - past, size},
                      Shape{fresh.batch, fresh.head, fresh.seq, 1}, fresh.offset, data, out_strides, past * size,
                      present);
}

// ---- Attention and QAttention ----

constexpr std::size_t kMsInput = 0, kMsWeights = 1, kMsBias = 2;
constexpr std::size_t kQaInputScale = 3, kQaWeightScale = 4, kQaInputZero = 6, kQaWeightZero = 7;  // QAttention's
// Where each op has its mask and past (and Attention its attention_bias, input 5).
constexpr MicrosoftAttentionInputs kMsAttentionInputs{"Attention", 3, 4, 6};
constexpr MicrosoftAttentionInputs kQAttentionInputs{"QAttention", 5, 8, std::nullopt};
constexpr std::size_t kMsAttentionBias = 5;

KernelMatch check_cuda_microsoft_attention(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {kMsInput, kMsWeights, kMsBias, kMsAttentionInputs.past, kMsAttentionBias}));
  return check_microsoft_attention_family(ctx, kMsAttentionInputs, "cuda");
}

// QAttention (what ONNX Runtime's quantize_dynamic makes of Attention): input and weight uint8 or
// int8, one input scale and zero point, weight scales and zero points one or one per column; the
// bias, past and output float.
KernelMatch check_cuda_qattention(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_quantized(ctx, kMsInput, "input"));
  NXRT_REQUIRE_MATCH(require_quantized(ctx, kMsWeights, "weight"));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, kQaInputScale, "input_scale", DType::kFloat32));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, kQaWeightScale, "weight_scale", DType::kFloat32));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, kQaInputZero, "input_zero_point", ctx.input_dtype(kMsInput)));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, kQaWeightZero, "weight_zero_point", ctx.input_dtype(kMsWeights)));
  for (std::size_t i : {kMsBias, kQAttentionInputs.past})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == DType::kFloat32,
                 "QAttention: input {} is {}; bias and past are float", i, dtype_name(ctx.input_dtype(i)));
  return check_microsoft_attention_family(ctx, kQAttentionInputs, "cuda");
}

// QAttention's projection: QKV = (input - zero)(weight - zero) · input_scale · weight_scale +
// bias, on integer_to_float_kernel's kernel.
Expected<void> project_quantized(StepContext& ctx, const std::string& kernel, const MicrosoftAttentionPlan& p,
                                 void* qkv) {
  if (ctx.input(kQaInputScale).numel() != 1 || (ctx.has_input(kQaInputZero) && ctx.input(kQaInputZero).numel() != 1))
    return fail(ErrorCode::kRuntime, fmt::format("{}: input_scale or input_zero_point has several values", ctx.where()),
                "the input is quantized with one scale and zero point", "give one value each");
  const char* how = "give one value, or one per column of weight";
  auto scale = scalar_or_vector(ctx, kQaWeightScale, p.columns, "weight_scale", how);
  if (!scale) return std::unexpected(scale.error());
  auto zero = scalar_or_vector(ctx, kQaWeightZero, p.columns, "weight_zero_point", how);
  if (!zero) return std::unexpected(zero.error());
  const int64_t tokens = p.batch * p.seq;
  KernelArgs args;
  args.add(int64_t{1}).add(tokens).add(p.columns).add(p.in).add(int64_t{0}).add(int64_t{0});
  args.ptr(dev(ctx.input(kMsInput))).ptr(dev(ctx.input(kMsWeights)));
  args.ptr(ctx.has_input(kQaInputZero) ? dev(ctx.input(kQaInputZero)) : nullptr).ptr(zero->data).add(zero->count);
  args.ptr(dev(ctx.input(kQaInputScale))).ptr(scale->data).add(scale->count);
  args.ptr(ctx.has_input(kMsBias) ? dev(ctx.input(kMsBias)) : nullptr).ptr(qkv);
  return ctx.launch(kernel, tokens * p.columns, args);
}

// QKV = input @ weights (+ bias, broadcast into it first) on cuBLASLt.
Expected<void> project_float(StepContext& ctx, const std::string& copy, DType dtype, const MicrosoftAttentionPlan& p,
                             void* qkv) {
  const int64_t tokens = p.batch * p.seq;
  const bool with_bias = ctx.has_input(kMsBias);
  if (with_bias)
    if (auto done = broadcast_rows(ctx, copy, dev(ctx.input(kMsBias)), tokens, p.columns, qkv); !done) return done;
  MatmulProblem product;
  product.dtype = dtype;
  product.m = tokens, product.n = p.columns, product.k = p.in;
  product.beta = with_bias ? 1.f : 0.f;
  product.a = dev(ctx.input(kMsInput)), product.b = dev(ctx.input(kMsWeights)), product.d = qkv;
  return run_matmul(ctx, product);
}

Expected<void> build_microsoft_attention(PlanBuilder& b, const Node& node) {
  const bool quantized = node.op_type == "QAttention";
  const MicrosoftAttentionInputs in = quantized ? kQAttentionInputs : kMsAttentionInputs;
  // QAttention computes in float; Attention in its input's type.
  const DType dtype = quantized ? DType::kFloat32 : b.graph().value(node.inputs[kMsInput]).type.dtype;
  const std::string kernel = bert_attention_kernel(b, dtype);
  const std::string copy = strided_copy_kernel(b, dtype);
  const Graph& g = b.graph();
  const std::string projection =
      quantized ? integer_to_float_kernel(b, g.value(node.inputs[kMsInput]).type.dtype,
                                          g.value(node.inputs[kMsWeights]).type.dtype)
                : std::string();
  const MicrosoftAttentionAttrs at = MicrosoftAttentionAttrs::of(node.attributes);
  const std::string label = (quantized ? "nvrtc:" + projection : std::string("cublasLt")) + "+nvrtc:" + kernel;
  b.add_step(make_step(node, label, [=](StepContext& ctx) -> Expected<void> {
    auto planned = plan_microsoft_attention(in.op, at, ctx.input(kMsInput).shape(), ctx.input(kMsWeights).shape(),
                                            given_shape(ctx, kMsBias), given_shape(ctx, in.past));
    if (!planned) return forward_error(std::move(planned), ctx.where());
    const MicrosoftAttentionPlan& p = *planned;
    BertAttentionRun r;
    r.batch = p.batch, r.heads = at.heads, r.q_seq = p.seq, r.total = p.past + p.seq, r.past = p.past;
    r.head_size = p.head_size(at), r.v_head_size = p.v_head_size(at);
    r.scale = p.scale(at), r.mask_filter = at.mask_filter_value, r.causal = at.causal;
    const auto attention_bias = quantized ? std::nullopt : std::optional<std::size_t>(kMsAttentionBias);
    if (auto read = read_mask_and_bias(ctx, in.op, in.mask, attention_bias, true, r); !read) return read;
    auto y = ctx.output(0, dtype, {p.batch, p.seq, p.v_hidden});
    if (!y) return std::unexpected(y.error());
    r.y = dev_mut(*y), r.ys = bert_strides(p.seq * p.v_hidden, r.v_head_size, p.v_hidden);
    // QKV: one row of columns per token.
    auto qkv = ctx.scratch(static_cast<std::size_t>(p.batch * p.seq * p.columns) * dtype_size(dtype));
    if (!qkv) return std::unexpected(qkv.error());
    if (auto done = quantized ? project_quantized(ctx, projection, p, dev_mut(*qkv))
                              : project_float(ctx, copy, dtype, p, dev_mut(*qkv));
        !done)
      return done;
    // Q, K and V's heads in QKV's columns.
    const HeadView q_view{0, p.seq * p.columns, r.head_size, p.columns};
    const HeadView k_view{p.hidden, p.seq * p.columns, r.head_size, p.columns};
    const HeadView v_view{2 * p.hidden, p.seq * p.columns, r.v_head_size, p.columns};
    r.q = dev(*qkv), r.qs = bert_strides(q_view);
    r.k = advance(dev(*qkv), k_view.offset, dtype), r.ks = bert_strides(k_view);
    r.v = advance(dev(*qkv), v_view.offset, dtype), r.vs = bert_strides(v_view);
    // With a past or a present output: past and the new keys and values in present
    // ([2, batch, heads, total, head_size], V's head size equal to K's there).
    Tensor present;
    if (ctx.has_input(in.past) || ctx.wants_output(1)) {
      auto out = output_or_scratch(ctx, 1, dtype, {2, p.batch, at.heads, r.total, r.head_size});
      if (!out) return std::unexpected(out.error());
      present = std::move(*out);
      const Shape half_shape{p.batch, at.heads, r.total, r.head_size};
      const int64_t half = shape_numel(half_shape), past_half = p.batch * at.heads * p.past * r.head_size;
      for (int64_t kv = 0; kv < 2; ++kv) {
        const void* past = ctx.has_input(in.past) ? advance(dev(ctx.input(in.past)), kv * past_half, dtype) : nullptr;
        if (auto done = fill_present(ctx, copy, half_shape, p.past, past, dev(*qkv), kv == 0 ? k_view : v_view,
                                     advance(dev_mut(present), kv * half, dtype));
            !done)
          return done;
      }
      r.k = dev(present), r.v = advance(dev(present), half, dtype);
      r.ks = r.vs = bert_strides(at.heads * r.total * r.head_size, r.total * r.head_size, r.head_size);
    }
    return launch_bert_attention(ctx, kernel, r, static_cast<std::size_t>(y->numel()) * dtype_size(dtype));
  }));
  return {};
}

// ---- MultiHeadAttention ----

KernelMatch check_cuda_multi_head_attention(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(
      require_float(ctx, {kMhaQuery, kMhaKey, kMhaValue, kMhaBias, kMhaAttentionBias, kMhaPastKey, kMhaPastValue}));
  return check_multi_head_attention_node(ctx, "cuda");
}

Expected<void> build_multi_head_attention(PlanBuilder& b, const Node& node) {
  using Layout = MultiHeadAttentionPlan::Layout;
  const DType dtype = b.graph().value(node.inputs[kMhaQuery]).type.dtype;
  const std::string kernel = bert_attention_kernel(b, dtype);
  const std::string copy = strided_copy_kernel(b, dtype);
  const std::string t(float_type(dtype));
  const std::string add_bias = b.instantiate("add_row_vector", t,
                                             fmt::format("i64 n, i64 width, const {0}* x, const {0}* v, {0}* y", t),
                                             "n, width, x, v, y");
  const MultiHeadAttentionAttrs at = MultiHeadAttentionAttrs::of(node.attributes);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto planned = plan_multi_head_attention(at, MultiHeadAttentionShapes::of(ctx));
    if (!planned) return forward_error(std::move(planned), ctx.where());
    const MultiHeadAttentionPlan& p = *planned;
    BertAttentionRun r;
    r.batch = p.batch, r.heads = at.heads, r.q_seq = p.seq, r.total = p.total(), r.past = p.past;
    r.head_size = p.head_size, r.v_head_size = p.v_head_size;
    r.scale = p.scale(at), r.mask_filter = at.mask_filter_value, r.causal = at.causal;
    if (auto read = read_mask_and_bias(ctx, "MultiHeadAttention", kMhaMask, kMhaAttentionBias, false, r); !read)
      return read;
    auto y = ctx.output(0, dtype, {p.batch, p.seq, p.v_hidden});
    if (!y) return std::unexpected(y.error());
    r.y = dev_mut(*y), r.ys = bert_strides(p.seq * p.v_hidden, p.v_head_size, p.v_hidden);
    if (ctx.wants_output(3)) {
      auto qk = ctx.output(3, dtype, {p.batch, at.heads, p.seq, r.total});
      if (!qk) return std::unexpected(qk.error());
      r.qk = dev_mut(*qk);
    }
    // Q, K and V where their form holds them; bias' parts added into scratch (Q's, and K's and
    // V's when they are not in heads).
    const bool packed_qkv = p.layout == Layout::kPackedQkv, separate = p.layout == Layout::kSeparate;
    const std::size_t k_in = packed_qkv ? kMhaQuery : kMhaKey;
    const std::size_t v_in = packed_qkv ? kMhaQuery : p.layout == Layout::kPackedKv ? kMhaKey : kMhaValue;
    std::vector<Tensor> biased;
    auto with_bias = [&](std::size_t input, int64_t offset, int64_t width) -> Expected<const void*> {
      if (!ctx.has_input(kMhaBias)) return dev(ctx.input(input));
      const int64_t n = ctx.input(input).numel();
      auto out = ctx.scratch(static_cast<std::size_t>(n) * dtype_size(dtype));
      if (!out) return std::unexpected(out.error());
      if (n > 0) {
        KernelArgs args;
        args.add(n).add(width).ptr(dev(ctx.input(input))).ptr(advance(dev(ctx.input(kMhaBias)), offset, dtype));
        args.ptr(dev_mut(*out));
        if (auto done = ctx.launch(add_bias, n, args); !done) return std::unexpected(done.error());
      }
      biased.push_back(std::move(*out));
      return dev(biased.back());
    };
    auto q = packed_qkv ? Expected<const void*>(dev(ctx.input(kMhaQuery))) : with_bias(kMhaQuery, 0, p.hidden);
    if (!q) return std::unexpected(q.error());
    auto k = separate ? with_bias(kMhaKey, p.hidden, p.hidden) : Expected<const void*>(dev(ctx.input(k_in)));
    if (!k) return std::unexpected(k.error());
    auto v = separate ? with_bias(kMhaValue, 2 * p.hidden, p.v_hidden) : Expected<const void*>(dev(ctx.input(v_in)));
    if (!v) return std::unexpected(v.error());
    const HeadView q_view = p.query_heads(), k_view = p.key_heads(), v_view = p.value_heads();
    r.q = advance(*q, q_view.offset, dtype), r.qs = bert_strides(q_view);
    r.k = advance(*k, k_view.offset, dtype), r.ks = bert_strides(k_view);
    r.v = advance(*v, v_view.offset, dtype), r.vs = bert_strides(v_view);
    // Present key and value (past rows, then the new ones), read from there when there is a past.
    Tensor present[2];
    for (std::size_t i : {0, 1}) {
      if (!ctx.wants_output(1 + i) && !ctx.has_input(kMhaPastKey)) continue;
      const int64_t size = i == 0 ? p.head_size : p.v_head_size;
      const Shape present_shape{p.batch, at.heads, r.total, size};
      auto out = output_or_scratch(ctx, 1 + i, dtype, present_shape);
      if (!out) return std::unexpected(out.error());
      present[i] = std::move(*out);
      const void* past = ctx.has_input(kMhaPastKey) ? dev(ctx.input(i == 0 ? kMhaPastKey : kMhaPastValue)) : nullptr;
      if (auto done = fill_present(ctx, copy, present_shape, p.past, past, i == 0 ? *k : *v,
                                   i == 0 ? k_view : v_view, dev_mut(present[i]));
          !done)
        return done;
      (i == 0 ? r.k : r.v) = dev(present[i]);
      (i == 0 ? r.ks : r.vs) = bert_strides(at.heads * r.total * size, r.total * size, size);
    }
    return launch_bert_attention(ctx, kernel, r, static_cast<std::size_t>(y->numel()) * dtype_size(dtype));
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> microsoft_attention_ops() {
  return {make_microsoft_op("Attention", check_cuda_microsoft_attention, build_microsoft_attention),
          make_microsoft_op("QAttention", check_cuda_qattention, build_microsoft_attention),
          make_microsoft_op("MultiHeadAttention", check_cuda_multi_head_attention, build_multi_head_attention)};
}

}  // namespace nxrt::cuda
