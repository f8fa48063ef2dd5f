// The transformer ops of opsets 23 and 24: RMSNormalization (a block per row; also ONNX Runtime's
// SimplifiedLayerNormalization), RotaryEmbedding (a thread per element; also com.microsoft's),
// Attention (a block per query row: scores, softmax and the weighted sum of values in one kernel,
// without tiling) and TensorScatter (the KV-cache update: a copy, then a thread per updated
// element). The geometry is lib's (nxrt/ep/rotary_embedding.h, attention.h,
// tensor_scatter.h), shared with the cpu EP.
#include <fmt/format.h>

#include <algorithm>

#include "nxrt/ep/attention.h"
#include "nxrt/ep/rotary_embedding.h"
#include "nxrt/ep/tensor_scatter.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// ---- RMSNormalization ----

// RMSNormalization-23, and ONNX Runtime's SimplifiedLayerNormalization (in the ONNX domain from
// version 1, the first normalization of its GenAI models): the same computation.
KernelMatch check_rms_norm(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_count() == 2 && ctx.has_input(1), "{}: expected inputs X and scale, got {} inputs", op,
               ctx.input_count());
  NXRT_REQUIRE(!ctx.has_output(1), "{}: inv_std_var (output 1) is not implemented by the cuda EP", op);
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0, 1}, is_cuda_float_or_double, kCudaFloatsOrDouble));
  const int64_t stash = ctx.attrs().int_or("stash_type", 1);
  NXRT_REQUIRE(stash == 1 || stash == 11,
               "{}: stash_type {} is not supported by the cuda EP (it computes the mean square in float, stash_type "
               "1, or double, 11)",
               op, stash);
  return KernelMatch::supported();
}

Expected<void> build_rms_norm(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = node.attributes.int_or("axis", -1);
  const float eps = node.attributes.float_or("epsilon", 1e-5f);
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const bool wide = dtype == DType::kFloat64 || node.attributes.int_or("stash_type", 1) == 11;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel =
      b.instantiate("rms_norm", fmt::format("{}, {}", t, wide ? "double" : "float"),
                    fmt::format("i64 rows, i64 cols, const {0}* x, const {0}* scale, float eps, {0}* y", t),
                    "rows, cols, x, scale, eps, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto axis = axis_index(ctx, axis_attr, s);
    if (!axis) return std::unexpected(axis.error());
    const int64_t rows = dims_product(s, 0, *axis), cols = dims_product(s, *axis, s.size());
    // The scale must cover the normalized dims exactly (no further broadcasting here).
    if (ctx.input(1).numel() != cols)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: scale is {}, the normalized dims of X {} hold {} elements", ctx.where(),
                              shape_to_string(ctx.input(1).shape()), shape_to_string(s), cols),
                  "the cuda EP takes a scale with one value per normalized element",
                  "give scale X's dims from axis on");
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    if (x.numel() == 0) return {};
    KernelArgs args;
    args.add(rows).add(cols).ptr(dev(x)).ptr(dev(ctx.input(1))).add(eps).ptr(dev_mut(*y));
    return ctx.launch_rows(kernel, rows, kRowBlockThreads, args);
  }));
  return {};
}

// ---- RotaryEmbedding (ONNX's and com.microsoft's) ----

KernelMatch check_rotary_embedding(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_rotary_embedding_node(ctx));
  return require_float(ctx, {0, 1, 2});
}

KernelMatch check_microsoft_rotary_embedding(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_microsoft_rotary_embedding_node(ctx));
  return require_float(ctx, {0, 2, 3});
}

// Where an op's inputs are: ONNX's X, cos_cache, sin_cache[, position_ids]; com.microsoft's X,
// position_ids, cos_cache, sin_cache.
struct RotaryInputs {
  bool microsoft;
  std::size_t position_ids() const { return microsoft ? 1 : 3; }
  std::size_t cos() const { return microsoft ? 2 : 1; }
  std::size_t sin() const { return microsoft ? 3 : 2; }
};

Expected<void> build_rotary_embedding(PlanBuilder& b, const Node& node) {
  const RotaryInputs in{node.domain == "com.microsoft"};
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "rotary_embedding", t,
      fmt::format("i64 n, i64 seq, i64 heads, i64 head, i64 rotary, int interleaved, i64 batch_stride, "
                  "i64 seq_stride, i64 head_stride, const {0}* x, const {0}* cos_cache, const {0}* sin_cache, "
                  "const i64* position_ids, int first_position_only, i64 cache_rows, {0}* y",
                  t),
      "n, seq, heads, head, rotary, interleaved, batch_stride, seq_stride, head_stride, x, cos_cache, sin_cache, "
      "position_ids, first_position_only, cache_rows, y");
  const AttributeMap attrs = node.attributes;
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const bool with_ids = ctx.has_input(in.position_ids());
    const Shape& cos = ctx.input(in.cos()).shape();
    const Shape& sin = ctx.input(in.sin()).shape();
    const Shape* ids = given_shape(ctx, in.position_ids());
    auto p = in.microsoft ? plan_microsoft_rotary_embedding(attrs, x.shape(), *ids, cos, sin)
                          : plan_rotary_embedding(attrs, x.shape(), cos, sin, ids);
    if (!p) return std::unexpected(p.error());
    auto y = ctx.output(0, dtype, x.shape());
    if (!y) return std::unexpected(y.error());
    if (x.numel() == 0) return {};
    KernelArgs args;
    args.add(x.numel()).add(p->seq).add(p->heads).add(p->head_size).add(p->rotary_dim).add(int{p->interleaved});
    args.add(p->batch_stride).add(p->seq_stride).add(p->head_stride).ptr(dev(x)).ptr(dev(ctx.input(in.cos())));
    args.ptr(dev(ctx.input(in.sin()))).ptr(with_ids ? dev(ctx.input(in.position_ids())) : nullptr);
    args.add(int{p->first_position_only}).add(p->cache_rows).ptr(dev_mut(*y));
    return ctx.launch(kernel, x.numel(), args);
  }));
  return {};
}

// ---- Attention ----

KernelMatch check_attention(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_attention_node(ctx));
  return require_float(ctx, {0, 1, 2});
}

KernelDims head_strides(const HeadStrides& s) { return to_kernel_dims(std::vector<int64_t>{s.batch, s.head, s.seq}); }

Expected<void> build_attention(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "attention", t,
      fmt::format("i64 row0, i64 rows, i64 q_heads, i64 q_seq, i64 kv_heads, i64 head, i64 v_head, i64 total, "
                  "i64 past, const {0}* q, Dims qs, const {0}* k, Dims ks, const {0}* v, Dims vs, const {0}* past_k, "
                  "const {0}* past_v, const {0}* fmask, const bool* bmask, Dims ms, const i64* nonpad, float scale, "
                  "float softcap, int causal, int softmax_float, float* scores, {0}* qk, int qk_mode, {0}* y, Dims ys",
                  t),
      "row0, rows, q_heads, q_seq, kv_heads, head, v_head, total, past, q, qs, k, ks, v, vs, past_k, past_v, fmask, "
      "bmask, ms, nonpad, scale, softcap, causal, softmax_float, scores, qk, qk_mode, y, ys");
  const std::string copy = strided_copy_kernel(b, dtype);
  const AttentionAttrs attrs = AttentionAttrs::of(node.attributes);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto p = plan_attention(attrs, ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape(),
                            given_shape(ctx, 3), given_shape(ctx, 4), given_shape(ctx, 5), given_shape(ctx, 6));
    if (!p) return std::unexpected(p.error());
    auto y = ctx.output(0, dtype, p->y_shape);
    if (!y) return std::unexpected(y.error());
    // present_key and present_value: the past rows, then K's or V's (as [batch, kv_heads, seq, size]).
    for (std::size_t o : {1, 2}) {
      if (!ctx.wants_output(o)) continue;
      const int64_t size = o == 1 ? p->head_size : p->v_head_size;
      auto present = ctx.output(o, dtype, o == 1 ? p->present_key_shape : p->present_value_shape);
      if (!present) return std::unexpected(present.error());
      const Shape out_strides = contiguous_strides(o == 1 ? p->present_key_shape : p->present_value_shape);
      if (ctx.has_input(o + 3) && p->past_seq > 0) {
        const Shape past_shape{p->batch, p->kv_heads, p->past_seq, size};
        if (auto r = strided_copy(ctx, copy, past_shape, contiguous_strides(past_shape), 0, dev(ctx.input(o + 3)),
                                  out_strides, 0, dev_mut(*present));
            !r)
          return r;
      }
      const HeadStrides in = o == 1 ? p->k : p->v;
      if (auto r = strided_copy(ctx, copy, Shape{p->batch, p->kv_heads, p->kv_seq, size},
                                Shape{in.batch, in.head, in.seq, 1}, 0, dev(ctx.input(o)), out_strides,
                                p->past_seq * out_strides[2], dev_mut(*present));
          !r)
        return r;
    }
    void* qk = nullptr;
    if (ctx.wants_output(3)) {
      auto out = ctx.output(3, dtype, p->qk_shape);
      if (!out) return std::unexpected(out.error());
      qk = dev_mut(*out);
    }
    const int64_t rows = p->batch * p->q_heads * p->q_seq;
    if (rows == 0 || p->v_head_size == 0) return {};
    const int64_t chunk = std::max<int64_t>(1, kAttentionScoresPerChunk / std::max<int64_t>(p->total_seq, 1));
    auto scores = ctx.scratch(static_cast<std::size_t>(std::min(chunk, rows) * std::max<int64_t>(p->total_seq, 1)) *
                              sizeof(float));
    if (!scores) return std::unexpected(scores.error());
    const bool bool_mask = ctx.has_input(3) && ctx.input(3).dtype() == DType::kBool;
    for (int64_t row0 = 0; row0 < rows; row0 += chunk) {
      KernelArgs args;
      args.add(row0).add(std::min(chunk, rows - row0)).add(p->q_heads).add(p->q_seq).add(p->kv_heads);
      args.add(p->head_size).add(p->v_head_size).add(p->total_seq).add(p->past_seq);
      args.ptr(dev(ctx.input(0))).add(head_strides(p->q)).ptr(dev(ctx.input(1))).add(head_strides(p->k));
      args.ptr(dev(ctx.input(2))).add(head_strides(p->v));
      args.ptr(ctx.has_input(4) ? dev(ctx.input(4)) : nullptr).ptr(ctx.has_input(5) ? dev(ctx.input(5)) : nullptr);
      args.ptr(ctx.has_input(3) && !bool_mask ? dev(ctx.input(3)) : nullptr)
          .ptr(bool_mask ? dev(ctx.input(3)) : nullptr);
      args.add(to_kernel_dims(p->mask_strides)).ptr(p->nonpad_lengths ? dev(ctx.input(6)) : nullptr);
      args.add(p->scale).add(attrs.softcap).add(int{attrs.causal});
      args.add(int{attrs.softmax_in_float}).ptr(dev_mut(*scores)).ptr(qk).add(static_cast<int>(attrs.qk_output_mode));
      args.ptr(dev_mut(*y)).add(head_strides(p->y));
      if (auto r = ctx.launch_rows(kernel, std::min(chunk, rows - row0), kRowBlockThreads, args); !r) return r;
    }
    return {};
  }));
  return {};
}

// ---- TensorScatter ----

KernelMatch check_tensor_scatter(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_tensor_scatter_node(ctx));
  return require_fixed_size(ctx, 0);
}

Expected<void> build_tensor_scatter(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(element_type(dtype));
  const std::string kernel = b.instantiate(
      "tensor_scatter", t,
      fmt::format("i64 n, i64 per_batch, i64 cache_len, i64 update_len, i64 inner, int circular, const i64* write, "
                  "const {0}* update, {0}* out",
                  t),
      "n, per_batch, cache_len, update_len, inner, circular, write, update, out");
  const AttributeMap attrs = node.attributes;
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& cache = ctx.input(0);
    const Tensor& update = ctx.input(1);
    const bool indexed = ctx.has_input(2);
    auto p = plan_tensor_scatter(attrs, cache.shape(), update.shape(), given_shape(ctx, 2));
    if (!p) return std::unexpected(p.error());
    auto y = ctx.output(0, dtype, cache.shape());
    if (!y) return std::unexpected(y.error());
    if (cache.numel() == 0) return {};
    if (auto r =
            ctx.copy_on_device(dev_mut(*y), dev(cache), static_cast<std::size_t>(cache.numel()) * dtype_size(dtype));
        !r)
      return r;
    if (update.numel() == 0) return {};
    KernelArgs args;
    args.add(update.numel()).add(p->outer / p->batch).add(p->cache_len).add(p->update_len).add(p->inner);
    args.add(int{p->circular}).ptr(indexed ? dev(ctx.input(2)) : nullptr).ptr(dev(update)).ptr(dev_mut(*y));
    return ctx.launch(kernel, update.numel(), args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> transformer_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("RMSNormalization", 23, check_rms_norm, build_rms_norm));
  ops.push_back(make_op("SimplifiedLayerNormalization", 1, check_rms_norm, build_rms_norm));
  ops.push_back(make_op("RotaryEmbedding", 23, check_rotary_embedding, build_rotary_embedding));
  ops.push_back(make_microsoft_op("RotaryEmbedding", check_microsoft_rotary_embedding, build_rotary_embedding));
  for (CudaOpDef& op : make_op_versions("Attention", {23, 24}, check_attention, build_attention))
    ops.push_back(std::move(op));
  ops.push_back(make_op("TensorScatter", 24, check_tensor_scatter, build_tensor_scatter));
  return ops;
}

}  // namespace nxrt::cuda
