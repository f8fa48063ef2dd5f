// CenterCropPad-18's geometry as every EP reads it: the output shape (input `shape`'s sizes on
// the listed axes) and where the input starts in the output along each axis (negative where
// the axis is cropped), with the claim checks of what is known before running.
#pragma once

#include <cstdint>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct CenterCropPadPlan {
  Shape out;
  // Output index of input element 0 along each axis: (size - dim) / 2 rounded toward zero, so
  // a pad puts the odd element at the end and a crop drops it there.
  std::vector<int64_t> begins;
};

// `axes` is the node's attribute (empty: every axis); `sizes` input 1's values.
Expected<CenterCropPadPlan> plan_center_crop_pad(const Shape& in, const std::vector<int64_t>& axes,
                                                 const std::vector<int64_t>& sizes);

// Declines a missing shape input, one that is not int32 or int64, and, where it is a constant
// and the input's shape is static, sizes that do not fit the axes.
KernelMatch check_center_crop_pad_node(const NodeContext& ctx);

}  // namespace nxrt
