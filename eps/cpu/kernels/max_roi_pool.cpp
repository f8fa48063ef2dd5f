// MaxRoiPool-1/22 in float and double (nxrt/ep/max_roi_pool.h): one task per roi and channel,
// bins as Caffe and ONNX Runtime place them. A batch index that is not an image of X is an error.
#include <algorithm>
#include <cmath>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/max_roi_pool.h"

namespace nxrt::cpu {
namespace {

using RoiPoolTypes = TypeList<float, double>;

KernelMatch check_max_roi_pool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, RoiPoolTypes{}));
  NXRT_REQUIRE_MATCH(check_max_roi_pool_node(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

class MaxRoiPoolKernel final : public Kernel {
 public:
  explicit MaxRoiPoolKernel(MaxRoiPoolAttrs attrs)
      : pooled_h_(attrs.pooled_h), pooled_w_(attrs.pooled_w), scale_(attrs.spatial_scale) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(RoiPoolTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "bins"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    if (auto shapes = check_max_roi_pool_shapes(x.shape(), rois.shape()); !shapes) return shapes;
    const int64_t channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    const int64_t count = rois.shape()[0];
    const T* box = rois.data_as<T>();
    for (int64_t r = 0; r < count; ++r) {
      const double b = static_cast<double>(box[r * 5]);
      if (!(b >= 0 && b < static_cast<double>(x.shape()[0])) || b != std::floor(b))
        return fail(ErrorCode::kRuntime,
                    fmt::format("MaxRoiPool: roi {} names batch index {} of a batch of {}", r, b, x.shape()[0]),
                    "the first value of each roi is the index of its image in X", "fix the rois input");
    }
    auto y = ctx.output(0, x.dtype(), {count, channels, pooled_h_, pooled_w_});
    if (!y) return std::unexpected(std::move(y.error()));
    const T* in = x.data_as<T>();
    T* out = y->template mut_as<T>();
    ctx.parallel().for_range(count * channels, 1, [&](int64_t begin, int64_t end) {
      for (int64_t rc = begin; rc < end; ++rc) {
        const int64_t r = rc / channels, c = rc % channels;
        const T* roi = box + r * 5;
        // The region in input pixels, both ends included; at least one pixel each way.
        auto pixel = [&](T v) { return static_cast<int64_t>(std::round(static_cast<float>(v) * scale_)); };
        const int64_t x1 = pixel(roi[1]), y1 = pixel(roi[2]), x2 = pixel(roi[3]), y2 = pixel(roi[4]);
        const double bin_h = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(pooled_h_);
        const double bin_w = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pooled_w_);
        const T* plane = in + (static_cast<int64_t>(roi[0]) * channels + c) * height * width;
        T* dst = out + rc * pooled_h_ * pooled_w_;
        for (int64_t ph = 0; ph < pooled_h_; ++ph) {
          const int64_t h0 = std::clamp(y1 + static_cast<int64_t>(std::floor(static_cast<double>(ph) * bin_h)), int64_t{0}, height);
          const int64_t h1 = std::clamp(y1 + static_cast<int64_t>(std::ceil(static_cast<double>(ph + 1) * bin_h)), int64_t{0}, height);
          for (int64_t pw = 0; pw < pooled_w_; ++pw) {
            const int64_t w0 = std::clamp(x1 + static_cast<int64_t>(std::floor(static_cast<double>(pw) * bin_w)), int64_t{0}, width);
            const int64_t w1 = std::clamp(x1 + static_cast<int64_t>(std::ceil(static_cast<double>(pw + 1) * bin_w)), int64_t{0}, width);
            T best = T(0);
            if (h1 > h0 && w1 > w0) {
              best = plane[h0 * width + w0];
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w) best = std::max(best, plane[h * width + w]);
            }
            dst[ph * pooled_w_ + pw] = best;
          }
        }
      }
    });
    return {};
  }

  int64_t pooled_h_, pooled_w_;
  float scale_;
};

}  // namespace

std::vector<KernelDef> max_roi_pool_kernels() {
  return {KernelDef{{"", "MaxRoiPool", 1}, 0, check_max_roi_pool, [](const NodeContext& ctx) {
                      return make_kernel<MaxRoiPoolKernel>(read_max_roi_pool_attrs(ctx.attrs()));
                    }}};
}

}  // namespace nxrt::cpu
