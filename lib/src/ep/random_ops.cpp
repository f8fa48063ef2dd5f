// The random ops' attributes (nxrt/ep/random_ops.h).
#include "nxrt/ep/random_ops.h"

#include <fmt/format.h>

#include <algorithm>

namespace nxrt {

std::optional<DType> random_dtype_attr(const AttributeMap& attrs, DType fallback) {
  const auto code = attrs.get_int("dtype");
  if (!code) return fallback;
  return dtype_from_onnx(static_cast<int32_t>(*code));
}

std::optional<DType> random_fill_dtype(const NodeContext& ctx) {
  const bool like = ctx.node().op_type.ends_with("Like");
  return random_dtype_attr(ctx.attrs(), like ? ctx.input_dtype(0) : DType::kFloat32);
}

std::string random_dtype_name(const NodeContext& ctx, const std::optional<DType>& t) {
  return t ? std::string(dtype_name(*t)) : fmt::format("code {}", ctx.attrs().int_or("dtype", 0));
}

KernelMatch check_random_fill_node(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  if (!op.ends_with("Like")) {
    const auto shape = ctx.attrs().get_ints("shape");
    NXRT_REQUIRE(shape, "{}: the ints attribute shape is required", op);
    NXRT_REQUIRE(std::ranges::all_of(*shape, [](int64_t d) { return d >= 0; }), "{}: shape {} has a negative dim", op,
                 shape_to_string(*shape));
  }
  if (!op.starts_with("RandomNormal")) {
    const float low = ctx.attrs().float_or("low", 0), high = ctx.attrs().float_or("high", 1);
    NXRT_REQUIRE(low <= high, "{}: low {} is above high {}", op, low, high);
  }
  return KernelMatch::supported();
}

KernelMatch check_multinomial_node(const NodeContext& ctx) {
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 2, "Multinomial: input has rank {}; expected [batch_size, class_size]", *rank);
  const int64_t samples = ctx.attrs().int_or("sample_size", 1);
  NXRT_REQUIRE(samples >= 1, "Multinomial: sample_size {} must be at least 1", samples);
  return KernelMatch::supported();
}

KernelMatch check_dropout_node(const NodeContext& ctx) {
  const float ratio = ctx.attrs().float_or("ratio", 0.5f);
  NXRT_REQUIRE(ratio >= 0 && ratio <= 1, "Dropout: ratio {} is outside [0, 1]", ratio);
  return KernelMatch::supported();
}

}  // namespace nxrt
