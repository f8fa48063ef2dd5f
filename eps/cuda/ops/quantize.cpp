// QuantizeLinear and DequantizeLinear (opsets 10 to 23): float or float16 to int8 or uint8
// and back (DequantizeLinear also reads int32), from opset 19 the float8 types (rounded as Cast
// rounds, saturating as the saturate attribute says), from 21 int16, uint16, int4 and uint4,
// from 23 float4e2m1, from 25 int2 and uint2, with a scale and zero point per tensor, from
// opset 13 per index of `axis`, and from 21 per block of it (block_size; lib's ScaleMap,
// nxrt/ep/quantize_scale.h). Opset 23 adds QuantizeLinear's precision (the cuda EP divides in
// float) and DequantizeLinear's output_dtype. DynamicQuantizeLinear finds its uint8 scale and
// zero point on the device.
#include <fmt/format.h>

#include "nxrt/ep/quantize_scale.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The quantized types of a version (lib's is_quantized_type), for the declines.
constexpr std::string_view kQuantizedTypes =
    "int8, uint8, from opset 19 the float8 types, from 21 int16, uint16, int4 and uint4, from 23 float4e2m1, from "
    "25 int2 and uint2";

// The axis the scale runs along (an attribute from opset 13; 1 before), and opset 21's block_size.
int64_t scale_axis(const NodeContext& ctx) { return ctx.opset() >= 13 ? ctx.attrs().int_or("axis", 1) : 1; }
int64_t block_size(const NodeContext& ctx) { return ctx.opset() >= 21 ? ctx.attrs().int_or("block_size", 0) : 0; }

// The scale is a float (or float16) of dtype `scale`: a scalar, (opset 13) a 1-D vector, or
// (21, block_size) a tensor of x's rank; the zero point, if given, has the quantized type `q`
// and the scale's shape.
KernelMatch check_scale_and_zero_point(const NodeContext& ctx, DType scale, DType q) {
  const std::string& op = ctx.node().op_type;
  const int64_t block = block_size(ctx);
  NXRT_REQUIRE(block >= 0, "{}: block_size {} is negative", op, block);
  NXRT_REQUIRE(ctx.input_dtype(1) == scale, "{}: the scale is {}; the cuda EP needs {} here", op, dtype_name(ctx.input_dtype(1)),
               dtype_name(scale));
  if (block == 0) {
    const int64_t max_rank = ctx.opset() >= 13 ? 1 : 0;
    for (std::size_t i : {1, 2})
      if (ctx.has_input(i)) {
        const auto rank = ctx.input_rank(i);
        NXRT_REQUIRE(!rank || *rank <= max_rank, "{}: the {} has rank {}; opset {} takes rank {} at most", op,
                     i == 1 ? "scale" : "zero point", *rank, ctx.opset(), max_rank);
      }
  }
  if (ctx.has_input(2))
    NXRT_REQUIRE(ctx.input_dtype(2) == q, "{}: the zero point is {} but the quantized tensor is {}; they must match", op,
                 dtype_name(ctx.input_dtype(2)), dtype_name(q));
  const auto xs = ctx.input_static_shape(0), ss = ctx.input_static_shape(1);
  if (xs && ss) {
    auto map = scale_map(op, *xs, *ss, scale_axis(ctx), block);
    if (!map) return KernelMatch::declined(fmt::format("{}; {}", map.error().what, map.error().why));
  }
  if (block > 0 && ctx.has_input(2)) {
    const auto zs = ctx.input_static_shape(2);
    NXRT_REQUIRE(!zs || !ss || *zs == *ss, "{}: blocked quantization needs a zero point of the scale's shape {}, got {}", op,
                 shape_to_string(*ss), shape_to_string(*zs));
  }
  return KernelMatch::supported();
}

// QuantizeLinear's output type: the zero point's, else opset 21's output_dtype, else uint8.
DType quantize_output_type(const NodeContext& ctx) {
  if (ctx.has_input(2)) return ctx.input_dtype(2);
  const int64_t code = ctx.opset() >= 21 ? ctx.attrs().int_or("output_dtype", 0) : 0;
  return code == 0 ? DType::kUInt8 : static_cast<DType>(code);
}

KernelMatch check_quantize(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float, kCudaFloats));
  const int64_t precision = ctx.opset() >= 23 ? ctx.attrs().int_or("precision", 0) : 0;
  NXRT_REQUIRE(precision == 0 || precision == static_cast<int64_t>(DType::kFloat32),
               "QuantizeLinear-23: precision {} ({}) is not supported by the cuda EP; it divides in float (omit "
               "precision or set it to 1)",
               precision, dtype_name(dtype_from_onnx(static_cast<int32_t>(precision)).value_or(DType::kUndefined)));
  const DType q = quantize_output_type(ctx);
  NXRT_REQUIRE(is_quantized_type(q, ctx.opset()), "QuantizeLinear: quantizing to {} at opset {} is not implemented by the cuda EP "
               "(it takes {})", dtype_name(q), ctx.opset(), kQuantizedTypes);
  return check_scale_and_zero_point(ctx, ctx.input_dtype(0), q);
}

// DequantizeLinear's output type: the scale's, or opset 23's output_dtype.
DType dequantize_output_type(const Node& node, DType scale) {
  const int64_t code = node.opset >= 23 ? node.attributes.int_or("output_dtype", 0) : 0;
  return code == 0 ? scale : dtype_from_onnx(static_cast<int32_t>(code)).value_or(DType::kUndefined);
}

KernelMatch check_dequantize(const NodeContext& ctx) {
  const DType x = ctx.input_dtype(0);
  NXRT_REQUIRE(is_quantized_type(x, ctx.opset()) || x == DType::kInt32,
               "DequantizeLinear: input 0 is {} at opset {}; the cuda EP dequantizes int32, {}", dtype_name(x), ctx.opset(),
               kQuantizedTypes);
  NXRT_REQUIRE(is_cuda_float(ctx.input_dtype(1)), "DequantizeLinear: the scale is {}; the cuda EP takes {}",
               dtype_name(ctx.input_dtype(1)), kCudaFloats);
  const DType y = dequantize_output_type(ctx.node(), ctx.input_dtype(1));
  NXRT_REQUIRE(is_cuda_float(y), "DequantizeLinear-23: output_dtype {} is not supported by the cuda EP; it outputs {}",
               ctx.attrs().int_or("output_dtype", 0), kCudaFloats);
  return check_scale_and_zero_point(ctx, ctx.input_dtype(1), x);
}

// lib's ScaleMap as the kernels take it (kernel_library.cpp).
struct KernelScaleMap {
  int64_t per_tensor, axis_size, inner, block, scale_axis_size;
};

// The step of both ops: output 0 (of `out`, x's shape) from x, the scale and the zero point
// (absent: null), per tensor or per channel; `bounds`, when given, are the kernel's two int
// arguments between the zero point and y (QuantizeLinear's saturation bounds, or its float8
// format and saturate flag).
void add_scaled_step(PlanBuilder& b, const Node& node, const std::string& kernel, DType out,
                     std::optional<std::pair<int, int>> bounds) {
  const bool has_zp = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  const NodeContext node_ctx(b.graph(), node);
  const int64_t axis = scale_axis(node_ctx), block = block_size(node_ctx);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& in = ctx.input(0);
    auto map = scale_map(ctx.where(), in.shape(), ctx.input(1).shape(), axis, block);
    if (!map) return std::unexpected(map.error());
    if (has_zp && ctx.input(2).shape() != ctx.input(1).shape() && !(ctx.input(2).numel() == 1 && ctx.input(1).numel() == 1))
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: the zero point {} and the scale {} differ in shape", ctx.where(),
                              shape_to_string(ctx.input(2).shape()), shape_to_string(ctx.input(1).shape())),
                  "the zero point has one value per scale value", "give the zero point the scale's shape");
    auto y = ctx.output(0, out, in.shape());
    if (!y) return std::unexpected(y.error());
    if (in.numel() == 0) return {};
    const KernelScaleMap m{map->per_tensor ? 1 : 0, map->axis_size, map->inner, map->block, map->scale_axis_size};
    KernelArgs args;
    args.add(in.numel()).add(m).ptr(dev(in)).ptr(dev(ctx.input(1)));
    args.ptr(has_zp ? dev(ctx.input(2)) : nullptr);
    if (bounds) args.add(bounds->first).add(bounds->second);
    args.ptr(dev_mut(*y));
    return ctx.launch(kernel, in.numel(), args);
  }));
}

Expected<void> build_quantize_linear(PlanBuilder& b, const Node& node) {
  const Graph& g = b.graph();
  const DType x_type = g.value(node.inputs[0]).type.dtype;
  const DType q = quantize_output_type(NodeContext(g, node));
  const std::string x(float_type(x_type)), qt(chain_storage_type(q));
  if (is_byte_float(q)) {
    const std::string kernel = b.instantiate(
        "quantize_byte_float", fmt::format("{}, {}", x, qt),
        fmt::format("i64 n, ScaleMap m, const {0}* x, const {0}* scale, const {1}* zero_point, int f, int saturate, {1}* y",
                    x, qt),
        "n, m, x, scale, zero_point, f, saturate, y");
    const int saturate = node.attributes.int_or("saturate", 1) != 0 ? 1 : 0;
    add_scaled_step(b, node, kernel, q, std::pair(byte_float_code(q), saturate));
    return {};
  }
  const std::string kernel =
      b.instantiate("quantize", fmt::format("{}, {}", x, qt),
                    fmt::format("i64 n, ScaleMap m, const {0}* x, const {0}* scale, const {1}* zero_point, int lo, int hi, "
                                "{1}* y", x, qt),
                    "n, m, x, scale, zero_point, lo, hi, y");
  add_scaled_step(b, node, kernel, q, std::pair<int, int>(quantized_integer_range(q)));
  return {};
}

Expected<void> build_dequantize_linear(PlanBuilder& b, const Node& node) {
  const Graph& g = b.graph();
  const DType x_type = g.value(node.inputs[0]).type.dtype, scale_type = g.value(node.inputs[1]).type.dtype;
  const DType y_type = dequantize_output_type(node, scale_type);
  const std::string qt(chain_storage_type(x_type)), s(float_type(scale_type)), y(float_type(y_type));
  const std::string kernel = b.instantiate(
      is_byte_float(x_type) ? "dequantize_byte_float" : "dequantize", fmt::format("{}, {}, {}", qt, s, y),
      fmt::format("i64 n, ScaleMap m, const {0}* x, const {1}* scale, const {0}* zero_point, {2}* y", qt, s, y),
      "n, m, x, scale, zero_point, y");
  add_scaled_step(b, node, kernel, y_type, std::nullopt);
  return {};
}

KernelMatch check_dynamic_quantize(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_dtype(0) == DType::kFloat32, "DynamicQuantizeLinear: input 0 is {}; ONNX defines it for float",
               dtype_name(ctx.input_dtype(0)));
  return KernelMatch::supported();
}

Expected<void> build_dynamic_quantize(PlanBuilder& b, const Node& node) {
  const DynamicQuantizeKernels kernels = dynamic_quantize_kernels(b);
  b.add_step(make_step(node, "nvrtc:" + kernels.quantize, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    auto y = ctx.output(0, DType::kUInt8, x.shape());
    auto scale = ctx.output(1, DType::kFloat32, {});
    auto zero_point = ctx.output(2, DType::kUInt8, {});
    for (auto* out : {&y, &scale, &zero_point})
      if (!*out) return std::unexpected(out->error());
    return dynamic_quantize(ctx, kernels, x.numel(), dev(x), dev_mut(*scale), dev_mut(*zero_point), dev_mut(*y));
  }));
  return {};
}

}  // namespace

DynamicQuantizeKernels dynamic_quantize_kernels(PlanBuilder& b) {
  return {b.instantiate("dynamic_quantize_params", "float",
                        "i64 n, const float* x, float* scale, unsigned char* zero_point", "n, x, scale, zero_point"),
          b.instantiate("dynamic_quantize", "float",
                        "i64 n, const float* x, const float* scale, const unsigned char* zero_point, unsigned char* y",
                        "n, x, scale, zero_point, y")};
}

Expected<void> dynamic_quantize(StepContext& ctx, const DynamicQuantizeKernels& kernels, int64_t n, const void* x,
                                void* scale, void* zero_point, void* y) {
  KernelArgs range;
  range.add(n).ptr(x).ptr(scale).ptr(zero_point);
  if (auto r = ctx.launch_rows(kernels.range, 1, kRowBlockThreads, range); !r) return r;
  if (n == 0) return {};
  KernelArgs args;
  args.add(n).ptr(x).ptr(scale).ptr(zero_point).ptr(y);
  return ctx.launch(kernels.quantize, n, args);
}

std::vector<CudaOpDef> quantize_ops() {
  std::vector<CudaOpDef> ops;
  for (auto& op : make_op_versions("QuantizeLinear", {10, 13, 23}, check_quantize, build_quantize_linear))
    ops.push_back(std::move(op));
  for (auto& op : make_op_versions("DequantizeLinear", {10, 13, 23}, check_dequantize, build_dequantize_linear))
    ops.push_back(std::move(op));
  ops.push_back(make_op("DynamicQuantizeLinear", 11, check_dynamic_quantize, build_dynamic_quantize));
  return ops;
}

}  // namespace nxrt::cuda
