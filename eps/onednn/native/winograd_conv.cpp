// The algorithm (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2016):
// the output is cut into 2x2 tiles, each computed from the 4x4 input patch around it. Per tile
// and input block, the patch is transformed (V = B^T d B, additions only); for each of the 16
// positions of V, a product with that position's transformed weights (U = G g G^T) sums over
// the input channels (M = V x U: a 1x1 blocked product, native/blocked_tiles.h, with the tiles
// as its pixels); and each tile's 16 sums become its 2x2 outputs (Y = A^T M A). Three passes
// over the image, the threads sharing each, with the transformed tiles in scratch memory.
#include "native/winograd_conv.h"

#include <omp.h>

#include <array>

#include "native/blocked_tiles.h"
#include "native/lanes.h"

namespace nxrt::onednn {
namespace {

constexpr int64_t kPositions = 16;  // a 4x4 tile
using Vec = Lanes<kBlock>;

// Where everything is, derived once from the shape.
struct WinogradGeometry {
  BlockedConvShape shape;
  int64_t tile_rows = 0, tile_cols = 0, tiles = 0;
  BlockedGeometry input;    // the (padded) input, as a 3x3 convolution over whole tiles reads it
  BlockedGeometry product;  // one position's product: the tiles as pixels of a 1x1 convolution
  int64_t padded_floats = 0, transformed_input_floats = 0, transformed_output_floats = 0;
};

WinogradGeometry winograd_geometry(const BlockedConvShape& s) {
  WinogradGeometry g;
  g.shape = s;
  g.tile_rows = (s.out_h + 1) / 2;
  g.tile_cols = (s.out_w + 1) / 2;
  g.tiles = g.tile_rows * g.tile_cols;
  BlockedConvShape whole_tiles = s;
  whole_tiles.out_h = 2 * g.tile_rows;
  whole_tiles.out_w = 2 * g.tile_cols;
  g.input = blocked_geometry(whole_tiles);
  g.product = blocked_geometry(BlockedConvShape{.batch = 1, .in_channels = s.in_channels,
                                                .out_channels = s.out_channels, .in_h = 1, .in_w = g.tiles,
                                                .out_h = 1, .out_w = g.tiles});
  g.padded_floats = g.input.padded ? s.batch * g.input.in_blocks * g.input.src_block : 0;
  g.transformed_input_floats = kPositions * s.in_channels * g.tiles;
  g.transformed_output_floats = kPositions * s.out_channels * g.tiles;
  return g;
}

// V = B^T d B for the 4x4 patch at `patch` (rows `row` floats apart); position p of V goes
// to v + p * position_stride.
void transform_patch(const float* patch, int64_t row, float* v, int64_t position_stride) {
  Vec d[4][4], t[4][4];
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) d[r][c] = load_lanes<kBlock>(patch + r * row + c * kBlock);
  for (int c = 0; c < 4; ++c) {  // B^T d
    t[0][c] = d[0][c] - d[2][c];
    t[1][c] = d[1][c] + d[2][c];
    t[2][c] = d[2][c] - d[1][c];
    t[3][c] = d[1][c] - d[3][c];
  }
  for (int r = 0; r < 4; ++r) {  // (B^T d) B
    const Vec out[4] = {t[r][0] - t[r][2], t[r][1] + t[r][2], t[r][2] - t[r][1], t[r][1] - t[r][3]};
    for (int c = 0; c < 4; ++c) store_lanes<kBlock>(v + (r * 4 + c) * position_stride, out[c]);
  }
}

// Y = A^T M A for the 16 sums at m + p * position_stride: the tile's 2x2 outputs.
std::array<std::array<Vec, 2>, 2> untransform_tile(const float* m, int64_t position_stride) {
  Vec s[2][4];
  for (int c = 0; c < 4; ++c) {  // A^T M
    const Vec m0 = load_lanes<kBlock>(m + (0 * 4 + c) * position_stride);
    const Vec m1 = load_lanes<kBlock>(m + (1 * 4 + c) * position_stride);
    const Vec m2 = load_lanes<kBlock>(m + (2 * 4 + c) * position_stride);
    const Vec m3 = load_lanes<kBlock>(m + (3 * 4 + c) * position_stride);
    s[0][c] = m0 + m1 + m2;
    s[1][c] = m1 - m2 - m3;
  }
  std::array<std::array<Vec, 2>, 2> y;
  for (int r = 0; r < 2; ++r) {  // (A^T M) A
    y[r][0] = s[r][0] + s[r][1] + s[r][2];
    y[r][1] = s[r][1] - s[r][2] - s[r][3];
  }
  return y;
}

class WinogradConv final : public NativeKernel {
 public:
  WinogradConv(const BlockedConvShape& shape, BlockedConvEpilogue epilogue)
      : g_(winograd_geometry(shape)), epilogue_(epilogue) {}

  void execute(const std::unordered_map<int, dnnl::memory>& args) const override {
    const auto data = [&](int arg) { return static_cast<float*>(args.at(arg).get_data_handle()); };
    const float* src = data(DNNL_ARG_SRC);
    const float* weights = data(DNNL_ARG_WEIGHTS);
    const float* bias = epilogue_.bias ? data(DNNL_ARG_BIAS) : nullptr;
    float* dst = data(DNNL_ARG_DST);
    float* scratch = data(DNNL_ARG_SCRATCHPAD);
    float* padded = scratch;
    float* v = scratch + g_.padded_floats;
    float* m = v + g_.transformed_input_floats;
    const BlockedConvShape& s = g_.shape;
    const BlockedGeometry& in = g_.input;
    const BlockedGeometry& product = g_.product;
    const int64_t in_position = product.in_blocks * product.src_block;  // one position of V
    const int64_t out_position = product.out_blocks * g_.tiles * kBlock;  // one position of M
    const int64_t weight_position = product.out_blocks * product.weight_block;
    const BlockedConvEpilogue none;
#pragma omp parallel
    {
      if (in.padded) pad_blocked_input(in, src, padded);
      const float* input = in.padded ? padded : src;
      for (int64_t n = 0; n < s.batch; ++n) {
        const float* image = input + n * in.in_blocks * in.src_block;
#pragma omp for schedule(static)
        for (int64_t row = 0; row < in.in_blocks * g_.tile_rows; ++row) {
          const int64_t ib = row / g_.tile_rows, i = row % g_.tile_rows;
          for (int64_t j = 0; j < g_.tile_cols; ++j) {
            const float* patch = image + ib * in.src_block + (2 * i * in.padded_w + 2 * j) * kBlock;
            const int64_t t = i * g_.tile_cols + j;
            transform_patch(patch, in.padded_w * kBlock, v + (ib * g_.tiles + t) * kBlock, in_position);
          }
        }
        for (int64_t p = 0; p < kPositions; ++p)
          sum_blocked_product(product, none, v + p * in_position, weights + p * weight_position, nullptr,
                              m + p * out_position);
#pragma omp barrier
        float* out = dst + n * product.out_blocks * s.out_h * s.out_w * kBlock;
#pragma omp for schedule(static)
        for (int64_t row = 0; row < product.out_blocks * g_.tile_rows; ++row) {
          const int64_t ob = row / g_.tile_rows, i = row % g_.tile_rows;
          const Vec shift = bias ? load_lanes<kBlock>(bias + ob * kBlock) : Vec{};
          for (int64_t j = 0; j < g_.tile_cols; ++j) {
            const int64_t t = i * g_.tile_cols + j;
            const auto y = untransform_tile(m + (ob * g_.tiles + t) * kBlock, out_position);
            for (int64_t r = 0; r < 2 && 2 * i + r < s.out_h; ++r)
              for (int64_t c = 0; c < 2 && 2 * j + c < s.out_w; ++c) {
                float* o = out + ((ob * s.out_h + 2 * i + r) * s.out_w + 2 * j + c) * kBlock;
                Vec value = y[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] + shift;
                if (epilogue_.sum) value += load_lanes<kBlock>(o);
                if (epilogue_.relu) value = value > 0.0f ? value : Vec{};
                store_lanes<kBlock>(o, value);
              }
          }
        }
      }
    }
  }

  std::string name() const override { return "nxrt:winograd_2x2_3x3:nChw8c"; }

 private:
  WinogradGeometry g_;
  BlockedConvEpilogue epilogue_;
};

}  // namespace

bool winograd_conv_supports(const BlockedConvShape& s) {
  return blocked_conv_supports(s) && s.kernel_h == 3 && s.kernel_w == 3 && s.stride_h == 1 && s.stride_w == 1;
}

int64_t winograd_conv_scratch_floats(const BlockedConvShape& shape) {
  const WinogradGeometry g = winograd_geometry(shape);
  return g.padded_floats + g.transformed_input_floats + g.transformed_output_floats;
}

std::vector<float> winograd_weights(const BlockedConvShape& s, const float* oihw) {
  // G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
  constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const int64_t in_blocks = s.in_channels / kBlock, out_blocks = s.out_channels / kBlock;
  std::vector<float> u(static_cast<std::size_t>(kPositions * s.out_channels * s.in_channels));
  for (int64_t o = 0; o < s.out_channels; ++o)
    for (int64_t c = 0; c < s.in_channels; ++c) {
      const float* g = oihw + (o * s.in_channels + c) * 9;
      double gg[4][3] = {};  // G g
      for (int r = 0; r < 4; ++r)
        for (int k = 0; k < 3; ++k)
          for (int j = 0; j < 3; ++j) gg[r][k] += kG[r][j] * g[j * 3 + k];
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; ++q) {  // (G g) G^T
          double value = 0;
          for (int k = 0; k < 3; ++k) value += gg[r][k] * kG[q][k];
          const int64_t p = r * 4 + q;
          const int64_t at = ((p * out_blocks + o / kBlock) * in_blocks + c / kBlock) * kBlock * kBlock +
                             (c % kBlock) * kBlock + o % kBlock;
          u[static_cast<std::size_t>(at)] = static_cast<float>(value);
        }
    }
  return u;
}

std::shared_ptr<const NativeKernel> make_winograd_conv(const BlockedConvShape& shape, BlockedConvEpilogue epilogue) {
  return std::make_shared<WinogradConv>(shape, epilogue);
}

}  // namespace nxrt::onednn
