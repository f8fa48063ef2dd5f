// ONNX Runtime's com.microsoft EmbedLayerNormalization (nxrt/ep/embed_layer_normalization.h, which
// checks the node and plans a run): a block per token gathers its table rows and normalizes
// their sum (kernel_library's embed_layer_norm); mask_index a thread per batch entry. Tables of
// float, float16 or bfloat16, computed in float. An id outside its table adds zeros (the cpu EP
// reports it; checking ids here would read them back and wait for the stream).
#include <fmt/format.h>

#include "nxrt/ep/embed_layer_normalization.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_cuda_embed_layer_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {kEmbedWordTable}));
  return check_embed_layer_normalization_node(ctx);
}

Expected<void> build_embed_layer_norm(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[kEmbedWordTable]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "embed_layer_norm", t,
      fmt::format("i64 tokens, i64 seq, i64 hidden, const int* ids, const int* segment_ids, const int* position_ids, "
                  "int ids_per_batch, const {0}* words, i64 word_rows, const {0}* positions, i64 position_rows, "
                  "const {0}* segments, i64 segment_rows, const {0}* gamma, const {0}* beta, float eps, {0}* y, "
                  "{0}* sum_out",
                  t),
      "tokens, seq, hidden, ids, segment_ids, position_ids, ids_per_batch, words, word_rows, positions, "
      "position_rows, segments, segment_rows, gamma, beta, eps, y, sum_out");
  const std::string count_kernel = b.instantiate(
      "embed_mask_index", "int", "i64 batch, i64 seq, const int* mask, int* out", "batch, seq, mask, out");
  const float eps = node.attributes.float_or("epsilon", 1e-12f);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto planned = plan_embed_layer_normalization(EmbedLayerNormalizationShapes::of(ctx));
    if (!planned) return forward_error(std::move(planned), ctx.where());
    const EmbedLayerNormalizationPlan& p = *planned;
    const Shape out_shape{p.batch, p.seq, p.hidden};
    auto y = ctx.output(0, dtype, out_shape);
    if (!y) return std::unexpected(y.error());
    if (ctx.wants_output(1)) {  // mask_index: counts of ones, zeros without a mask
      auto counts = ctx.output(1, DType::kInt32, {p.batch});
      if (!counts) return std::unexpected(counts.error());
      if (!ctx.has_input(kEmbedMask)) {
        if (auto r = ctx.zero(dev_mut(*counts), static_cast<std::size_t>(p.batch) * sizeof(int32_t)); !r) return r;
      } else if (p.batch > 0) {
        KernelArgs args;
        args.add(p.batch).add(p.seq).ptr(dev(ctx.input(kEmbedMask))).ptr(dev_mut(*counts));
        if (auto r = ctx.launch(count_kernel, p.batch, args); !r) return r;
      }
    }
    void* sum = nullptr;
    if (ctx.wants_output(2)) {
      auto out = ctx.output(2, dtype, out_shape);
      if (!out) return std::unexpected(out.error());
      sum = dev_mut(*out);
    }
    const int64_t tokens = p.batch * p.seq;
    if (tokens == 0 || p.hidden == 0) return {};
    auto input = [&](std::size_t i) { return ctx.has_input(i) ? dev(ctx.input(i)) : nullptr; };
    auto rows = [&](std::size_t i) { return ctx.has_input(i) ? ctx.input(i).shape()[0] : int64_t{0}; };
    KernelArgs args;
    args.add(tokens).add(p.seq).add(p.hidden).ptr(input(kEmbedInputIds)).ptr(input(kEmbedSegmentIds));
    args.ptr(input(kEmbedPositionIds)).add(int{p.position_ids_per_batch});
    args.ptr(input(kEmbedWordTable)).add(rows(kEmbedWordTable)).ptr(input(kEmbedPositionTable));
    args.add(rows(kEmbedPositionTable)).ptr(input(kEmbedSegmentTable)).add(rows(kEmbedSegmentTable));
    args.ptr(input(kEmbedGamma)).ptr(input(kEmbedBeta)).add(eps).ptr(dev_mut(*y)).ptr(sum);
    return ctx.launch_rows(kernel, tokens, kRowBlockThreads, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> embed_layer_normalization_ops() {
  return {make_microsoft_op("EmbedLayerNormalization", check_cuda_embed_layer_norm, build_embed_layer_norm)};
}

}  // namespace nxrt::cuda
