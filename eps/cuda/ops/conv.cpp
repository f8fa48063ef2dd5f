// Conv through cuDNN (1-D as 2-D, 2-D and 3-D; groups; bias added by cuDNN after).
#include <fmt/format.h>

#include <limits>
#include <memory>

#include "gpu.h"
#include "nxrt/ir/window.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The most scratch memory one convolution may take (cuDNN's FFT algorithms can ask for GiBs).
constexpr std::size_t kMaxWorkspaceBytes = std::size_t{256} << 20;

using TensorDesc = ApiHandle<cudnnTensorDescriptor_t, cudnnStatus_t>;
using FilterDesc = ApiHandle<cudnnFilterDescriptor_t, cudnnStatus_t>;
using ConvDesc = ApiHandle<cudnnConvolutionDescriptor_t, cudnnStatus_t>;

// Turns a cuDNN status into the step's error; `call` names the function.
Expected<void> dnn(StepContext& ctx, cudnnStatus_t s, std::string_view call) {
  const DnnApi& api = ctx.gpu().dnn_api();
  if (s == CUDNN_STATUS_SUCCESS) return {};
  return fail(ErrorCode::kRuntime, fmt::format("{}: cuDNN failed", ctx.where()),
              fmt::format("{} returned {} ({})", call, static_cast<int>(s), api.get_error_string(s)));
}

std::vector<int> to_int(const Shape& s) { return std::vector<int>(s.begin(), s.end()); }

Expected<TensorDesc> tensor_desc(StepContext& ctx, cudnnDataType_t type, const Shape& shape) {
  const DnnApi& api = ctx.gpu().dnn_api();
  // cuDNN's descriptors take int dims and strides.
  if (shape_numel(shape) > std::numeric_limits<int>::max())
    return fail(ErrorCode::kRuntime, fmt::format("{}: a tensor of {} has 2^31 elements or more", ctx.where(), shape_to_string(shape)),
                "cuDNN's tensor descriptors count in int", "use the cpu EP for this node, or split the batch");
  cudnnTensorDescriptor_t raw = nullptr;
  if (auto r = dnn(ctx, api.create_tensor_descriptor(&raw), "cudnnCreateTensorDescriptor"); !r) return std::unexpected(r.error());
  TensorDesc d(raw, {api.destroy_tensor_descriptor});
  const auto dims = to_int(shape), strides = to_int(contiguous_strides(shape));
  if (auto r = dnn(ctx, api.set_tensor_nd_descriptor(raw, type, static_cast<int>(dims.size()), dims.data(), strides.data()),
                   "cudnnSetTensorNdDescriptor");
      !r)
    return std::unexpected(r.error());
  return d;
}

KernelMatch check_conv(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2}));
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(rank.has_value(), "Conv: the rank of input 0 is unknown; the cuda EP needs it (give --shape)");
  NXRT_REQUIRE(*rank >= 3 && *rank <= 5, "Conv: input 0 has rank {}; cuDNN convolves 1 to 3 spatial dims", *rank);
  const auto spatial = static_cast<std::size_t>(*rank - 2);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, spatial, false));
  const WindowAttrs w = read_window_attrs(ctx.attrs(), spatial);
  NXRT_REQUIRE(w.auto_pad == "NOTSET" || w.auto_pad == "VALID",
               "Conv: auto_pad={} may pad unevenly, which cuDNN cannot; the cuda EP takes NOTSET (explicit symmetric "
               "pads) or VALID",
               w.auto_pad);
  for (std::size_t i = 0; i < spatial; ++i)
    NXRT_REQUIRE(w.pads[i] == w.pads[i + spatial],
                 "Conv: pads {} are asymmetric; cuDNN pads both sides of a dim alike (use the cpu EP, or pad with a "
                 "Pad node)",
                 w.pads);
  return KernelMatch::supported();
}

Expected<void> build_conv(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const auto spatial = static_cast<std::size_t>(*static_rank(b.graph(), node, 0) - 2);
  const WindowAttrs attrs = read_window_attrs(node.attributes, spatial);
  const int64_t group = node.attributes.int_or("group", 1);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  b.add_step(make_step(node, "cudnn", [=](StepContext& ctx) -> Expected<void> {
    if (auto r = ctx.gpu().open_dnn(); !r) return forward_error(std::move(r), ctx.where());
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
    // cuDNN wants at least 4-D: a 1-D convolution runs as 2-D over a height of 1.
    const std::size_t dims = std::max<std::size_t>(spatial, 2);
    auto widen = [&](const Shape& s) {
      Shape out(s.begin(), s.begin() + 2);
      out.insert(out.end(), dims - spatial, 1);
      out.insert(out.end(), s.begin() + 2, s.end());
      return out;
    };
    std::vector<int> pads, strides, dilations;
    for (std::size_t d = 3 - dims; d < 3; ++d) {
      pads.push_back(static_cast<int>((*window)[d].pad_begin));
      strides.push_back(static_cast<int>((*window)[d].stride));
      dilations.push_back(static_cast<int>((*window)[d].dilation));
    }
    const DnnApi& api = ctx.gpu().dnn_api();
    const cudnnDataType_t type = dtype == DType::kFloat16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    auto x_desc = tensor_desc(ctx, type, widen(xs));
    if (!x_desc) return std::unexpected(x_desc.error());
    auto y_desc = tensor_desc(ctx, type, widen(ys));
    if (!y_desc) return std::unexpected(y_desc.error());
    cudnnFilterDescriptor_t raw_filter = nullptr;
    if (auto r = dnn(ctx, api.create_filter_descriptor(&raw_filter), "cudnnCreateFilterDescriptor"); !r) return r;
    FilterDesc filter(raw_filter, {api.destroy_filter_descriptor});
    const auto wdims = to_int(widen(ws));
    if (auto r = dnn(ctx, api.set_filter_nd_descriptor(raw_filter, type, CUDNN_TENSOR_NCHW, static_cast<int>(wdims.size()), wdims.data()),
                     "cudnnSetFilterNdDescriptor");
        !r)
      return r;
    cudnnConvolutionDescriptor_t raw_conv = nullptr;
    if (auto r = dnn(ctx, api.create_convolution_descriptor(&raw_conv), "cudnnCreateConvolutionDescriptor"); !r) return r;
    ConvDesc conv(raw_conv, {api.destroy_convolution_descriptor});
    if (auto r = dnn(ctx, api.set_convolution_nd_descriptor(raw_conv, static_cast<int>(dims), pads.data(), strides.data(),
                                                          dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                     "cudnnSetConvolutionNdDescriptor");
        !r)
      return r;
    if (auto r = dnn(ctx, api.set_convolution_group_count(raw_conv, static_cast<int>(group)), "cudnnSetConvolutionGroupCount"); !r)
      return r;
    // float16 may use tensor cores; float stays on FMA units (no TF32) to match the cpu EP.
    if (auto r = dnn(ctx, api.set_convolution_math_type(raw_conv, dtype == DType::kFloat16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                     "cudnnSetConvolutionMathType");
        !r)
      return r;
    cudnnHandle_t h = ctx.gpu().dnn();
    // cuDNN's ranking, best first: take the first algorithm that it can run here within the
    // workspace limit (the ranking may list ones whose status is not SUCCESS).
    cudnnConvolutionFwdAlgoPerf_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT]{};
    int found = 0;
    if (auto r = dnn(ctx, api.get_convolution_forward_algorithm_v7(h, x_desc->get(), raw_filter, raw_conv, y_desc->get(),
                                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, ranked),
                     "cudnnGetConvolutionForwardAlgorithm_v7");
        !r)
      return r;
    const cudnnConvolutionFwdAlgoPerf_t* perf = nullptr;
    for (int i = 0; i < found && !perf; ++i)
      if (ranked[i].status == CUDNN_STATUS_SUCCESS && ranked[i].memory <= kMaxWorkspaceBytes) perf = &ranked[i];
    if (!perf)
      return fail(ErrorCode::kRuntime, fmt::format("{}: cuDNN has no forward algorithm for this convolution", ctx.where()),
                  fmt::format("none of the {} it ranked runs within {} MiB of workspace", found, kMaxWorkspaceBytes >> 20),
                  "use the cpu EP for this node");
    std::size_t ws_bytes = 0;
    if (auto r = dnn(ctx, api.get_convolution_forward_workspace_size(h, x_desc->get(), raw_filter, raw_conv, y_desc->get(), perf->algo, &ws_bytes),
                     "cudnnGetConvolutionForwardWorkspaceSize");
        !r)
      return r;
    auto workspace = ctx.scratch(ws_bytes);
    if (!workspace) return std::unexpected(workspace.error());
    const float one = 1.f, zero = 0.f;
    if (auto r = dnn(ctx, api.convolution_forward(h, &one, x_desc->get(), dev(x), raw_filter, dev(w), raw_conv, perf->algo,
                                                  dev_mut(*workspace), ws_bytes, &zero, y_desc->get(), dev_mut(*y)),
                     "cudnnConvolutionForward");
        !r)
      return r;
    if (!has_bias) return {};
    Shape bias_shape(dims + 2, 1);
    bias_shape[1] = ws[0];
    auto bias_desc = tensor_desc(ctx, type, bias_shape);
    if (!bias_desc) return std::unexpected(bias_desc.error());
    return dnn(ctx, api.add_tensor(h, &one, bias_desc->get(), dev(ctx.input(2)), &one, y_desc->get(), dev_mut(*y)),
               "cudnnAddTensor");
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> conv_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Conv", 1, check_conv, build_conv));
  return ops;
}

}  // namespace nxrt::cuda
