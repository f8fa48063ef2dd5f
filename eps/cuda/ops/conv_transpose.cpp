// ConvTranspose through cuDNN: the backward data pass of the convolution that maps the
// output back to the input (1-D as 2-D, 2-D and 3-D; groups; output_padding; bias after).
#include <fmt/format.h>

#include <memory>

#include "ops/cudnn_conv.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_conv_transpose(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_conv_window(ctx));
  NXRT_REQUIRE(!ctx.attrs().has("output_shape"),
               "ConvTranspose: the output_shape attribute is not implemented by the cuda EP (give pads and "
               "output_padding instead)");
  const auto spatial = static_cast<std::size_t>(*ctx.input_rank(0) - 2);
  const WindowAttrs w = read_window_attrs(ctx.attrs(), spatial);
  const auto padding = ctx.attrs().ints_or("output_padding", std::vector<int64_t>(spatial, 0));
  NXRT_REQUIRE(padding.size() == spatial, "ConvTranspose: output_padding has {} values for {} spatial dims", padding.size(),
               spatial);
  for (std::size_t i = 0; i < spatial; ++i)
    NXRT_REQUIRE(padding[i] >= 0 && padding[i] < w.strides[i],
                 "ConvTranspose: output_padding {} is not below the stride {} in dim {}; cuDNN cannot express it",
                 padding[i], w.strides[i], i);
  return KernelMatch::supported();
}

// The backward data algorithm for `d` (x: the output, y: the input): the first runnable one
// of cuDNN's ranking.
Expected<ConvAlgorithm> choose_algorithm(const DnnApi& api, cudnnHandle_t h, const StepContext& ctx, const ConvDescriptors& d) {
  cudnnConvolutionBwdDataAlgoPerf_t ranked[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT]{};
  int found = 0;
  if (auto r = check_dnn(api, ctx,
                         api.get_convolution_backward_data_algorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(), d.x.get(),
                                                                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, ranked),
                         "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      !r)
    return std::unexpected(r.error());
  if (const int i = first_runnable(ranked, found); i >= 0) {
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
  const int64_t group = node.attributes.int_or("group", 1);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  auto cache = std::make_shared<AlgorithmCache>();
  b.add_step(make_step(node, "cudnn", [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    if (xs.size() != spatial + 2 || ws.size() != spatial + 2 || xs[1] != ws[0] || ws[0] % group != 0)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} and weights {} do not match (group {})", ctx.where(),
                                                   shape_to_string(xs), shape_to_string(ws), group));
    // out = stride·(in - 1) + output_padding + dilation·(kernel - 1) + 1 - pads (VALID: none).
    Shape ys = {xs[0], ws[1] * group};
    for (std::size_t i = 0; i < spatial; ++i) {
      const int64_t pads = attrs.auto_pad == "VALID" ? 0 : attrs.pads[i] + attrs.pads[i + spatial];
      ys.push_back(attrs.strides[i] * (xs[2 + i] - 1) + padding[i] + attrs.dilations[i] * (ws[2 + i] - 1) + 1 - pads);
      if (ys.back() < 1)
        return fail(ErrorCode::kRuntime, fmt::format("{}: the output of {} would have {} elements in dim {}", ctx.where(),
                                                     shape_to_string(xs), ys.back(), i + 2));
    }
    auto y = ctx.output(0, dtype, ys);
    if (!y) return std::unexpected(y.error());
    if (y->numel() == 0) return {};
    // The convolution from the output (its input) back to the input (its output).
    auto window = plan_window(attrs, std::span(ys).subspan(2), std::span(ws).subspan(2), ctx.where());
    if (!window) return std::unexpected(window.error());
    auto p = prepare_convolution(ctx, dtype, ys, ws, xs, *window, spatial, group, *cache, choose_algorithm);
    if (!p) return std::unexpected(p.error());
    const DnnApi& api = p->library.api;
    const float one = 1.f, zero = 0.f;
    if (auto r = check_dnn(api, ctx,
                           api.convolution_backward_data(p->library.handle, &one, p->d.w.get(), dev(w), p->d.y.get(), dev(x),
                                                         p->d.conv.get(),
                                                         static_cast<cudnnConvolutionBwdDataAlgo_t>(p->algorithm.algo),
                                                         dev_mut(p->workspace), p->algorithm.workspace, &zero, p->d.x.get(),
                                                         dev_mut(*y)),
                           "cudnnConvolutionBackwardData");
        !r)
      return r;
    if (!has_bias) return {};
    return add_channel_bias(api, p->library.handle, ctx, p->type, ctx.input(2), ys[1], spatial, p->d.x, dev_mut(*y));
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
