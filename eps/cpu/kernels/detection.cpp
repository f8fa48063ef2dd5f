// Object-detection ops: RoiAlign (10, 16) and NonMaxSuppression (10, 11).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/nms.h"
#include "nxrt/ep/roi_align.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_roi_align(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  NXRT_REQUIRE_MATCH(check_roi_align_node(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, 0));
}

// One bilinear sample: four input offsets and their weights (all zero outside the map).
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// The sample at (y, x) as ONNX Runtime and the ONNX reference place it: points more than one
// pixel outside contribute nothing, others clamp to the border.
Sample bilinear_sample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1, x_high = x_low + 1;
  if (y_low >= height - 1) y_high = y_low = height - 1, y = static_cast<double>(y_low);
  if (x_low >= width - 1) x_high = x_low = width - 1, x = static_cast<double>(x_low);
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y_low * width + x_low;
  s.pos[1] = y_low * width + x_high;
  s.pos[2] = y_high * width + x_low;
  s.pos[3] = y_high * width + x_high;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

class RoiAlignKernel final : public Kernel {
 public:
  explicit RoiAlignKernel(const NodeContext& ctx) : a_(read_roi_align_attrs(ctx.attrs(), ctx.opset())) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    const std::vector<int64_t> batch = ctx.input(2).to_int64_vector();
    if (x.shape().size() != 4 || rois.shape().size() != 2 || rois.shape()[1] != 4)
      return fail(ErrorCode::kRuntime,
                  fmt::format("RoiAlign: X {} and rois {} do not have shapes (N,C,H,W) and (num_rois,4)",
                              shape_to_string(x.shape()), shape_to_string(rois.shape())));
    const int64_t num_rois = rois.shape()[0], channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    if (static_cast<int64_t>(batch.size()) != num_rois)
      return fail(ErrorCode::kRuntime,
                  fmt::format("RoiAlign: batch_indices has {} values for {} rois", batch.size(), num_rois));
    for (int64_t b : batch)
      if (b < 0 || b >= x.shape()[0])
        return fail(ErrorCode::kRuntime,
                    fmt::format("RoiAlign: batch index {} is out of range for a batch of {}", b, x.shape()[0]));
    auto y = ctx.output(0, x.dtype(), {num_rois, channels, a_.out_h, a_.out_w});
    if (!y) return std::unexpected(std::move(y.error()));
    const T* src = x.data_as<T>();
    const T* box = rois.data_as<T>();
    T* dst = y->mut_as<T>();
    const int64_t plane = height * width;
    ctx.parallel().for_range(num_rois, 1, [&](int64_t begin, int64_t end) {
      std::vector<Sample> samples;
      for (int64_t n = begin; n < end; ++n) {
        const double offset = a_.half_pixel ? 0.5 : 0.0;
        const double x0 = static_cast<double>(box[n * 4 + 0]) * a_.spatial_scale - offset;
        const double y0 = static_cast<double>(box[n * 4 + 1]) * a_.spatial_scale - offset;
        double roi_w = static_cast<double>(box[n * 4 + 2]) * a_.spatial_scale - offset - x0;
        double roi_h = static_cast<double>(box[n * 4 + 3]) * a_.spatial_scale - offset - y0;
        // output_half_pixel keeps the legacy minimum roi size of one pixel.
        if (!a_.half_pixel) roi_w = std::max(roi_w, 1.0), roi_h = std::max(roi_h, 1.0);
        const double bin_h = roi_h / static_cast<double>(a_.out_h), bin_w = roi_w / static_cast<double>(a_.out_w);
        const int64_t grid_h = a_.sampling_ratio > 0 ? a_.sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / static_cast<double>(a_.out_h)));
        const int64_t grid_w = a_.sampling_ratio > 0 ? a_.sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / static_cast<double>(a_.out_w)));
        const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
        samples.clear();
        for (int64_t ph = 0; ph < a_.out_h; ++ph)
          for (int64_t pw = 0; pw < a_.out_w; ++pw)
            for (int64_t iy = 0; iy < grid_h; ++iy)
              for (int64_t ix = 0; ix < grid_w; ++ix)
                samples.push_back(bilinear_sample(
                    y0 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h),
                    x0 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w),
                    height, width));
        const std::size_t per_bin = static_cast<std::size_t>(grid_h * grid_w);
        for (int64_t c = 0; c < channels; ++c) {
          const T* in = src + (batch[static_cast<std::size_t>(n)] * channels + c) * plane;
          T* out = dst + (n * channels + c) * a_.out_h * a_.out_w;
          for (int64_t bin = 0; bin < a_.out_h * a_.out_w; ++bin) {
            const Sample* s = samples.data() + static_cast<std::size_t>(bin) * per_bin;
            double value = 0;
            for (std::size_t k = 0; k < per_bin; ++k) {
              double v[4];
              for (int j = 0; j < 4; ++j) v[j] = s[k].w[j] * static_cast<double>(static_cast<ComputeType<T>>(in[s[k].pos[j]]));
              // max mode takes the largest weighted corner, not the interpolated value: the
              // definition ONNX Runtime implements and the ONNX reference adopted.
              if (a_.max) {
                const double m = std::max({v[0], v[1], v[2], v[3]});
                value = k == 0 ? m : std::max(value, m);
              } else {
                value += v[0] + v[1] + v[2] + v[3];
              }
            }
            out[bin] = static_cast<T>(static_cast<ComputeType<T>>(a_.max ? value : value / count));
          }
        }
      }
    });
    return {};
  }

  RoiAlignAttrs a_;
};

// Boxes are float; the three scalar operands are optional.
KernelMatch check_nms(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kFloat32}));
  if (ctx.has_input(2)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 2, {DType::kInt64}));
  if (ctx.has_input(3)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 3, {DType::kFloat32}));
  if (ctx.has_input(4)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 4, {DType::kFloat32}));
  const int64_t center = ctx.attrs().int_or("center_point_box", 0);
  NXRT_REQUIRE(center == 0 || center == 1, "NonMaxSuppression: center_point_box {} is not valid; use 0 or 1", center);
  const auto boxes = ctx.input_static_shape(0);
  NXRT_REQUIRE(!boxes || (boxes->size() == 3 && (*boxes)[2] == 4),
               "NonMaxSuppression: boxes has shape {}; expected [num_batches, spatial_dimension, 4]",
               shape_to_string(*boxes));
  const auto scores = ctx.input_rank(1);
  NXRT_REQUIRE(!scores || *scores == 3, "NonMaxSuppression: scores has rank {}; expected 3", *scores);
  return KernelMatch::supported();
}

class NmsKernel final : public Kernel {
 public:
  explicit NmsKernel(bool center) : center_(center) {}

  Expected<void> compute(KernelContext& ctx) override {
    const auto scalar = [&](std::size_t i) { return ctx.has_input(i) && ctx.input(i).numel() > 0; };
    NmsParams params;
    params.max_per_class = scalar(2) ? ctx.input(2).to_int64_vector()[0] : 0;
    params.iou_threshold = scalar(3) ? ctx.input(3).data_as<float>()[0] : 0.0f;
    if (scalar(4)) params.score_threshold = ctx.input(4).data_as<float>()[0];
    params.center_point_box = center_;
    auto found = select_boxes(ctx.input(0), ctx.input(1), params);
    if (!found) return std::unexpected(std::move(found.error()));
    const std::vector<int64_t>& selected = *found;
    const auto count = static_cast<int64_t>(selected.size() / 3);
    auto y = ctx.output(0, DType::kInt64, {count, 3});
    if (!y) return std::unexpected(std::move(y.error()));
    std::copy(selected.begin(), selected.end(), y->mut_as<int64_t>());
    return {};
  }

 private:
  bool center_;
};

KernelDef roi_align_def(int64_t since, int64_t until) {
  return KernelDef{{"", "RoiAlign", since}, until, check_roi_align,
                   [](const NodeContext& ctx) { return make_kernel<RoiAlignKernel>(ctx); }};
}

KernelDef nms_def(int64_t since, int64_t until) {
  return KernelDef{{"", "NonMaxSuppression", since}, until, check_nms, [](const NodeContext& ctx) {
                     return make_kernel<NmsKernel>(ctx.attrs().int_or("center_point_box", 0) == 1);
                   }};
}

}  // namespace

std::vector<KernelDef> detection_kernels() {
  return {
      roi_align_def(10, 15),
      roi_align_def(16, 0),
      nms_def(10, 10),
      nms_def(11, 0),
  };
}

}  // namespace nxrt::cpu
