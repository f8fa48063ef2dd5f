// DeformConv-19/22 of float, float16 and bfloat16, 2-D (lib's nxrt/ep/deform_conv.h reads and
// checks it, as for the cpu EP): per image, a kernel unrolls X into columns of bilinear samples
// (one row per input channel and kernel tap, scaled by the mask), then cuBLASLt multiplies each
// group's weights by its rows of columns, the groups as one batched product; the bias is added
// after.
#include <fmt/format.h>

#include "blas.h"
#include "nxrt/ep/deform_conv.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_deform_conv(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2, 3, 4}));
  return check_deform_conv_node(ctx);
}

Expected<void> build_deform_conv(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const DeformConvAttrs attrs = read_deform_conv_attrs(node.attributes);
  const std::string t(float_type(dtype));
  const std::string columns = b.instantiate(
      "deform_columns", t,
      fmt::format("i64 n, i64 img, i64 channels, i64 height, i64 width, i64 out_w, i64 kernel_w, i64 taps, "
                  "i64 stride_h, i64 stride_w, i64 pad_top, i64 pad_left, i64 dilation_h, i64 dilation_w, "
                  "i64 offset_groups, const {0}* x, const {0}* offset, const {0}* mask, {0}* cols",
                  t),
      "n, img, channels, height, width, out_w, kernel_w, taps, stride_h, stride_w, pad_top, pad_left, dilation_h, "
      "dilation_w, offset_groups, x, offset, mask, cols");
  const std::string bias_kernel = b.instantiate(
      "add_channel_bias", t, fmt::format("i64 n, i64 channels, i64 pixels, int accumulate, const {0}* bias, {0}* y", t),
      "n, channels, pixels, accumulate, bias, y");
  b.add_step(make_step(node, "nvrtc:" + columns + "+cublasLt", [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor& offset = ctx.input(2);
    const Tensor* bias = ctx.has_input(3) ? &ctx.input(3) : nullptr;
    const Tensor* mask = ctx.has_input(4) ? &ctx.input(4) : nullptr;
    auto plan = plan_deform_conv(attrs, x.shape(), w.shape(), offset.shape(), bias ? &bias->shape() : nullptr,
                                 mask ? &mask->shape() : nullptr);
    if (!plan) return forward_error(std::move(plan), ctx.where());
    const DeformConvPlan& p = *plan;
    auto y = ctx.output(0, dtype, p.y_shape());
    if (!y) return std::unexpected(y.error());
    const int64_t group_in = p.channels / p.group, group_out = p.out_channels / p.group;
    const int64_t depth = group_in * p.taps(), pixels = p.pixels();
    const int64_t entries = p.channels * p.taps() * pixels;  // one image's columns
    if (y->numel() == 0) return {};
    // Y = the bias (0 without one), plus the products when there is anything to multiply.
    const auto add_bias = [&](bool accumulate) {
      KernelArgs args;
      args.add(y->numel()).add(p.out_channels).add(pixels).add(accumulate ? 1 : 0);
      args.ptr(bias ? dev(*bias) : nullptr).ptr(dev_mut(*y));
      return ctx.launch(bias_kernel, y->numel(), args);
    };
    if (depth == 0) return add_bias(false);
    auto cols = ctx.scratch(static_cast<std::size_t>(entries) * dtype_size(dtype));
    if (!cols) return std::unexpected(cols.error());
    for (int64_t n = 0; n < p.batch; ++n) {
      KernelArgs args;
      args.add(entries).add(n).add(p.channels).add(p.height).add(p.width).add(p.out_w).add(p.kernel_w).add(p.taps());
      args.add(p.stride_h).add(p.stride_w).add(p.pad_top).add(p.pad_left).add(p.dilation_h).add(p.dilation_w);
      args.add(p.offset_group).ptr(dev(x)).ptr(dev(offset)).ptr(mask ? dev(*mask) : nullptr).ptr(dev_mut(*cols));
      if (auto r = ctx.launch(columns, entries, args); !r) return r;
      // Y[n][g] (group_out x pixels) = W[g] (group_out x depth) . columns[g] (depth x pixels).
      MatmulProblem product;
      product.dtype = dtype;
      product.m = group_out, product.n = pixels, product.k = depth, product.batch = p.group;
      product.stride_a = group_out * depth, product.stride_b = depth * pixels;
      product.a = dev(w), product.b = dev(*cols), product.d = advance(dev_mut(*y), n * p.out_channels * pixels, dtype);
      if (auto r = run_matmul(ctx, product); !r) return r;
    }
    if (!bias) return {};
    return add_bias(true);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> deform_conv_ops() {
  return make_op_versions("DeformConv", {19, 22}, check_deform_conv, build_deform_conv);
}

}  // namespace nxrt::cuda
