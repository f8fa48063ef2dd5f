// Einsum of one or two inputs. Two float inputs of the batched-GEMM form (nxrt/ir/einsum.h)
// run through cuBLASLt: each operand gathered into [batch, m, k] / [batch, k, n] unless it is
// already laid out so, the product scattered into the output unless it lands there directly.
// Everything else runs one generated kernel, a thread per output element.
#include <fmt/format.h>

#include "blas.h"
#include "nxrt/ir/einsum.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_einsum(const NodeContext& ctx) {
  const auto equation = ctx.attrs().get_string("equation");
  NXRT_REQUIRE(equation.has_value(), "Einsum: the equation attribute is missing; it is required");
  NXRT_REQUIRE(ctx.input_count() == 1 || ctx.input_count() == 2,
               "Einsum: {} inputs; the cuda EP runs Einsum of one or two inputs", ctx.input_count());
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0, 1}, is_cuda_number, kCudaNumbers));
  auto eq = parse_einsum_equation(*equation);
  NXRT_REQUIRE(eq.has_value(), "{}", eq ? std::string() : eq.error().what);
  NXRT_REQUIRE(eq->inputs.size() == ctx.input_count(), "Einsum: equation '{}' has {} input terms but the node has {} inputs",
               *equation, eq->inputs.size(), ctx.input_count());
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    auto s = ctx.input_static_shape(i);
    if (!s) return KernelMatch::supported();  // checked when the step runs
    shapes.push_back(std::move(*s));
  }
  auto plan = plan_einsum(*eq, shapes, *equation);
  NXRT_REQUIRE(plan.has_value(), "{}", plan ? std::string() : plan.error().what);
  NXRT_REQUIRE(plan->out_extents.size() <= kMaxRank && plan->sum_extents.size() <= kMaxRank,
               "Einsum: equation '{}' has {} output and {} summed labels; the cuda EP takes up to {} of each", *equation,
               plan->out_extents.size(), plan->sum_extents.size(), kMaxRank);
  return KernelMatch::supported();
}

// Whether walking `extents` with `strides` visits memory in order (row-major, contiguous).
bool walks_in_order(const std::vector<int64_t>& extents, const std::vector<int64_t>& strides) {
  int64_t expected = 1;
  for (std::size_t d = extents.size(); d-- > 0;) {
    if (extents[d] != 1 && strides[d] != expected) return false;
    expected *= extents[d];
  }
  return true;
}

// The operand as the GEMM reads it: `x` itself when it is laid out so, else a gathered copy
// (scratch that lives as long as the returned tensor).
Expected<Tensor> gathered(StepContext& ctx, const std::string& copy, const Tensor& x, const std::vector<int64_t>& extents,
                          const std::vector<int64_t>& strides) {
  if (walks_in_order(extents, strides)) return x;
  auto buffer = ctx.scratch(static_cast<std::size_t>(shape_numel(extents)) * dtype_size(x.dtype()));
  if (!buffer) return std::unexpected(buffer.error());
  if (auto r = strided_copy(ctx, copy, extents, strides, 0, dev(x), contiguous_strides(extents), 0, dev_mut(*buffer)); !r)
    return std::unexpected(r.error());
  return buffer;
}

Expected<void> run_gemm(StepContext& ctx, const std::string& copy, const EinsumGemm& g, const Tensor& y) {
  for (const auto* extents : {&g.a_extents, &g.b_extents, &g.c_extents})
    if (extents->size() > static_cast<std::size_t>(kMaxRank))
      return fail(ErrorCode::kRuntime, fmt::format("{}: rank {} exceeds the cuda EP's {}", ctx.where(), extents->size(), kMaxRank));
  auto a = gathered(ctx, copy, ctx.input(0), g.a_extents, g.a_strides);
  if (!a) return std::unexpected(a.error());
  auto b = gathered(ctx, copy, ctx.input(1), g.b_extents, g.b_strides);
  if (!b) return std::unexpected(b.error());
  const bool direct = walks_in_order(g.c_extents, g.c_strides);
  Tensor product = y;
  if (!direct) {
    auto buffer = ctx.scratch(static_cast<std::size_t>(g.batch * g.m * g.n) * dtype_size(y.dtype()));
    if (!buffer) return std::unexpected(buffer.error());
    product = std::move(*buffer);
  }
  MatmulProblem p;
  p.dtype = y.dtype();
  p.m = g.m, p.n = g.n, p.k = g.k, p.batch = g.batch;
  p.stride_a = g.m * g.k, p.stride_b = g.k * g.n;
  p.a = dev(*a), p.b = dev(*b), p.d = dev_mut(product);
  if (auto r = run_matmul(ctx, p); !r) return r;
  if (direct) return {};
  return strided_copy(ctx, copy, g.c_extents, contiguous_strides(g.c_extents), 0, dev(product), g.c_strides, 0, dev_mut(y));
}

Expected<void> build_einsum(PlanBuilder& b, const Node& node) {
  const std::string equation = node.attributes.string_or("equation", "");
  auto eq = parse_einsum_equation(equation);
  if (!eq) return std::unexpected(eq.error());
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate(
      "einsum", t,
      fmt::format("i64 n, int out_rank, Dims out_extents, int sum_rank, Dims sum_extents, i64 sum_total, int inputs, "
                  "const {0}* x0, Dims out_strides0, Dims sum_strides0, const {0}* x1, Dims out_strides1, Dims sum_strides1, {0}* y",
                  t),
      "n, out_rank, out_extents, sum_rank, sum_extents, sum_total, inputs, x0, out_strides0, sum_strides0, x1, out_strides1, "
      "sum_strides1, y");
  const bool gemm_capable = is_cuda_float(dtype) && node.inputs.size() == 2;
  const std::string copy = gemm_capable ? strided_copy_kernel(b, dtype) : std::string();
  const std::string variant = gemm_capable ? "cublasLt or nvrtc:" + kernel : "nvrtc:" + kernel;
  b.add_step(make_step(node, variant, [=, eq = std::move(*eq)](StepContext& ctx) -> Expected<void> {
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) shapes.push_back(ctx.input(i).shape());
    auto plan = plan_einsum(eq, shapes, equation);
    if (!plan) return forward_error(std::move(plan), ctx.where());
    if (plan->out_extents.size() > static_cast<std::size_t>(kMaxRank) || plan->sum_extents.size() > static_cast<std::size_t>(kMaxRank))
      return fail(ErrorCode::kRuntime, fmt::format("{}: {} output and {} summed labels; the cuda EP takes up to {} of each",
                                                   ctx.where(), plan->out_extents.size(), plan->sum_extents.size(), kMaxRank));
    auto y = ctx.output(0, dtype, plan->output_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    if (gemm_capable)
      if (const auto g = plan_einsum_gemm(*plan)) return run_gemm(ctx, copy, *g, *y);
    const std::size_t last = plan->out_strides.size() - 1;  // x1 repeats x0 for one input
    KernelArgs args;
    args.add(n).add(static_cast<int>(plan->out_extents.size())).add(to_kernel_dims(plan->out_extents));
    args.add(static_cast<int>(plan->sum_extents.size())).add(to_kernel_dims(plan->sum_extents)).add(shape_numel(plan->sum_extents));
    args.add(static_cast<int>(node.inputs.size()));
    args.ptr(dev(ctx.input(0))).add(to_kernel_dims(plan->out_strides[0])).add(to_kernel_dims(plan->sum_strides[0]));
    args.ptr(dev(ctx.input(last))).add(to_kernel_dims(plan->out_strides[last])).add(to_kernel_dims(plan->sum_strides[last]));
    args.ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> einsum_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Einsum", 12, check_einsum, build_einsum));
  return ops;
}

}  // namespace nxrt::cuda
