// GridSample (16, and 20 on 4-D inputs): sampling an image at normalized grid locations with
// bilinear, nearest or bicubic interpolation and zeros, border or reflection padding.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "common/elementwise.h"
#include "common/interpolation.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

enum class GridMode { kLinear, kNearest, kCubic };
enum class GridPadding { kZeros, kBorder, kReflection };

// Opset 16 says bilinear/bicubic, opset 20 renamed them linear/cubic.
std::optional<GridMode> parse_grid_mode(const std::string& s, int64_t opset) {
  if (s == "nearest") return GridMode::kNearest;
  if (s == (opset >= 20 ? "linear" : "bilinear")) return GridMode::kLinear;
  if (s == (opset >= 20 ? "cubic" : "bicubic")) return GridMode::kCubic;
  return std::nullopt;
}

std::optional<GridPadding> parse_padding(const std::string& s) {
  if (s == "zeros") return GridPadding::kZeros;
  if (s == "border") return GridPadding::kBorder;
  if (s == "reflection") return GridPadding::kReflection;
  return std::nullopt;
}

std::string default_grid_mode(int64_t opset) { return opset >= 20 ? "linear" : "bilinear"; }

KernelMatch check_grid_sample(const NodeContext& ctx) {
  const std::string mode = ctx.attrs().string_or("mode", default_grid_mode(ctx.opset()));
  NXRT_REQUIRE(parse_grid_mode(mode, ctx.opset()), "GridSample: mode '{}' is not valid at opset {}; use {}", mode,
               ctx.opset(), ctx.opset() >= 20 ? "linear, nearest or cubic" : "bilinear, nearest or bicubic");
  const std::string padding = ctx.attrs().string_or("padding_mode", "zeros");
  NXRT_REQUIRE(parse_padding(padding), "GridSample: padding_mode '{}' is not valid; use zeros, border or reflection",
               padding);
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, FloatHalfTypes{}));
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 4,
               "GridSample: X has rank {}; the cpu EP supports 4-D (N, C, H, W) inputs only", *rank);
  const auto grid = ctx.input_static_shape(1);
  NXRT_REQUIRE(!grid || (grid->size() == 4 && (*grid)[3] == 2),
               "GridSample: grid has shape {}; expected [N, H_out, W_out, 2]", shape_to_string(*grid));
  const double taps = mode == "nearest" ? 1 : mode == "bicubic" || mode == "cubic" ? 16 : 4;
  return KernelMatch::supported(elementwise_cost(ctx, 2 * taps));
}

// Maps a normalized coordinate in [-1, 1] to a pixel coordinate.
double unnormalize(double coord, int64_t size, bool align_corners) {
  const auto n = static_cast<double>(size);
  return align_corners ? (coord + 1) / 2 * (n - 1) : ((coord + 1) * n - 1) / 2;
}

// Reflects x into [twice_low / 2, twice_high / 2], bouncing as often as it takes.
double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::abs(x - low);
  const double extra = std::fmod(x, span);
  const auto flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + low : span - extra + low;
}

// Applies border or reflection padding to a pixel coordinate (zeros leaves it alone).
double pad_coordinate(double x, int64_t size, GridPadding padding, bool align_corners) {
  const double hi = static_cast<double>(size - 1);
  if (padding == GridPadding::kBorder) return std::clamp(x, 0.0, hi);
  if (padding != GridPadding::kReflection) return x;
  const auto n = static_cast<double>(size);
  x = align_corners ? reflect(x, 0, 2 * hi) : reflect(x, -1, 2 * n - 1);
  return std::clamp(x, 0.0, hi);
}

// Up to 4x4 input offsets and weights for one output location; out-of-range taps are dropped
// (they read as zero).
struct Taps {
  std::array<int64_t, 16> offset{};
  std::array<double, 16> weight{};
  int count = 0;
  void add(int64_t x, int64_t y, int64_t w, int64_t h, double weight_value) {
    if (x < 0 || x >= w || y < 0 || y >= h) return;
    offset[static_cast<std::size_t>(count)] = y * w + x;
    weight[static_cast<std::size_t>(count++)] = weight_value;
  }
};

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GridMode mode, GridPadding padding, bool align_corners)
      : mode_(mode), padding_(padding), align_(align_corners) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return dispatch_dtype(FloatHalfTypes{}, ctx.input(1).dtype(), [&](auto grid_tag) {
        return run<T, typename decltype(grid_tag)::type>(ctx);
      });
    });
  }

 private:
  Taps taps_at(double gx, double gy, int64_t w, int64_t h) const {
    Taps t;
    double x = unnormalize(gx, w, align_), y = unnormalize(gy, h, align_);
    if (mode_ == GridMode::kCubic) {
      // Bicubic pads each of the 16 taps, not the sampling point.
      const double x0 = std::floor(x), y0 = std::floor(y);
      const auto wx = cubic_weights(x - x0, -0.75), wy = cubic_weights(y - y0, -0.75);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          const double px = pad_coordinate(x0 - 1 + j, w, padding_, align_);
          const double py = pad_coordinate(y0 - 1 + i, h, padding_, align_);
          t.add(static_cast<int64_t>(px), static_cast<int64_t>(py), w, h, wx[static_cast<std::size_t>(j)] * wy[static_cast<std::size_t>(i)]);
        }
      return t;
    }
    x = pad_coordinate(x, w, padding_, align_);
    y = pad_coordinate(y, h, padding_, align_);
    if (mode_ == GridMode::kNearest) {
      t.add(static_cast<int64_t>(std::nearbyint(x)), static_cast<int64_t>(std::nearbyint(y)), w, h, 1);
      return t;
    }
    const double x0 = std::floor(x), y0 = std::floor(y);
    const double fx = x - x0, fy = y - y0;
    const auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
    t.add(ix, iy, w, h, (1 - fx) * (1 - fy));
    t.add(ix + 1, iy, w, h, fx * (1 - fy));
    t.add(ix, iy + 1, w, h, (1 - fx) * fy);
    t.add(ix + 1, iy + 1, w, h, fx * fy);
    return t;
  }

  template <class T, class G>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    const Shape& xs = x.shape();
    const Shape& gs = grid.shape();
    if (xs.size() != 4 || gs.size() != 4 || gs[0] != xs[0] || gs[3] != 2)
      return fail(ErrorCode::kRuntime,
                  fmt::format("GridSample: X {} and grid {} do not have shapes [N, C, H, W] and [N, H_out, W_out, 2]",
                              shape_to_string(xs), shape_to_string(gs)));
    const int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], oh = gs[1], ow = gs[2];
    auto y = ctx.output(0, x.dtype(), {n, c, oh, ow});
    if (!y) return std::unexpected(std::move(y.error()));
    const T* src = x.data_as<T>();
    const G* g = grid.data_as<G>();
    T* dst = y->mut_as<T>();
    const int64_t out_plane = oh * ow;
    ctx.parallel().for_range(n * oh, 1, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row / oh;
        for (int64_t i = row * ow; i < (row + 1) * ow; ++i) {
          const Taps t = taps_at(static_cast<ComputeType<G>>(g[2 * i]), static_cast<ComputeType<G>>(g[2 * i + 1]), w, h);
          const int64_t at = i - b * out_plane;
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* plane = src + (b * c + ch) * h * w;
            double v = 0;
            for (int k = 0; k < t.count; ++k)
              v += t.weight[static_cast<std::size_t>(k)] * static_cast<double>(static_cast<ComputeType<T>>(plane[t.offset[static_cast<std::size_t>(k)]]));
            dst[(b * c + ch) * out_plane + at] = static_cast<T>(static_cast<ComputeType<T>>(v));
          }
        }
      }
    });
    return {};
  }

  GridMode mode_;
  GridPadding padding_;
  bool align_;
};

KernelDef grid_sample_def(int64_t since, int64_t until) {
  return KernelDef{{"", "GridSample", since}, until, check_grid_sample, [](const NodeContext& ctx) {
                     const auto mode = parse_grid_mode(ctx.attrs().string_or("mode", default_grid_mode(ctx.opset())), ctx.opset());
                     const auto padding = parse_padding(ctx.attrs().string_or("padding_mode", "zeros"));
                     return make_kernel<GridSampleKernel>(*mode, *padding, ctx.attrs().int_or("align_corners", 0) != 0);
                   }};
}

}  // namespace

std::vector<KernelDef> grid_sample_kernels() {
  return {
      grid_sample_def(16, 19),
      grid_sample_def(20, 0),
  };
}

}  // namespace nxrt::cpu
