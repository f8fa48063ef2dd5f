// MaxRoiPool's attributes and claim checks as every EP reads them (Fast R-CNN's RoI pooling:
// each region of interest, scaled and rounded to input pixels, is cut into a pooled_shape grid
// of bins, and each bin takes the maximum of its pixels, 0 for a bin that holds none).
#pragma once

#include <cstdint>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct MaxRoiPoolAttrs {
  int64_t pooled_h = 0, pooled_w = 0;
  float spatial_scale = 1.f;
};
// pooled_shape must have been checked (check_max_roi_pool_node).
MaxRoiPoolAttrs read_max_roi_pool_attrs(const AttributeMap& attrs);

// Declines inputs other than X and rois, rois of another type than X, a pooled_shape that is
// not two positive sizes, X of a rank other than 4 and rois not [num_rois, 5].
KernelMatch check_max_roi_pool_node(const NodeContext& ctx);

// Refuses X and rois that are not [N, C, H, W] and [num_rois, 5] (when running).
Expected<void> check_max_roi_pool_shapes(const Shape& x, const Shape& rois);

}  // namespace nxrt
