// TopK: the k largest (or smallest) elements along an axis and their indices, in order (NaN
// above every number, ties to the lower index, as the cpu EP ranks them); one block per row.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// TopK-1 takes k as an attribute, 10 as an input; 11 adds largest, sorted and integer types.
KernelMatch check_topk(const NodeContext& ctx) {
  if (ctx.opset() >= 11) NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_number, kCudaNumbers));
  else NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  if (ctx.opset() < 10) NXRT_REQUIRE(ctx.attrs().get_int("k").has_value(), "TopK: the k attribute is missing");
  else NXRT_REQUIRE_MATCH(require_ints(ctx, 1, "K"));
  if (const auto rank = ctx.input_rank(0)) {
    const int64_t axis = ctx.attrs().int_or("axis", -1);
    NXRT_REQUIRE(axis >= -*rank && axis < *rank, "TopK: axis {} is out of range for an input of rank {}", axis, *rank);
  }
  return KernelMatch::supported();
}

Expected<void> build_topk(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel =
      b.instantiate("topk", t, fmt::format("i64 outer, i64 axis, i64 inner, i64 k, int largest, const {0}* x, {0}* values, i64* indices", t),
                    "outer, axis, inner, k, largest, x, values, indices");
  const int64_t axis_attr = node.attributes.int_or("axis", -1);
  const int largest = node.attributes.int_or("largest", 1) != 0;
  const std::optional<int64_t> k_attr = node.opset < 10 ? node.attributes.get_int("k") : std::nullopt;
  const IntsInput k_input(b.graph(), node, 1);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(s.size()));
    if (axis < 0 || axis >= static_cast<int64_t>(s.size()))
      return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} is out of range for {}", ctx.where(), axis_attr, shape_to_string(s)));
    int64_t k = k_attr.value_or(0);
    if (!k_attr) {
      auto read = k_input.read_one(ctx, "K");
      if (!read) return std::unexpected(read.error());
      k = *read;
    }
    const auto a = static_cast<std::size_t>(axis);
    if (k < 0 || k > s[a])
      return fail(ErrorCode::kRuntime, fmt::format("{}: k is {} but axis {} of {} has {} elements", ctx.where(), k, axis,
                                                   shape_to_string(s), s[a]),
                  {}, "give a k between 0 and the size of the axis");
    Shape out = s;
    out[a] = k;
    auto values = ctx.output(0, dtype, out);
    if (!values) return std::unexpected(values.error());
    auto indices = ctx.output(1, DType::kInt64, out);
    if (!indices) return std::unexpected(indices.error());
    if (shape_numel(out) == 0) return {};
    const int64_t outer = dims_product(s, 0, a), inner = dims_product(s, a + 1, s.size());
    // A power of two (the kernel's tree reduction), at least a warp, at most 256.
    const int threads = static_cast<int>(std::bit_ceil(static_cast<uint64_t>(std::clamp<int64_t>(s[a], 32, 256))));
    KernelArgs args;
    args.add(outer).add(s[a]).add(inner).add(k).add(largest).ptr(dev(x)).ptr(dev_mut(*values)).ptr(dev_mut(*indices));
    return ctx.launch_rows(kernel, outer * inner, threads, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> topk_ops() { return make_op_versions("TopK", {1, 10, 11}, check_topk, build_topk); }

}  // namespace nxrt::cuda
