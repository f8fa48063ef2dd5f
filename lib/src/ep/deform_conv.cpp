// DeformConv-19's geometry (nxrt/ep/deform_conv.h).
#include "nxrt/ep/deform_conv.h"

#include <fmt/format.h>

#include <string>

namespace nxrt {
namespace {

std::unexpected<Error> deform_conv_error(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("DeformConv: {}", what), std::move(why),
              "fix the model: the offset and mask come from the layer in front of the DeformConv, and their shapes "
              "follow from X, W and the attributes");
}

// attrs[d], or `fallback` when the attribute is absent.
int64_t at_or(const std::vector<int64_t>& values, std::size_t d, int64_t fallback) {
  return values.empty() ? fallback : values[d];
}

}  // namespace

DeformConvAttrs read_deform_conv_attrs(const AttributeMap& attrs) {
  return {attrs.ints_or("kernel_shape", {}), attrs.ints_or("strides", {}),     attrs.ints_or("dilations", {}),
          attrs.ints_or("pads", {}),         attrs.int_or("group", 1),         attrs.int_or("offset_group", 1)};
}

Expected<DeformConvPlan> plan_deform_conv(const DeformConvAttrs& a, const Shape& x, const Shape& w,
                                          const Shape& offset, const Shape* bias, const Shape* mask) {
  if (x.size() != 4)
    return deform_conv_error(fmt::format("X has shape {}", shape_to_string(x)),
                             "nxrt implements the 2-D form: X is [N, C, H, W]");
  if (w.size() != 4)
    return deform_conv_error(fmt::format("W has shape {}", shape_to_string(w)), "W is [oC, C / group, kH, kW]");
  if ((!a.kernel_shape.empty() && a.kernel_shape.size() != 2) || (!a.strides.empty() && a.strides.size() != 2) ||
      (!a.dilations.empty() && a.dilations.size() != 2) || (!a.pads.empty() && a.pads.size() != 4))
    return deform_conv_error("kernel_shape, strides, dilations or pads do not fit 2 spatial dims",
                             "kernel_shape, strides and dilations have 2 values, pads 4 (top, left, bottom, right)");
  DeformConvPlan p;
  p.batch = x[0], p.channels = x[1], p.height = x[2], p.width = x[3];
  p.out_channels = w[0], p.kernel_h = w[2], p.kernel_w = w[3];
  p.stride_h = at_or(a.strides, 0, 1), p.stride_w = at_or(a.strides, 1, 1);
  p.dilation_h = at_or(a.dilations, 0, 1), p.dilation_w = at_or(a.dilations, 1, 1);
  p.pad_top = at_or(a.pads, 0, 0), p.pad_left = at_or(a.pads, 1, 0);
  p.group = a.group, p.offset_group = a.offset_group;
  if (!a.kernel_shape.empty() && (a.kernel_shape[0] != p.kernel_h || a.kernel_shape[1] != p.kernel_w))
    return deform_conv_error(fmt::format("kernel_shape [{},{}] differs from W's spatial dims {}", a.kernel_shape[0],
                                         a.kernel_shape[1], shape_to_string(w)),
                             "kernel_shape, when given, repeats W's last two dims");
  if (p.stride_h < 1 || p.stride_w < 1 || p.dilation_h < 1 || p.dilation_w < 1 || p.kernel_h < 1 || p.kernel_w < 1)
    return deform_conv_error("strides, dilations and the kernel must be positive", "each is at least 1");
  for (int64_t pad : a.pads)
    if (pad < 0) return deform_conv_error(fmt::format("pad {} is negative", pad), "pads are at least 0");
  if (p.group < 1 || p.offset_group < 1 || p.channels % p.group != 0 || p.out_channels % p.group != 0 ||
      w[1] * p.group != p.channels || p.channels % p.offset_group != 0)
    return deform_conv_error(
        fmt::format("X {} and W {} do not fit group {} and offset_group {}", shape_to_string(x), shape_to_string(w),
                    p.group, p.offset_group),
        "C and oC are multiples of group, W's dim 1 is C / group, and C is a multiple of offset_group");
  const int64_t extent_h = (p.kernel_h - 1) * p.dilation_h + 1, extent_w = (p.kernel_w - 1) * p.dilation_w + 1;
  const int64_t span_h = p.height + p.pad_top + at_or(a.pads, 2, 0), span_w = p.width + p.pad_left + at_or(a.pads, 3, 0);
  if (span_h < extent_h || span_w < extent_w)
    return deform_conv_error(fmt::format("the kernel spans {}x{} but the padded input is {}x{}", extent_h, extent_w,
                                         span_h, span_w),
                             "the dilated kernel must fit the padded input");
  p.out_h = (span_h - extent_h) / p.stride_h + 1;
  p.out_w = (span_w - extent_w) / p.stride_w + 1;
  const Shape want_offset{p.batch, p.offset_group * p.taps() * 2, p.out_h, p.out_w};
  if (offset != want_offset)
    return deform_conv_error(fmt::format("offset has shape {}; it must be {}", shape_to_string(offset),
                                         shape_to_string(want_offset)),
                             "offset holds a (dh, dw) pair per offset group, kernel tap and output pixel");
  const Shape want_mask{p.batch, p.offset_group * p.taps(), p.out_h, p.out_w};
  if (mask && *mask != want_mask)
    return deform_conv_error(fmt::format("mask has shape {}; it must be {}", shape_to_string(*mask),
                                         shape_to_string(want_mask)),
                             "mask holds a factor per offset group, kernel tap and output pixel");
  if (bias && *bias != Shape{p.out_channels})
    return deform_conv_error(fmt::format("B has shape {}; it must be [{}]", shape_to_string(*bias), p.out_channels),
                             "B holds one value per output channel");
  return p;
}

KernelMatch check_deform_conv_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() >= 3 && ctx.input_count() <= 5 && ctx.has_input(0) && ctx.has_input(1) &&
                   ctx.has_input(2),
               "DeformConv: expected inputs X, W, offset[, B[, mask]], got {}", ctx.input_count());
  NXRT_REQUIRE(ctx.input_rank(0).value_or(4) == 4,
               "DeformConv: X has rank {}; nxrt implements the 2-D form (X of rank 4, [N, C, H, W])",
               ctx.input_rank(0).value_or(4));
  for (std::size_t i = 1; i < ctx.input_count(); ++i)
    if (ctx.has_input(i))
      NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0), "DeformConv: input {} is {} and X {}; they must match", i,
                   dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  const auto x = ctx.input_static_shape(0), w = ctx.input_static_shape(1), offset = ctx.input_static_shape(2);
  // B and mask are checked where their shapes are known; X, W and offset need each other.
  const auto bias = ctx.has_input(3) ? ctx.input_static_shape(3) : std::nullopt;
  const auto mask = ctx.has_input(4) ? ctx.input_static_shape(4) : std::nullopt;
  if (x && w && offset) {
    auto plan = plan_deform_conv(read_deform_conv_attrs(ctx.attrs()), *x, *w, *offset, bias ? &*bias : nullptr,
                                 mask ? &*mask : nullptr);
    if (!plan) return declined_by(plan.error());
  }
  return KernelMatch::supported();
}

}  // namespace nxrt
