// The channels-last depthwise convolution of QLinearConv and ConvInteger (one output channel per
// input channel, X and the output N x spatial... x C): W prepared once (DepthwiseWeights), then
// rows of output pixels, each adding its taps across all channels in vectors (depthwise_rows).
//
// Where AVX-512 VNNI and VBMI are built and every weight fits int8, blocks of 16 channels go
// through vpdpbusd, four taps of a kernel row at a time: each input row is first interleaved once
// for every output column (the four taps' values of a channel side by side, the layout vpdpbusd
// multiplies), then each output pixel is one vpdpbusd per quad of taps and block, straight from
// that row. The channels past the last block, and every channel elsewhere, go a tap at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "common/aligned_buffer.h"
#include "nxrt/ir/window.h"

namespace nxrt::cpu {

// W ([C, 1, kernel...]) as depthwise_rows multiplies it: by tap, then channel, minus W's zero
// points, and per channel -x_zp times its weights' sum to start the sums from (so each tap
// multiplies X as it is, and a tap in the padding, reading x_zp, adds nothing); with vpdpbusd,
// each kernel row's taps also in quads (padded with zero weights) of 64-byte vectors holding 16
// channels' four weights, for X moved to uint8 (int8 X plus 128), with their own starts.
struct DepthwiseWeights {
  int32_t x_zero = 0;  // the x_zp the starts take out
  int64_t kernel_rows = 0, kernel_width = 0, channels = 0;
  std::vector<int32_t> by_tap, start;  // [tap][channel]; per channel
  int64_t row_quads = 0, blocks = 0;   // vpdpbusd: quads per kernel row, blocks of 16 channels (none: not used)
  AlignedBuffer<int8_t> quad_weights;  // [kernel row][quad][block][channel of the block][tap of the quad]
  std::vector<int32_t> quad_start;     // per channel of the blocks

  // W of `channels` channels with a kernel of `kernel_rows` rows (depth x height) of
  // `kernel_width` taps; w_zero has no value (zero), one, or one per channel.
  template <class TX, class TW>
  DepthwiseWeights(const TW* w, const std::vector<int32_t>& w_zero, TX x_zp, int64_t kernel_rows,
                   int64_t kernel_width, int64_t channels);

  int64_t taps() const { return kernel_rows * kernel_width; }
  // Whether these were prepared for a convolution of this x_zp, window and channel count.
  bool fit(int32_t x_zp, const Window3& window, int64_t c) const;
};

// Where depthwise_rows puts the sums of output pixel o: requantized, y = saturate(round((sum +
// bias[c]) * scale[c]) + zero) as QLinearConv does, to channels-last bytes (int8 where
// `is_signed`, else uint8) at requantized + o * C; else as int32 to planes[c * plane + o].
struct DepthwiseOutput {
  void* requantized = nullptr;
  bool is_signed = false;
  const float* scale = nullptr;   // per channel
  const int32_t* bias = nullptr;  // per channel, or none
  float zero = 0;
  int32_t* planes = nullptr;
  int64_t plane = 0;
};

// Output rows [r0, r1) (a row: one output index along depth and height, all of width) of the
// depthwise convolution of one image `x` (channels-last, TX uint8 or int8) through `window`.
template <class TX>
void depthwise_rows(const Window3& window, const TX* x, const DepthwiseWeights& w, const DepthwiseOutput& out,
                    int64_t r0, int64_t r1);

}  // namespace nxrt::cpu
