// RoiAlign (10 and 16) of float, float16 and bfloat16 maps: one thread per output element samples its
// bin bilinearly (lib reads the attributes, as the cpu EP does).
#include <fmt/format.h>

#include "nxrt/ep/roi_align.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_roi_align(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1}));
  return check_roi_align_node(ctx);
}

Expected<void> build_roi_align(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const RoiAlignAttrs a = read_roi_align_attrs(node.attributes, node.opset);
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "roi_align", t,
      fmt::format("i64 n, i64 channels, i64 height, i64 width, i64 out_h, i64 out_w, i64 ratio, double scale, int half_pixel, "
                  "int is_max, const {0}* x, const {0}* rois, const i64* batch, i64 batch_size, {0}* y",
                  t),
      "n, channels, height, width, out_h, out_w, ratio, scale, half_pixel, is_max, x, rois, batch, batch_size, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    const Tensor& batch = ctx.input(2);
    const Shape& xs = x.shape();
    if (xs.size() != 4 || rois.shape().size() != 2 || rois.shape()[1] != 4)
      return fail(ErrorCode::kRuntime, fmt::format("{}: X {} and rois {} do not have shapes (N,C,H,W) and (num_rois,4)",
                                                   ctx.where(), shape_to_string(xs), shape_to_string(rois.shape())));
    const int64_t num_rois = rois.shape()[0];
    if (batch.numel() != num_rois)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: batch_indices has {} values for {} rois", ctx.where(), batch.numel(), num_rois));
    auto y = ctx.output(0, dtype, {num_rois, xs[1], a.out_h, a.out_w});
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(xs[1]).add(xs[2]).add(xs[3]).add(a.out_h).add(a.out_w).add(a.sampling_ratio).add(a.spatial_scale);
    args.add(a.half_pixel ? 1 : 0).add(a.max ? 1 : 0).ptr(dev(x)).ptr(dev(rois)).ptr(dev(batch)).add(xs[0]).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> roi_align_ops() { return make_op_versions("RoiAlign", {10, 16}, check_roi_align, build_roi_align); }

}  // namespace nxrt::cuda
