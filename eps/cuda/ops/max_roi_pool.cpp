// MaxRoiPool (1 and 22) of float, float16 and bfloat16 maps: one thread per output element takes
// the maximum of its bin (lib reads the attributes, as the cpu EP does). A roi whose batch index
// is not an image of X gives zeros, where the cpu EP reports it: the rois stay on the device.
#include <fmt/format.h>

#include "nxrt/ep/max_roi_pool.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_max_roi_pool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1}));
  return check_max_roi_pool_node(ctx);
}

Expected<void> build_max_roi_pool(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const MaxRoiPoolAttrs a = read_max_roi_pool_attrs(node.attributes);
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "max_roi_pool", t,
      fmt::format("i64 n, i64 batch_size, i64 channels, i64 height, i64 width, i64 pooled_h, i64 pooled_w, float scale, "
                  "const {0}* x, const {0}* rois, {0}* y",
                  t),
      "n, batch_size, channels, height, width, pooled_h, pooled_w, scale, x, rois, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    if (auto shapes = check_max_roi_pool_shapes(x.shape(), rois.shape()); !shapes) return shapes;
    const Shape& xs = x.shape();
    auto y = ctx.output(0, dtype, {rois.shape()[0], xs[1], a.pooled_h, a.pooled_w});
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(xs[0]).add(xs[1]).add(xs[2]).add(xs[3]).add(a.pooled_h).add(a.pooled_w).add(a.spatial_scale);
    args.ptr(dev(x)).ptr(dev(rois)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> max_roi_pool_ops() {
  return make_op_versions("MaxRoiPool", {1, 22}, check_max_roi_pool, build_max_roi_pool);
}

}  // namespace nxrt::cuda
