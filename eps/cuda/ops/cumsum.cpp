// CumSum along one axis (given as an input), inclusive or exclusive, forward or reversed: one
// thread per line, float accumulation for float16.
#include <fmt/format.h>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {


KernelMatch check_cumsum(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_number, kCudaNumbers));
  NXRT_REQUIRE(ctx.has_input(1), "CumSum: the axis input is missing");
  return require_ints(ctx, 1, "axis");
}

Expected<void> build_cumsum(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate(
      "cumsum", t, fmt::format("i64 lines, i64 axis_dim, i64 inner, int exclusive, int reverse, const {0}* x, {0}* y", t),
      "lines, axis_dim, inner, exclusive, reverse, x, y");
  const int exclusive = node.attributes.int_or("exclusive", 0) != 0;
  const int reverse = node.attributes.int_or("reverse", 0) != 0;
  const IntsInput axis_input(b.graph(), node, 1);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto given = axis_input.read_one(ctx, "the axis input");
    if (!given) return std::unexpected(given.error());
    const auto axis = axis_index(ctx, *given, in);
    if (!axis) return std::unexpected(axis.error());
    auto y = ctx.output(0, dtype, in);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(in);
    if (n == 0) return {};
    int64_t inner = 1;
    for (std::size_t d = *axis + 1; d < in.size(); ++d) inner *= in[d];
    const int64_t lines = n / in[*axis];
    KernelArgs args;
    args.add(lines).add(in[*axis]).add(inner).add(exclusive).add(reverse).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, lines, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> cumsum_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("CumSum", 11, check_cumsum, build_cumsum));
  return ops;
}

}  // namespace nxrt::cuda
