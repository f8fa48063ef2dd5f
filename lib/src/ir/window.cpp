// Window attribute parsing, checking and output-size arithmetic (ONNX Conv/Pool rules).
#include "nxrt/ir/window.h"

#include <algorithm>

namespace nxrt {

WindowAttrs read_window_attrs(const AttributeMap& attrs, std::size_t spatial_rank) {
  WindowAttrs w;
  w.auto_pad = attrs.string_or("auto_pad", "NOTSET");
  w.kernel = attrs.ints_or("kernel_shape", {});
  w.strides = attrs.ints_or("strides", std::vector<int64_t>(spatial_rank, 1));
  w.dilations = attrs.ints_or("dilations", std::vector<int64_t>(spatial_rank, 1));
  w.pads = attrs.ints_or("pads", std::vector<int64_t>(2 * spatial_rank, 0));
  w.ceil_mode = attrs.int_or("ceil_mode", 0) != 0;
  return w;
}

KernelMatch check_window_attrs(const NodeContext& ctx, std::size_t spatial_rank, bool kernel_required) {
  const std::string& op = ctx.node().op_type;
  const WindowAttrs w = read_window_attrs(ctx.attrs(), spatial_rank);
  NXRT_REQUIRE(
      w.auto_pad == "NOTSET" || w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER" || w.auto_pad == "VALID",
      "{}: auto_pad '{}' is not an ONNX value; use NOTSET, SAME_UPPER, SAME_LOWER or VALID", op, w.auto_pad);
  NXRT_REQUIRE(!kernel_required || ctx.attrs().has("kernel_shape"),
               "{}: the kernel_shape attribute is missing; it is required", op);
  NXRT_REQUIRE(w.kernel.empty() || w.kernel.size() == spatial_rank,
               "{}: kernel_shape {} has {} values for {} spatial dims", op, w.kernel, w.kernel.size(), spatial_rank);
  NXRT_REQUIRE(std::ranges::all_of(w.kernel, [](int64_t k) { return k >= 1; }),
               "{}: kernel_shape {} has a value below 1", op, w.kernel);
  NXRT_REQUIRE(w.strides.size() == spatial_rank, "{}: strides {} has {} values for {} spatial dims", op, w.strides,
               w.strides.size(), spatial_rank);
  NXRT_REQUIRE(std::ranges::all_of(w.strides, [](int64_t s) { return s >= 1; }), "{}: strides {} has a value below 1",
               op, w.strides);
  NXRT_REQUIRE(w.dilations.size() == spatial_rank, "{}: dilations {} has {} values for {} spatial dims", op,
               w.dilations, w.dilations.size(), spatial_rank);
  NXRT_REQUIRE(std::ranges::all_of(w.dilations, [](int64_t d) { return d >= 1; }),
               "{}: dilations {} has a value below 1", op, w.dilations);
  NXRT_REQUIRE(w.pads.size() == 2 * spatial_rank, "{}: pads {} has {} values; expected {} (begins, then ends)", op,
               w.pads, w.pads.size(), 2 * spatial_rank);
  NXRT_REQUIRE(std::ranges::all_of(w.pads, [](int64_t p) { return p >= 0; }),
               "{}: pads {} has a negative value; pads must be >= 0", op, w.pads);
  return KernelMatch::supported();
}

Expected<Window3> plan_window(const WindowAttrs& attrs, std::span<const int64_t> in, std::span<const int64_t> kernel,
                              const std::string& op) {
  const std::size_t rank = in.size();
  // The attributes were read for the rank known at creation; a model whose tensors
  // disagree with it at run time gets an error, not an out-of-range read.
  if (rank < 1 || rank > 3 || kernel.size() != rank || attrs.strides.size() != rank ||
      attrs.dilations.size() != rank || attrs.pads.size() != 2 * rank)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: the input has {} spatial dims but the window attributes (strides {}, dilations {}, "
                            "pads {}) and kernel [{}] do not match",
                            op, rank, attrs.strides, attrs.dilations, attrs.pads, fmt::join(kernel, ",")),
                "the node's attributes disagree with its input's rank", "check the model's shapes and attributes");
  Window3 w{};
  for (std::size_t i = 0; i < rank; ++i) {
    WindowDim& d = w[3 - rank + i];
    d.in = in[i];
    d.kernel = kernel[i];
    d.stride = attrs.strides[i];
    d.dilation = attrs.dilations[i];
    const int64_t span = (d.kernel - 1) * d.dilation + 1;
    if (attrs.auto_pad == "SAME_UPPER" || attrs.auto_pad == "SAME_LOWER") {
      d.out = (d.in + d.stride - 1) / d.stride;
      const int64_t total = std::max<int64_t>(0, (d.out - 1) * d.stride + span - d.in);
      d.pad_begin = attrs.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      d.pad_end = total - d.pad_begin;
      continue;
    }
    if (attrs.auto_pad == "NOTSET") {
      d.pad_begin = attrs.pads[i];
      d.pad_end = attrs.pads[i + rank];
    }
    const int64_t room = d.in + d.pad_begin + d.pad_end - span;
    if (room < 0)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: the window of spatial dim {} (kernel {}, dilation {}) is larger than the "
                              "padded input ({} + pads {} and {})",
                              op, i, d.kernel, d.dilation, d.in, d.pad_begin, d.pad_end),
                  "the output would be empty", "check the input shape against kernel_shape, pads and dilations");
    d.out = (attrs.ceil_mode ? (room + d.stride - 1) / d.stride : room / d.stride) + 1;
    // ceil_mode: a window that would start inside the end padding is dropped.
    if (attrs.ceil_mode && (d.out - 1) * d.stride >= d.in + d.pad_begin) --d.out;
  }
  return w;
}

Shape window_output_shape(int64_t batch, int64_t channels, const Window3& w, std::size_t spatial_rank) {
  Shape out{batch, channels};
  for (std::size_t i = 3 - spatial_rank; i < 3; ++i) out.push_back(w[i].out);
  return out;
}

}  // namespace nxrt
