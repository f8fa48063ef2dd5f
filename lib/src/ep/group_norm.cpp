// GroupNormalization's geometry (nxrt/ep/group_norm.h).
#include "nxrt/ep/group_norm.h"

#include <fmt/format.h>

namespace nxrt {
namespace {

// What scale and bias hold at this opset, for messages.
const char* affine_unit(int64_t opset) { return group_norm_per_channel(opset) ? "channel" : "group"; }

}  // namespace

KernelMatch check_group_norm_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 3 && ctx.has_input(1) && ctx.has_input(2),
               "GroupNormalization: expected 3 inputs (X, scale, bias), got {}", ctx.input_count());
  const auto groups = ctx.attrs().get_int("num_groups");
  NXRT_REQUIRE(groups && *groups > 0, "GroupNormalization: attribute num_groups is required and must be positive");
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(rank.value_or(2) >= 2, "GroupNormalization: X has rank {}; expected N x C x ...", rank.value_or(2));
  const auto x = ctx.input_static_shape(0);
  if (!x) return KernelMatch::supported();
  const int64_t channels = (*x)[1];
  NXRT_REQUIRE(channels % *groups == 0, "GroupNormalization: {} channels do not split into {} groups", channels,
               *groups);
  const int64_t count = group_norm_per_channel(ctx.opset()) ? channels : *groups;
  for (std::size_t i = 1; i < 3; ++i)
    if (const auto s = ctx.input_static_shape(i))
      NXRT_REQUIRE(shape_numel(*s) == count, "GroupNormalization-{}: input {} has {} values; expected {} (one per {})",
                   group_norm_per_channel(ctx.opset()) ? 21 : 18, i, shape_numel(*s), count,
                   affine_unit(ctx.opset()));
  return KernelMatch::supported();
}

Expected<void> check_group_norm_shapes(bool per_channel, int64_t groups, const Shape& x, const Shape& scale,
                                       const Shape& bias) {
  const int64_t channels = x.size() >= 2 ? x[1] : 0;
  const int64_t count = per_channel ? channels : groups;
  if (x.size() >= 2 && channels % groups == 0 && shape_numel(scale) == count && shape_numel(bias) == count) return {};
  return fail(ErrorCode::kRuntime,
              fmt::format("GroupNormalization: X {}, scale {} and bias {} do not fit {} groups", shape_to_string(x),
                          shape_to_string(scale), shape_to_string(bias), groups),
              per_channel ? "from opset 21, scale and bias hold one value per channel (dim 1 of X)"
                          : "before opset 21, scale and bias hold one value per group",
              "fix the shapes of the node's inputs or num_groups");
}

}  // namespace nxrt
