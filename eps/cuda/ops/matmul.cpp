// MatMul and Gemm through cuBLASLt (float accumulation for float and float16).
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

// Batch dims of a MatMul operand: everything before the last two.
int64_t batch_of(const Shape& s) {
  int64_t b = 1;
  for (std::size_t i = 0; i + 2 < s.size(); ++i) b *= s[i];
  return b;
}

Expected<void> build_matmul(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  b.add_step(make_step(node, "cublasLt", [=](StepContext& ctx) -> Expected<void> {
    // 1-D operands are promoted ([K] -> [1,K] and [K] -> [K,1]) and the added dim dropped after.
    Shape a = ctx.input(0).shape(), bs = ctx.input(1).shape();
    const bool a_vec = a.size() == 1, b_vec = bs.size() == 1;
    if (a.empty() || bs.empty()) return fail(ErrorCode::kRuntime, fmt::format("{}: MatMul of a scalar", ctx.where()));
    if (a_vec) a.insert(a.begin(), 1);
    if (b_vec) bs.push_back(1);
    const int64_t m = a[a.size() - 2], k = a.back(), n = bs.back();
    if (bs[bs.size() - 2] != k)
      return fail(ErrorCode::kRuntime, fmt::format("{}: {} and {} do not multiply", ctx.where(), shape_to_string(a), shape_to_string(bs)));
    const int64_t batch_a = batch_of(a), batch_b = batch_of(bs);
    const Shape& batch_dims = batch_a >= batch_b ? a : bs;
    // One side's batch dims must equal the other's, or that side has none: the general
    // broadcast ([2,1]x[1,3]) would need a gather of pointers this EP does not do.
    const bool same = Shape(a.begin(), a.end() - 2) == Shape(bs.begin(), bs.end() - 2);
    if (!same && batch_a != 1 && batch_b != 1)
      return fail(ErrorCode::kRuntime, fmt::format("{}: batch dims of {} and {} broadcast both ways", ctx.where(),
                                                   shape_to_string(a), shape_to_string(bs)),
                  "the cuda EP broadcasts one side's batch only", "use the cpu EP for this node");
    Shape out(batch_dims.begin(), batch_dims.end() - 2);
    if (!a_vec) out.push_back(m);
    if (!b_vec) out.push_back(n);
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    MatmulProblem p;
    p.dtype = dtype;
    p.m = m, p.n = n, p.k = k, p.batch = std::max(batch_a, batch_b);
    p.stride_a = batch_a == 1 ? 0 : m * k;
    p.stride_b = batch_b == 1 ? 0 : k * n;
    p.a = dev(ctx.input(0)), p.b = dev(ctx.input(1)), p.d = dev_mut(*y);
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
  ops.push_back(make_op("Gemm", 7, check_gemm, build_gemm));
  return ops;
}

}  // namespace nxrt::cuda
