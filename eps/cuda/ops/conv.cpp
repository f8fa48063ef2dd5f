// Conv through cuDNN (1-D as 2-D, 2-D and 3-D; groups; bias added by cuDNN after). cuDNN pads
// both sides of a dim alike; uneven pads (asymmetric ones, or auto_pad SAME_* with an odd
// total) run with the smaller pad on both sides over a copy of the input that holds the rest
// of each pad as zeros (the Pad op's kernel writes it in one pass).
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "ops/cudnn_conv.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

// The forward algorithm for `d`: the first runnable one of cuDNN's ranking.
Expected<ConvAlgorithm> choose_forward_algorithm(const DnnApi& api, cudnnHandle_t h, const StepContext& ctx, const ConvDescriptors& d) {
  cudnnConvolutionFwdAlgoPerf_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT]{};
  int found = 0;
  if (auto r = check_dnn(api, ctx,
                         api.get_convolution_forward_algorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                                  CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, ranked),
                         "cudnnGetConvolutionForwardAlgorithm_v7");
      !r)
    return std::unexpected(r.error());
  if (const int i = first_runnable(ranked, found); i >= 0) {
    if (auto r = use_ranked_math(api, ctx, d, ranked[i].mathType); !r) return std::unexpected(r.error());
    std::size_t workspace = 0;
    if (auto r = check_dnn(api, ctx,
                           api.get_convolution_forward_workspace_size(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                                      ranked[i].algo, &workspace),
                           "cudnnGetConvolutionForwardWorkspaceSize");
        !r)
      return std::unexpected(r.error());
    return ConvAlgorithm{ranked[i].algo, ranked[i].mathType, workspace};
  }
  return fail(ErrorCode::kRuntime, fmt::format("{}: cuDNN has no forward algorithm for this convolution", ctx.where()),
              fmt::format("none of the {} it ranked runs within {} MiB of workspace", found, kMaxWorkspaceBytes >> 20),
              "use the cpu EP for this node");
}

// The input and window cuDNN runs: x and `window` when every dim pads evenly; else, for each
// uneven dim, the smaller pad on both sides and the input grown by the rest of its pads (a
// scratch copy of x with zeros around it, written by the `pad` kernel).
struct EvenPadding {
  Tensor input;
  Window3 window;
};
Expected<EvenPadding> even_padding(StepContext& ctx, const std::string& pad, const Tensor& x, const Window3& window,
                                   std::size_t spatial) {
  EvenPadding even{x, window};
  Shape padded = x.shape(), lead(padded.size(), 0);
  for (std::size_t i = 0; i < spatial; ++i) {
    WindowDim& d = even.window[3 - spatial + i];  // the window's dims are the last `spatial` of its three
    const int64_t common = std::min(d.pad_begin, d.pad_end);
    lead[2 + i] = d.pad_begin - common;
    padded[2 + i] += d.pad_begin + d.pad_end - 2 * common;
    d.in = padded[2 + i];
    d.pad_begin = d.pad_end = common;
  }
  if (padded == x.shape()) return even;
  const int64_t n = shape_numel(padded);
  auto scratch = ctx.scratch(static_cast<std::size_t>(n) * dtype_size(x.dtype()));
  if (!scratch) return std::unexpected(scratch.error());
  KernelArgs args;
  args.add(n).add(static_cast<int>(padded.size())).add(to_kernel_dims(padded)).add(to_kernel_dims(x.shape()));
  args.add(to_kernel_dims(lead)).add(0).ptr(nullptr).add(uint64_t{0}).ptr(dev(x)).ptr(dev_mut(*scratch));  // zeros
  if (auto r = ctx.launch(pad, n, args); !r) return std::unexpected(r.error());
  even.input = Tensor(scratch->storage(), x.dtype(), padded);
  return even;
}

Expected<void> build_conv(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const auto spatial = static_cast<std::size_t>(*static_rank(b.graph(), node, 0) - 2);
  const WindowAttrs attrs = read_window_attrs(node.attributes, spatial);
  const int64_t group = node.attributes.int_or("group", 1);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  // Only auto_pad SAME_* and asymmetric explicit pads can pad unevenly: other Convs' modules
  // need no pad kernel (even_padding returns before using it).
  const bool may_pad_unevenly = attrs.auto_pad.starts_with("SAME") ||
                                !std::equal(attrs.pads.begin(), attrs.pads.begin() + static_cast<std::ptrdiff_t>(spatial),
                                            attrs.pads.begin() + static_cast<std::ptrdiff_t>(spatial));
  const std::string pad = may_pad_unevenly ? pad_kernel(b, dtype) : std::string();
  auto cache = std::make_shared<AlgorithmCache>();
  b.add_step(make_step(node, "cudnn", [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Shape& xs = x.shape();
    const Shape& ws = w.shape();
    if (xs.size() != spatial + 2 || ws.size() != spatial + 2 || xs[1] != ws[1] * group)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} and weights {} do not match (group {})", ctx.where(),
                                                   shape_to_string(xs), shape_to_string(ws), group));
    auto window = plan_window(attrs, std::span(xs).subspan(2), std::span(ws).subspan(2), ctx.where());
    if (!window) return std::unexpected(window.error());
    const Shape ys = window_output_shape(xs[0], ws[0], *window, spatial);
    auto y = ctx.output(0, dtype, ys);
    if (!y) return std::unexpected(y.error());
    if (y->numel() == 0) return {};
    auto even = even_padding(ctx, pad, x, *window, spatial);
    if (!even) return std::unexpected(even.error());
    const Tensor& input = even->input;
    auto p = prepare_convolution(ctx, dtype, input.shape(), ws, ys, even->window, spatial, group, *cache, choose_forward_algorithm);
    if (!p) return std::unexpected(p.error());
    const DnnApi& api = p->library.api;
    const float one = 1.f, zero = 0.f;
    if (auto r = check_dnn(api, ctx,
                           api.convolution_forward(p->library.handle, &one, p->d.x.get(), dev(input), p->d.w.get(), dev(w),
                                                   p->d.conv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(p->algorithm.algo),
                                                   dev_mut(p->workspace), p->algorithm.workspace, &zero, p->d.y.get(),
                                                   dev_mut(*y)),
                           "cudnnConvolutionForward");
        !r)
      return r;
    if (!has_bias) return {};
    return add_channel_bias(api, p->library.handle, ctx, p->d.type, ctx.input(2), ws[0], spatial, p->d.y, dev_mut(*y));
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> conv_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Conv", 1, check_conv_common, build_conv));
  return ops;
}

}  // namespace nxrt::cuda
