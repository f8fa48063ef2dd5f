// CenterCropPad-18's geometry (nxrt/ep/center_crop_pad.h).
#include "nxrt/ep/center_crop_pad.h"

#include <fmt/format.h>

namespace nxrt {

Expected<CenterCropPadPlan> plan_center_crop_pad(const Shape& in, const std::vector<int64_t>& axes,
                                                 const std::vector<int64_t>& sizes) {
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> listed = axes;
  if (listed.empty())
    for (int64_t d = 0; d < rank; ++d) listed.push_back(d);
  if (listed.size() != sizes.size())
    return fail(ErrorCode::kRuntime,
                fmt::format("CenterCropPad: shape has {} values for {} axes", sizes.size(), listed.size()),
                "input shape gives one size per axis (per dim of the input when axes is not set)",
                "fix the node's shape input or its axes attribute");
  CenterCropPadPlan plan{in, std::vector<int64_t>(in.size(), 0)};
  std::vector<bool> seen(in.size(), false);
  for (std::size_t k = 0; k < listed.size(); ++k) {
    const int64_t axis = listed[k] < 0 ? listed[k] + rank : listed[k];
    if (axis < 0 || axis >= rank)
      return fail(ErrorCode::kRuntime,
                  fmt::format("CenterCropPad: axis {} is out of range for an input of rank {}", listed[k], rank),
                  "", "fix the node's axes attribute");
    const auto a = static_cast<std::size_t>(axis);
    if (seen[a]) return fail(ErrorCode::kRuntime, fmt::format("CenterCropPad: axis {} is repeated in axes", listed[k]),
                             "", "list each axis once");
    if (sizes[k] < 0)
      return fail(ErrorCode::kRuntime, fmt::format("CenterCropPad: size {} for axis {} is negative", sizes[k], listed[k]),
                  "", "fix the node's shape input");
    seen[a] = true;
    plan.out[a] = sizes[k];
    plan.begins[a] = (sizes[k] - in[a]) / 2;
  }
  return plan;
}

KernelMatch check_center_crop_pad_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2 && ctx.has_input(1), "CenterCropPad: expected 2 inputs (input_data, shape)");
  const DType t = ctx.input_dtype(1);
  NXRT_REQUIRE(t == DType::kInt32 || t == DType::kInt64, "CenterCropPad: input 1 (shape) has type {}; it must be "
               "int32 or int64", dtype_name(t));
  const auto sizes = ctx.constant_ints(1);
  const auto in = ctx.input_static_shape(0);
  if (sizes && in)
    if (auto plan = plan_center_crop_pad(*in, ctx.attrs().ints_or("axes", {}), *sizes); !plan)
      return declined_by(plan.error());
  return KernelMatch::supported();
}

}  // namespace nxrt
