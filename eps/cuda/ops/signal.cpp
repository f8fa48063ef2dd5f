// Signal processing: DFT, STFT, the cosine windows (Hann, Hamming, Blackman) and
// MelWeightMatrix. The transforms are direct sums in double, one thread per output bin, with
// twiddles from the exact index jk mod n; sizes and axes are read on the host.
// MelWeightMatrix's filter bank is computed on the host (nxrt/ep/mel_weight_matrix.h, as on
// the cpu EP) and uploaded.
#include <fmt/format.h>

#include <array>

#include "nxrt/ep/cosine_window.h"
#include "nxrt/ep/mel_weight_matrix.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// Declines unless input i, when present, is an int32/int64 scalar (or one value).
KernelMatch check_scalar_int(const NodeContext& ctx, std::size_t i, std::string_view what) {
  if (i >= ctx.input_count() || !ctx.has_input(i)) return KernelMatch::supported();
  NXRT_REQUIRE_MATCH(require_ints(ctx, i, what));
  if (const auto shape = ctx.input_static_shape(i))
    NXRT_REQUIRE(shape_numel(*shape) == 1, "{}: {} (input {}) has {} values; it must be a scalar", ctx.node().op_type,
                 what, i, shape_numel(*shape));
  return KernelMatch::supported();
}

// ---- DFT ----

// DFT-17 takes the axis as an attribute (default 1); DFT-20 as optional input 2 (default -2,
// the last signal axis).
bool axis_is_input(const Node& node) { return node.opset >= 20; }

KernelMatch check_dft(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float_or_double, kCudaFloatsOrDouble));
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 1, "dft_length"));
  std::optional<int64_t> axis = ctx.attrs().int_or("axis", 1);
  if (axis_is_input(ctx.node())) {
    NXRT_REQUIRE(!ctx.attrs().has("axis"),
                 "DFT: opset {} takes the axis as input 2, but the node has an axis attribute; re-export the model "
                 "for this opset", ctx.opset());
    NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 2, "axis"));
    axis = -2;
    if (ctx.input_count() > 2 && ctx.has_input(2)) {
      const auto given = constant_ints(ctx.graph(), ctx.node(), 2);
      axis = given && given->size() == 1 ? std::optional(given->front()) : std::nullopt;
    }
  }
  if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(*rank >= 2, "DFT: the input has rank {}; it needs a signal axis and a last dim of 1 or 2", *rank);
    const int64_t a = axis && *axis < 0 ? *axis + *rank : axis.value_or(0);
    NXRT_REQUIRE(a >= 0 && a < *rank - 1, "DFT: axis {} is out of range for rank {}; the last dim holds re, im",
                 axis.value_or(0), *rank);
  }
  if (const auto shape = ctx.input_static_shape(0))
    NXRT_REQUIRE(shape->back() == 1 || shape->back() == 2,
                 "DFT: the input's last dim is {}; it must be 1 (real) or 2 (complex)", shape->back());
  return KernelMatch::supported();
}

Expected<void> build_dft(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate(
      "dft", t,
      fmt::format("i64 total, i64 out_len, i64 inner, i64 in_len, i64 used, i64 n, int components, int inverse, "
                  "const {0}* x, {0}* y", t),
      "total, out_len, inner, in_len, used, n, components, inverse, x, y");
  const bool inverse = node.attributes.int_or("inverse", 0) != 0;
  const bool onesided = node.attributes.int_or("onesided", 0) != 0;
  const bool axis_input = axis_is_input(node);
  const int64_t axis_attr = axis_input ? -2 : node.attributes.int_or("axis", 1);
  const IntsInput length_input(b.graph(), node, 1), axis_given(b.graph(), node, 2);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    auto given_axis = axis_input ? axis_given.read_one(ctx, "the axis", axis_attr) : Expected<int64_t>(axis_attr);
    if (!given_axis) return std::unexpected(given_axis.error());
    int64_t axis = *given_axis;
    const auto rank = static_cast<int64_t>(shape.size());
    if (axis < 0) axis += rank;
    if (rank < 2 || axis < 0 || axis >= rank - 1 || (shape.back() != 1 && shape.back() != 2))
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} does not fit axis {}", ctx.where(),
                                                   shape_to_string(shape), axis),
                  "the input needs the signal axis before a last dim of 1 (real) or 2 (complex)",
                  "check the input's shape and the axis");
    const auto a = static_cast<std::size_t>(axis);
    const int64_t in_len = shape[a];
    auto length = length_input.read_one(ctx, "dft_length", in_len);
    if (!length) return std::unexpected(length.error());
    const int64_t n = *length;
    if (n < 1)
      return fail(ErrorCode::kRuntime, fmt::format("{}: dft_length is {}", ctx.where(), n), "the DFT needs a length >= 1",
                  "give a positive dft_length");
    const int64_t out_len = onesided ? n / 2 + 1 : n;
    Shape out_shape = shape;
    out_shape[a] = out_len;
    out_shape.back() = 2;
    auto y = ctx.output(0, dtype, out_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t total = shape_numel(out_shape) / 2;
    if (total == 0) return {};
    KernelArgs args;
    args.add(total).add(out_len).add(dims_product(shape, a + 1, shape.size() - 1)).add(in_len).add(std::min(in_len, n))
        .add(n).add(static_cast<int>(shape.back())).add(static_cast<int>(inverse)).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, total, args);
  }));
  return {};
}

// ---- STFT ----

KernelMatch check_stft(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float_or_double, kCudaFloatsOrDouble));
  NXRT_REQUIRE(ctx.has_input(1), "STFT: the frame_step input is missing; it is required");
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 1, "frame_step"));
  const bool has_window = ctx.input_count() > 2 && ctx.has_input(2);
  NXRT_REQUIRE(!has_window || ctx.input_dtype(2) == ctx.input_dtype(0),
               "STFT: the window has type {} and the signal {}; they must match", dtype_name(ctx.input_dtype(2)),
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 3, "frame_length"));
  NXRT_REQUIRE(has_window || (ctx.input_count() > 3 && ctx.has_input(3)),
               "STFT: neither window nor frame_length is given; one of them sets the frame length");
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) == 3, "STFT: the signal has rank {}; it must be [batch, length, 1 or 2]",
               ctx.input_rank(0).value_or(3));
  return KernelMatch::supported();
}

Expected<void> build_stft(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate(
      "stft", t,
      fmt::format("i64 total, i64 frames, i64 bins, i64 length, i64 step, i64 frame_len, int components, "
                  "const {0}* window, const {0}* x, {0}* y", t),
      "total, frames, bins, length, step, frame_len, components, window, x, y");
  const bool onesided = node.attributes.int_or("onesided", 1) != 0;
  const IntsInput step_input(b.graph(), node, 1), length_input(b.graph(), node, 3);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    auto step = step_input.read_one(ctx, "frame_step");
    if (!step) return std::unexpected(step.error());
    auto frame_length = length_input.read_one(ctx, "frame_length", window ? window->numel() : 0);
    if (!frame_length) return std::unexpected(frame_length.error());
    const int64_t frame = *frame_length;
    auto bad = [&](std::string what) {
      return fail(ErrorCode::kRuntime, fmt::format("{}: {}", ctx.where(), what),
                  "the signal, frame_step, window and frame_length disagree", "check the STFT inputs");
    };
    if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 2))
      return bad(fmt::format("the signal is {}; it must be [batch, length, 1 or 2]", shape_to_string(shape)));
    if (*step < 1 || frame < 1 || frame > shape[1])
      return bad(fmt::format("frame_step {} and frame_length {} do not fit a signal of length {}", *step, frame,
                             shape[1]));
    if (window && window->numel() != frame)
      return bad(fmt::format("the window has {} values but frame_length is {}", window->numel(), frame));
    const int64_t frames = 1 + (shape[1] - frame) / *step;
    const int64_t bins = onesided ? frame / 2 + 1 : frame;
    auto y = ctx.output(0, dtype, {shape[0], frames, bins, 2});
    if (!y) return std::unexpected(y.error());
    const int64_t total = shape[0] * frames * bins;
    if (total == 0) return {};
    KernelArgs args;
    args.add(total).add(frames).add(bins).add(shape[1]).add(*step).add(frame).add(static_cast<int>(shape[2]))
        .ptr(window ? dev(*window) : nullptr).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, total, args);
  }));
  return {};
}

// ---- Windows and MelWeightMatrix ----

// The generators' output_datatype (default float) among the types the cuda EP stores.
std::optional<DType> output_datatype(const AttributeMap& attrs) {
  const auto t = dtype_from_onnx(static_cast<int32_t>(attrs.int_or("output_datatype", 1)));
  if (!t || !(is_cuda_number(*t) || *t == DType::kInt8 || *t == DType::kUInt8)) return std::nullopt;
  return t;
}

KernelMatch check_output_datatype(const NodeContext& ctx) {
  NXRT_REQUIRE(output_datatype(ctx.attrs()).has_value(),
               "{}: output_datatype {} is not one the cuda EP writes ({}, int8 and uint8)", ctx.node().op_type,
               ctx.attrs().int_or("output_datatype", 1), kCudaNumbers);
  return KernelMatch::supported();
}

KernelMatch check_window(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "{}: the size input is missing; it is required", ctx.node().op_type);
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 0, "size"));
  return check_output_datatype(ctx);
}

// One of kCosineWindows (nxrt/ep/cosine_window.h), with coefficients `a`.
Expected<void> build_window(PlanBuilder& b, const Node& node, std::array<double, 3> a) {
  const DType dtype = *output_datatype(node.attributes);
  const bool periodic = node.attributes.int_or("periodic", 1) != 0;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate("cosine_window", t,
                                           fmt::format("i64 n, double period, double a0, double a1, double a2, {}* out", t),
                                           "n, period, a0, a1, a2, out");
  const IntsInput size_input(b.graph(), node, 0);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto size = size_input.read_one(ctx, "size");
    if (!size) return std::unexpected(size.error());
    if (*size < 0)
      return fail(ErrorCode::kRuntime, fmt::format("{}: window size {} is negative", ctx.where(), *size),
                  "a window needs size >= 0", "give a non-negative size");
    auto y = ctx.output(0, dtype, {*size});
    if (!y) return std::unexpected(y.error());
    if (*size == 0) return {};
    KernelArgs args;
    args.add(*size).add(static_cast<double>(periodic ? *size : *size - 1)).add(a[0]).add(a[1]).add(a[2]).ptr(dev_mut(*y));
    return ctx.launch(kernel, *size, args);
  }));
  return {};
}

KernelMatch check_mel_weight_matrix(const NodeContext& ctx) {
  for (std::size_t i = 0; i < 5; ++i)
    NXRT_REQUIRE(i < ctx.input_count() && ctx.has_input(i), "MelWeightMatrix: input {} is missing; all five are required",
                 i);
  for (std::size_t i : {0, 1, 2}) NXRT_REQUIRE_MATCH(check_scalar_int(ctx, i, "an integer parameter"));
  for (std::size_t i : {3, 4}) {
    const DType t = ctx.input_dtype(i);
    NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kUndefined,
                 "MelWeightMatrix: input {} is {}; the cuda EP reads float or double edges", i, dtype_name(t));
  }
  return check_output_datatype(ctx);
}

// The first value of a float or double input, read on the host.
Expected<double> read_edge(StepContext& ctx, std::size_t i) {
  auto t = ctx.input_on_host(i);
  if (!t) return std::unexpected(t.error());
  if (t->numel() != 1)
    return fail(ErrorCode::kRuntime, fmt::format("{}: input {} has {} values; it must be a scalar", ctx.where(), i,
                                                 t->numel()));
  return t->dtype() == DType::kFloat32 ? static_cast<double>(*t->data_as<float>()) : *t->data_as<double>();
}

Expected<void> build_mel_weight_matrix(PlanBuilder& b, const Node& node) {
  const DType dtype = *output_datatype(node.attributes);
  const std::string t(chain_storage_type(dtype));
  const std::string kernel =
      b.instantiate("store_doubles", t, fmt::format("i64 n, const double* in, {}* out", t), "n, in, out");
  const IntsInput mels_input(b.graph(), node, 0), length_input(b.graph(), node, 1), rate_input(b.graph(), node, 2);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto mels = mels_input.read_one(ctx, "num_mel_bins");
    if (!mels) return std::unexpected(mels.error());
    auto length = length_input.read_one(ctx, "dft_length");
    if (!length) return std::unexpected(length.error());
    auto rate = rate_input.read_one(ctx, "sample_rate");
    if (!rate) return std::unexpected(rate.error());
    auto lower = read_edge(ctx, 3);
    if (!lower) return std::unexpected(lower.error());
    auto upper = read_edge(ctx, 4);
    if (!upper) return std::unexpected(upper.error());
    const MelParams params{
        .num_mel_bins = *mels, .dft_length = *length, .sample_rate = *rate, .lower_edge_hertz = *lower,
        .upper_edge_hertz = *upper};
    auto w = mel_weight_matrix(params);
    if (!w) return forward_error(std::move(w), ctx.where());
    const Shape shape{params.dft_length / 2 + 1, params.num_mel_bins};
    auto table = ctx.upload(Tensor::from_vector<double>(shape, *w));
    if (!table) return std::unexpected(table.error());
    auto y = ctx.output(0, dtype, shape);
    if (!y) return std::unexpected(y.error());
    KernelArgs args;
    args.add(shape_numel(shape)).ptr(dev(*table)).ptr(dev_mut(*y));
    return ctx.launch(kernel, shape_numel(shape), args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> signal_ops() {
  std::vector<CudaOpDef> ops;
  for (auto& op : make_op_versions("DFT", {17, 20}, check_dft, build_dft)) ops.push_back(std::move(op));
  ops.push_back(make_op("STFT", 17, check_stft, build_stft));
  for (const CosineWindow& w : kCosineWindows)
    ops.push_back(make_op(w.op_type, 17, check_window,
                          [a = w.a](PlanBuilder& b, const Node& node) { return build_window(b, node, a); }));
  ops.push_back(make_op("MelWeightMatrix", 17, check_mel_weight_matrix, build_mel_weight_matrix));
  return ops;
}

}  // namespace nxrt::cuda
