// ConvInteger and QLinearConv of int8 and uint8 operands, 1 to 3 spatial dims, any pads,
// strides, dilations and groups, in one generated kernel: a thread per output element sums its
// window's zero-point-shifted products in int32 (padding adds nothing); QLinearConv adds the
// bias and requantizes the sum with the scales. A direct loop rather than cuDNN, whose int8
// convolutions take neither zero points nor NCHW.
#include <fmt/format.h>

#include <utility>
#include <vector>

#include "nxrt/ir/window.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// Where each operand is: ConvInteger has x, w, x_zero_point, w_zero_point; QLinearConv has
// x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
struct IntConvInputs {
  std::size_t x, w, x_zero, w_zero;
};
IntConvInputs inputs_of(const Node& node) { return node.op_type == "QLinearConv" ? IntConvInputs{0, 3, 2, 5} : IntConvInputs{0, 1, 2, 3}; }

// X and W quantized, of known and equal rank with 1 to 3 spatial dims, a scalar x_zero_point,
// w_zero_point a scalar or one per output channel, and window attributes that fit.
KernelMatch check_int_conv_common(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const IntConvInputs in = inputs_of(ctx.node());
  NXRT_REQUIRE_MATCH(require_quantized(ctx, in.x, "x"));
  NXRT_REQUIRE_MATCH(require_quantized(ctx, in.w, "w"));
  const auto rank = ctx.input_rank(in.x);
  NXRT_REQUIRE(rank.has_value(), "{}: the rank of x is unknown; the cuda EP needs it (give --shape)", op);
  NXRT_REQUIRE(*rank >= 3 && *rank <= 5, "{}: x has rank {}; the cuda EP convolves 1 to 3 spatial dims", op, *rank);
  NXRT_REQUIRE(ctx.input_rank(in.x_zero).value_or(0) == 0, "{}: x_zero_point has rank {}; it must be a scalar", op,
               ctx.input_rank(in.x_zero).value_or(0));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, in.x_zero, "x_zero_point", ctx.input_dtype(in.x)));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, in.w_zero, "w_zero_point", ctx.input_dtype(in.w)));
  NXRT_REQUIRE(ctx.attrs().int_or("group", 1) >= 1, "{}: group {} is below 1", op, ctx.attrs().int_or("group", 1));
  return check_window_attrs(ctx, static_cast<std::size_t>(*rank - 2), false);
}

KernelMatch check_qlinear_conv(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_int_conv_common(ctx));
  NXRT_REQUIRE_MATCH(require_quantized(ctx, 7, "y_zero_point"));
  for (const auto& [i, what] : {std::pair<std::size_t, const char*>{1, "x_scale"}, {6, "y_scale"}}) {
    NXRT_REQUIRE(ctx.input_rank(i).value_or(0) == 0, "QLinearConv: {} has rank {}; it must be a scalar", what,
                 ctx.input_rank(i).value_or(0));
    NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, i, what, DType::kFloat32));
  }
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 4, "w_scale", DType::kFloat32));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 8, "B", DType::kInt32));
  return KernelMatch::supported();
}

Expected<void> build_int_conv(PlanBuilder& b, const Node& node) {
  const bool qlinear = node.op_type == "QLinearConv";
  const IntConvInputs in = inputs_of(node);
  const Graph& g = b.graph();
  const std::string tx(quantized_type(g.value(node.inputs[in.x]).type.dtype));
  const std::string tw(quantized_type(g.value(node.inputs[in.w]).type.dtype));
  const DType out = qlinear ? g.value(node.inputs[7]).type.dtype : DType::kInt32;
  const std::string ty = qlinear ? std::string(quantized_type(out)) : "int";
  const auto spatial = static_cast<std::size_t>(*static_rank(g, node, in.x) - 2);
  const WindowAttrs attrs = read_window_attrs(node.attributes, spatial);
  const int64_t group = node.attributes.int_or("group", 1);
  const std::string kernel = b.instantiate(
      "conv_integer", fmt::format("{}, {}, {}", tx, tw, ty),
      fmt::format("i64 n, i64 channels, i64 out_channels, i64 group, Dims in, Dims out, Dims kernel, Dims stride, Dims pad, "
                  "Dims dilation, const {0}* x, const {1}* w, const {0}* xz, const {1}* wz, i64 wz_count, const float* xs, "
                  "const float* ws, i64 ws_count, const float* y_scale, const {2}* y_zp, const int* bias, int lo, int hi, "
                  "{2}* y",
                  tx, tw, ty),
      "n, channels, out_channels, group, in, out, kernel, stride, pad, dilation, x, w, xz, wz, wz_count, xs, ws, ws_count, "
      "y_scale, y_zp, bias, lo, hi, y");
  const std::pair<int, int> bounds = out == DType::kInt8 ? std::pair(-128, 127) : std::pair(0, 255);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Shape& xs = ctx.input(in.x).shape();
    const Shape& ws = ctx.input(in.w).shape();
    if (xs.size() != spatial + 2 || ws.size() != spatial + 2 || xs[1] != ws[1] * group || ws[0] % group != 0)
      return fail(ErrorCode::kRuntime, fmt::format("{}: x {} and w {} do not fit group {}", ctx.where(), shape_to_string(xs),
                                                   shape_to_string(ws), group),
                  "w needs x's rank, x[1] / group input channels and a multiple of the group as output channels");
    auto window = plan_window(attrs, std::span(xs).subspan(2), std::span(ws).subspan(2), ctx.where());
    if (!window) return std::unexpected(window.error());
    const int64_t channels_out = ws[0];
    auto y = ctx.output(0, out, window_output_shape(xs[0], channels_out, *window, spatial));
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    // Per tensor or per output channel.
    auto per_channel = [&](std::size_t i, std::string_view what) {
      return scalar_or_vector(ctx, i, channels_out, what, "give one value, or one per output channel");
    };
    auto wz = per_channel(in.w_zero, "w_zero_point");
    auto w_scale = qlinear ? per_channel(4, "w_scale") : ScalarOrVector{};
    auto bias = qlinear ? per_channel(8, "B") : ScalarOrVector{};
    for (auto* r : {&wz, &w_scale, &bias})
      if (!*r) return std::unexpected(r->error());
    if (qlinear && bias->data && bias->count != channels_out)
      return fail(ErrorCode::kRuntime, fmt::format("{}: B has {} values; it needs {} (one per output channel)", ctx.where(),
                                                   bias->count, channels_out));
    const WindowKernelDims geometry = window_kernel_dims(*window);
    KernelArgs args;
    args.add(n).add(xs[1]).add(channels_out).add(group).add(geometry.in).add(geometry.out).add(geometry.kernel);
    args.add(geometry.stride).add(geometry.pad_begin).add(geometry.dilation);
    args.ptr(dev(ctx.input(in.x))).ptr(dev(ctx.input(in.w)));
    args.ptr(ctx.has_input(in.x_zero) ? dev(ctx.input(in.x_zero)) : nullptr).ptr(wz->data).add(wz->count);
    args.ptr(qlinear ? dev(ctx.input(1)) : nullptr).ptr(w_scale->data).add(w_scale->count);
    args.ptr(qlinear ? dev(ctx.input(6)) : nullptr).ptr(qlinear ? dev(ctx.input(7)) : nullptr).ptr(bias->data);
    args.add(bounds.first).add(bounds.second).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> integer_conv_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("ConvInteger", 10, check_int_conv_common, build_int_conv));
  ops.push_back(make_op("QLinearConv", 10, check_qlinear_conv, build_int_conv));
  return ops;
}

}  // namespace nxrt::cuda
