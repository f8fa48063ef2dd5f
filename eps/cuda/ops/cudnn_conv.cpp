// The cuDNN calls Conv and ConvTranspose share.
#include "ops/cudnn_conv.h"

#include <fmt/format.h>

#include <limits>

#include "ops/op_util.h"

namespace nxrt::cuda {
namespace {

std::vector<int> to_int(const Shape& s) { return std::vector<int>(s.begin(), s.end()); }

// N, C, then a height of 1 before a 1-D convolution's width.
Shape widen(const Shape& s, std::size_t spatial) {
  Shape out(s.begin(), s.begin() + 2);
  if (spatial == 1) out.push_back(1);
  out.insert(out.end(), s.begin() + 2, s.end());
  return out;
}

}  // namespace

// Turns a cuDNN status into the step's error; `call` names the function.
Expected<void> check_dnn(const DnnApi& api, const StepContext& ctx, cudnnStatus_t s, std::string_view call) {
  if (s == CUDNN_STATUS_SUCCESS) return {};
  return fail(ErrorCode::kRuntime, fmt::format("{}: cuDNN failed", ctx.where()),
              fmt::format("{} returned {} ({})", call, static_cast<int>(s), api.get_error_string(s)));
}

Expected<TensorDesc> tensor_desc(const DnnApi& api, const StepContext& ctx, cudnnDataType_t type, const Shape& shape) {
  // cuDNN's descriptors take int dims and strides.
  if (shape_numel(shape) > std::numeric_limits<int>::max())
    return fail(ErrorCode::kRuntime, fmt::format("{}: a tensor of {} has 2^31 elements or more", ctx.where(), shape_to_string(shape)),
                "cuDNN's tensor descriptors count in int", "use the cpu EP for this node, or split the batch");
  cudnnTensorDescriptor_t raw = nullptr;
  if (auto r = check_dnn(api, ctx, api.create_tensor_descriptor(&raw), "cudnnCreateTensorDescriptor"); !r)
    return std::unexpected(r.error());
  TensorDesc d(raw, {api.destroy_tensor_descriptor});
  const auto dims = to_int(shape), strides = to_int(contiguous_strides(shape));
  if (auto r = check_dnn(api, ctx, api.set_tensor_nd_descriptor(raw, type, static_cast<int>(dims.size()), dims.data(), strides.data()),
                   "cudnnSetTensorNdDescriptor");
      !r)
    return std::unexpected(r.error());
  return d;
}

KernelMatch check_conv_common(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2}));
  NXRT_REQUIRE(ctx.input_dtype(0) != DType::kBFloat16,
               "{}: input 0 is bfloat16; the cuda EP convolves float and float16 (cuDNN's bfloat16 convolutions are not "
               "wired up)",
               op);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(rank.has_value(), "{}: the rank of input 0 is unknown; the cuda EP needs it (give --shape)", op);
  NXRT_REQUIRE(*rank >= 3 && *rank <= 5, "{}: input 0 has rank {}; cuDNN convolves 1 to 3 spatial dims", op, *rank);
  return check_window_attrs(ctx, static_cast<std::size_t>(*rank - 2), false);
}

Expected<ConvDescriptors> describe(const DnnApi& api, const StepContext& ctx, cudnnDataType_t type, const Shape& xs,
                                   const Shape& ws, const Shape& ys, const Window3& window, std::size_t spatial,
                                   int64_t group) {
  auto dnn = [&](cudnnStatus_t s, std::string_view call) { return check_dnn(api, ctx, s, call); };
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
  return ConvDescriptors{std::move(*x), std::move(*y), std::move(filter), std::move(conv), type};
}

Expected<void> use_ranked_math(const DnnApi& api, const StepContext& ctx, const ConvDescriptors& d, cudnnMathType_t math) {
  if (d.type != CUDNN_DATA_HALF) return {};
  return check_dnn(api, ctx, api.set_convolution_math_type(d.conv.get(), math), "cudnnSetConvolutionMathType");
}

Expected<PreparedConvolution> prepare_convolution(StepContext& ctx, DType dtype, const Shape& xs, const Shape& ws,
                                                  const Shape& ys, const Window3& window, std::size_t spatial, int64_t group,
                                                  AlgorithmCache& cache, ChooseAlgorithm choose) {
  auto library = ctx.dnn();
  if (!library) return std::unexpected(library.error());
  const DnnApi& api = library->api;
  const cudnnDataType_t type = dtype == DType::kFloat16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  auto d = describe(api, ctx, type, xs, ws, ys, window, spatial, group);
  if (!d) return std::unexpected(d.error());
  auto algorithm = cache.get(xs, ws, [&] { return choose(api, library->handle, ctx, *d); });
  if (!algorithm) return std::unexpected(algorithm.error());
  if (auto r = use_ranked_math(api, ctx, *d, algorithm->math); !r) return std::unexpected(r.error());
  auto workspace = ctx.scratch(algorithm->workspace);
  if (!workspace) return std::unexpected(workspace.error());
  return PreparedConvolution{*library, std::move(*d), *algorithm, std::move(*workspace)};
}

Expected<void> add_channel_bias(const DnnApi& api, cudnnHandle_t h, const StepContext& ctx, cudnnDataType_t type,
                                const Tensor& bias, int64_t channels, std::size_t spatial, const TensorDesc& y_desc, void* y) {
  Shape bias_shape(std::max<std::size_t>(spatial, 2) + 2, 1);
  bias_shape[1] = channels;
  auto bias_desc = tensor_desc(api, ctx, type, bias_shape);
  if (!bias_desc) return std::unexpected(bias_desc.error());
  const float one = 1.f;
  return check_dnn(api, ctx, api.add_tensor(h, &one, bias_desc->get(), dev(bias), &one, y_desc.get(), y), "cudnnAddTensor");
}

}  // namespace nxrt::cuda
