// MaxRoiPool's attributes and checks (nxrt/ep/max_roi_pool.h).
#include "nxrt/ep/max_roi_pool.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace nxrt {

MaxRoiPoolAttrs read_max_roi_pool_attrs(const AttributeMap& attrs) {
  const std::vector<int64_t> pooled = attrs.ints_or("pooled_shape", {0, 0});
  return {pooled[0], pooled[1], attrs.float_or("spatial_scale", 1.f)};
}

KernelMatch check_max_roi_pool_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2 && ctx.has_input(1), "MaxRoiPool: expected inputs X and rois, got {}",
               ctx.input_count());
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0), "MaxRoiPool: rois are {} and X {}; they must match",
               dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(0)));
  const std::vector<int64_t> pooled = ctx.attrs().ints_or("pooled_shape", {});
  NXRT_REQUIRE(pooled.size() == 2 && pooled[0] > 0 && pooled[1] > 0,
               "MaxRoiPool: pooled_shape is [{}]; it must be two positive sizes [height, width]", fmt::join(pooled, ","));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(4) == 4, "MaxRoiPool: X has rank {}; it must be [N, C, H, W]",
               ctx.input_rank(0).value_or(4));
  const auto rois = ctx.input_static_shape(1);
  NXRT_REQUIRE(!rois || (rois->size() == 2 && (*rois)[1] == 5),
               "MaxRoiPool: rois have shape {}; they must be [num_rois, 5] (batch index, x1, y1, x2, y2)",
               shape_to_string(rois.value_or(Shape{})));
  return KernelMatch::supported();
}

Expected<void> check_max_roi_pool_shapes(const Shape& x, const Shape& rois) {
  if (x.size() != 4 || rois.size() != 2 || rois[1] != 5)
    return fail(ErrorCode::kRuntime,
                fmt::format("MaxRoiPool: X {} and rois {} are not [N, C, H, W] and [num_rois, 5]", shape_to_string(x),
                            shape_to_string(rois)),
                "each roi is (batch index, x1, y1, x2, y2) in the input's coordinates before spatial_scale",
                "fix the model's inputs");
  return {};
}

}  // namespace nxrt
