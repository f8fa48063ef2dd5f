// 2-D convolution on 8-channel-blocked data (oneDNN's nChw8c, weights OIhw8i8o), with bias,
// a sum with the destination and Relu fused, computed by nxrt. It is used on AVX2 for
// convolutions of small outputs, whose weights outweigh their pixels (ResNet's last stage):
// there oneDNN 2.6's jit kernels wait on weights streaming from memory, while this kernel
// reads each output block's weights once per thread, in memory order. With the weights not
// in cache, two threads: 0.67 against 0.91 ms for a 2048->512 1x1 convolution on 7x7, 1.45
// against 1.75 ms for a 512->512 3x3 one.
#pragma once

#include <cstdint>
#include <memory>

#include "native/native_kernel.h"

namespace nxrt::onednn {

struct BlockedConvShape {
  int64_t batch = 1, in_channels = 0, out_channels = 0;  // both multiples of 8
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;  // the pads at the end follow from the output's size
};

// What runs after the product, in this order (oneDNN's post-op order): + bias, + the
// destination's previous value (a fused residual Add), max(0, x).
struct BlockedConvEpilogue {
  bool bias = false;
  bool sum = false;
  bool relu = false;
};

// Whether the kernel is fast on this machine: oneDNN's own kernels block channels by 8 here
// (AVX2), and nxrt was compiled for it (NXRT_NATIVE_ARCH).
bool blocked_conv_fast_here();

// Whether the kernel computes this convolution (channels in multiples of 8, no dilation).
bool blocked_conv_supports(const BlockedConvShape& shape);

// Floats of scratch a run needs (the zero-padded input; 0 when the convolution has no pads).
int64_t blocked_conv_scratch_floats(const BlockedConvShape& shape);

// The kernel: reads DNNL_ARG_SRC (nChw8c), DNNL_ARG_WEIGHTS (OIhw8i8o), DNNL_ARG_BIAS (when
// `epilogue.bias`) and DNNL_ARG_SCRATCHPAD (when blocked_conv_scratch_floats > 0); writes
// DNNL_ARG_DST (nChw8c), which it first reads when `epilogue.sum`. Requires
// blocked_conv_supports(shape).
std::shared_ptr<const NativeKernel> make_blocked_conv(const BlockedConvShape& shape, BlockedConvEpilogue epilogue);

}  // namespace nxrt::onednn
