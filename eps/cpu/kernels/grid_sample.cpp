// GridSample (16 on 4-D inputs, 20 on 1 to 6 spatial dimensions): sampling X at normalized grid
// locations with (bi)linear, nearest or (2-D only) bicubic interpolation and zeros, border or
// reflection padding.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string>

#include "common/elementwise.h"
#include "nxrt/ep/interpolation.h"
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

// Opset 20 generalised GridSample to any number of spatial dimensions; the cpu EP runs up to
// kMaxSpatialRank of them, enough for every tap array to live on the stack.
constexpr int64_t kMaxSpatialRank = 6;
constexpr std::size_t kMaxTaps = std::size_t{1} << kMaxSpatialRank;  // linear: 2^r corners; cubic (2-D): 16

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
  NXRT_REQUIRE(!rank || ctx.opset() >= 20 || *rank == 4,
               "GridSample-16: X has rank {}; opset {} defines GridSample on 4-D (N, C, H, W) inputs only; export "
               "with opset 20 or later for volumetric (5-D) inputs",
               *rank, ctx.opset());
  NXRT_REQUIRE(!rank || (*rank >= 3 && *rank <= kMaxSpatialRank + 2),
               "GridSample-20: X has rank {}; the cpu EP supports ranks 3 to {} (N, C and 1 to {} spatial dimensions)",
               *rank, kMaxSpatialRank + 2, kMaxSpatialRank);
  const bool cubic = mode == "bicubic" || mode == "cubic";
  NXRT_REQUIRE(!rank || !cubic || *rank == 4,
               "GridSample-20: mode 'cubic' is defined for 2-D spatial inputs (X of rank 4) only, X has rank {}; "
               "use linear or nearest",
               *rank);
  const auto grid = ctx.input_static_shape(1);
  NXRT_REQUIRE(!rank || !grid || (static_cast<int64_t>(grid->size()) == *rank && grid->back() == *rank - 2),
               "GridSample: grid has shape {}; for X of rank {} expected [N, {} output sizes, {}]",
               shape_to_string(*grid), *rank, *rank - 2, *rank - 2);
  const double taps = mode == "nearest" ? 1 : cubic ? 16 : static_cast<double>(int64_t{1} << (rank ? *rank - 2 : 2));
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

// The spatial sizes of X and the element strides of one (n, c) slice, outermost first.
struct SpatialDims {
  std::array<int64_t, kMaxSpatialRank> size{};
  std::array<int64_t, kMaxSpatialRank> stride{};
  std::size_t rank = 0;

  explicit SpatialDims(const Shape& x) : rank(x.size() - 2) {
    int64_t s = 1;
    for (std::size_t d = rank; d-- > 0;) {
      size[d] = x[d + 2];
      stride[d] = s;
      s *= size[d];
    }
  }
  int64_t volume() const { return rank == 0 ? 1 : size[0] * stride[0]; }
};

// Input offsets and weights for one output location; out-of-range taps are dropped (they
// read as zero).
struct Taps {
  std::array<int64_t, kMaxTaps> offset{};
  std::array<double, kMaxTaps> weight{};
  std::size_t count = 0;
  void add(int64_t offset_value, double weight_value) {
    offset[count] = offset_value;
    weight[count++] = weight_value;
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
  // Bicubic (2-D only) pads each of the 16 taps, not the sampling point; `pixel` is (y, x).
  Taps cubic_taps(const std::array<double, kMaxSpatialRank>& pixel, const SpatialDims& dims) const {
    Taps t;
    const int64_t h = dims.size[0], w = dims.size[1];
    const double x0 = std::floor(pixel[1]), y0 = std::floor(pixel[0]);
    const auto wx = cubic_weights(pixel[1] - x0, -0.75), wy = cubic_weights(pixel[0] - y0, -0.75);
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j) {
        const auto px = static_cast<int64_t>(pad_coordinate(x0 - 1 + static_cast<double>(j), w, padding_, align_));
        const auto py = static_cast<int64_t>(pad_coordinate(y0 - 1 + static_cast<double>(i), h, padding_, align_));
        if (px >= 0 && px < w && py >= 0 && py < h) t.add(py * w + px, wx[j] * wy[i]);
      }
    return t;
  }

  // The grid's last axis lists coordinates innermost first (x, y, z, ...), the reverse of
  // X's spatial axes.
  template <class G>
  Taps taps_at(const G* coords, const SpatialDims& dims) const {
    std::array<double, kMaxSpatialRank> pixel{};
    for (std::size_t d = 0; d < dims.rank; ++d)
      pixel[d] = unnormalize(static_cast<ComputeType<G>>(coords[dims.rank - 1 - d]), dims.size[d], align_);
    if (mode_ == GridMode::kCubic) return cubic_taps(pixel, dims);
    for (std::size_t d = 0; d < dims.rank; ++d) pixel[d] = pad_coordinate(pixel[d], dims.size[d], padding_, align_);
    Taps t;
    if (mode_ == GridMode::kNearest) {
      int64_t offset = 0;
      for (std::size_t d = 0; d < dims.rank; ++d) {
        const auto i = static_cast<int64_t>(std::nearbyint(pixel[d]));
        if (i < 0 || i >= dims.size[d]) return t;
        offset += i * dims.stride[d];
      }
      t.add(offset, 1);
      return t;
    }
    // Linear: corner bit k steps along the k-th innermost axis.
    std::array<int64_t, kMaxSpatialRank> low{};
    std::array<double, kMaxSpatialRank> frac{};
    for (std::size_t d = 0; d < dims.rank; ++d) {
      const double f = std::floor(pixel[d]);
      low[d] = static_cast<int64_t>(f);
      frac[d] = pixel[d] - f;
    }
    for (std::size_t corner = 0; corner < (std::size_t{1} << dims.rank); ++corner) {
      int64_t offset = 0;
      double weight = 1;
      bool inside = true;
      for (std::size_t k = 0; k < dims.rank && inside; ++k) {
        const std::size_t d = dims.rank - 1 - k;
        const bool up = (corner >> k) & 1;
        const int64_t i = low[d] + (up ? 1 : 0);
        inside = i >= 0 && i < dims.size[d];
        offset += i * dims.stride[d];
        weight *= up ? frac[d] : 1 - frac[d];
      }
      if (inside) t.add(offset, weight);
    }
    return t;
  }

  template <class T, class G>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    const Shape& xs = x.shape();
    const Shape& gs = grid.shape();
    const auto spatial = static_cast<int64_t>(xs.size()) - 2;
    if (spatial < 1 || spatial > kMaxSpatialRank || gs.size() != xs.size() || gs[0] != xs[0] ||
        gs.back() != spatial || (mode_ == GridMode::kCubic && spatial != 2))
      return fail(ErrorCode::kRuntime,
                  fmt::format("GridSample: X {} and grid {} do not have shapes [N, C, D1, ..., Dr] and "
                              "[N, D1_out, ..., Dr_out, r] with r from 1 to {} (2 for cubic)",
                              shape_to_string(xs), shape_to_string(gs), kMaxSpatialRank));
    const SpatialDims dims(xs);
    const int64_t n = xs[0], c = xs[1];
    Shape ys{n, c};
    ys.insert(ys.end(), gs.begin() + 1, gs.end() - 1);
    auto y = ctx.output(0, x.dtype(), ys);
    if (!y) return std::unexpected(std::move(y.error()));
    int64_t out_points = 1;
    for (auto it = gs.begin() + 1; it != gs.end() - 1; ++it) out_points *= *it;
    const int64_t row_len = gs[gs.size() - 2];
    if (n * out_points == 0) return {};
    const T* src = x.data_as<T>();
    const G* g = grid.data_as<G>();
    T* dst = y->mut_as<T>();
    const int64_t in_volume = dims.volume();
    ctx.parallel().for_range(n * out_points / row_len, 1, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t b = row * row_len / out_points;
        for (int64_t i = row * row_len; i < (row + 1) * row_len; ++i) {
          const Taps t = taps_at(g + i * spatial, dims);
          const int64_t at = i - b * out_points;
          for (int64_t ch = 0; ch < c; ++ch) {
            const T* slice = src + (b * c + ch) * in_volume;
            double v = 0;
            for (std::size_t k = 0; k < t.count; ++k)
              v += t.weight[k] * static_cast<double>(static_cast<ComputeType<T>>(slice[t.offset[k]]));
            dst[(b * c + ch) * out_points + at] = static_cast<T>(static_cast<ComputeType<T>>(v));
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
