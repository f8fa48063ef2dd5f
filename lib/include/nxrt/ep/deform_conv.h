// DeformConv-19's geometry as every EP reads it. A 2-D convolution whose kernel taps read the
// input at learned offsets: tap (i, j) of output pixel (oh, ow) samples channel c at
//   h = oh * stride_h - pad_top + i * dilation_h + offset[n, 2 * (g * kH * kW + i * kW + j), oh, ow]
//   w = ow * stride_w - pad_left + j * dilation_w + offset[n, 2 * (g * kH * kW + i * kW + j) + 1, oh, ow]
// bilinearly (corners outside the image read 0), g being c's offset group; the sample is
// scaled by mask[n, g * kH * kW + i * kW + j, oh, ow] when the mask is given, and the samples
// are multiplied by W and summed as a grouped convolution does, plus the bias B.
#pragma once

#include <cstdint>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct DeformConvAttrs {
  std::vector<int64_t> kernel_shape, strides, dilations, pads;  // empty: from W, 1, 1, 0
  int64_t group = 1;
  int64_t offset_group = 1;
};
DeformConvAttrs read_deform_conv_attrs(const AttributeMap& attrs);

// The sizes a DeformConv runs with.
struct DeformConvPlan {
  int64_t batch = 0, channels = 0, height = 0, width = 0;  // X: [N, C, H, W]
  int64_t out_channels = 0, kernel_h = 0, kernel_w = 0;   // W: [oC, C / group, kH, kW]
  int64_t out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, pad_top = 0, pad_left = 0;
  int64_t group = 1, offset_group = 1;

  int64_t taps() const { return kernel_h * kernel_w; }
  int64_t pixels() const { return out_h * out_w; }
  Shape y_shape() const { return {batch, out_channels, out_h, out_w}; }
};

// Checks the shapes against each other and the attributes (bias and mask optional, nullptr when
// absent); errors name what does not fit and what it should be.
Expected<DeformConvPlan> plan_deform_conv(const DeformConvAttrs& attrs, const Shape& x, const Shape& w,
                                          const Shape& offset, const Shape* bias, const Shape* mask);

// Declines X of a rank other than 4 (nxrt implements the 2-D form), inputs other than X, W,
// offset[, B[, mask]], attributes of the wrong length or sign, and, where X's, W's and
// offset's shapes are static, shapes plan_deform_conv refuses (B and mask among them where
// theirs are static too).
KernelMatch check_deform_conv_node(const NodeContext& ctx);

}  // namespace nxrt
