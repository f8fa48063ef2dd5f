// AffineGrid-20: the sampling grid of an affine transform (theta N x 2 x 3 for 2-D images,
// N x 3 x 4 for 3-D volumes) over normalized coordinates, GridSample's grid input.
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_affine_grid(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2 && ctx.has_input(1), "AffineGrid: expected 2 inputs (theta, size)");
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  if (auto size = constant_ints(ctx, 1))
    NXRT_REQUIRE(size->size() == 4 || size->size() == 5,
                 "AffineGrid: size has {} values; expected [N, C, H, W] or [N, C, D, H, W]", size->size());
  if (auto theta = ctx.input_static_shape(0))
    NXRT_REQUIRE(theta->size() == 3 && (((*theta)[1] == 2 && (*theta)[2] == 3) || ((*theta)[1] == 3 && (*theta)[2] == 4)),
                 "AffineGrid: theta has shape {}; expected [N, 2, 3] or [N, 3, 4]", shape_to_string(*theta));
  return KernelMatch::supported();
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
    const std::size_t dims = size.size() - 2;  // spatial dims: 2 or 3
    if ((size.size() != 4 && size.size() != 5) || theta.shape().size() != 3 || theta.shape()[0] != size[0] ||
        theta.shape()[1] != static_cast<int64_t>(dims) || theta.shape()[2] != static_cast<int64_t>(dims) + 1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("AffineGrid: theta {} does not fit size {}", shape_to_string(theta.shape()),
                              shape_to_string(size)),
                  "2-D grids take theta [N, 2, 3] and size [N, C, H, W]; 3-D ones theta [N, 3, 4] and size "
                  "[N, C, D, H, W]",
                  "fix the node's inputs");
    Shape out_shape{size[0]};
    out_shape.insert(out_shape.end(), size.begin() + 2, size.end());
    out_shape.push_back(static_cast<int64_t>(dims));
    auto y = ctx.output(0, theta.dtype(), out_shape);
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
