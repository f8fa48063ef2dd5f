// Resize (opset 10 on) and Upsample (7 and 9), nearest, linear and cubic: the host plans every
// output coordinate of every dim (lib's nxrt/ep/resize.h, in double as the ONNX reference:
// axes, keep_aspect_ratio_policy, antialias and every coordinate transform), uploads the
// input indices and weights as tables, and one kernel gathers or blends; tf_crop_and_resize
// marks coordinates outside the input, which take extrapolation_value.
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "nxrt/ep/resize.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// Resize-11 on: inputs 1 roi and 3 sizes (Upsample and Resize-10 have two inputs).
constexpr std::size_t kRoi = 1, kSizes = 3;

KernelMatch check_resize(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_resize_node(ctx));
  const ResizeConfig c = make_resize_config(ctx.node());
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  if (c.mode != ResizeMode::kNearest) NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  else NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  if (c.transform == CoordinateTransform::kTfCropAndResize) {
    NXRT_REQUIRE(is_cuda_float(ctx.input_dtype(0)),
                 "Resize: tf_crop_and_resize of {} data; the cuda EP crops {} (the extrapolation value's types)",
                 dtype_name(ctx.input_dtype(0)), kCudaFloats);
    NXRT_REQUIRE(!ctx.has_input(kRoi) || ctx.input_dtype(kRoi) == DType::kFloat32 ||
                     ctx.input_dtype(kRoi) == DType::kFloat64,
                 "Resize: tf_crop_and_resize's roi (input 1) is {}; the cuda EP reads float or double",
                 dtype_name(ctx.input_dtype(kRoi)));
  }
  return require_ints(ctx, kSizes, "sizes");
}

// The tables of one resize, for the kernels: per dim, from entry at[d] on, one entry per
// output coordinate of `slots` (input index, weight) pairs, of which the kernel uses the first
// taps[d] (1 where a dim gathers). Nearest has one slot and no weights. An entry whose first
// index is -1 lies outside the input (tf_crop_and_resize): its output elements take the
// extrapolation value.
struct ResizeTables {
  Shape at, taps;
  int64_t slots = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

ResizeTables make_tables(const ResizePlan& plan, bool weighted) {
  ResizeTables r;
  for (const ResizeAxis& axis : plan.axes) r.slots = std::max(r.slots, axis.taps);
  for (const ResizeAxis& axis : plan.axes) {
    r.at.push_back(static_cast<int64_t>(r.index.size()) / r.slots);
    r.taps.push_back(axis.taps);
    for (int64_t o = 0; o < axis.out; ++o) {
      const bool outside = !axis.outside.empty() && axis.outside[static_cast<std::size_t>(o)];
      for (int64_t t = 0; t < r.slots; ++t) {
        const auto k = static_cast<std::size_t>(o * axis.taps + t);
        r.index.push_back(outside ? -1 : t < axis.taps ? axis.index[k] : 0);
        if (weighted) r.weight.push_back(t < axis.taps ? static_cast<float>(axis.weight[k]) : 0.f);
      }
    }
  }
  return r;
}

// The output shape and uploaded tables by input shape and operands (scales, sizes, then
// tf_crop_and_resize's roi): an upload waits for the stream, so a step makes its tables once
// per shape, not on every run.
class TableCache {
 public:
  struct Uploaded {
    Shape out_shape;
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

// The operands given at run time (read on the host): scales, sizes and tf_crop_and_resize's roi
// (float or double).
Expected<ResizeOperands> read_operands(StepContext& ctx, const ResizeConfig& c, const IntsInput& sizes_input) {
  ResizeOperands operands;
  auto read = [&](int i) -> Expected<std::optional<Tensor>> {
    if (i < 0 || !ctx.has_input(static_cast<std::size_t>(i))) return std::nullopt;
    auto t = ctx.input_on_host(static_cast<std::size_t>(i));
    if (!t) return std::unexpected(t.error());
    return std::optional<Tensor>(std::move(*t));
  };
  auto scales = read(c.inputs.scales);
  if (!scales) return std::unexpected(scales.error());
  if (*scales) operands.scales.assign((*scales)->data_as<float>(), (*scales)->data_as<float>() + (*scales)->numel());
  auto sizes = sizes_input.read(ctx);
  if (!sizes) return std::unexpected(sizes.error());
  if (*sizes) operands.sizes = **sizes;
  if (c.transform == CoordinateTransform::kTfCropAndResize) {
    auto roi = read(c.inputs.roi);
    if (!roi) return std::unexpected(roi.error());
    if (*roi)
      for (int64_t i = 0; i < (*roi)->numel(); ++i)
        operands.roi.push_back((*roi)->dtype() == DType::kFloat64 ? (*roi)->data_as<double>()[i] : (*roi)->data_as<float>()[i]);
  }
  return operands;
}

Expected<void> build_resize(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const ResizeConfig config = make_resize_config(node);
  const bool crop = config.transform == CoordinateTransform::kTfCropAndResize;
  const auto extrapolation = static_cast<float>(config.extrapolation);
  const bool weighted = config.mode != ResizeMode::kNearest;
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
  const IntsInput sizes_input(b.graph(), node, kSizes);
  auto cache = std::make_shared<TableCache>();
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto operands = read_operands(ctx, config, sizes_input);
    if (!operands) return std::unexpected(operands.error());
    std::vector<double> key(operands->scales.begin(), operands->scales.end());
    key.insert(key.end(), operands->sizes.begin(), operands->sizes.end());
    key.push_back(-1);  // scales and sizes end here; roi follows
    key.insert(key.end(), operands->roi.begin(), operands->roi.end());
    auto uploaded = cache->get(in, key, [&]() -> Expected<TableCache::Uploaded> {
      auto plan = plan_resize(config, in, *operands, ctx.where());
      if (!plan) return std::unexpected(plan.error());
      const ResizeTables tables = make_tables(*plan, weighted);
      auto index = ctx.upload(Tensor::from_vector<int64_t>({static_cast<int64_t>(tables.index.size())}, tables.index));
      if (!index) return std::unexpected(index.error());
      TableCache::Uploaded up{plan->out_shape, tables.at, tables.taps, tables.slots, std::move(*index), std::nullopt};
      if (!weighted) return up;
      auto weight = ctx.upload(Tensor::from_vector<float>({static_cast<int64_t>(tables.weight.size())}, tables.weight));
      if (!weight) return std::unexpected(weight.error());
      up.weight = std::move(*weight);
      return up;
    });
    if (!uploaded) return std::unexpected(uploaded.error());
    auto y = ctx.output(0, dtype, uploaded->out_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(static_cast<int>(in.size())).add(to_kernel_dims(uploaded->out_shape));
    args.add(to_kernel_dims(contiguous_strides(in))).add(to_kernel_dims(uploaded->at));
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
  // antialias, axes, keep_aspect_ratio_policy; 19: half_pixel_symmetric.
  // Upsample 9: scales as an input (deprecated at 10, for Resize).
  std::vector<CudaOpDef> ops = make_op_versions("Resize", {10, 11, 13, 18, 19}, check_resize, build_resize);
  for (CudaOpDef& op : make_op_versions("Upsample", {7, 9}, check_resize, build_resize, 9)) ops.push_back(std::move(op));
  return ops;
}

}  // namespace nxrt::cuda
