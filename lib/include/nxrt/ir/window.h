// Sliding-window geometry of ONNX Conv and the pooling ops (every EP reads them alike): kernel, strides, dilations,
// pads, auto_pad and ceil_mode resolved into per-dimension output sizes and pads.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// The window attributes of a node, with ONNX's defaults filled in.
struct WindowAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel;     // empty when the attribute is absent (Conv infers it)
  std::vector<int64_t> strides;    // one per spatial dim
  std::vector<int64_t> dilations;  // one per spatial dim
  std::vector<int64_t> pads;       // begins then ends, 2 per spatial dim
  bool ceil_mode = false;
};

WindowAttrs read_window_attrs(const AttributeMap& attrs, std::size_t spatial_rank);

// Declines unless the attributes fit `spatial_rank` dims: lengths, positive strides and
// dilations, non-negative pads, a known auto_pad, and kernel_shape present when required.
KernelMatch check_window_attrs(const NodeContext& ctx, std::size_t spatial_rank, bool kernel_required);

// LpPool's and GlobalLpPool's exponent: a float attribute at opset 1, an int from opset 2
// (default 2 in both).
inline double lp_pool_exponent(const AttributeMap& attrs, int64_t opset) {
  if (opset < 2) return attrs.float_or("p", 2.f);
  return static_cast<double>(attrs.int_or("p", 2));
}

// One spatial dimension of a window op, resolved for a concrete input size.
struct WindowDim {
  int64_t in = 1;
  int64_t out = 1;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};

// Always three dims (depth, height, width): 1-D and 2-D ops get leading dims of size 1,
// so kernels have one loop nest for every spatial rank.
using Window3 = std::array<WindowDim, 3>;

// Whether each output reads only the input at its own position (kernel 1, stride 1, no
// padding): a convolution's input then already is its GEMM operand, unrolled.
inline bool is_pointwise(const Window3& window) {
  return std::ranges::all_of(
      window, [](const WindowDim& d) { return d.kernel == 1 && d.stride == 1 && d.pad_begin == 0 && d.pad_end == 0; });
}

// Whether a convolution of `group` groups reads one input channel per group (weights
// [M, 1, kernel...]): each output channel then slides over a single input plane.
inline bool is_depthwise(int64_t group, int64_t group_in_channels) { return group > 1 && group_in_channels == 1; }

// The outputs [first, second) whose window tap `tap` (0 <= tap < kernel) reads inside the
// input: o * stride - pad_begin + tap * dilation in [0, in).
inline std::pair<int64_t, int64_t> valid_outputs(const WindowDim& d, int64_t tap) {
  const int64_t offset = tap * d.dilation - d.pad_begin;  // input index of output 0's tap
  // o >= ceil(-offset / stride) and o * stride + offset < in.
  const int64_t first = offset >= 0 ? 0 : (-offset + d.stride - 1) / d.stride;
  const int64_t limit = d.in - offset;
  const int64_t second = limit <= 0 ? 0 : std::min(d.out, (limit + d.stride - 1) / d.stride);
  return {std::min(first, second), second};
}

// Resolves output sizes and pads for the spatial input dims `in` and kernel sizes `kernel`;
// fails (kRuntime) when an output size would be below 1. `op` names the node in messages.
Expected<Window3> plan_window(const WindowAttrs& attrs, std::span<const int64_t> in, std::span<const int64_t> kernel,
                              const std::string& op);

// The output shape: N, `channels`, then the spatial output sizes of the last `spatial_rank` dims.
Shape window_output_shape(int64_t batch, int64_t channels, const Window3& w, std::size_t spatial_rank);

}  // namespace nxrt
