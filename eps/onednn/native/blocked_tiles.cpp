// The loop: the output is cut into tiles of up to 6 pixels by 2 blocks of 8 output channels
// (12 accumulators of AVX2's 16 vector registers; 4x3 and 3x4 tiles measured slower). A tile
// sums, over every input block, tap and lane, a broadcast input value times one weight vector
// per output block. A thread takes a run of output-block pairs and, for each pair, every pixel
// tile: the pair's weights are read from memory once, in order, which the hardware prefetcher
// follows (software prefetches of the next pair made it slower), and stay in cache for the
// pair's other tiles. Wide inputs are summed in spans of input blocks, each small enough to
// stay in L2 while every pair reads it.
#include "native/blocked_tiles.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <utility>

#include "native/lanes.h"

namespace nxrt::onednn {
namespace {

constexpr int kTilePixels = 6;               // pixels per tile
constexpr int kTileBlocks = 2;               // output blocks per tile
constexpr int64_t kSpanFloats = 32 * 1024;  // input summed at a time: a quarter of a 512 KiB L2
using Vec = Lanes<kBlock>;

// One tile's part of the sum: input blocks [in_begin, in_end) of one image.
struct TileSpan {
  const float* src;      // the image's (padded) input
  const float* weights;  // all of them
  const float* bias;
  float* dst;            // the image's output
  int64_t pixel, out_block, in_begin, in_end;
  bool first, last;      // the span is the sum's first (dst not yet a partial sum) or last
};

// kPixels pixels (from `pixel`) by kBlocks output blocks (from `out_block`). A first span
// adds the bias (and dst's value, for a sum), a later one dst's partial sum; the last applies
// the Relu.
template <int kPixels, int kBlocks>
void compute_tile(const BlockedGeometry& g, const BlockedConvEpilogue& epilogue, const TileSpan& t) {
  Vec acc[kPixels][kBlocks] = {};
  std::array<int64_t, kPixels> corner;
  for (int r = 0; r < kPixels; ++r) corner[r] = g.corners[static_cast<std::size_t>(t.pixel + r)];
  const int64_t taps = static_cast<int64_t>(g.taps.size());
  const float* w = t.weights + t.out_block * g.weight_block + t.in_begin * taps * kBlock * kBlock;
  for (int64_t ib = t.in_begin; ib < t.in_end; ++ib) {
    const float* block = t.src + ib * g.src_block;
    for (int64_t tap = 0; tap < taps; ++tap, w += kBlock * kBlock) {
      // Each pixel's input lanes, and each output block's weight rows: constant offsets from
      // these pointers in the unrolled loop below.
      const float* x[kPixels];
      for (int r = 0; r < kPixels; ++r) x[r] = block + g.taps[static_cast<std::size_t>(tap)] + corner[r];
      const float* wb[kBlocks];
      for (int b = 0; b < kBlocks; ++b) wb[b] = w + b * g.weight_block;
#pragma GCC unroll 8
      for (int lane = 0; lane < kBlock; ++lane) {
        Vec wv[kBlocks];
        for (int b = 0; b < kBlocks; ++b) wv[b] = load_lanes<kBlock>(wb[b] + lane * kBlock);
        for (int r = 0; r < kPixels; ++r) {
          const Vec xv = broadcast_lanes<kBlock>(x[r][lane]);
          for (int b = 0; b < kBlocks; ++b) acc[r][b] += xv * wv[b];
        }
      }
    }
  }
  const bool resume = !t.first || epilogue.sum;
  for (int b = 0; b < kBlocks; ++b) {
    float* out = t.dst + (t.out_block + b) * g.pixels * kBlock + t.pixel * kBlock;
    const Vec shift = t.first && epilogue.bias ? load_lanes<kBlock>(t.bias + (t.out_block + b) * kBlock) : Vec{};
    for (int r = 0; r < kPixels; ++r) {
      Vec v = acc[r][b] + shift;
      if (resume) v += load_lanes<kBlock>(out + r * kBlock);
      if (t.last && epilogue.relu) v = v > 0.0f ? v : Vec{};
      store_lanes<kBlock>(out + r * kBlock, v);
    }
  }
}

using TileFn = void (*)(const BlockedGeometry&, const BlockedConvEpilogue&, const TileSpan&);

// tile_fns[p - 1][b - 1]: the tile of p pixels and b blocks.
template <int kP, int... kB>
constexpr std::array<TileFn, kTileBlocks> tiles_of_pixels(std::integer_sequence<int, kB...>) {
  return {&compute_tile<kP, kB + 1>...};
}
template <int... kP>
constexpr std::array<std::array<TileFn, kTileBlocks>, kTilePixels> tile_table(std::integer_sequence<int, kP...>) {
  return {tiles_of_pixels<kP + 1>(std::make_integer_sequence<int, kTileBlocks>{})...};
}
constexpr auto tile_fns = tile_table(std::make_integer_sequence<int, kTilePixels>{});

// Copies one block of one image of `src` into `padded` with zero borders.
void pad_block(const BlockedGeometry& g, const float* src, float* padded) {
  const BlockedConvShape& s = g.shape;
  const int64_t row = g.padded_w * kBlock;
  std::fill_n(padded, s.pad_top * row, 0.0f);
  for (int64_t h = 0; h < s.in_h; ++h) {
    float* out = padded + (s.pad_top + h) * row;
    std::fill_n(out, s.pad_left * kBlock, 0.0f);
    std::copy_n(src + h * s.in_w * kBlock, s.in_w * kBlock, out + s.pad_left * kBlock);
    std::fill(out + (s.pad_left + s.in_w) * kBlock, out + row, 0.0f);
  }
  std::fill(padded + (s.pad_top + s.in_h) * row, padded + g.padded_h * row, 0.0f);
}

}  // namespace

BlockedGeometry blocked_geometry(const BlockedConvShape& s) {
  BlockedGeometry g;
  g.shape = s;
  g.in_blocks = s.in_channels / kBlock;
  g.out_blocks = s.out_channels / kBlock;
  g.pixels = s.out_h * s.out_w;
  // Rows and columns the windows reach, pads included (at least the input's own).
  g.padded_h = std::max((s.out_h - 1) * s.stride_h + s.kernel_h, s.pad_top + s.in_h);
  g.padded_w = std::max((s.out_w - 1) * s.stride_w + s.kernel_w, s.pad_left + s.in_w);
  g.padded = g.padded_h != s.in_h || g.padded_w != s.in_w || s.pad_top != 0 || s.pad_left != 0;
  g.src_block = g.padded_h * g.padded_w * kBlock;
  g.weight_block = g.in_blocks * s.kernel_h * s.kernel_w * kBlock * kBlock;
  g.spans = std::clamp<int64_t>(g.in_blocks * g.src_block / kSpanFloats, 1, g.in_blocks);
  for (int64_t kh = 0; kh < s.kernel_h; ++kh)
    for (int64_t kw = 0; kw < s.kernel_w; ++kw) g.taps.push_back((kh * g.padded_w + kw) * kBlock);
  for (int64_t oh = 0; oh < s.out_h; ++oh)
    for (int64_t ow = 0; ow < s.out_w; ++ow)
      g.corners.push_back((oh * s.stride_h * g.padded_w + ow * s.stride_w) * kBlock);
  return g;
}

void pad_blocked_input(const BlockedGeometry& g, const float* src, float* padded) {
  const BlockedConvShape& s = g.shape;
#pragma omp for schedule(static)
  for (int64_t b = 0; b < s.batch * g.in_blocks; ++b)
    pad_block(g, src + b * s.in_h * s.in_w * kBlock, padded + b * g.src_block);
}

void sum_blocked_product(const BlockedGeometry& g, const BlockedConvEpilogue& epilogue, const float* input,
                         const float* weights, const float* bias, float* dst) {
  const int64_t pairs = (g.out_blocks + kTileBlocks - 1) / kTileBlocks;
  const int64_t tiles = (g.pixels + kTilePixels - 1) / kTilePixels;
  // Enough work items for every thread: pixel tiles split only when pairs are few.
  const int64_t threads = omp_get_num_threads();
  const int64_t chunks = std::clamp<int64_t>((4 * threads + pairs - 1) / pairs, 1, tiles);
  const int64_t items = g.shape.batch * pairs * chunks;
  // Spans of input blocks: each thread sums its tiles over one span after the other, so that
  // a span's input stays in its cache. (Static schedules of equal loops give each thread the
  // same items every time: no barrier is needed between spans.)
  for (int64_t span = 0; span < g.spans; ++span) {
    const int64_t in_begin = span * g.in_blocks / g.spans, in_end = (span + 1) * g.in_blocks / g.spans;
#pragma omp for schedule(static) nowait
    for (int64_t item = 0; item < items; ++item) {
      const int64_t chunk = item % chunks, pair = item / chunks % pairs, n = item / chunks / pairs;
      const int64_t out_block = pair * kTileBlocks;
      const int64_t blocks = std::min<int64_t>(kTileBlocks, g.out_blocks - out_block);
      float* image_dst = dst + n * g.out_blocks * g.pixels * kBlock;
      TileSpan t{input + n * g.in_blocks * g.src_block, weights, bias, image_dst,
                 0, out_block, in_begin, in_end, span == 0, span + 1 == g.spans};
      for (int64_t tile = chunk * tiles / chunks; tile < (chunk + 1) * tiles / chunks; ++tile) {
        // Tiles of even size (49 pixels: 5 and 6, not 8 of 6 and 1 of 1).
        t.pixel = tile * g.pixels / tiles;
        const int64_t count = (tile + 1) * g.pixels / tiles - t.pixel;
        tile_fns[static_cast<std::size_t>(count - 1)][static_cast<std::size_t>(blocks - 1)](g, epilogue, t);
      }
    }
  }
}

}  // namespace nxrt::onednn
