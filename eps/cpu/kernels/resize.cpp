// Resize (opsets 10-19) and Upsample (1, 7, 9): nearest, n-linear and n-cubic resampling over
// every resized axis, with per-axis tap tables built once per call.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/elementwise.h"
#include "common/interpolation.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using NearestTypes =
    TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;

enum class ResizeMode { kNearest, kLinear, kCubic };
// kLegacy: Upsample and Resize-10, which predate nearest_mode: truncate when upsampling,
// round up when downsampling, as ONNX Runtime does for those opsets.
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

std::optional<ResizeMode> parse_mode(const std::string& s, bool upsample_1) {
  if (s == "nearest") return ResizeMode::kNearest;
  if (s == (upsample_1 ? "bilinear" : "linear")) return ResizeMode::kLinear;
  if (s == "cubic" && !upsample_1) return ResizeMode::kCubic;
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

// Where the node keeps its operands, which differs across Upsample and Resize versions.
struct ResizeInputs {
  int roi = -1;
  int scales = -1;
  int sizes = -1;
  std::vector<float> attr_scales;  // Upsample-1 and -7
};

ResizeInputs resize_inputs(const NodeContext& ctx) {
  ResizeInputs in;
  const bool upsample = ctx.node().op_type == "Upsample";
  if (upsample && ctx.opset() < 7) {
    in.attr_scales = {1, 1, ctx.attrs().float_or("height_scale", 1), ctx.attrs().float_or("width_scale", 1)};
  } else if (upsample && ctx.opset() < 9) {
    in.attr_scales = ctx.attrs().get_floats("scales").value_or(std::vector<float>{});
  } else if (upsample || ctx.opset() < 11) {
    in.scales = 1;
  } else {
    in.roi = 1;
    in.scales = 2;
    in.sizes = 3;
  }
  return in;
}

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

// The node's attributes; nullopt fields are invalid values the check declines.
struct ResizeAttrs {
  std::optional<ResizeMode> mode;
  std::optional<CoordinateTransform> transform;
  std::optional<NearestMode> nearest;
  std::optional<AspectPolicy> policy;
  std::string mode_name, transform_name, nearest_name, policy_name;
};

ResizeAttrs read_attrs(const NodeContext& ctx) {
  ResizeAttrs a;
  const bool upsample_1 = ctx.node().op_type == "Upsample" && ctx.opset() < 7;
  a.mode_name = ctx.attrs().string_or("mode", "nearest");
  a.mode = parse_mode(a.mode_name, upsample_1);
  const bool modern = ctx.node().op_type == "Resize" && ctx.opset() >= 11;
  a.transform_name = ctx.attrs().string_or("coordinate_transformation_mode", modern ? "half_pixel" : "asymmetric");
  a.transform = parse_coordinate_transform(a.transform_name);
  if (a.transform == CoordinateTransform::kHalfPixelSymmetric && ctx.opset() < 19) a.transform.reset();
  a.nearest_name = ctx.attrs().string_or("nearest_mode", "round_prefer_floor");
  a.nearest = modern ? parse_nearest_mode(a.nearest_name) : NearestMode::kLegacy;
  a.policy_name = ctx.attrs().string_or("keep_aspect_ratio_policy", "stretch");
  a.policy = parse_aspect_policy(a.policy_name);
  return a;
}

ResizeConfig make_config(const NodeContext& ctx) {
  const ResizeAttrs a = read_attrs(ctx);
  ResizeConfig c;
  c.inputs = resize_inputs(ctx);
  c.mode = *a.mode;
  c.transform = *a.transform;
  c.nearest = *a.nearest;
  c.policy = *a.policy;
  c.cubic_a = ctx.attrs().float_or("cubic_coeff_a", -0.75f);
  c.exclude_outside = ctx.attrs().int_or("exclude_outside", 0) != 0;
  c.antialias = ctx.attrs().int_or("antialias", 0) != 0;
  c.extrapolation = ctx.attrs().float_or("extrapolation_value", 0);
  c.axes = ctx.attrs().ints_or("axes", {});
  return c;
}

// Checks Resize (all versions) and Upsample (all versions): attribute values, element types,
// which of roi/scales/sizes are given, and their lengths when shapes are static.
KernelMatch check_resize(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_type(0) == nullptr || ctx.input_type(0)->kind == ValueType::Kind::kTensor,
               "{}: input 0 is not a tensor; the cpu EP supports tensors only", op);
  const ResizeAttrs a = read_attrs(ctx);
  NXRT_REQUIRE(a.mode, "{}: mode '{}' is not valid at opset {}; use nearest, {}", op, a.mode_name, ctx.opset(),
               op == "Upsample" && ctx.opset() < 7 ? "bilinear" : op == "Upsample" || ctx.opset() < 11
                                                                  ? "linear"
                                                                  : "linear or cubic");
  NXRT_REQUIRE(a.transform, "{}: coordinate_transformation_mode '{}' is not valid at opset {}", op,
               a.transform_name, ctx.opset());
  NXRT_REQUIRE(a.nearest, "{}: nearest_mode '{}' is not valid; use round_prefer_floor, round_prefer_ceil, floor or ceil",
               op, a.nearest_name);
  NXRT_REQUIRE(a.policy, "{}: keep_aspect_ratio_policy '{}' is not valid; use stretch, not_larger or not_smaller", op,
               a.policy_name);
  if (*a.mode == ResizeMode::kNearest) NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, NearestTypes{}));
  else NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, AllNumericTypes{}));

  const ResizeInputs in = resize_inputs(ctx);
  const auto rank = ctx.input_rank(0);
  const std::vector<int64_t> axes = ctx.attrs().ints_or("axes", {});
  if (op == "Upsample" && ctx.opset() < 7) NXRT_REQUIRE(!rank || *rank == 4, "Upsample: opset {} takes a 4-D input, got rank {}", ctx.opset(), *rank);
  if (op == "Upsample" && ctx.opset() >= 7 && ctx.opset() < 9) {
    NXRT_REQUIRE(!in.attr_scales.empty(), "Upsample: the scales attribute is missing; it is required at opset {}", ctx.opset());
    NXRT_REQUIRE(!rank || static_cast<int64_t>(in.attr_scales.size()) == *rank,
                 "Upsample: scales has {} values for an input of rank {}; give one per axis", in.attr_scales.size(), *rank);
  }
  for (float s : in.attr_scales) NXRT_REQUIRE(s > 0, "Upsample: scale {} is not positive", s);
  if (in.scales >= 0 && ctx.has_input(in.scales))
    NXRT_REQUIRE(ctx.input_dtype(in.scales) == DType::kFloat32, "{}: scales has type {}; it must be float", op,
                 dtype_name(ctx.input_dtype(in.scales)));
  if (in.sizes >= 0 && ctx.has_input(in.sizes))
    NXRT_REQUIRE(ctx.input_dtype(in.sizes) == DType::kInt64, "{}: sizes has type {}; it must be int64", op,
                 dtype_name(ctx.input_dtype(in.sizes)));
  if (in.roi >= 0 && ctx.has_input(in.roi)) {
    const DType t = ctx.input_dtype(in.roi);
    NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16,
                 "{}: roi has type {}; the cpu EP supports float, double, float16", op, dtype_name(t));
  }
  // 0: unknown or empty, both of which mean "not given" until run time.
  const int64_t scales_n = in.scales >= 0 ? static_numel(ctx.input_type(in.scales)).value_or(0) : 0;
  const int64_t sizes_n = in.sizes >= 0 ? static_numel(ctx.input_type(in.sizes)).value_or(0) : 0;
  NXRT_REQUIRE(scales_n == 0 || sizes_n == 0,
               "{}: both scales and sizes are given; give exactly one of them", op);
  if (in.scales >= 0 && (op == "Upsample" || ctx.opset() < 13))
    NXRT_REQUIRE(ctx.has_input(in.scales), "{}: the scales input is missing; it is required at opset {}", op, ctx.opset());
  if (ctx.opset() >= 18 && rank) {
    std::set<int64_t> seen;
    for (int64_t axis : axes) {
      const auto norm = normalize_axis(axis, *rank);
      NXRT_REQUIRE(norm, "{}: axis {} is out of range for rank {}", op, axis, *rank);
      NXRT_REQUIRE(seen.insert(*norm).second, "{}: axis {} is repeated in axes", op, axis);
    }
  }
  const int64_t expected = axes.empty() || ctx.opset() < 18 ? rank.value_or(-1) : static_cast<int64_t>(axes.size());
  if (expected >= 0) {
    NXRT_REQUIRE(scales_n == 0 || scales_n == expected,
                 "{}: scales has {} values; expected {} (one per resized axis)", op, scales_n, expected);
    NXRT_REQUIRE(sizes_n == 0 || sizes_n == expected,
                 "{}: sizes has {} values; expected {} (one per resized axis)", op, sizes_n, expected);
  }
  // Flops: one multiply-add per tap, taps multiplying over the axes whose length changes.
  double flops = 0;
  const auto xs = ctx.input_static_shape(0);
  const auto ys = ctx.output_type(0) ? ctx.output_type(0)->static_shape() : std::nullopt;
  if (*a.mode != ResizeMode::kNearest && xs && ys && xs->size() == ys->size()) {
    flops = 2;
    for (std::size_t d = 0; d < xs->size(); ++d)
      if ((*xs)[d] != (*ys)[d]) flops *= *a.mode == ResizeMode::kLinear ? 2 : 4;
  }
  return KernelMatch::supported(elementwise_cost(ctx, flops));
}

// Per output index along one axis: `taps` source indices (clamped into the input) and
// weights; `outside` marks tf_crop_and_resize points that take the extrapolation value.
struct AxisPlan {
  int64_t out = 0;
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
  bool identity = false;
};

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

AxisPlan plan_axis(const ResizeConfig& c, int64_t in, int64_t out, const AxisMapping& m) {
  AxisPlan p;
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

// The values of roi (float, double or float16) as doubles.
std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t.dtype() == DType::kFloat64) v[i] = t.data_as<double>()[i];
    else if (t.dtype() == DType::kFloat16) v[i] = static_cast<float>(t.data_as<Half>()[i]);
    else v[i] = t.data_as<float>()[i];
  }
  return v;
}

struct ResizePlan {
  Shape out_shape;
  std::vector<AxisPlan> axes;
};

Expected<ResizePlan> plan_resize(const ResizeConfig& c, const KernelContext& ctx, const std::string& op) {
  const Shape& in = ctx.input(0).shape();
  const auto rank = static_cast<int64_t>(in.size());
  const auto given = [&](int i) { return i >= 0 && ctx.has_input(static_cast<std::size_t>(i)) && ctx.input(static_cast<std::size_t>(i)).numel() > 0; };
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
    for (int64_t d = 0; d < rank; ++d) scales[static_cast<std::size_t>(d)] = c.inputs.attr_scales[static_cast<std::size_t>(d)];
  } else if (given(c.inputs.scales) && given(c.inputs.sizes)) {
    return fail(ErrorCode::kRuntime, fmt::format("{}: both scales and sizes are given", op),
                "the operator takes exactly one of them", "pass an empty tensor or no input for one of them");
  } else if (given(c.inputs.scales)) {
    const Tensor& s = ctx.input(static_cast<std::size_t>(c.inputs.scales));
    if (static_cast<std::size_t>(s.numel()) != n)
      return fail(ErrorCode::kRuntime, fmt::format("{}: scales has {} values; expected {}", op, s.numel(), n),
                  "scales gives one factor per resized axis", "give one scale per resized axis");
    for (std::size_t k = 0; k < n; ++k) {
      const float v = s.data_as<float>()[k];
      if (!(v > 0))
        return fail(ErrorCode::kRuntime, fmt::format("{}: scale {} for axis {} is not positive", op, v, axes[k]));
      scales[static_cast<std::size_t>(axes[k])] = v;
    }
  } else if (given(c.inputs.sizes)) {
    const std::vector<int64_t> sizes = ctx.input(static_cast<std::size_t>(c.inputs.sizes)).to_int64_vector();
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
  std::vector<double> roi;
  if (c.transform == CoordinateTransform::kTfCropAndResize && given(c.inputs.roi)) {
    roi = to_doubles(ctx.input(static_cast<std::size_t>(c.inputs.roi)));
    if (roi.size() != 2 * n)
      return fail(ErrorCode::kRuntime, fmt::format("{}: roi has {} values; expected {}", op, roi.size(), 2 * n),
                  "roi holds the starts then the ends of every resized axis", "give 2 values per resized axis");
  }
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
    if (!roi.empty()) {
      const auto k = static_cast<std::size_t>(std::find(axes.begin(), axes.end(), d) - axes.begin());
      if (k < n) m.roi_start = roi[k], m.roi_end = roi[n + k];
    }
    plan.axes.push_back(plan_axis(c, in[i], out[i], m));
  }
  return plan;
}

// Converts an interpolated value to the element type: integers round to nearest and saturate.
template <class T>
T to_element(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    v = std::nearbyint(v);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<ComputeType<T>>(v));
  }
}

// The source rows (offset and weight) one output row blends, from every axis but the last.
struct RowTaps {
  std::vector<std::pair<int64_t, double>> taps, next;
  bool outside = false;

  void build(int64_t row, const std::vector<AxisPlan>& axes, const Shape& strides) {
    taps.assign(1, {0, 1.0});
    outside = false;
    int64_t rem = row;
    for (std::size_t d = axes.size() - 1; d-- > 0;) {
      const AxisPlan& p = axes[d];
      const int64_t o = rem % p.out;
      rem /= p.out;
      if (!p.outside.empty() && p.outside[static_cast<std::size_t>(o)]) outside = true;
      const auto at = static_cast<std::size_t>(o * p.taps);
      if (p.taps == 1) {
        for (auto& t : taps) t.first += p.index[at] * strides[d];
        continue;
      }
      next.clear();
      for (const auto& t : taps)
        for (std::size_t k = 0; k < static_cast<std::size_t>(p.taps); ++k)
          if (p.weight[at + k] != 0) next.emplace_back(t.first + p.index[at + k] * strides[d], t.second * p.weight[at + k]);
      taps.swap(next);
    }
  }
};

int64_t row_grain(int64_t row_length) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(row_length, 1)); }

// Every axis takes one source index per output: a gather, exact for every element type.
template <class T>
void gather_rows(const Parallel& par, const Tensor& x, T* dst, const ResizePlan& plan, T extrapolation) {
  const T* src = x.data_as<T>();
  const Shape strides = contiguous_strides(x.shape());
  const AxisPlan& last = plan.axes.back();
  const int64_t rows = shape_numel(plan.out_shape) / last.out;
  par.for_range(rows, row_grain(last.out), [&](int64_t begin, int64_t end) {
    RowTaps row;
    for (int64_t r = begin; r < end; ++r) {
      row.build(r, plan.axes, strides);
      T* out = dst + r * last.out;
      if (row.outside) {
        std::fill(out, out + last.out, extrapolation);
        continue;
      }
      const T* base = src + row.taps[0].first;
      for (int64_t i = 0; i < last.out; ++i) out[i] = base[last.index[static_cast<std::size_t>(i)]];
      if (!last.outside.empty())
        for (int64_t i = 0; i < last.out; ++i)
          if (last.outside[static_cast<std::size_t>(i)]) out[i] = extrapolation;
    }
  });
}

// acc[i] += scale * sum over the K taps of output i along the last axis.
template <int K, class T, class A>
void blend_row(const T* base, const int64_t* idx, const A* w, int64_t n, int64_t taps, A scale, A* acc) {
  const int64_t k_count = K > 0 ? K : taps;
  for (int64_t i = 0; i < n; ++i) {
    A s = 0;
    for (int64_t k = 0; k < k_count; ++k)
      s += w[i * k_count + k] * static_cast<A>(static_cast<ComputeType<T>>(base[idx[i * k_count + k]]));
    acc[i] += scale * s;
  }
}

// Linear or cubic taps on some axis: weighted sums accumulated in A, one output row at a time.
template <class T, class A>
void blend_rows(const Parallel& par, const Tensor& x, T* dst, const ResizePlan& plan, T extrapolation) {
  const T* src = x.data_as<T>();
  const Shape strides = contiguous_strides(x.shape());
  const AxisPlan& last = plan.axes.back();
  const std::vector<A> weights(last.weight.begin(), last.weight.end());
  const int64_t rows = shape_numel(plan.out_shape) / last.out;
  par.for_range(rows, row_grain(last.out * last.taps), [&](int64_t begin, int64_t end) {
    RowTaps row;
    std::vector<A> acc(static_cast<std::size_t>(last.out));
    for (int64_t r = begin; r < end; ++r) {
      row.build(r, plan.axes, strides);
      T* out = dst + r * last.out;
      if (row.outside) {
        std::fill(out, out + last.out, extrapolation);
        continue;
      }
      std::fill(acc.begin(), acc.end(), A(0));
      for (const auto& [offset, weight] : row.taps) {
        const T* base = src + offset;
        const A scale = static_cast<A>(weight);
        switch (last.taps) {
          case 1: blend_row<1>(base, last.index.data(), weights.data(), last.out, 1, scale, acc.data()); break;
          case 2: blend_row<2>(base, last.index.data(), weights.data(), last.out, 2, scale, acc.data()); break;
          case 4: blend_row<4>(base, last.index.data(), weights.data(), last.out, 4, scale, acc.data()); break;
          default: blend_row<0>(base, last.index.data(), weights.data(), last.out, last.taps, scale, acc.data());
        }
      }
      for (int64_t i = 0; i < last.out; ++i)
        out[i] = !last.outside.empty() && last.outside[static_cast<std::size_t>(i)]
                     ? extrapolation
                     : to_element<T>(static_cast<double>(acc[static_cast<std::size_t>(i)]));
    }
  });
}

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(ResizeConfig config, std::string op) : c_(std::move(config)), op_(std::move(op)) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_resize(c_, ctx, op_);
    if (!plan) return std::unexpected(std::move(plan.error()));
    const Tensor& x = ctx.input(0);
    const bool gather = std::ranges::all_of(plan->axes, [](const AxisPlan& p) { return p.taps == 1; });
    if (std::ranges::all_of(plan->axes, [](const AxisPlan& p) { return p.identity; })) {
      ctx.set_output(0, x);
      return {};
    }
    auto y = ctx.output(0, x.dtype(), plan->out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    if (y->numel() == 0) return {};
    if (x.shape().empty()) {
      return dispatch_dtype(NearestTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
        using T = typename decltype(tag)::type;
        y->mut_as<T>()[0] = x.data_as<T>()[0];
        return {};
      });
    }
    if (gather) {
      return dispatch_dtype(NearestTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
        using T = typename decltype(tag)::type;
        gather_rows<T>(ctx.parallel(), x, y->mut_as<T>(), *plan, to_element<T>(c_.extrapolation));
        return {};
      });
    }
    return dispatch_dtype(AllNumericTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      blend_rows<T, A>(ctx.parallel(), x, y->mut_as<T>(), *plan, to_element<T>(c_.extrapolation));
      return {};
    });
  }
  std::string_view variant() const override { return "separable-taps"; }

 private:
  ResizeConfig c_;
  std::string op_;
};

KernelDef resize_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_resize, [](const NodeContext& ctx) {
                     return make_kernel<ResizeKernel>(make_config(ctx), ctx.node().op_type);
                   }};
}

}  // namespace

std::vector<KernelDef> resize_kernels() {
  return {
      resize_def("Upsample", 1, 6),
      resize_def("Upsample", 7, 8),
      resize_def("Upsample", 9, 9),
      resize_def("Resize", 10, 10),
      resize_def("Resize", 11, 12),
      resize_def("Resize", 13, 17),
      resize_def("Resize", 18, 23),
  };
}

}  // namespace nxrt::cpu
