// RoiAlign's attributes and claim checks (nxrt/ep/roi_align.h).
#include "nxrt/ep/roi_align.h"

#include <fmt/format.h>

#include <string>

namespace nxrt {

RoiAlignAttrs read_roi_align_attrs(const AttributeMap& attrs, int64_t opset) {
  RoiAlignAttrs a;
  a.max = attrs.string_or("mode", "avg") == "max";
  a.half_pixel = opset >= 16 && attrs.string_or("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  a.out_h = attrs.int_or("output_height", 1);
  a.out_w = attrs.int_or("output_width", 1);
  a.sampling_ratio = attrs.int_or("sampling_ratio", 0);
  a.spatial_scale = attrs.float_or("spatial_scale", 1);
  return a;
}

KernelMatch check_roi_align_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0), "RoiAlign: rois has type {}; expected {} like X",
               dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.input_dtype(2) == DType::kInt64, "RoiAlign: batch_indices has type {}; it must be int64",
               dtype_name(ctx.input_dtype(2)));
  const std::string mode = ctx.attrs().string_or("mode", "avg");
  NXRT_REQUIRE(mode == "avg" || mode == "max", "RoiAlign: mode '{}' is not valid; use avg or max", mode);
  const std::string transform = ctx.attrs().string_or("coordinate_transformation_mode", "half_pixel");
  if (ctx.opset() >= 16)
    NXRT_REQUIRE(transform == "half_pixel" || transform == "output_half_pixel",
                 "RoiAlign: coordinate_transformation_mode '{}' is not valid; use half_pixel or output_half_pixel",
                 transform);
  const RoiAlignAttrs a = read_roi_align_attrs(ctx.attrs(), ctx.opset());
  NXRT_REQUIRE(a.out_h > 0 && a.out_w > 0, "RoiAlign: output_height {} and output_width {} must be positive", a.out_h,
               a.out_w);
  NXRT_REQUIRE(a.sampling_ratio >= 0, "RoiAlign: sampling_ratio {} is negative; use 0 (adaptive) or a positive count",
               a.sampling_ratio);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 4, "RoiAlign: X has rank {}; it must be 4-D (N, C, H, W)", *rank);
  const auto rois = ctx.input_static_shape(1);
  NXRT_REQUIRE(!rois || (rois->size() == 2 && (*rois)[1] == 4), "RoiAlign: rois has shape {}; expected [num_rois, 4]",
               shape_to_string(*rois));
  return KernelMatch::supported();
}

}  // namespace nxrt
