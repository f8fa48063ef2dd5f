// MaxPool over 1-D and 2-D windows, computed by nxrt on channel-blocked data (oneDNN's nCw8c,
// nChw8c, nChw16c...) and on channels-last data. oneDNN 2.6's jit pooling on these layouts
// takes about four times as long as this loop (0.59 against 0.15 ms for ResNet's first
// MaxPool on one AVX2 core), and that was most of SqueezeNet's gap to ONNX Runtime.
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "native/native_kernel.h"

namespace nxrt::onednn {

// One spatial dim of the window, in ONNX's terms (dilation 1: none).
struct MaxPoolDim {
  int64_t in, out, kernel, stride, dilation, pad_begin;
};

struct NativeMaxPool {
  std::shared_ptr<const NativeKernel> kernel;  // reads DNNL_ARG_SRC, writes DNNL_ARG_DST
  memory::desc dst_md;                         // the output, in the source's layout
};

// The kernel for f32 source `src_md` (rank 3 or 4) and one MaxPoolDim per spatial dim, or
// nullopt when the source is not channel-blocked or channels-last (plain data stays with
// oneDNN, whose pooling then picks a layout by timing).
std::optional<NativeMaxPool> make_native_max_pool(const memory::desc& src_md, std::span<const MaxPoolDim> dims);

}  // namespace nxrt::onednn
