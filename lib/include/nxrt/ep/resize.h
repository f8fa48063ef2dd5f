// Resize's and Upsample's geometry as every EP reads it: where each version keeps its
// operands, the attributes, the output shape from scales or sizes (with axes and
// keep_aspect_ratio_policy), and, per axis, the input taps and weights of every output
// coordinate (antialias and exclude_outside included). The EPs differ only in the element types
// they take and in how they blend the taps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/interpolation.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

enum class ResizeMode { kNearest, kLinear, kCubic };
// kLegacy: Upsample and Resize-10, which predate nearest_mode: truncate when upsampling,
// round up when downsampling, as ONNX Runtime does for those opsets.
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// Where the node keeps its operands, which differs across Upsample and Resize versions
// (input indices; -1: the version has no such input).
struct ResizeInputs {
  int roi = -1;
  int scales = -1;
  int sizes = -1;
  std::vector<float> attr_scales;  // Upsample-1 and -7
};

// A node's resize, from its attributes (which check_resize_node has validated).
struct ResizeConfig {
  ResizeInputs inputs;
  ResizeMode mode = ResizeMode::kNearest;
  CoordinateTransform transform = CoordinateTransform::kAsymmetric;
  NearestMode nearest = NearestMode::kLegacy;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0;
  AspectPolicy policy = AspectPolicy::kStretch;
  std::vector<int64_t> axes;  // empty: every axis
};
ResizeConfig make_resize_config(const Node& node);

// Declines invalid attribute values, scales that are not float, sizes that are not int64,
// both scales and sizes given, a required scales input missing, repeated or out-of-range axes,
// and scales, sizes or Upsample's scales attribute of the wrong length. Element types are
// each EP's own check.
KernelMatch check_resize_node(const NodeContext& ctx);

// The operands as read at run time: empty where not given (an empty tensor included).
struct ResizeOperands {
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  std::vector<double> roi;  // tf_crop_and_resize's starts, then ends, of every resized axis
};

// Per output coordinate along one axis: `taps` input indices (clamped into the input) and
// weights; `outside` marks tf_crop_and_resize coordinates outside the input, which take the
// extrapolation value. An axis where every coordinate reads one input element with weight 1
// has taps 1 (a gather); `identity` when that element is the coordinate itself.
struct ResizeAxis {
  int64_t out = 0;
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;  // empty unless tf_crop_and_resize
  bool identity = false;
};

struct ResizePlan {
  Shape out_shape;
  std::vector<ResizeAxis> axes;  // one per dim of the input
};

// The output shape and every axis's taps of resizing `in`; `op` names the node in errors
// about operands that do not fit the input.
Expected<ResizePlan> plan_resize(const ResizeConfig& config, const Shape& in, const ResizeOperands& operands,
                                 std::string_view op);

}  // namespace nxrt
