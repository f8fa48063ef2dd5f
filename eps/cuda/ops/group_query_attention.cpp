// ONNX Runtime's com.microsoft GroupQueryAttention (inputs, outputs and semantics in
// nxrt/ep/group_query_attention.h, which plans a run from seqlens_k and total_sequence_length,
// read on the host): present_key and present_value written by a thread per element (the cached
// rows, the new ones, keys rotated with do_rotary, zeros after), the new queries rotated into
// scratch with do_rotary, then a block per (batch, head, query) row attends over the present
// rows it sees (kernel_library's gqa_attention). Float, float16 and bfloat16, computed in float.
#include <fmt/format.h>

#include <algorithm>

#include "nxrt/ep/group_query_attention.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_group_query_attention(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {kGqaQuery}));
  return check_group_query_attention_node(ctx, "cuda");
}

// seqlens_k and total_sequence_length on the host, and the run's plan.
Expected<GroupQueryAttentionPlan> plan_gqa_run(StepContext& ctx, const GroupQueryAttentionAttrs& attrs) {
  auto seqlens = ctx.input_on_host(kGqaSeqlensK);
  if (!seqlens) return std::unexpected(seqlens.error());
  auto total = ctx.input_on_host(kGqaTotal);
  if (!total) return std::unexpected(total.error());
  auto plan = plan_group_query_attention(attrs, GroupQueryAttentionShapes::of(ctx), *seqlens, *total);
  if (!plan) return forward_error(std::move(plan), ctx.where());
  return plan;
}

Expected<void> build_group_query_attention(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[kGqaQuery]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string present_kernel = b.instantiate(
      "gqa_present", t,
      fmt::format("i64 n, i64 kv_heads, i64 rows, i64 head, i64 seq, const {0}* past, i64 past_rows, "
                  "const {0}* fresh, i64 fresh_stride, const int* seqlens, int first_prompt, i64 rotary, "
                  "int interleaved, const {0}* cos_cache, const {0}* sin_cache, {0}* present",
                  t),
      "n, kv_heads, rows, head, seq, past, past_rows, fresh, fresh_stride, seqlens, first_prompt, rotary, "
      "interleaved, cos_cache, sin_cache, present");
  const std::string rotate_kernel = b.instantiate(
      "gqa_rotate_query", t,
      fmt::format("i64 n, i64 heads, i64 head, i64 seq, const {0}* q, i64 q_stride, const int* seqlens, "
                  "int first_prompt, i64 rotary, int interleaved, const {0}* cos_cache, const {0}* sin_cache, "
                  "{0}* out",
                  t),
      "n, heads, head, seq, q, q_stride, seqlens, first_prompt, rotary, interleaved, cos_cache, sin_cache, out");
  const std::string attend_kernel = b.instantiate(
      "gqa_attention", t,
      fmt::format("i64 row0, i64 rows, i64 heads, i64 seq, i64 kv_heads, i64 head, i64 present_rows, const {0}* q, "
                  "i64 q_stride, const {0}* keys, const {0}* values, const int* seqlens, int first_prompt, "
                  "i64 window, float scale, float softcap, int smooth, float* scores, {0}* y",
                  t),
      "row0, rows, heads, seq, kv_heads, head, present_rows, q, q_stride, keys, values, seqlens, first_prompt, "
      "window, scale, softcap, smooth, scores, y");
  const GroupQueryAttentionAttrs at = GroupQueryAttentionAttrs::of(node.attributes);
  b.add_step(make_step(node, "nvrtc:" + attend_kernel, [=](StepContext& ctx) -> Expected<void> {
    auto planned = plan_gqa_run(ctx, at);
    if (!planned) return std::unexpected(planned.error());
    const GroupQueryAttentionPlan& p = *planned;
    const int64_t hs = p.head_size, q_width = p.query_width(at);
    auto y = ctx.output(0, dtype, {p.batch, p.seq, at.heads * hs});
    if (!y) return std::unexpected(y.error());
    // Present key and value: outputs when asked for, else scratch.
    const Shape present_shape{p.batch, at.kv_heads, p.present_rows, hs};
    const int64_t present_numel = shape_numel(present_shape);
    Tensor present[2];
    for (std::size_t i : {0, 1}) {
      auto out = output_or_scratch(ctx, 1 + i, dtype, present_shape);
      if (!out) return std::unexpected(out.error());
      present[i] = std::move(*out);
    }
    const void* query = dev(ctx.input(kGqaQuery));
    const void* seqlens = dev(ctx.input(kGqaSeqlensK));
    const void* cos = at.rotary ? dev(ctx.input(kGqaCos)) : nullptr;
    const void* sin = at.rotary ? dev(ctx.input(kGqaSin)) : nullptr;
    const int64_t rotary = at.rotary ? p.rotary_dim : 0;
    const int first_prompt = p.first_prompt;
    if (present_numel > 0)
      for (std::size_t i : {0, 1}) {
        const int64_t packed_offset = (i == 0 ? at.heads : at.heads + at.kv_heads) * hs;
        const void* fresh =
            p.packed ? advance(query, packed_offset, dtype) : dev(ctx.input(i == 0 ? kGqaKey : kGqaValue));
        KernelArgs args;
        args.add(present_numel).add(at.kv_heads).add(p.present_rows).add(hs).add(p.seq);
        args.ptr(ctx.has_input(kGqaPastKey + i) ? dev(ctx.input(kGqaPastKey + i)) : nullptr);
        args.add(std::max<int64_t>(p.past_rows, 0));
        args.ptr(fresh).add(p.packed ? q_width : at.kv_heads * hs).ptr(seqlens).add(first_prompt);
        args.add(i == 0 ? rotary : int64_t{0}).add(int{at.interleaved}).ptr(cos).ptr(sin).ptr(dev_mut(present[i]));
        if (auto r = ctx.launch(present_kernel, present_numel, args); !r) return r;
      }
    const int64_t rows = p.batch * at.heads * p.seq;
    if (rows == 0 || hs == 0) return {};
    // The queries the rows read: rotated into scratch ([batch, seq, heads, head]) with do_rotary.
    const void* q = query;
    int64_t q_stride = q_width;
    Tensor rotated;
    if (at.rotary) {
      auto scratch = ctx.scratch(static_cast<std::size_t>(rows * hs) * dtype_size(dtype));
      if (!scratch) return std::unexpected(scratch.error());
      rotated = std::move(*scratch);
      KernelArgs args;
      args.add(rows * hs).add(at.heads).add(hs).add(p.seq).ptr(query).add(q_width).ptr(seqlens).add(first_prompt);
      args.add(rotary).add(int{at.interleaved}).ptr(cos).ptr(sin).ptr(dev_mut(rotated));
      if (auto r = ctx.launch(rotate_kernel, rows * hs, args); !r) return r;
      q = dev(rotated), q_stride = at.heads * hs;
    }
    const int64_t keys = std::max<int64_t>(p.present_rows, 1);
    const int64_t chunk = std::max<int64_t>(1, kAttentionScoresPerChunk / keys);
    auto scores = ctx.scratch(static_cast<std::size_t>(std::min(chunk, rows) * keys) * sizeof(float));
    if (!scores) return std::unexpected(scores.error());
    for (int64_t row0 = 0; row0 < rows; row0 += chunk) {
      KernelArgs args;
      args.add(row0).add(std::min(chunk, rows - row0)).add(at.heads).add(p.seq).add(at.kv_heads).add(hs);
      args.add(p.present_rows).ptr(q).add(q_stride).ptr(dev(present[0])).ptr(dev(present[1])).ptr(seqlens);
      args.add(first_prompt).add(at.local_window).add(at.scale_for(hs)).add(at.softcap).add(int{at.smooth_softmax});
      args.ptr(dev_mut(*scores)).ptr(dev_mut(*y));
      if (auto r = ctx.launch_rows(attend_kernel, std::min(chunk, rows - row0), kRowBlockThreads, args); !r) return r;
    }
    return {};
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> group_query_attention_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_microsoft_op("GroupQueryAttention", check_group_query_attention, build_group_query_attention));
  return ops;
}

}  // namespace nxrt::cuda
