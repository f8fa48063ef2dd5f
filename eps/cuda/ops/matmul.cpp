// MatMul and Gemm through cuBLASLt (float accumulation for float, float16 and bfloat16).
#include <fmt/format.h>

#include "blas.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_matmul(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1}));
  return KernelMatch::supported();
}

Expected<void> build_matmul(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string expand = strided_copy_kernel(b, dtype);
  b.add_step(make_step(node, "cublasLt", [=](StepContext& ctx) -> Expected<void> {
    auto shape = matmul_shape(ctx.input(0).shape(), ctx.input(1).shape());
    if (!shape) return forward_error(std::move(shape), ctx.where());
    auto y = ctx.output(0, dtype, shape->output);
    if (!y) return std::unexpected(y.error());
    MatmulProblem p = shape->problem;
    p.dtype = dtype;
    p.a = dev(ctx.input(0)), p.b = dev(ctx.input(1)), p.d = dev_mut(*y);
    std::vector<Tensor> expanded;  // operands whose batch broadcasts partly, copied out
    if (auto done = expand_partial_batches(ctx, expand, *shape, dtype, p.a, dtype, p.b, expanded); !done) return done;
    return run_matmul(ctx, p);
  }));
  return {};
}

KernelMatch check_gemm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2}));
  for (std::size_t i : {0u, 1u}) {
    const auto r = ctx.input_rank(i);
    NXRT_REQUIRE(!r || *r == 2, "Gemm: input {} has rank {}; expected 2", i, *r);
  }
  return KernelMatch::supported();
}

Expected<void> build_gemm(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const bool trans_a = node.attributes.int_or("transA", 0) != 0, trans_b = node.attributes.int_or("transB", 0) != 0;
  const float alpha = node.attributes.float_or("alpha", 1.f), beta = node.attributes.float_or("beta", 1.f);
  const bool has_c = node.inputs.size() > 2 && node.inputs[2] != kNoValue && beta != 0.f;
  const std::string expand = strided_copy_kernel(b, dtype);
  b.add_step(make_step(node, has_c ? "cublasLt+" + expand : "cublasLt", [=](StepContext& ctx) -> Expected<void> {
    const Shape& a = ctx.input(0).shape();
    const Shape& bs = ctx.input(1).shape();
    if (a.size() != 2 || bs.size() != 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: Gemm of {} and {}", ctx.where(), shape_to_string(a), shape_to_string(bs)));
    const int64_t m = trans_a ? a[1] : a[0], k = trans_a ? a[0] : a[1];
    const int64_t n = trans_b ? bs[0] : bs[1], kb = trans_b ? bs[1] : bs[0];
    if (k != kb)
      return fail(ErrorCode::kRuntime, fmt::format("{}: {} and {} do not multiply", ctx.where(), shape_to_string(a), shape_to_string(bs)));
    auto y = ctx.output(0, dtype, {m, n});
    if (!y) return std::unexpected(y.error());
    if (has_c) {  // C broadcast into Y, then Y = alpha·A·B + beta·Y
      const Shape& c = ctx.input(2).shape();
      if (c.size() > 2)
        return fail(ErrorCode::kRuntime, fmt::format("{}: C is {}, expected at most 2-D", ctx.where(), shape_to_string(c)));
      const Shape out{m, n};
      const Shape own = contiguous_strides(c);
      Shape read(2, 0);
      for (std::size_t i = 0; i < c.size(); ++i) {
        const std::size_t o = 2 - c.size() + i;
        if (c[i] != 1 && c[i] != out[o])
          return fail(ErrorCode::kRuntime, fmt::format("{}: C {} does not broadcast to [{},{}]", ctx.where(), shape_to_string(c), m, n));
        if (c[i] != 1) read[o] = own[i];
      }
      if (auto r = strided_copy(ctx, expand, out, read, 0, dev(ctx.input(2)), contiguous_strides(out), 0, dev_mut(*y)); !r)
        return r;
    }
    MatmulProblem p;
    p.dtype = dtype;
    p.trans_a = trans_a, p.trans_b = trans_b;
    p.m = m, p.n = n, p.k = k;
    p.alpha = alpha, p.beta = has_c ? beta : 0.f;
    p.a = dev(ctx.input(0)), p.b = dev(ctx.input(1)), p.d = dev_mut(*y);
    return run_matmul(ctx, p);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> matmul_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("MatMul", 1, check_matmul, build_matmul));
  // Opset 6's broadcast=0 asks for a C of [M, N], which numpy-style broadcasting leaves as is.
  ops.push_back(make_op("Gemm", 6, check_gemm, build_gemm));
  return ops;
}

}  // namespace nxrt::cuda
