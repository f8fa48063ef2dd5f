// Pad (constant, edge, reflect, wrap; negative pads crop), CenterCropPad and Tile: copies whose
// every output element reads one input element (or Pad's value) at a remapped coordinate.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "nxrt/ep/center_crop_pad.h"
#include "nxrt/ep/narrow_float.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The pad kernel's mode argument (kernel_library.cpp).
std::optional<int> pad_mode(const std::string& mode, int64_t opset) {
  if (mode == "constant") return 0;
  if (mode == "edge") return 1;
  if (mode == "reflect") return 2;
  if (mode == "wrap" && opset >= 19) return 3;
  return std::nullopt;
}

KernelMatch check_pad(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  const std::string mode = ctx.attrs().string_or("mode", "constant");
  NXRT_REQUIRE(pad_mode(mode, ctx.opset()).has_value(), "Pad: mode '{}' is not one of constant, edge, reflect{} at opset {}",
               mode, ctx.opset() >= 19 ? ", wrap" : "", ctx.opset());
  if (ctx.opset() < 11) {
    NXRT_REQUIRE(ctx.attrs().get_ints("pads").has_value(), "Pad: the pads attribute is missing");
    const DType t = ctx.input_dtype(0);
    NXRT_REQUIRE(ctx.attrs().float_or("value", 0.f) == 0.f || is_cuda_float_or_double(t),
                 "Pad: value={} at opset {} for {} data; this form of Pad is defined for float16, float and double "
                 "(opset 11 takes the value as an input of the data's type)",
                 ctx.attrs().float_or("value", 0.f), ctx.opset(), dtype_name(t));
    return KernelMatch::supported();
  }
  NXRT_REQUIRE(ctx.has_input(1), "Pad: the pads input is missing");
  NXRT_REQUIRE_MATCH(require_ints(ctx, 1, "pads"));
  NXRT_REQUIRE_MATCH(require_ints(ctx, 3, "axes"));
  return KernelMatch::supported();
}

// Pad-2's float value attribute as an element of `dtype` (a float type, check_pad), in the low
// bytes: the pad kernel's fill. float16 and bfloat16 round to nearest even, and past their
// largest finite value become infinity.
uint64_t fill_bits(DType dtype, float value) {
  auto narrow = [value](int mant_bits, int bias, uint64_t inf, uint64_t quiet_nan) -> uint64_t {
    const uint64_t sign = std::signbit(value) ? 0x8000 : 0;  // both are 16 bits wide
    if (std::isnan(value)) return quiet_nan;
    if (std::isinf(value)) return sign | inf;
    return sign | std::min(round_to_narrow_float_bits(std::abs(static_cast<double>(value)), mant_bits, bias), inf);
  };
  switch (dtype) {
    case DType::kFloat64: return std::bit_cast<uint64_t>(static_cast<double>(value));
    case DType::kFloat32: return std::bit_cast<uint32_t>(value);
    case DType::kFloat16: return narrow(10, 15, 0x7c00, 0x7e00);
    case DType::kBFloat16: return narrow(7, 127, 0x7f80, 0x7fc0);
    default: return 0;  // other types pad with zeros only (check_pad)
  }
}

// [begins..., ends...] over every dim of a rank-`rank` input, from pads over `axes` (all
// dims when absent).
Expected<std::vector<int64_t>> full_pads(const StepContext& ctx, const std::vector<int64_t>& pads,
                                         const std::optional<std::vector<int64_t>>& axes, const Shape& shape) {
  const std::size_t rank = shape.size();
  const std::size_t count = axes ? axes->size() : rank;
  if (pads.size() != 2 * count)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: pads has {} entries for {} axes of {}", ctx.where(), pads.size(), count, shape_to_string(shape)),
                "pads holds a begin and an end count per padded axis");
  if (!axes) return pads;
  std::vector<int64_t> full(2 * rank, 0);
  for (std::size_t k = 0; k < count; ++k) {
    const auto a = axis_index(ctx, (*axes)[k], shape);
    if (!a) return std::unexpected(a.error());
    full[*a] = pads[k];
    full[*a + rank] = pads[k + count];
  }
  return full;
}

Expected<void> build_pad(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const int mode = *pad_mode(node.attributes.string_or("mode", "constant"), node.opset);
  const std::string kernel = pad_kernel(b, dtype);
  // Pad-2 has its pads and value as attributes; from 11 they are inputs, the value a scalar the
  // kernel reads where it lies (absent: zero).
  const bool attribute_form = node.opset < 11;
  const std::vector<int64_t> attr_pads = node.attributes.ints_or("pads", {});
  // Pad-2's value attribute, passed as the kernel's fill bits.
  const uint64_t fill = attribute_form ? fill_bits(dtype, node.attributes.float_or("value", 0.f)) : 0;
  const IntsInput pads_input(b.graph(), node, 1), axes_input(b.graph(), node, 3);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    std::vector<int64_t> given = attr_pads;
    std::optional<std::vector<int64_t>> axes;
    if (!attribute_form) {
      auto pads = pads_input.read(ctx);
      if (!pads) return std::unexpected(pads.error());
      given = pads->value_or(std::vector<int64_t>{});
      auto read_axes = axes_input.read(ctx);
      if (!read_axes) return std::unexpected(read_axes.error());
      axes = std::move(*read_axes);
    }
    auto pads = full_pads(ctx, given, axes, in);
    if (!pads) return std::unexpected(pads.error());
    const std::size_t rank = in.size();
    Shape out(rank), begins(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      begins[d] = (*pads)[d];
      out[d] = in[d] + (*pads)[d] + (*pads)[d + rank];
      if (out[d] < 0)
        return fail(ErrorCode::kRuntime, fmt::format("{}: pads {} crop more than dim {} of {} holds", ctx.where(),
                                                     shape_to_string(*pads), d, shape_to_string(in)));
      if (mode != 0 && in[d] == 0 && out[d] > 0)
        return fail(ErrorCode::kRuntime, fmt::format("{}: cannot pad the empty dim {} of {} in a mode that reads the "
                                                     "input", ctx.where(), d, shape_to_string(in)));
    }
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    const void* value = !attribute_form && ctx.has_input(2) && ctx.input(2).numel() > 0 ? dev(ctx.input(2)) : nullptr;
    KernelArgs args;
    args.add(n).add(static_cast<int>(rank)).add(to_kernel_dims(out)).add(to_kernel_dims(in)).add(to_kernel_dims(begins));
    args.add(mode).ptr(value).add(fill).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

KernelMatch check_tile(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  NXRT_REQUIRE(ctx.has_input(1), "Tile: the repeats input is missing");
  return require_ints(ctx, 1, "repeats");
}

Expected<void> build_tile(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(element_type(dtype));
  const std::string kernel = b.instantiate(
      "tile", t, fmt::format("i64 n, int rank, Dims out_shape, Dims in_shape, Dims in_strides, const {0}* in, {0}* out", t),
      "n, rank, out_shape, in_shape, in_strides, in, out");
  const IntsInput repeats_input(b.graph(), node, 1);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto read = repeats_input.read(ctx);
    if (!read) return std::unexpected(read.error());
    const std::vector<int64_t> repeats = read->value_or(std::vector<int64_t>{});
    if (repeats.size() != in.size())
      return fail(ErrorCode::kRuntime, fmt::format("{}: repeats has {} entries for an input of rank {}", ctx.where(),
                                                   repeats.size(), in.size()),
                  "Tile takes one repeat count per dim");
    Shape out(in.size());
    for (std::size_t d = 0; d < in.size(); ++d) {
      if (repeats[d] < 0)
        return fail(ErrorCode::kRuntime, fmt::format("{}: repeats {} has a negative count", ctx.where(), shape_to_string(repeats)));
      out[d] = in[d] * repeats[d];
    }
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(static_cast<int>(in.size())).add(to_kernel_dims(out)).add(to_kernel_dims(in));
    args.add(to_kernel_dims(contiguous_strides(in))).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

// CenterCropPad-18: input 1 (int32 or int64) gives the sizes of the listed axes (every axis
// when `axes` is absent).
KernelMatch check_center_crop_pad(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_center_crop_pad_node(ctx));
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  return require_max_rank(ctx, 0);
}

// Each listed axis is cropped around its centre or padded with zeros on both sides (the odd
// element at the end): the pad kernel with a begin of (size - dim) / 2, rounded down, which
// crops where it is negative.
Expected<void> build_center_crop_pad(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string kernel = pad_kernel(b, dtype);
  const IntsInput sizes_input(b.graph(), node, 1);
  const std::vector<int64_t> axes_attr = node.attributes.ints_or("axes", {});
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto sizes = sizes_input.read(ctx);
    if (!sizes) return std::unexpected(sizes.error());
    auto plan = plan_center_crop_pad(in, axes_attr, sizes->value_or(std::vector<int64_t>{}));
    if (!plan) return std::unexpected(plan.error());
    auto y = ctx.output(0, dtype, plan->out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(static_cast<int>(in.size())).add(to_kernel_dims(plan->out)).add(to_kernel_dims(in));
    args.add(to_kernel_dims(plan->begins));
    args.add(0).ptr(nullptr).add(uint64_t{0}).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> pad_tile_ops() {
  // Pad: 2 pads and value as attributes; 11 as inputs; 18 axes; 19 wrap mode.
  std::vector<CudaOpDef> ops = make_op_versions("Pad", {2, 11, 13, 18, 19}, check_pad, build_pad);
  ops.push_back(make_op("CenterCropPad", 18, check_center_crop_pad, build_center_crop_pad));
  ops.push_back(make_op("Tile", 6, check_tile, build_tile));
  return ops;
}

}  // namespace nxrt::cuda
