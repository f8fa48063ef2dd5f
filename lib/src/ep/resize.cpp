// Resize's and Upsample's geometry (nxrt/ep/resize.h).
#include "nxrt/ep/resize.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace nxrt {
namespace {

// Upsample-1 calls linear "bilinear"; cubic came with Resize-11.
std::optional<ResizeMode> parse_mode(const std::string& s, const Node& node) {
  const bool upsample_1 = node.op_type == "Upsample" && node.opset < 7;
  if (s == "nearest") return ResizeMode::kNearest;
  if (s == (upsample_1 ? "bilinear" : "linear")) return ResizeMode::kLinear;
  if (s == "cubic" && node.op_type == "Resize" && node.opset >= 11) return ResizeMode::kCubic;
  return std::nullopt;
}

std::optional<NearestMode> parse_nearest_mode(const std::string& s) {
  if (s == "round_prefer_floor") return NearestMode::kRoundPreferFloor;
  if (s == "round_prefer_ceil") return NearestMode::kRoundPreferCeil;
  if (s == "floor") return NearestMode::kFloor;
  if (s == "ceil") return NearestMode::kCeil;
  return std::nullopt;
}

std::optional<AspectPolicy> parse_aspect_policy(const std::string& s) {
  if (s == "stretch") return AspectPolicy::kStretch;
  if (s == "not_larger") return AspectPolicy::kNotLarger;
  if (s == "not_smaller") return AspectPolicy::kNotSmaller;
  return std::nullopt;
}

ResizeInputs resize_inputs(const Node& node) {
  ResizeInputs in;
  const bool upsample = node.op_type == "Upsample";
  if (upsample && node.opset < 7) {
    in.attr_scales = {1, 1, node.attributes.float_or("height_scale", 1), node.attributes.float_or("width_scale", 1)};
  } else if (upsample && node.opset < 9) {
    in.attr_scales = node.attributes.get_floats("scales").value_or(std::vector<float>{});
  } else if (upsample || node.opset < 11) {
    in.scales = 1;
  } else {
    in.roi = 1;
    in.scales = 2;
    in.sizes = 3;
  }
  return in;
}

// The node's attributes; nullopt fields are invalid values the check declines.
struct ResizeAttrs {
  std::optional<ResizeMode> mode;
  std::optional<CoordinateTransform> transform;
  std::optional<NearestMode> nearest;
  std::optional<AspectPolicy> policy;
  std::string mode_name, transform_name, nearest_name, policy_name;
};

ResizeAttrs read_attrs(const Node& node) {
  ResizeAttrs a;
  const AttributeMap& attrs = node.attributes;
  a.mode_name = attrs.string_or("mode", "nearest");
  a.mode = parse_mode(a.mode_name, node);
  const bool modern = node.op_type == "Resize" && node.opset >= 11;
  a.transform_name = attrs.string_or("coordinate_transformation_mode", modern ? "half_pixel" : "asymmetric");
  a.transform = parse_coordinate_transform(a.transform_name);
  if (a.transform == CoordinateTransform::kHalfPixelSymmetric && node.opset < 19) a.transform.reset();
  a.nearest_name = attrs.string_or("nearest_mode", "round_prefer_floor");
  a.nearest = modern ? parse_nearest_mode(a.nearest_name) : NearestMode::kLegacy;
  a.policy_name = attrs.string_or("keep_aspect_ratio_policy", "stretch");
  a.policy = parse_aspect_policy(a.policy_name);
  return a;
}

std::optional<int64_t> axis_in(int64_t axis, int64_t rank) {
  const int64_t k = axis < 0 ? axis + rank : axis;
  if (k < 0 || k >= rank) return std::nullopt;
  return k;
}

int64_t nearest_index(double x, NearestMode mode, double scale) {
  const double base = std::floor(x);
  const double frac = x - base;
  if (frac == 0) return static_cast<int64_t>(base);
  switch (mode) {
    case NearestMode::kRoundPreferFloor: return static_cast<int64_t>(frac <= 0.5 ? base : base + 1);
    case NearestMode::kRoundPreferCeil: return static_cast<int64_t>(frac < 0.5 ? base : base + 1);
    case NearestMode::kFloor: return static_cast<int64_t>(base);
    case NearestMode::kCeil: return static_cast<int64_t>(base + 1);
    case NearestMode::kLegacy: return static_cast<int64_t>(scale < 1 ? base + 1 : base);
  }
  return static_cast<int64_t>(base);
}

ResizeAxis plan_axis(const ResizeConfig& c, int64_t in, int64_t out, const AxisMapping& m) {
  ResizeAxis p;
  p.out = out;
  // Antialiasing widens the kernel by 1/scale when downsampling, as the ONNX reference does.
  const double stretch = c.antialias && m.scale < 1 ? m.scale : 1;
  const double support = c.mode == ResizeMode::kCubic ? 2 : 1;
  const int64_t first = c.mode == ResizeMode::kNearest ? 0 : static_cast<int64_t>(std::floor(-support / stretch)) + 1;
  p.taps = c.mode == ResizeMode::kNearest ? 1 : 2 - 2 * first;
  p.index.resize(static_cast<std::size_t>(out * p.taps));
  p.weight.resize(p.index.size());
  if (c.transform == CoordinateTransform::kTfCropAndResize) p.outside.assign(static_cast<std::size_t>(out), 0);
  for (int64_t o = 0; o < out; ++o) {
    const double x = source_coordinate(c.transform, static_cast<double>(o), m);
    int64_t* idx = &p.index[static_cast<std::size_t>(o * p.taps)];
    double* w = &p.weight[static_cast<std::size_t>(o * p.taps)];
    if (!p.outside.empty() && (x < 0 || x > static_cast<double>(in - 1))) p.outside[static_cast<std::size_t>(o)] = 1;
    if (c.mode == ResizeMode::kNearest) {
      idx[0] = std::clamp<int64_t>(nearest_index(x, c.nearest, m.scale), 0, in - 1);
      w[0] = 1;
      continue;
    }
    const double base = std::floor(x);
    const double frac = x - base;
    double sum = 0;
    for (int64_t t = 0; t < p.taps; ++t) {
      const int64_t i = static_cast<int64_t>(base) + first + t;
      const double d = (static_cast<double>(first + t) - frac) * stretch;
      double weight = c.mode == ResizeMode::kCubic ? cubic_kernel(d, c.cubic_a) : linear_kernel(d);
      if (c.exclude_outside && (i < 0 || i >= in)) weight = 0;
      idx[t] = std::clamp<int64_t>(i, 0, in - 1);
      w[t] = weight;
      sum += weight;
    }
    if ((c.antialias || c.exclude_outside) && sum != 0)
      for (int64_t t = 0; t < p.taps; ++t) w[t] /= sum;
  }
  // An axis where every output takes one input with weight 1 is a plain gather.
  if (p.taps > 1) {
    std::vector<int64_t> gather(static_cast<std::size_t>(out));
    bool single = true;
    for (int64_t o = 0; o < out && single; ++o) {
      int64_t nonzero = 0;
      for (int64_t t = 0; t < p.taps; ++t) {
        const auto k = static_cast<std::size_t>(o * p.taps + t);
        if (p.weight[k] == 0) continue;
        ++nonzero;
        single = p.weight[k] == 1;
        gather[static_cast<std::size_t>(o)] = p.index[k];
      }
      single = single && nonzero == 1;
    }
    if (single) {
      p.taps = 1;
      p.index = std::move(gather);
      p.weight.assign(static_cast<std::size_t>(out), 1);
    }
  }
  p.identity = p.taps == 1 && out == in && p.outside.empty();
  for (int64_t o = 0; o < out && p.identity; ++o) p.identity = p.index[static_cast<std::size_t>(o)] == o;
  return p;
}

}  // namespace

ResizeConfig make_resize_config(const Node& node) {
  const ResizeAttrs a = read_attrs(node);
  const AttributeMap& attrs = node.attributes;
  ResizeConfig c;
  c.inputs = resize_inputs(node);
  c.mode = a.mode.value_or(ResizeMode::kNearest);
  c.transform = a.transform.value_or(CoordinateTransform::kAsymmetric);
  c.nearest = a.nearest.value_or(NearestMode::kLegacy);
  c.policy = a.policy.value_or(AspectPolicy::kStretch);
  c.cubic_a = attrs.float_or("cubic_coeff_a", -0.75f);
  c.exclude_outside = attrs.int_or("exclude_outside", 0) != 0;
  c.antialias = attrs.int_or("antialias", 0) != 0;
  c.extrapolation = attrs.float_or("extrapolation_value", 0);
  c.axes = attrs.ints_or("axes", {});
  return c;
}

KernelMatch check_resize_node(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const ResizeAttrs a = read_attrs(ctx.node());
  const bool modern = op == "Resize" && ctx.opset() >= 11;
  NXRT_REQUIRE(a.mode, "{}: mode '{}' is not valid at opset {}; use {}", op, a.mode_name, ctx.opset(),
               modern                                 ? "nearest, linear or cubic"
               : op == "Upsample" && ctx.opset() < 7 ? "nearest or bilinear"
                                                      : "nearest or linear");
  NXRT_REQUIRE(a.transform, "{}: coordinate_transformation_mode '{}' is not valid at opset {}", op,
               a.transform_name, ctx.opset());
  NXRT_REQUIRE(a.nearest, "{}: nearest_mode '{}' is not valid; use round_prefer_floor, round_prefer_ceil, floor or ceil",
               op, a.nearest_name);
  NXRT_REQUIRE(a.policy, "{}: keep_aspect_ratio_policy '{}' is not valid; use stretch, not_larger or not_smaller", op,
               a.policy_name);
  const ResizeInputs in = resize_inputs(ctx.node());
  const auto rank = ctx.input_rank(0);
  const std::vector<int64_t> axes = ctx.attrs().ints_or("axes", {});
  if (op == "Upsample" && ctx.opset() < 7)
    NXRT_REQUIRE(!rank || *rank == 4, "Upsample: opset {} takes a 4-D input, got rank {}", ctx.opset(), *rank);
  if (op == "Upsample" && ctx.opset() >= 7 && ctx.opset() < 9) {
    NXRT_REQUIRE(!in.attr_scales.empty(), "Upsample: the scales attribute is missing; it is required at opset {}",
                 ctx.opset());
    NXRT_REQUIRE(!rank || static_cast<int64_t>(in.attr_scales.size()) == *rank,
                 "Upsample: scales has {} values for an input of rank {}; give one per axis", in.attr_scales.size(),
                 *rank);
  }
  for (float s : in.attr_scales) NXRT_REQUIRE(s > 0, "Upsample: scale {} is not positive", s);
  if (in.scales >= 0 && ctx.has_input(static_cast<std::size_t>(in.scales)))
    NXRT_REQUIRE(ctx.input_dtype(static_cast<std::size_t>(in.scales)) == DType::kFloat32,
                 "{}: scales has type {}; it must be float", op,
                 dtype_name(ctx.input_dtype(static_cast<std::size_t>(in.scales))));
  if (in.sizes >= 0 && ctx.has_input(static_cast<std::size_t>(in.sizes)))
    NXRT_REQUIRE(ctx.input_dtype(static_cast<std::size_t>(in.sizes)) == DType::kInt64,
                 "{}: sizes has type {}; it must be int64", op,
                 dtype_name(ctx.input_dtype(static_cast<std::size_t>(in.sizes))));
  // 0: unknown or empty, both of which mean "not given" until run time.
  auto static_count = [&](int i) -> int64_t {
    if (i < 0 || !ctx.has_input(static_cast<std::size_t>(i))) return 0;
    const auto shape = ctx.input_static_shape(static_cast<std::size_t>(i));
    return shape ? shape_numel(*shape) : 0;
  };
  const int64_t scales_n = static_count(in.scales), sizes_n = static_count(in.sizes);
  NXRT_REQUIRE(scales_n == 0 || sizes_n == 0, "{}: both scales and sizes are given; give exactly one of them", op);
  if (in.scales >= 0 && (op == "Upsample" || ctx.opset() < 13))
    NXRT_REQUIRE(ctx.has_input(static_cast<std::size_t>(in.scales)),
                 "{}: the scales input is missing; it is required at opset {}", op, ctx.opset());
  if (ctx.opset() >= 18 && rank) {
    std::set<int64_t> seen;
    for (int64_t axis : axes) {
      const auto k = axis_in(axis, *rank);
      NXRT_REQUIRE(k, "{}: axis {} is out of range for rank {}", op, axis, *rank);
      NXRT_REQUIRE(seen.insert(*k).second, "{}: axis {} is repeated in axes", op, axis);
    }
  }
  const int64_t expected = axes.empty() || ctx.opset() < 18 ? rank.value_or(-1) : static_cast<int64_t>(axes.size());
  if (expected >= 0) {
    NXRT_REQUIRE(scales_n == 0 || scales_n == expected, "{}: scales has {} values; expected {} (one per resized axis)",
                 op, scales_n, expected);
    NXRT_REQUIRE(sizes_n == 0 || sizes_n == expected, "{}: sizes has {} values; expected {} (one per resized axis)", op,
                 sizes_n, expected);
  }
  return KernelMatch::supported();
}

Expected<ResizePlan> plan_resize(const ResizeConfig& c, const Shape& in, const ResizeOperands& operands,
                                 std::string_view op) {
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  for (int64_t a : c.axes) axes.push_back(a < 0 ? a + rank : a);
  if (c.axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t a : axes)
    if (a < 0 || a >= rank)
      return fail(ErrorCode::kRuntime, fmt::format("{}: axes {} do not fit an input of rank {}", op, c.axes, rank));
  const auto n = axes.size();
  std::vector<double> scales(static_cast<std::size_t>(rank), 1.0);
  Shape out = in;
  bool by_sizes = false;
  if (!c.inputs.attr_scales.empty()) {
    if (static_cast<int64_t>(c.inputs.attr_scales.size()) != rank)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: scales has {} values for an input of rank {}", op, c.inputs.attr_scales.size(), rank),
                  "Upsample takes one scale per axis", "give one scale per input axis");
    for (int64_t d = 0; d < rank; ++d)
      scales[static_cast<std::size_t>(d)] = c.inputs.attr_scales[static_cast<std::size_t>(d)];
  } else if (!operands.scales.empty() && !operands.sizes.empty()) {
    return fail(ErrorCode::kRuntime, fmt::format("{}: both scales and sizes are given", op),
                "the operator takes exactly one of them", "pass an empty tensor or no input for one of them");
  } else if (!operands.scales.empty()) {
    if (operands.scales.size() != n)
      return fail(ErrorCode::kRuntime, fmt::format("{}: scales has {} values; expected {}", op, operands.scales.size(), n),
                  "scales gives one factor per resized axis", "give one scale per resized axis");
    for (std::size_t k = 0; k < n; ++k) {
      const float v = operands.scales[k];
      if (!(v > 0))
        return fail(ErrorCode::kRuntime, fmt::format("{}: scale {} for axis {} is not positive", op, v, axes[k]));
      scales[static_cast<std::size_t>(axes[k])] = v;
    }
  } else if (!operands.sizes.empty()) {
    const std::vector<int64_t>& sizes = operands.sizes;
    if (sizes.size() != n)
      return fail(ErrorCode::kRuntime, fmt::format("{}: sizes has {} values; expected {}", op, sizes.size(), n),
                  "sizes gives one length per resized axis", "give one size per resized axis");
    by_sizes = true;
    for (std::size_t k = 0; k < n; ++k) {
      if (sizes[k] < 0) return fail(ErrorCode::kRuntime, fmt::format("{}: size {} is negative", op, sizes[k]));
      const auto a = static_cast<std::size_t>(axes[k]);
      out[a] = sizes[k];
      scales[a] = in[a] > 0 ? static_cast<double>(sizes[k]) / static_cast<double>(in[a]) : 1.0;
    }
    if (c.policy != AspectPolicy::kStretch) {
      double scale = c.policy == AspectPolicy::kNotLarger ? std::numeric_limits<double>::max() : 0;
      for (int64_t a : axes)
        scale = c.policy == AspectPolicy::kNotLarger ? std::min(scale, scales[static_cast<std::size_t>(a)])
                                                     : std::max(scale, scales[static_cast<std::size_t>(a)]);
      for (int64_t a : axes) {
        scales[static_cast<std::size_t>(a)] = scale;
        out[static_cast<std::size_t>(a)] =
            static_cast<int64_t>(std::floor(scale * static_cast<double>(in[static_cast<std::size_t>(a)]) + 0.5));
      }
    }
  } else {
    return fail(ErrorCode::kRuntime, fmt::format("{}: neither scales nor sizes is given", op),
                "the output shape comes from one of them", "give scales or sizes");
  }
  if (!by_sizes)
    for (int64_t d = 0; d < rank; ++d)
      out[static_cast<std::size_t>(d)] = static_cast<int64_t>(
          std::floor(static_cast<double>(in[static_cast<std::size_t>(d)]) * scales[static_cast<std::size_t>(d)]));
  const bool crop = c.transform == CoordinateTransform::kTfCropAndResize;
  if (crop && !operands.roi.empty() && operands.roi.size() != 2 * n)
    return fail(ErrorCode::kRuntime, fmt::format("{}: roi has {} values; expected {}", op, operands.roi.size(), 2 * n),
                "roi holds the starts then the ends of every resized axis", "give 2 values per resized axis");
  if (shape_numel(in) == 0 && shape_numel(out) > 0)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: cannot resize the empty input {} to {}", op, shape_to_string(in), shape_to_string(out)));
  ResizePlan plan;
  plan.out_shape = out;
  for (int64_t d = 0; d < rank; ++d) {
    const auto i = static_cast<std::size_t>(d);
    AxisMapping m;
    m.scale = scales[i];
    m.original = static_cast<double>(in[i]);
    m.resized = by_sizes && c.policy == AspectPolicy::kStretch ? static_cast<double>(out[i]) : m.original * m.scale;
    if (crop && !operands.roi.empty()) {
      const auto k = static_cast<std::size_t>(std::find(axes.begin(), axes.end(), d) - axes.begin());
      if (k < n) m.roi_start = operands.roi[k], m.roi_end = operands.roi[n + k];
    }
    plan.axes.push_back(plan_axis(c, in[i], out[i], m));
  }
  return plan;
}

}  // namespace nxrt
