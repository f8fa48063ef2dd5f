// Conv through cuDNN (1-D as 2-D, 2-D and 3-D; groups; bias added by cuDNN after).
#include <fmt/format.h>

#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "libraries.h"
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
Expected<void> check(const DnnApi& api, const StepContext& ctx, cudnnStatus_t s, std::string_view call) {
  if (s == CUDNN_STATUS_SUCCESS) return {};
  return fail(ErrorCode::kRuntime, fmt::format("{}: cuDNN failed", ctx.where()),
              fmt::format("{} returned {} ({})", call, static_cast<int>(s), api.get_error_string(s)));
}

std::vector<int> to_int(const Shape& s) { return std::vector<int>(s.begin(), s.end()); }

Expected<TensorDesc> tensor_desc(const DnnApi& api, const StepContext& ctx, cudnnDataType_t type, const Shape& shape) {
  // cuDNN's descriptors take int dims and strides.
  if (shape_numel(shape) > std::numeric_limits<int>::max())
    return fail(ErrorCode::kRuntime, fmt::format("{}: a tensor of {} has 2^31 elements or more", ctx.where(), shape_to_string(shape)),
                "cuDNN's tensor descriptors count in int", "use the cpu EP for this node, or split the batch");
  cudnnTensorDescriptor_t raw = nullptr;
  if (auto r = check(api, ctx, api.create_tensor_descriptor(&raw), "cudnnCreateTensorDescriptor"); !r)
    return std::unexpected(r.error());
  TensorDesc d(raw, {api.destroy_tensor_descriptor});
  const auto dims = to_int(shape), strides = to_int(contiguous_strides(shape));
  if (auto r = check(api, ctx, api.set_tensor_nd_descriptor(raw, type, static_cast<int>(dims.size()), dims.data(), strides.data()),
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

// One convolution as cuDNN describes it (1-D widened to 2-D: cuDNN wants at least 4-D tensors).
struct ConvDescriptors {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
};

// N, C, then a height of 1 before a 1-D convolution's width.
Shape widen(const Shape& s, std::size_t spatial) {
  Shape out(s.begin(), s.begin() + 2);
  if (spatial == 1) out.push_back(1);
  out.insert(out.end(), s.begin() + 2, s.end());
  return out;
}

Expected<ConvDescriptors> describe(const DnnApi& api, const StepContext& ctx, cudnnDataType_t type, const Shape& xs,
                                   const Shape& ws, const Shape& ys, const Window3& window, std::size_t spatial,
                                   int64_t group) {
  auto dnn = [&](cudnnStatus_t s, std::string_view call) { return check(api, ctx, s, call); };
  auto x = tensor_desc(api, ctx, type, widen(xs, spatial));
  if (!x) return std::unexpected(x.error());
  auto y = tensor_desc(api, ctx, type, widen(ys, spatial));
  if (!y) return std::unexpected(y.error());
  cudnnFilterDescriptor_t raw_filter = nullptr;
  if (auto r = dnn(api.create_filter_descriptor(&raw_filter), "cudnnCreateFilterDescriptor"); !r) return std::unexpected(r.error());
  FilterDesc filter(raw_filter, {api.destroy_filter_descriptor});
  const auto wdims = to_int(widen(ws, spatial));
  if (auto r = dnn(api.set_filter_nd_descriptor(raw_filter, type, CUDNN_TENSOR_NCHW, static_cast<int>(wdims.size()), wdims.data()),
                   "cudnnSetFilterNdDescriptor");
      !r)
    return std::unexpected(r.error());
  // The window's dims are the last `spatial` of its three; a 1-D one gets a unit height first.
  const std::size_t dims = std::max<std::size_t>(spatial, 2);
  std::vector<int> pads, strides, dilations;
  for (std::size_t d = 3 - dims; d < 3; ++d) {
    pads.push_back(static_cast<int>(window[d].pad_begin));
    strides.push_back(static_cast<int>(window[d].stride));
    dilations.push_back(static_cast<int>(window[d].dilation));
  }
  cudnnConvolutionDescriptor_t raw_conv = nullptr;
  if (auto r = dnn(api.create_convolution_descriptor(&raw_conv), "cudnnCreateConvolutionDescriptor"); !r)
    return std::unexpected(r.error());
  ConvDesc conv(raw_conv, {api.destroy_convolution_descriptor});
  if (auto r = dnn(api.set_convolution_nd_descriptor(raw_conv, static_cast<int>(dims), pads.data(), strides.data(),
                                                     dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                   "cudnnSetConvolutionNdDescriptor");
      !r)
    return std::unexpected(r.error());
  if (auto r = dnn(api.set_convolution_group_count(raw_conv, static_cast<int>(group)), "cudnnSetConvolutionGroupCount"); !r)
    return std::unexpected(r.error());
  // float16 may use tensor cores; float stays on FMA units (no TF32) to match the cpu EP.
  if (auto r = dnn(api.set_convolution_math_type(raw_conv, type == CUDNN_DATA_HALF ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
                   "cudnnSetConvolutionMathType");
      !r)
    return std::unexpected(r.error());
  return ConvDescriptors{std::move(*x), std::move(*y), std::move(filter), std::move(conv)};
}

// cuDNN's choice for one convolution: the algorithm, the math type it runs with, its workspace.
struct ConvAlgorithm {
  cudnnConvolutionFwdAlgo_t algo;
  cudnnMathType_t math;
  std::size_t workspace;
};

// cuDNN's ranking, best first: the first algorithm it can run here within the workspace limit
// (the ranking may list ones whose status is not SUCCESS).
Expected<ConvAlgorithm> choose_algorithm(const DnnApi& api, cudnnHandle_t h, const StepContext& ctx, const ConvDescriptors& d) {
  cudnnConvolutionFwdAlgoPerf_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT]{};
  int found = 0;
  if (auto r = check(api, ctx,
                     api.get_convolution_forward_algorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, ranked),
                     "cudnnGetConvolutionForwardAlgorithm_v7");
      !r)
    return std::unexpected(r.error());
  for (int i = 0; i < found; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& perf = ranked[i];
    if (perf.status != CUDNN_STATUS_SUCCESS || perf.memory > kMaxWorkspaceBytes) continue;
    std::size_t workspace = 0;
    if (auto r = check(api, ctx,
                       api.get_convolution_forward_workspace_size(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), perf.algo,
                                                                  &workspace),
                       "cudnnGetConvolutionForwardWorkspaceSize");
        !r)
      return std::unexpected(r.error());
    return ConvAlgorithm{perf.algo, perf.mathType, workspace};
  }
  return fail(ErrorCode::kRuntime, fmt::format("{}: cuDNN has no forward algorithm for this convolution", ctx.where()),
              fmt::format("none of the {} it ranked runs within {} MiB of workspace", found, kMaxWorkspaceBytes >> 20),
              "use the cpu EP for this node");
}

// The algorithms a Conv step chose, by input and weight shape: cuDNN's heuristic runs once per
// shape, not on every run.
class AlgorithmCache {
 public:
  template <class Choose>
  Expected<ConvAlgorithm> get(const Shape& x, const Shape& w, Choose choose) {
    std::lock_guard lock(mutex_);
    const auto key = std::pair(x, w);
    if (auto it = chosen_.find(key); it != chosen_.end()) return it->second;
    auto made = choose();
    if (made) chosen_.emplace(key, *made);
    return made;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<Shape, Shape>, ConvAlgorithm> chosen_;
};

Expected<void> build_conv(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const auto spatial = static_cast<std::size_t>(*static_rank(b.graph(), node, 0) - 2);
  const WindowAttrs attrs = read_window_attrs(node.attributes, spatial);
  const int64_t group = node.attributes.int_or("group", 1);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
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
    auto library = ctx.dnn();
    if (!library) return std::unexpected(library.error());
    const DnnApi& api = library->api;
    const cudnnHandle_t h = library->handle;
    const cudnnDataType_t type = dtype == DType::kFloat16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    auto d = describe(api, ctx, type, xs, ws, ys, *window, spatial, group);
    if (!d) return std::unexpected(d.error());
    auto algorithm = cache->get(xs, ws, [&] { return choose_algorithm(api, h, ctx, *d); });
    if (!algorithm) return std::unexpected(algorithm.error());
    // The algorithm may run in another math type than the one asked for (float16 without
    // tensor cores); float keeps FMA, which the ranking for FMA_MATH never leaves.
    if (type == CUDNN_DATA_HALF)
      if (auto r = check(api, ctx, api.set_convolution_math_type(d->conv.get(), algorithm->math), "cudnnSetConvolutionMathType"); !r)
        return r;
    auto workspace = ctx.scratch(algorithm->workspace);
    if (!workspace) return std::unexpected(workspace.error());
    const float one = 1.f, zero = 0.f;
    if (auto r = check(api, ctx,
                       api.convolution_forward(h, &one, d->x.get(), dev(x), d->w.get(), dev(w), d->conv.get(), algorithm->algo,
                                               dev_mut(*workspace), algorithm->workspace, &zero, d->y.get(), dev_mut(*y)),
                       "cudnnConvolutionForward");
        !r)
      return r;
    if (!has_bias) return {};
    Shape bias_shape(std::max<std::size_t>(spatial, 2) + 2, 1);
    bias_shape[1] = ws[0];
    auto bias_desc = tensor_desc(api, ctx, type, bias_shape);
    if (!bias_desc) return std::unexpected(bias_desc.error());
    return check(api, ctx, api.add_tensor(h, &one, bias_desc->get(), dev(ctx.input(2)), &one, d->y.get(), dev_mut(*y)),
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
