// AffineGrid-20: the sampling grid of an affine transform (theta N x 2 x 3 for 2-D images,
// N x 3 x 4 for 3-D volumes) over normalized coordinates, GridSample's grid input.
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/affine_grid.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_affine_grid(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_affine_grid_node(ctx));
  return require_input_dtype_in(ctx, 0, FloatTypes{});
}

// Coordinates of `n` points spread over [-1, 1]: the end points themselves with
// align_corners, the centres of n equal cells without.
std::vector<double> axis_points(int64_t n, bool align_corners) {
  std::vector<double> p(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    p[static_cast<std::size_t>(i)] =
        align_corners ? (n > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1) : -1.0)
                      : (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n) - 1.0;
  return p;
}

class AffineGridKernel final : public Kernel {
 public:
  explicit AffineGridKernel(bool align_corners) : align_(align_corners) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& theta = ctx.input(0);
    const std::vector<int64_t> size = ctx.input(1).to_int64_vector();
    auto out_shape = affine_grid_output_shape(theta.shape(), size);
    if (!out_shape) return std::unexpected(std::move(out_shape.error()));
    const std::size_t dims = size.size() - 2;  // spatial dims: 2 or 3
    auto y = ctx.output(0, theta.dtype(), *out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    // Spatial dims run (D,) H, W; the point's coordinates are (x from W, y from H, z from D).
    std::vector<std::vector<double>> points;
    for (std::size_t d = 0; d < dims; ++d) points.push_back(axis_points(size[size.size() - 1 - d], align_));
    const int64_t count = shape_numel(std::span(size).subspan(2));
    const T* th = theta.data_as<T>();
    T* out = y->template mut_as<T>();
    for (int64_t n = 0; n < size[0]; ++n) {
      const T* m = th + n * static_cast<int64_t>(dims * (dims + 1));
      for (int64_t i = 0; i < count; ++i) {
        std::vector<double> coord(dims + 1, 1.0);
        for (int64_t r = i, d = 0; d < static_cast<int64_t>(dims); ++d) {
          const int64_t extent = size[size.size() - 1 - static_cast<std::size_t>(d)];
          coord[static_cast<std::size_t>(d)] = points[static_cast<std::size_t>(d)][static_cast<std::size_t>(r % extent)];
          r /= extent;
        }
        T* dst = out + (n * count + i) * static_cast<int64_t>(dims);
        for (std::size_t row = 0; row < dims; ++row) {
          double v = 0;
          for (std::size_t c = 0; c <= dims; ++c) v += static_cast<double>(m[row * (dims + 1) + c]) * coord[c];
          dst[row] = static_cast<T>(v);
        }
      }
    }
    return {};
  }

  bool align_;
};

}  // namespace

std::vector<KernelDef> affine_grid_kernels() {
  return {KernelDef{{"", "AffineGrid", 20}, 0, check_affine_grid, [](const NodeContext& ctx) {
                      return make_kernel<AffineGridKernel>(ctx.attrs().int_or("align_corners", 0) != 0);
                    }}};
}

}  // namespace nxrt::cpu
