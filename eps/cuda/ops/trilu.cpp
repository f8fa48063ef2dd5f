// Trilu: the upper or lower triangle of the last two dims from diagonal k (an optional input),
// the rest zeroed; any fixed-size dtype.
#include <fmt/format.h>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_trilu(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 2, "Trilu: input 0 has rank {}; expected a matrix or a batch of them", rank.value_or(0));
  return require_ints(ctx, 1, "k");
}

Expected<void> build_trilu(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(element_type(dtype));
  const std::string kernel = b.instantiate("trilu", t, fmt::format("i64 n, i64 rows, i64 cols, i64 k, int upper, const {0}* in, {0}* out", t),
                                           "n, rows, cols, k, upper, in, out");
  const int upper = node.attributes.int_or("upper", 1) != 0;
  const IntsInput k_input(b.graph(), node, 1);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    if (in.size() < 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} is not a matrix", ctx.where(), shape_to_string(in)));
    auto k = k_input.read_one(ctx, "k", 0);
    if (!k) return std::unexpected(k.error());
    auto y = ctx.output(0, dtype, in);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(in);
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(in[in.size() - 2]).add(in.back()).add(*k).add(upper).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> trilu_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Trilu", 14, check_trilu, build_trilu));
  return ops;
}

}  // namespace nxrt::cuda
