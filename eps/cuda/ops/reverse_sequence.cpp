// ReverseSequence of any fixed-size dtype: one thread per element reads its source along the
// time axis.
#include <fmt/format.h>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_reverse_sequence(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kInt64, "ReverseSequence: sequence_lens is {}; it must be int64",
               dtype_name(ctx.input_dtype(1)));
  const int64_t batch_axis = ctx.attrs().int_or("batch_axis", 1), time_axis = ctx.attrs().int_or("time_axis", 0);
  NXRT_REQUIRE((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0),
               "ReverseSequence: batch_axis {} and time_axis {} must be 0 and 1 in some order", batch_axis, time_axis);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 2, "ReverseSequence: input has rank {}; it must have rank 2 or more", *rank);
  return KernelMatch::supported();
}

Expected<void> build_reverse_sequence(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const bool batch_major = node.attributes.int_or("batch_axis", 1) == 0;
  const std::string t(element_type(dtype));
  const std::string kernel = b.instantiate(
      "reverse_sequence", t,
      fmt::format("i64 n, i64 steps, i64 time_stride, i64 batch, i64 batch_stride, const i64* lens, const {0}* x, {0}* y", t),
      "n, steps, time_stride, batch, batch_stride, lens, x, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} has rank below 2", ctx.where(), shape_to_string(s)));
    const int64_t batch = batch_major ? s[0] : s[1], steps = batch_major ? s[1] : s[0];
    if (ctx.input(1).numel() != batch)
      return fail(ErrorCode::kRuntime, fmt::format("{}: sequence_lens has {} values for a batch of {}", ctx.where(),
                                                   ctx.input(1).numel(), batch));
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    const int64_t n = x.numel();
    if (n == 0) return {};
    const int64_t inner = dims_product(s, 2, s.size());
    const int64_t time_stride = batch_major ? inner : batch * inner, batch_stride = batch_major ? steps * inner : inner;
    KernelArgs args;
    args.add(n).add(steps).add(time_stride).add(batch).add(batch_stride).ptr(dev(ctx.input(1))).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> reverse_sequence_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("ReverseSequence", 10, check_reverse_sequence, build_reverse_sequence));
  return ops;
}

}  // namespace nxrt::cuda
