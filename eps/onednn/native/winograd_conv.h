// 3x3 stride-1 convolution on 8-channel-blocked data (nChw8c) by Winograd's F(2x2, 3x3),
// computed by nxrt: 16 multiplies per 2x2 output tile and channel pair instead of 36. oneDNN
// 2.6 has Winograd convolutions only on AVX-512; on AVX2 its direct kernel does 2.25x the
// multiplies. Bias, a sum with the destination and Relu are fused as in the blocked
// convolution (native/blocked_conv.h). The weights are transformed once, at compile time,
// into 16 matrices: 1.78x the memory of the 3x3 weights.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "native/blocked_conv.h"

namespace nxrt::onednn {

// Whether the kernel computes this convolution: a 3x3 kernel, stride 1, channels in multiples
// of 8.
bool winograd_conv_supports(const BlockedConvShape& shape);

// Floats of scratch a run needs: the padded input and the transformed input and output tiles.
int64_t winograd_conv_scratch_floats(const BlockedConvShape& shape);

// The transformed weights from plain OIHW ones (out_channels x in_channels x 3 x 3): 16
// matrices, each laid out as OIhw8i8o weights of a 1x1 convolution.
std::vector<float> winograd_weights(const BlockedConvShape& shape, const float* oihw);

// The kernel: reads DNNL_ARG_SRC (nChw8c), DNNL_ARG_WEIGHTS (winograd_weights), DNNL_ARG_BIAS
// (when `epilogue.bias`) and DNNL_ARG_SCRATCHPAD; writes DNNL_ARG_DST (nChw8c), which it first
// reads when `epilogue.sum`. Requires winograd_conv_supports(shape).
std::shared_ptr<const NativeKernel> make_winograd_conv(const BlockedConvShape& shape, BlockedConvEpilogue epilogue);

}  // namespace nxrt::onednn
