// Dtype checks, costs and axis handling shared by the CPU kernel families.
#include "common/kernel_util.h"

#include <algorithm>
#include <vector>

namespace nxrt::cpu {

std::string dtype_list(std::initializer_list<DType> types) {
  std::vector<std::string_view> names;
  for (DType t : types) names.push_back(dtype_name(t));
  return fmt::format("{}", fmt::join(names, ", "));
}

KernelMatch require_input_dtype(const NodeContext& ctx, std::size_t i,
                                std::initializer_list<DType> allowed) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.has_input(i), "{}: input {} is missing; it is required", op, i);
  const DType t = ctx.input_dtype(i);
  NXRT_REQUIRE(t != DType::kUndefined,
               "{}: the type of input {} is unknown; run shape inference or give the model "
               "value_info for it", op, i);
  NXRT_REQUIRE(std::find(allowed.begin(), allowed.end(), t) != allowed.end(),
               "{}: input {} has type {}; the cpu EP supports {} for {}", op, i, dtype_name(t),
               dtype_list(allowed), op);
  return KernelMatch::supported();
}

std::optional<int64_t> static_numel(const ValueType* type) {
  if (!type) return std::nullopt;
  auto shape = type->static_shape();
  if (!shape) return std::nullopt;
  return shape_numel(*shape);
}

Cost elementwise_cost(const NodeContext& ctx, double flops_per_element) {
  Cost cost;
  auto out = static_numel(ctx.output_type(0));
  if (!out) return cost;
  cost.flops = static_cast<double>(*out) * flops_per_element;
  double bytes = static_cast<double>(*out) * static_cast<double>(dtype_size(ctx.output_type(0)->dtype));
  for (std::size_t i = 0; i < ctx.input_count(); ++i)
    if (auto n = static_numel(ctx.input_type(i)))
      bytes += static_cast<double>(*n) * static_cast<double>(dtype_size(ctx.input_dtype(i)));
  cost.bytes_moved = bytes;
  return cost;
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace nxrt::cpu
