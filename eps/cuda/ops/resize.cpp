// Resize (opset 10 on) and Upsample (7 and 9), nearest, linear and cubic: the host maps every
// output coordinate of every dim to its input indices and weights (in double, as the ONNX
// reference does), uploads those tables, and one kernel gathers or blends; tf_crop_and_resize
// marks coordinates outside the input, which take extrapolation_value. antialias, axes and
// keep_aspect_ratio_policy are declined with the reason.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Transform { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
// kLegacy: Upsample and Resize-10, which predate nearest_mode: truncate when upsampling, round
// up when downsampling, as ONNX Runtime (and the cpu EP) do for those opsets.
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };

std::optional<Transform> parse_transform(const std::string& name) {
  if (name == "half_pixel") return Transform::kHalfPixel;
  if (name == "pytorch_half_pixel") return Transform::kPytorchHalfPixel;
  if (name == "align_corners") return Transform::kAlignCorners;
  if (name == "asymmetric") return Transform::kAsymmetric;
  if (name == "tf_half_pixel_for_nn") return Transform::kTfHalfPixelForNn;
  if (name == "tf_crop_and_resize") return Transform::kTfCropAndResize;
  return std::nullopt;
}

std::optional<Nearest> parse_nearest(const std::string& name) {
  if (name == "round_prefer_floor") return Nearest::kRoundPreferFloor;
  if (name == "round_prefer_ceil") return Nearest::kRoundPreferCeil;
  if (name == "floor") return Nearest::kFloor;
  if (name == "ceil") return Nearest::kCeil;
  return std::nullopt;
}

// Resize-11 on: inputs 1 roi, 2 scales (float), 3 sizes (int64).
constexpr std::size_t kRoi = 1, kScales = 2, kSizes = 3;

// Where a version keeps its scales: Upsample-7 in an attribute; Upsample-9 and Resize-10 in
// input 1, with asymmetric coordinates and the legacy nearest rounding (the attributes for
// both came with Resize-11); Resize-11 on in input 2, or sizes in input 3.
struct ResizeForm {
  std::optional<std::size_t> scales_input;
  std::optional<std::vector<float>> scales_attribute;
  bool legacy = false;
};
ResizeForm form_of(const Node& node) {
  if (node.op_type == "Upsample" && node.opset < 9)
    return {std::nullopt, node.attributes.get_floats("scales").value_or(std::vector<float>{}), true};
  if (node.op_type == "Upsample" || node.opset < 11) return {1, std::nullopt, true};
  return {kScales, std::nullopt, false};
}

// Upsample and Resize-10: nearest or linear, and an attribute's scales present and positive.
KernelMatch check_legacy_attrs(const NodeContext& ctx, const ResizeForm& form) {
  const std::string& op = ctx.node().op_type;
  const std::string mode = ctx.attrs().string_or("mode", "nearest");
  NXRT_REQUIRE(mode == "nearest" || mode == "linear", "{}: mode '{}' is not valid at opset {}; use nearest or linear", op,
               mode, ctx.opset());
  if (form.scales_attribute) {
    NXRT_REQUIRE(!form.scales_attribute->empty(), "{}: the scales attribute is missing; it is required at opset {}", op,
                 ctx.opset());
    for (float v : *form.scales_attribute) NXRT_REQUIRE(v > 0, "{}: scale {} is not positive", op, v);
  }
  return KernelMatch::supported();
}

// Resize-11 on: the modes, coordinate transforms and roundings the tables know, and none of
// the attributes the cuda EP declines.
KernelMatch check_modern_attrs(const NodeContext& ctx) {
  const std::string mode = ctx.attrs().string_or("mode", "nearest");
  NXRT_REQUIRE(mode == "nearest" || mode == "linear" || mode == "cubic", "Resize: mode '{}' is not valid", mode);
  const std::string transform = ctx.attrs().string_or("coordinate_transformation_mode", "half_pixel");
  NXRT_REQUIRE(parse_transform(transform).has_value(),
               "Resize: coordinate_transformation_mode '{}' is not implemented by the cuda EP (it takes half_pixel, "
               "pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn and tf_crop_and_resize)",
               transform);
  if (transform == "tf_crop_and_resize") {
    NXRT_REQUIRE(is_cuda_float(ctx.input_dtype(0)),
                 "Resize: tf_crop_and_resize of {} data; the cuda EP crops {} (the extrapolation value's types)",
                 dtype_name(ctx.input_dtype(0)), kCudaFloats);
    NXRT_REQUIRE(ctx.has_input(kRoi) && (ctx.input_dtype(kRoi) == DType::kFloat32 || ctx.input_dtype(kRoi) == DType::kFloat64),
                 "Resize: tf_crop_and_resize needs roi (input 1) of float or double; it is {}",
                 ctx.has_input(kRoi) ? dtype_name(ctx.input_dtype(kRoi)) : "absent");
  }
  const std::string nearest = ctx.attrs().string_or("nearest_mode", "round_prefer_floor");
  NXRT_REQUIRE(parse_nearest(nearest).has_value(), "Resize: nearest_mode '{}' is not valid", nearest);
  NXRT_REQUIRE(ctx.attrs().int_or("antialias", 0) == 0, "Resize: antialias=1 is not implemented by the cuda EP");
  NXRT_REQUIRE(ctx.attrs().ints_or("axes", {}).empty(), "Resize: the axes attribute is not implemented by the cuda EP");
  NXRT_REQUIRE(ctx.attrs().string_or("keep_aspect_ratio_policy", "stretch") == "stretch",
               "Resize: keep_aspect_ratio_policy '{}' is not implemented by the cuda EP (it takes stretch)",
               ctx.attrs().string_or("keep_aspect_ratio_policy", "stretch"));
  return require_ints(ctx, kSizes, "sizes");
}

KernelMatch check_resize(const NodeContext& ctx) {
  const ResizeForm form = form_of(ctx.node());
  NXRT_REQUIRE_MATCH(form.legacy ? check_legacy_attrs(ctx, form) : check_modern_attrs(ctx));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  if (ctx.attrs().string_or("mode", "nearest") != "nearest") NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  else NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  if (form.scales_input && ctx.has_input(*form.scales_input))
    NXRT_REQUIRE(ctx.input_dtype(*form.scales_input) == DType::kFloat32, "{}: scales is {}; it must be float",
                 ctx.node().op_type, dtype_name(ctx.input_dtype(*form.scales_input)));
  return KernelMatch::supported();
}

// One dim as the coordinate transforms see it: the input size `in`, resized to `resized`
// (in·scale, fractional when scales are given) by `scale`; tf_crop_and_resize's roi, as
// fractions of the input.
struct DimMapping {
  double scale, in, resized;
  double roi_start = 0, roi_end = 1;
};

// The input coordinate of output coordinate `o`.
double source_coordinate(Transform t, double o, const DimMapping& m) {
  const double scale = m.scale, in = m.in, resized = m.resized;
  switch (t) {
    case Transform::kHalfPixel: return (o + 0.5) / scale - 0.5;
    case Transform::kPytorchHalfPixel: return resized > 1 ? (o + 0.5) / scale - 0.5 : 0;
    case Transform::kAlignCorners: return resized == 1 ? 0 : o * (in - 1) / (resized - 1);
    case Transform::kAsymmetric: return o / scale;
    case Transform::kTfHalfPixelForNn: return (o + 0.5) / scale;
    case Transform::kTfCropAndResize: {
      const double start = m.roi_start * (in - 1), span = (m.roi_end - m.roi_start) * (in - 1);
      return resized == 1 ? start + span / 2 : start + o * span / (resized - 1);
    }
  }
  return 0;
}

// The input index nearest output coordinate x maps to; `scale` (output/input) picks the legacy
// rounding.
int64_t nearest_index(double x, Nearest mode, double scale) {
  const double base = std::floor(x), frac = x - base;
  if (frac == 0) return static_cast<int64_t>(base);
  switch (mode) {
    case Nearest::kLegacy: return static_cast<int64_t>(scale < 1 ? base + 1 : base);
    case Nearest::kRoundPreferFloor: return static_cast<int64_t>(frac <= 0.5 ? base : base + 1);
    case Nearest::kRoundPreferCeil: return static_cast<int64_t>(frac < 0.5 ? base : base + 1);
    case Nearest::kFloor: return static_cast<int64_t>(base);
    case Nearest::kCeil: return static_cast<int64_t>(base + 1);
  }
  return static_cast<int64_t>(base);
}

// The tables of one resize, for the kernels: per dim, from entry at[d] on, one entry per
// output coordinate of `slots` (input index, weight) pairs, of which the kernel uses the first
// taps[d] (1 when every coordinate of the dim falls on an input element). Nearest has one
// slot and no weights. An entry whose first index is -1 lies outside the input (only with
// tf_crop_and_resize): its output elements take the extrapolation value.
struct ResizeTables {
  Shape at, taps;
  int64_t slots = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

// Cubic convolution weights of the four neighbours floor(x)-1 .. floor(x)+2 at fraction t.
std::array<double, 4> cubic_weights(double t, double a) {
  auto near = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };           // |d| <= 1
  auto far = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// How a node resizes, read from its attributes when planning.
struct ResizeMethod {
  Mode mode;
  Transform transform;
  Nearest nearest;
  double cubic_a;
  bool exclude_outside;
};

// The (index, weight) pairs of source coordinate x on a dim of `size` elements. Beyond the
// input, values repeat its edge (so linear clamps x, and cubic clamps its neighbours) except
// with tf_crop_and_resize, which marks the entry outside; exclude_outside drops cubic
// neighbours outside the input and renormalizes the rest.
void add_entry(ResizeTables& r, const ResizeMethod& method, double x, int64_t size, double scale) {
  const auto last = size - 1;
  const Mode mode = method.mode;
  const double cubic_a = method.cubic_a;
  const bool exclude_outside = method.exclude_outside;
  if (method.transform == Transform::kTfCropAndResize && (x < 0 || x > static_cast<double>(last))) {
    r.index.insert(r.index.end(), static_cast<std::size_t>(r.slots), -1);
    if (mode != Mode::kNearest) r.weight.insert(r.weight.end(), static_cast<std::size_t>(r.slots), 0.f);
    return;
  }
  if (mode == Mode::kNearest) {
    const Nearest nearest = method.nearest;
    r.index.push_back(std::clamp<int64_t>(nearest_index(x, nearest, scale), 0, last));
    return;
  }
  if (mode == Mode::kLinear) {
    const double clamped = std::clamp(x, 0.0, static_cast<double>(last));
    const auto first = static_cast<int64_t>(std::floor(clamped));
    const double w = clamped - static_cast<double>(first);
    r.index.insert(r.index.end(), {first, std::min(first + 1, last)});
    r.weight.insert(r.weight.end(), {static_cast<float>(1 - w), static_cast<float>(w)});
    return;
  }
  const double base = std::floor(x);
  std::array<double, 4> w = cubic_weights(x - base, cubic_a);
  double kept = 0;
  for (int j = 0; j < 4; ++j) {
    const auto at = static_cast<int64_t>(base) - 1 + j;
    if (exclude_outside && (at < 0 || at > last)) w[static_cast<std::size_t>(j)] = 0;
    kept += w[static_cast<std::size_t>(j)];
  }
  if (x == base) {  // on an input element: the neighbour at floor(x) alone, first (taps 1)
    r.index.insert(r.index.end(), {std::clamp<int64_t>(static_cast<int64_t>(base), 0, last), 0, 0, 0});
    r.weight.insert(r.weight.end(), {1.f, 0.f, 0.f, 0.f});
    return;
  }
  for (int j = 0; j < 4; ++j) {
    r.index.push_back(std::clamp<int64_t>(static_cast<int64_t>(base) - 1 + j, 0, last));
    r.weight.push_back(static_cast<float>(exclude_outside && kept != 0 ? w[static_cast<std::size_t>(j)] / kept : w[static_cast<std::size_t>(j)]));
  }
}

// `roi`: tf_crop_and_resize's starts then ends, one per dim (empty otherwise).
ResizeTables make_tables(const Shape& in, const Shape& out, const std::vector<double>& scales, bool by_sizes,
                         const ResizeMethod& method, const std::vector<double>& roi) {
  ResizeTables r;
  r.slots = method.mode == Mode::kNearest ? 1 : method.mode == Mode::kLinear ? 2 : 4;
  for (std::size_t d = 0; d < in.size(); ++d) {
    r.at.push_back(static_cast<int64_t>(r.index.size()) / r.slots);
    const auto original = static_cast<double>(in[d]);
    DimMapping m{scales[d], original, by_sizes ? static_cast<double>(out[d]) : original * scales[d]};
    if (!roi.empty()) m.roi_start = roi[d], m.roi_end = roi[in.size() + d];
    bool exact = true;
    for (int64_t o = 0; o < out[d]; ++o) {
      const double x = source_coordinate(method.transform, static_cast<double>(o), m);
      exact = exact && x == std::floor(x) && x >= 0 && x <= original - 1;
      add_entry(r, method, x, in[d], scales[d]);
    }
    r.taps.push_back(exact ? 1 : r.slots);
  }
  return r;
}

// The uploaded tables by input shape and scales (then tf_crop_and_resize's roi): an upload
// waits for the stream, so a step makes its tables once per shape, not on every run.
class TableCache {
 public:
  struct Uploaded {
    Shape at, taps;  // ResizeTables'
    int64_t slots;
    Tensor index;
    std::optional<Tensor> weight;  // linear and cubic
  };
  template <class Make>
  Expected<Uploaded> get(const Shape& in, const std::vector<double>& scales, Make make) {
    std::lock_guard lock(mutex_);
    const auto key = std::pair(in, scales);
    if (auto it = uploaded_.find(key); it != uploaded_.end()) return it->second;
    auto made = make();
    if (made) uploaded_.emplace(key, *made);
    return made;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<Shape, std::vector<double>>, Uploaded> uploaded_;
};

// tf_crop_and_resize's roi (float or double, read on the host): the starts, then the ends, of
// every dim.
Expected<std::vector<double>> read_roi(StepContext& ctx, std::size_t rank) {
  auto roi = ctx.input_on_host(kRoi);
  if (!roi) return std::unexpected(roi.error());
  if (roi->numel() != static_cast<int64_t>(2 * rank))
    return fail(ErrorCode::kRuntime, fmt::format("{}: roi has {} values; expected {}", ctx.where(), roi->numel(), 2 * rank),
                "roi holds the starts then the ends of every dim", "give 2 values per dim");
  std::vector<double> values;
  for (int64_t i = 0; i < roi->numel(); ++i)
    values.push_back(roi->dtype() == DType::kFloat64 ? roi->data_as<double>()[i] : roi->data_as<float>()[i]);
  return values;
}

Expected<void> build_resize(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string mode_name = node.attributes.string_or("mode", "nearest");
  const ResizeForm form = form_of(node);
  ResizeMethod method;
  method.mode = mode_name == "linear" ? Mode::kLinear : mode_name == "cubic" ? Mode::kCubic : Mode::kNearest;
  method.transform = form.legacy ? Transform::kAsymmetric
                                 : *parse_transform(node.attributes.string_or("coordinate_transformation_mode", "half_pixel"));
  method.nearest =
      form.legacy ? Nearest::kLegacy : *parse_nearest(node.attributes.string_or("nearest_mode", "round_prefer_floor"));
  method.cubic_a = node.attributes.float_or("cubic_coeff_a", -0.75f);
  method.exclude_outside = node.attributes.int_or("exclude_outside", 0) != 0;
  const bool crop = method.transform == Transform::kTfCropAndResize;
  const float extrapolation = node.attributes.float_or("extrapolation_value", 0.f);
  const bool weighted = method.mode != Mode::kNearest;
  // Nearest moves elements by size, except when cropping (float data) stores the extrapolation.
  const std::string t(weighted || crop ? float_type(dtype) : element_type(dtype));
  const std::string kernel =
      weighted ? b.instantiate("resize_weighted", t,
                               fmt::format("i64 n, int rank, Dims out_shape, Dims in_strides, Dims at, Dims taps, int slots, "
                                           "const i64* idx, const float* w, float extrapolation, const {0}* x, {0}* y",
                                           t),
                               "n, rank, out_shape, in_strides, at, taps, slots, idx, w, extrapolation, x, y")
               : b.instantiate("resize_nearest", t,
                               fmt::format("i64 n, int rank, Dims out_shape, Dims in_strides, Dims at, const i64* idx, "
                                           "float extrapolation, const {0}* x, {0}* y",
                                           t),
                               "n, rank, out_shape, in_strides, at, idx, extrapolation, x, y");
  const IntsInput sizes_input(b.graph(), node, kSizes);  // absent in Upsample and Resize-10: they have two inputs
  auto cache = std::make_shared<TableCache>();
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto sizes = sizes_input.read(ctx);
    if (!sizes) return std::unexpected(sizes.error());
    std::vector<double> scales(in.size(), 1.0);
    Shape out(in.size());
    const bool by_sizes = *sizes && !(*sizes)->empty();
    if (by_sizes) {
      if ((*sizes)->size() != in.size())
        return fail(ErrorCode::kRuntime, fmt::format("{}: sizes has {} values for an input of rank {}", ctx.where(),
                                                     (*sizes)->size(), in.size()));
      for (std::size_t d = 0; d < in.size(); ++d) {
        out[d] = (**sizes)[d];
        scales[d] = in[d] > 0 ? static_cast<double>(out[d]) / static_cast<double>(in[d]) : 1.0;
      }
    } else {
      std::vector<float> given;
      if (form.scales_attribute) {
        given = *form.scales_attribute;
      } else if (ctx.has_input(*form.scales_input)) {
        auto read = ctx.input_on_host(*form.scales_input);
        if (!read) return std::unexpected(read.error());
        given.assign(read->data_as<float>(), read->data_as<float>() + read->numel());
      } else {
        return fail(ErrorCode::kRuntime, fmt::format("{}: neither scales nor sizes is given", ctx.where()), {},
                    "give scales or sizes");
      }
      if (given.size() != in.size())
        return fail(ErrorCode::kRuntime, fmt::format("{}: scales has {} values for an input of rank {}", ctx.where(),
                                                     given.size(), in.size()));
      for (std::size_t d = 0; d < in.size(); ++d) {
        scales[d] = given[d];
        if (!(scales[d] > 0))
          return fail(ErrorCode::kRuntime, fmt::format("{}: scale {} is not positive", ctx.where(), scales[d]));
        out[d] = static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * scales[d]));
      }
    }
    for (std::size_t d = 0; d < in.size(); ++d)
      if (out[d] < 0 || (in[d] == 0 && out[d] > 0))
        return fail(ErrorCode::kRuntime, fmt::format("{}: cannot resize {} to {}", ctx.where(), shape_to_string(in),
                                                     shape_to_string(out)));
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    std::vector<double> roi;
    if (crop) {
      auto given = read_roi(ctx, in.size());
      if (!given) return std::unexpected(given.error());
      roi = std::move(*given);
    }
    std::vector<double> key = scales;
    key.insert(key.end(), roi.begin(), roi.end());
    auto uploaded = cache->get(in, key, [&]() -> Expected<TableCache::Uploaded> {
      const ResizeTables tables = make_tables(in, out, scales, by_sizes, method, roi);
      auto index = ctx.upload(Tensor::from_vector<int64_t>({static_cast<int64_t>(tables.index.size())}, tables.index));
      if (!index) return std::unexpected(index.error());
      TableCache::Uploaded up{tables.at, tables.taps, tables.slots, std::move(*index), std::nullopt};
      if (!weighted) return up;
      auto weight = ctx.upload(Tensor::from_vector<float>({static_cast<int64_t>(tables.weight.size())}, tables.weight));
      if (!weight) return std::unexpected(weight.error());
      up.weight = std::move(*weight);
      return up;
    });
    if (!uploaded) return std::unexpected(uploaded.error());
    KernelArgs args;
    args.add(n).add(static_cast<int>(in.size())).add(to_kernel_dims(out)).add(to_kernel_dims(contiguous_strides(in)));
    args.add(to_kernel_dims(uploaded->at));
    if (weighted) args.add(to_kernel_dims(uploaded->taps)).add(static_cast<int>(uploaded->slots));
    args.ptr(dev(uploaded->index));
    if (weighted) args.ptr(dev(*uploaded->weight));
    args.add(extrapolation).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> resize_ops() {
  // Resize 11: roi, sizes and the coordinate attributes; 13: roi and scales optional; 18:
  // antialias, axes, keep_aspect_ratio_policy; 19: half_pixel_symmetric (declined here).
  // Upsample 9: scales as an input (deprecated at 10, for Resize).
  std::vector<CudaOpDef> ops = make_op_versions("Resize", {10, 11, 13, 18, 19}, check_resize, build_resize);
  for (CudaOpDef& op : make_op_versions("Upsample", {7, 9}, check_resize, build_resize, 9)) ops.push_back(std::move(op));
  return ops;
}

}  // namespace nxrt::cuda
