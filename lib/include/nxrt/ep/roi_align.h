// RoiAlign's attributes and claim checks as every EP that runs it reads them (10 and 16;
// RoiAlign-10 has no coordinate_transformation_mode and behaves like output_half_pixel).
#pragma once

#include <cstdint>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct RoiAlignAttrs {
  bool max = false;         // mode max: the largest weighted corner of any sample (ONNX Runtime's definition)
  bool half_pixel = false;  // coordinates shift by half a pixel; else rois keep a legacy minimum size of 1
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // samples per bin side; 0: ceil(roi size / bins)
  double spatial_scale = 1;
};
RoiAlignAttrs read_roi_align_attrs(const AttributeMap& attrs, int64_t opset);

// Declines invalid attribute values, rois of another dtype than X or not [num_rois, 4],
// batch_indices that are not int64, and X of a rank other than 4.
KernelMatch check_roi_align_node(const NodeContext& ctx);

}  // namespace nxrt
