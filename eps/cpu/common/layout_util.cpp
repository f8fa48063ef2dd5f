// Element copies, views, costs and axis checks shared by the data-movement kernels.
#include "common/layout_util.h"

#include <algorithm>
#include <cstring>

#include "common/kernel_util.h"

namespace nxrt::cpu {

void copy_elements(DType t, void* dst, const void* src, int64_t n) {
  if (n <= 0) return;
  if (t == DType::kString) {
    std::copy_n(static_cast<const std::string*>(src), n, static_cast<std::string*>(dst));
    return;
  }
  std::memcpy(dst, src, static_cast<std::size_t>(n) * dtype_size(t));
}

Tensor contiguous_view(const Tensor& source, int64_t offset, Shape shape) {
  const int64_t byte_offset =
      source.view().byte_offset + offset * static_cast<int64_t>(dtype_size(source.dtype()));
  return Tensor(source.storage(), source.dtype(), std::move(shape), byte_offset);
}

int64_t dims_product(std::span<const int64_t> shape, std::size_t begin, std::size_t end) {
  int64_t n = 1;
  for (std::size_t d = begin; d < end; ++d) n *= shape[d];
  return n;
}

Cost copy_cost(const NodeContext& ctx) {
  double bytes = 0;
  for (std::size_t i = 0; i < ctx.output_count(); ++i) {
    if (!ctx.has_output(i)) continue;
    const ValueType* type = ctx.output_type(i);
    auto n = static_numel(type);
    if (!n) return {};
    bytes += 2.0 * static_cast<double>(*n) * static_cast<double>(dtype_size(type->dtype));
  }
  return Cost{0, bytes, std::nullopt};
}

KernelMatch check_axis_attribute(const NodeContext& ctx, int64_t axis) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(axis >= 0 || ctx.opset() >= 11,
               "{}: axis {} is negative; {} accepts negative axes from opset 11 on and this node has "
               "opset {}", op, axis, op, ctx.opset());
  if (auto rank = ctx.input_rank(0))
    NXRT_REQUIRE(axis >= -*rank && axis < *rank,
                 "{}: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", op, axis,
                 *rank, ctx.opset() >= 11 ? -*rank : 0, *rank - 1);
  return KernelMatch::supported();
}

KernelMatch check_axis_in_range(const NodeContext& ctx, int64_t axis) {
  const std::string& op = ctx.node().op_type;
  if (auto rank = ctx.input_rank(0))
    NXRT_REQUIRE(axis >= -*rank && axis < *rank,
                 "{}: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", op, axis, *rank,
                 -*rank, *rank - 1);
  return KernelMatch::supported();
}

Expected<std::vector<int64_t>> normalize_axes(std::string_view op, std::span<const int64_t> axes,
                                              int64_t rank, bool allow_negative) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t axis : axes) {
    if (axis < 0 && !allow_negative)
      return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} is negative", op, axis),
                  fmt::format("{} accepts negative axes from opset 11 on", op),
                  fmt::format("use axis {} or a model with opset 11 or later", axis + rank));
    if (axis < -rank || axis >= rank)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: axis {} is out of range for rank {}", op, axis, rank),
                  fmt::format("valid axes are [{}, {}]", allow_negative ? -rank : 0, rank - 1),
                  "fix the axes of the node");
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (std::find(out.begin(), out.end(), a) != out.end())
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: axis {} appears twice in axes [{}]", op, a, fmt::join(axes, ",")),
                  "each axis may be named once", "remove the repeated axis");
    out.push_back(a);
  }
  return out;
}

}  // namespace nxrt::cpu
