// Det of square matrices [*, M, M] in float, float16, bfloat16 and double: one block per matrix
// factors a double copy (LU with partial pivoting, as the cpu EP computes it).
#include <fmt/format.h>

#include <algorithm>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

constexpr int kDetThreads = 128;  // per matrix: the rows below each pivot are eliminated in parallel

KernelMatch check_det(const NodeContext& ctx) {
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(is_cuda_float_or_double(t),
               "Det: input is {}; the cuda EP takes {}", dtype_name(t), kCudaFloatsOrDouble);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 2, "Det: input has rank {}; it must be square matrices [*, M, M]", rank.value_or(0));
  return KernelMatch::supported();
}

Expected<void> build_det(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel =
      b.instantiate("det", t, fmt::format("i64 batch, i64 n, const {0}* x, double* a, {0}* y", t), "batch, n, x, a, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
      return fail(ErrorCode::kRuntime, fmt::format("{}: input has shape {}", ctx.where(), shape_to_string(s)),
                  "Det takes square matrices [*, M, M]", "give square matrices");
    const Shape batch_shape(s.begin(), s.end() - 2);
    auto y = ctx.output(0, dtype, batch_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t batch = shape_numel(batch_shape), n = s.back();
    if (batch == 0) return {};
    auto work = ctx.scratch(static_cast<std::size_t>(std::max<int64_t>(1, x.numel())) * sizeof(double));
    if (!work) return std::unexpected(work.error());
    KernelArgs args;
    args.add(batch).add(n).ptr(dev(x)).ptr(dev_mut(*work)).ptr(dev_mut(*y));
    return ctx.launch_rows(kernel, batch, kDetThreads, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> det_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Det", 11, check_det, build_det));
  return ops;
}

}  // namespace nxrt::cuda
