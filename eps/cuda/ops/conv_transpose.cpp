// ConvTranspose through cuDNN: the backward data pass of the convolution that maps the
// output back to the input (1-D as 2-D, 2-D and 3-D; groups; output_padding; bias after).
// cuDNN pads both sides of a dim alike; uneven pads (asymmetric ones, auto_pad SAME_*, or
// those output_shape implies) run with the smaller pad on both sides into scratch, and the
// output is the window of it that the real pads leave.
#include <fmt/format.h>

#include <memory>

#include "ops/cudnn_conv.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_conv_transpose(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_conv_common(ctx));
  const auto spatial = static_cast<std::size_t>(*ctx.input_rank(0) - 2);
  const WindowAttrs w = read_window_attrs(ctx.attrs(), spatial);
  const auto padding = ctx.attrs().ints_or("output_padding", std::vector<int64_t>(spatial, 0));
  NXRT_REQUIRE(padding.size() == spatial, "ConvTranspose: output_padding has {} values for {} spatial dims", padding.size(),
               spatial);
  for (std::size_t i = 0; i < spatial; ++i)
    NXRT_REQUIRE(padding[i] >= 0 && padding[i] < w.strides[i],
                 "ConvTranspose: output_padding {} is not below the stride {} in dim {}; cuDNN cannot express it",
                 padding[i], w.strides[i], i);
  if (const auto shape = ctx.attrs().get_ints("output_shape"))
    NXRT_REQUIRE(shape->size() == spatial || shape->size() == spatial + 2,
                 "ConvTranspose: output_shape has {} values for {} spatial dims", shape->size(), spatial);
  return KernelMatch::supported();
}

// The pads at the begin and end of each spatial dim (ONNX's rules): from output_shape, which
// fixes their total, or from auto_pad SAME_* (an output of input·stride), else the pads
// attribute (VALID: none). A negative end pad extends the output; how far it may is checked
// here.
Expected<std::pair<Shape, Shape>> transpose_pads(const StepContext& ctx, const WindowAttrs& attrs,
                                                 const std::optional<std::vector<int64_t>>& output_shape,
                                                 const std::vector<int64_t>& padding, const Shape& xs, const Shape& ws) {
  const std::size_t spatial = xs.size() - 2;
  Shape begin(spatial, 0), end(spatial, 0);
  for (std::size_t i = 0; i < spatial; ++i) {
    const int64_t full = attrs.strides[i] * (xs[2 + i] - 1) + padding[i] + attrs.dilations[i] * (ws[2 + i] - 1) + 1;
    const bool same = attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER";
    if (output_shape || same) {
      const int64_t wanted = output_shape ? (*output_shape)[output_shape->size() - spatial + i] : xs[2 + i] * attrs.strides[i];
      const int64_t total = full - wanted;
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor(total / 2), as ONNX's reference
      begin[i] = attrs.auto_pad == "SAME_UPPER" ? half : total - half;
      end[i] = total - begin[i];
    } else if (attrs.auto_pad != "VALID") {
      begin[i] = attrs.pads[i];
      end[i] = attrs.pads[i + spatial];
    }
    // A negative end pad extends the output past what the convolution reaches (zeros, plus the
    // bias), which cuDNN can do by less than a stride; a negative begin pad it cannot.
    if (begin[i] < 0 || padding[i] - end[i] >= attrs.strides[i])
      return fail(ErrorCode::kRuntime, fmt::format("{}: dim {} would need pads {} and {}; the output asked for is larger than "
                                                   "the transposed convolution of {} reaches",
                                                   ctx.where(), i + 2, begin[i], end[i], shape_to_string(xs)),
                  "cuDNN can extend the output at the end by less than a stride (output_padding included)",
                  "give an output_shape (or pads) the convolution can produce");
  }
  return std::pair(std::move(begin), std::move(end));
}

// The backward data algorithm for `d` (x: the output, y: the input): the first runnable one
// of cuDNN's ranking.
Expected<ConvAlgorithm> choose_backward_data_algorithm(const DnnApi& api, cudnnHandle_t h, const StepContext& ctx, const ConvDescriptors& d) {
  cudnnConvolutionBwdDataAlgoPerf_t ranked[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT]{};
  int found = 0;
  if (auto r = check_dnn(api, ctx,
                         api.get_convolution_backward_data_algorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, ranked),
                         "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      !r)
    return std::unexpected(r.error());
  if (const int i = first_runnable(ranked, found); i >= 0) {
    if (auto r = use_ranked_math(api, ctx, d, ranked[i].mathType); !r) return std::unexpected(r.error());
    std::size_t workspace = 0;
    if (auto r = check_dnn(api, ctx,
                           api.get_convolution_backward_data_workspace_size(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                                            ranked[i].algo, &workspace),
                           "cudnnGetConvolutionBackwardDataWorkspaceSize");
        !r)
      return std::unexpected(r.error());
    return ConvAlgorithm{ranked[i].algo, ranked[i].mathType, workspace};
  }
  return fail(ErrorCode::kRuntime, fmt::format("{}: cuDNN has no backward data algorithm for this ConvTranspose", ctx.where()),
              fmt::format("none of the {} it ranked runs within {} MiB of workspace", found, kMaxWorkspaceBytes >> 20),
              "use the cpu EP for this node");
}

Expected<void> build_conv_transpose(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const auto spatial = static_cast<std::size_t>(*static_rank(b.graph(), node, 0) - 2);
  const WindowAttrs attrs = read_window_attrs(node.attributes, spatial);
  const auto padding = node.attributes.ints_or("output_padding", std::vector<int64_t>(spatial, 0));
  const auto output_shape = node.attributes.get_ints("output_shape");
  const int64_t group = node.attributes.int_or("group", 1);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  const std::string copy = strided_copy_kernel(b, dtype);
  auto cache = std::make_shared<AlgorithmCache>();
  b.add_step(make_step(node, "cudnn", [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    if (xs.size() != spatial + 2 || ws.size() != spatial + 2 || xs[1] != ws[0] || ws[0] % group != 0)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} and weights {} do not match (group {})", ctx.where(),
                                                   shape_to_string(xs), shape_to_string(ws), group));
    auto pads = transpose_pads(ctx, attrs, output_shape, padding, xs, ws);
    if (!pads) return std::unexpected(pads.error());
    const auto& [begin, end] = *pads;
    // out = stride·(in - 1) + output_padding + dilation·(kernel - 1) + 1 - pads. cuDNN runs with
    // the smaller pad of each dim on both sides, and a negative end pad as extra rows (`full`);
    // the output starts `offset` into it.
    WindowAttrs even = attrs;
    even.auto_pad = "NOTSET";
    Shape ys = {xs[0], ws[1] * group}, full = ys, offset(spatial + 2, 0);
    for (std::size_t i = 0; i < spatial; ++i) {
      const int64_t reach = attrs.strides[i] * (xs[2 + i] - 1) + padding[i] + attrs.dilations[i] * (ws[2 + i] - 1) + 1;
      const int64_t p = std::min(begin[i], std::max<int64_t>(end[i], 0));
      even.pads[i] = even.pads[i + spatial] = p;
      ys.push_back(reach - begin[i] - end[i]);
      full.push_back(reach - 2 * p + std::max<int64_t>(-end[i], 0));
      offset[2 + i] = begin[i] - p;
      if (ys.back() < 1)
        return fail(ErrorCode::kRuntime, fmt::format("{}: the output of {} would have {} elements in dim {}", ctx.where(),
                                                     shape_to_string(xs), ys.back(), i + 2));
    }
    auto y = ctx.output(0, dtype, ys);
    if (!y) return std::unexpected(y.error());
    if (y->numel() == 0) return {};
    Tensor target = *y;
    if (full != ys) {
      auto scratch = ctx.scratch(static_cast<std::size_t>(shape_numel(full)) * dtype_size(dtype));
      if (!scratch) return std::unexpected(scratch.error());
      target = std::move(*scratch);
    }
    // The convolution from the output (its input) back to the input (its output).
    auto window = plan_window(even, std::span(full).subspan(2), std::span(ws).subspan(2), ctx.where());
    if (!window) return std::unexpected(window.error());
    auto p = prepare_convolution(ctx, dtype, full, ws, xs, *window, spatial, group, *cache, choose_backward_data_algorithm);
    if (!p) return std::unexpected(p.error());
    const DnnApi& api = p->library.api;
    const float one = 1.f, zero = 0.f;
    if (auto r = check_dnn(api, ctx,
                           api.convolution_backward_data(p->library.handle, &one, p->d.w.get(), dev(w), p->d.y.get(), dev(x),
                                                         p->d.conv.get(),
                                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(p->algorithm.algo),
                                                         dev_mut(p->workspace), p->algorithm.workspace, &zero, p->d.x.get(),
                                                         dev_mut(target)),
                           "cudnnConvolutionBackwardData");
        !r)
      return r;
    if (has_bias)
      if (auto r = add_channel_bias(api, p->library.handle, ctx, p->d.type, ctx.input(2), full[1], spatial, p->d.x, dev_mut(target)); !r)
        return r;
    if (full == ys) return {};
    const Shape strides = contiguous_strides(full);
    int64_t start = 0;
    for (std::size_t d = 0; d < full.size(); ++d) start += offset[d] * strides[d];
    return strided_copy(ctx, copy, ys, strides, start, dev(target), contiguous_strides(ys), 0, dev_mut(*y));
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> conv_transpose_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("ConvTranspose", 1, check_conv_transpose, build_conv_transpose));
  return ops;
}

}  // namespace nxrt::cuda
