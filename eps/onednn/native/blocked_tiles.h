// The inner loops nxrt's blocked convolutions share (native/blocked_conv.h,
// native/winograd_conv.h): products of 8-channel-blocked data (nChw8c) with OIhw8i8o weights,
// cut into register tiles of 6 pixels by 2 output blocks.
#pragma once

#include <cstdint>
#include <vector>

#include "native/blocked_conv.h"

namespace nxrt::onednn {

constexpr int64_t kBlock = 8;  // channels per block (nChw8c)

// Offsets (in floats) and sizes of one blocked product, derived once from its shape.
struct BlockedGeometry {
  BlockedConvShape shape;
  int64_t in_blocks = 0, out_blocks = 0, pixels = 0;
  int64_t padded_h = 0, padded_w = 0;  // the input as the tiles read it (with its pads)
  bool padded = false;                 // whether the input is first copied with its pads
  int64_t src_block = 0;               // one input block of the (padded) input
  int64_t weight_block = 0;            // one output block's weights: in_blocks x taps x 8 x 8
  int64_t spans = 1;                   // the input blocks are summed in this many runs
  std::vector<int64_t> taps;           // offset of each tap (kh, kw) from a window's corner
  std::vector<int64_t> corners;        // offset of each output pixel's window corner
};

BlockedGeometry blocked_geometry(const BlockedConvShape& shape);

// The following run inside an OpenMP parallel region, their loops shared among its threads.

// Copies every image of `src` (nChw8c) into `padded` with zero borders, as g.padded_h x
// g.padded_w blocks. Ends with a barrier.
void pad_blocked_input(const BlockedGeometry& g, const float* src, float* padded);

// dst = epilogue(input * weights) for every image: `input` laid out as g describes (padded
// when g.padded), dst nChw8c. Ends without a barrier: a thread may go on to other work
// before the others are done.
void sum_blocked_product(const BlockedGeometry& g, const BlockedConvEpilogue& epilogue, const float* input,
                         const float* weights, const float* bias, float* dst);

}  // namespace nxrt::onednn
