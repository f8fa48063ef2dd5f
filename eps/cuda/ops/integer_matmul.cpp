// MatMulInteger and QLinearMatMul of int8 and uint8 operands, in one generated kernel: int32
// sums of zero-point-shifted products, a zero point per tensor, per row of A or per column of
// B; QLinearMatMul requantizes each sum with the scales. ONNX Runtime's MatMulIntegerToFloat and
// DynamicQuantizeMatMul (what its optimizer makes of quantize_dynamic's MatMulInteger -> Cast ->
// Mul) scale the sums to float and add a bias; DynamicQuantizeMatMul quantizes its float A first
// as DynamicQuantizeLinear does, scale and zero point found and read on the device. Batch dims
// broadcast as MatMul's do on the cuda EP (an operand whose batch broadcasts partly is copied out
// first).
#include <fmt/format.h>

#include "blas.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// Inputs A, B, a_zero_point, b_zero_point.
KernelMatch check_matmul_integer(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_quantized(ctx, 0, "A"));
  NXRT_REQUIRE_MATCH(require_quantized(ctx, 1, "B"));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 2, "a_zero_point", ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 3, "b_zero_point", ctx.input_dtype(1)));
  return KernelMatch::supported();
}

// Inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
KernelMatch check_qlinear_matmul(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_quantized(ctx, 0, "a"));
  NXRT_REQUIRE_MATCH(require_quantized(ctx, 3, "b"));
  NXRT_REQUIRE_MATCH(require_quantized(ctx, 7, "y_zero_point"));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 1, "a_scale", DType::kFloat32));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 2, "a_zero_point", ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 4, "b_scale", DType::kFloat32));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 5, "b_zero_point", ctx.input_dtype(3)));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 6, "y_scale", DType::kFloat32));
  return KernelMatch::supported();
}

Expected<void> build_integer_matmul(PlanBuilder& b, const Node& node) {
  const bool qlinear = node.op_type == "QLinearMatMul";
  const std::size_t a_in = 0, b_in = qlinear ? 3 : 1;
  const Graph& g = b.graph();
  const std::string ta(quantized_type(g.value(node.inputs[a_in]).type.dtype)), tb(quantized_type(g.value(node.inputs[b_in]).type.dtype));
  const DType out = qlinear ? g.value(node.inputs[7]).type.dtype : DType::kInt32;
  const std::string ty = qlinear ? std::string(quantized_type(out)) : "int";
  const std::string kernel = b.instantiate(
      "matmul_integer", fmt::format("{}, {}, {}", ta, tb, ty),
      fmt::format("i64 batch, i64 m, i64 n, i64 k, i64 stride_a, i64 stride_b, const {0}* a, const {1}* b, const {0}* za, "
                  "i64 za_count, const {1}* zb, i64 zb_count, const float* sa, i64 sa_count, const float* sb, i64 sb_count, "
                  "const float* y_scale, const {2}* y_zp, int lo, int hi, {2}* y",
                  ta, tb, ty),
      "batch, m, n, k, stride_a, stride_b, a, b, za, za_count, zb, zb_count, sa, sa_count, sb, sb_count, y_scale, y_zp, lo, hi, y");
  const std::pair<int, int> bounds = out == DType::kInt8 ? std::pair(-128, 127) : std::pair(0, 255);
  const std::string expand = strided_copy_kernel(b, g.value(node.inputs[a_in]).type.dtype);  // int8 or uint8: bytes
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto shape = matmul_shape(ctx.input(a_in).shape(), ctx.input(b_in).shape());
    if (!shape) return forward_error(std::move(shape), ctx.where());
    const MatmulProblem& p = shape->problem;
    auto y = ctx.output(0, out, shape->output);
    if (!y) return std::unexpected(y.error());
    if (shape_numel(shape->output) == 0) return {};
    // Operands whose batch broadcasts partly, copied out with the output's batch dims.
    std::vector<Tensor> expanded;
    const void* a_data = dev(ctx.input(a_in));
    const void* b_data = dev(ctx.input(b_in));
    if (auto done = expand_partial_batches(ctx, expand, *shape, ctx.input(a_in).dtype(), a_data,
                                           ctx.input(b_in).dtype(), b_data, expanded);
        !done)
      return done;
    // Per tensor, per row of A or per column of B.
    auto vector = [&](std::size_t i, int64_t covers, std::string_view what) {
      return scalar_or_vector(ctx, i, covers, what, "give one value, or one per row of A / column of B");
    };
    const std::size_t za_in = 2, zb_in = qlinear ? 5 : 3;
    auto za = vector(za_in, p.m, "a_zero_point");
    auto zb = vector(zb_in, p.n, "b_zero_point");
    auto sa = qlinear ? vector(1, p.m, "a_scale") : ScalarOrVector{};
    auto sb = qlinear ? vector(4, p.n, "b_scale") : ScalarOrVector{};
    for (auto* v : {&za, &zb, &sa, &sb})
      if (!*v) return std::unexpected(v->error());
    if (qlinear && (ctx.input(6).numel() != 1 || ctx.input(7).numel() != 1))
      return fail(ErrorCode::kRuntime, fmt::format("{}: y_scale and y_zero_point must hold one value each", ctx.where()));
    KernelArgs args;
    args.add(p.batch).add(p.m).add(p.n).add(p.k).add(p.stride_a).add(p.stride_b).ptr(a_data).ptr(b_data);
    args.ptr(za->data).add(za->count).ptr(zb->data).add(zb->count).ptr(sa->data).add(sa->count).ptr(sb->data).add(sb->count);
    args.ptr(qlinear ? dev(ctx.input(6)) : nullptr).ptr(qlinear ? dev(ctx.input(7)) : nullptr).add(bounds.first).add(bounds.second);
    args.ptr(dev_mut(*y));
    return ctx.launch(kernel, shape_numel(shape->output), args);
  }));
  return {};
}

// ---- MatMulIntegerToFloat and DynamicQuantizeMatMul (com.microsoft) ----

// Where an op has its inputs: MatMulIntegerToFloat's are A, B, a_scale, b_scale, a_zero_point,
// b_zero_point, bias; DynamicQuantizeMatMul's float A, B, b_scale, b_zero_point, bias.
struct IntegerToFloatInputs {
  bool dynamic = false;
  std::size_t b_scale() const { return dynamic ? 2 : 3; }
  std::size_t b_zero() const { return dynamic ? 3 : 5; }
  std::size_t bias() const { return dynamic ? 4 : 6; }
  static IntegerToFloatInputs of(const Node& node) { return {node.op_type == "DynamicQuantizeMatMul"}; }
};

KernelMatch check_integer_to_float(const NodeContext& ctx) {
  const IntegerToFloatInputs in = IntegerToFloatInputs::of(ctx.node());
  const std::string& op = ctx.node().op_type;
  if (in.dynamic) {
    NXRT_REQUIRE(ctx.input_dtype(0) == DType::kFloat32, "{}: A is {}; it must be float", op,
                 dtype_name(ctx.input_dtype(0)));
  } else {
    NXRT_REQUIRE_MATCH(require_quantized(ctx, 0, "A"));
    NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 2, "a_scale", DType::kFloat32));
    NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, 4, "a_zero_point", ctx.input_dtype(0)));
  }
  NXRT_REQUIRE_MATCH(require_quantized(ctx, 1, "B"));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, in.b_scale(), "b_scale", DType::kFloat32));
  NXRT_REQUIRE_MATCH(require_scalar_or_vector(ctx, in.b_zero(), "b_zero_point", ctx.input_dtype(1)));
  NXRT_REQUIRE(!ctx.has_input(in.bias()) || (ctx.input_dtype(in.bias()) == DType::kFloat32 &&
                                              ctx.input_rank(in.bias()).value_or(1) == 1),
               "{}: the bias is {} of rank {}; it must be float, one value per column of B", op,
               dtype_name(ctx.input_dtype(in.bias())), ctx.input_rank(in.bias()).value_or(1));
  return KernelMatch::supported();
}

Expected<void> build_integer_to_float(PlanBuilder& b, const Node& node) {
  const IntegerToFloatInputs in = IntegerToFloatInputs::of(node);
  const Graph& g = b.graph();
  const DType a_type = in.dynamic ? DType::kUInt8 : g.value(node.inputs[0]).type.dtype;
  const std::string kernel = integer_to_float_kernel(b, a_type, g.value(node.inputs[1]).type.dtype);
  const DynamicQuantizeKernels quantize = dynamic_quantize_kernels(b);
  const std::string expand = strided_copy_kernel(b, a_type);  // int8 or uint8: bytes
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const std::string_view op = node.op_type;
    auto shape = matmul_shape(ctx.input(0).shape(), ctx.input(1).shape());
    if (!shape) return forward_error(std::move(shape), ctx.where());
    const MatmulProblem& p = shape->problem;
    auto y = ctx.output(0, DType::kFloat32, shape->output);
    if (!y) return std::unexpected(y.error());
    if (y->numel() == 0) return {};
    auto b_scale = scalar_or_vector(ctx, in.b_scale(), p.n, "b_scale", "give one value, or one per column of B");
    if (!b_scale) return std::unexpected(b_scale.error());
    auto b_zero = scalar_or_vector(ctx, in.b_zero(), p.n, "b_zero_point", "give one value, or one per column of B");
    if (!b_zero) return std::unexpected(b_zero.error());
    if (ctx.has_input(in.bias()) && ctx.input(in.bias()).numel() != p.n)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: the bias has {} values; Y has {} columns", ctx.where(),
                              ctx.input(in.bias()).numel(), p.n),
                  "the bias adds one value per column of B", fmt::format("give a bias of {} values", p.n));
    std::vector<Tensor> scratch;  // A quantized, its scale and zero point; operands copied out
    const void* a_data = dev(ctx.input(0));
    const void* a_scale = nullptr;
    const void* a_zero = nullptr;
    if (in.dynamic) {  // A quantized to uint8 as DynamicQuantizeLinear does, on the device
      const int64_t n = ctx.input(0).numel();
      for (std::size_t bytes : {sizeof(float), std::size_t{1}, static_cast<std::size_t>(n)}) {
        auto t = ctx.scratch(bytes);
        if (!t) return std::unexpected(t.error());
        scratch.push_back(std::move(*t));
      }
      if (auto r = dynamic_quantize(ctx, quantize, n, a_data, dev_mut(scratch[0]), dev_mut(scratch[1]),
                                    dev_mut(scratch[2]));
          !r)
        return r;
      a_scale = dev(scratch[0]), a_zero = dev(scratch[1]), a_data = dev(scratch[2]);
    } else {
      for (std::size_t i : {2, 4})
        if (ctx.has_input(i) && ctx.input(i).numel() != 1)
          return fail(ErrorCode::kRuntime, fmt::format("{}: input {} has {} values", ctx.where(), i,
                                                       ctx.input(i).numel()),
                      fmt::format("{} takes one a_scale and one a_zero_point for all of A", op),
                      "give one value each");
      a_scale = dev(ctx.input(2));
      a_zero = ctx.has_input(4) ? dev(ctx.input(4)) : nullptr;
    }
    const void* b_data = dev(ctx.input(1));
    if (auto done = expand_partial_batches(ctx, expand, *shape, a_type, a_data, ctx.input(1).dtype(), b_data, scratch);
        !done)
      return done;
    KernelArgs args;
    args.add(p.batch).add(p.m).add(p.n).add(p.k).add(p.stride_a).add(p.stride_b).ptr(a_data).ptr(b_data);
    args.ptr(a_zero).ptr(b_zero->data).add(b_zero->count).ptr(a_scale).ptr(b_scale->data).add(b_scale->count);
    args.ptr(ctx.has_input(in.bias()) ? dev(ctx.input(in.bias())) : nullptr).ptr(dev_mut(*y));
    return ctx.launch(kernel, y->numel(), args);
  }));
  return {};
}

}  // namespace

std::string integer_to_float_kernel(PlanBuilder& b, DType a, DType w) {
  const std::string ta(quantized_type(a)), tb(quantized_type(w));
  return b.instantiate(
      "matmul_integer_to_float", fmt::format("{}, {}", ta, tb),
      fmt::format("i64 batch, i64 m, i64 n, i64 k, i64 stride_a, i64 stride_b, const {0}* a, const {1}* b, "
                  "const {0}* za, const {1}* zb, i64 zb_count, const float* sa, const float* sb, i64 sb_count, "
                  "const float* bias, float* y",
                  ta, tb),
      "batch, m, n, k, stride_a, stride_b, a, b, za, zb, zb_count, sa, sb, sb_count, bias, y");
}

std::vector<CudaOpDef> integer_matmul_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("MatMulInteger", 10, check_matmul_integer, build_integer_matmul));
  for (auto& op : make_op_versions("QLinearMatMul", {10, 21}, check_qlinear_matmul, build_integer_matmul)) ops.push_back(std::move(op));
  for (const char* op : {"MatMulIntegerToFloat", "DynamicQuantizeMatMul"})
    ops.push_back(make_microsoft_op(op, check_integer_to_float, build_integer_to_float));
  return ops;
}

}  // namespace nxrt::cuda
