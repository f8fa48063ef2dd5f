// The legacy (opset 1-6) broadcast attributes of the binary elementwise ops, float or float16
// tensors read as floats, a bias added to rows.
#include "common/elementwise.h"

#include <algorithm>

namespace nxrt::cpu {

std::vector<float> float_or_half_as_floats(const Tensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  if (t.dtype() == DType::kFloat32) std::copy_n(t.data_as<float>(), t.numel(), out.data());
  else halves_to_floats(t.data_as<uint16_t>(), out.data(), t.numel());
  return out;
}

LegacyBroadcast LegacyBroadcast::from(const NodeContext& ctx) {
  LegacyBroadcast l;
  if (ctx.opset() >= 7) return l;
  l.legacy = true;
  l.broadcast = ctx.attrs().int_or("broadcast", 0) != 0;
  l.axis = ctx.attrs().get_int("axis");
  return l;
}

Expected<Shape> align_legacy_shape(std::string_view op, const LegacyBroadcast& legacy, const Shape& a,
                                   const Shape& b) {
  if (!legacy.legacy || a == b) return b;
  auto mismatch = [&](std::string why) -> Expected<Shape> {
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: input shapes {} and {} do not match", op, shape_to_string(a), shape_to_string(b)),
                std::move(why), "fix the shapes the model feeds to the node");
  };
  if (!legacy.broadcast) return mismatch("broadcast is 0, which needs equal shapes at opsets below 7");
  if (shape_numel(b) == 1) return b;
  const auto rank_a = static_cast<int64_t>(a.size());
  const auto rank_b = static_cast<int64_t>(b.size());
  int64_t axis = legacy.axis.value_or(rank_a - rank_b);
  if (axis < 0) axis += rank_a;
  if (axis < 0 || axis + rank_b > rank_a)
    return mismatch(fmt::format("B of rank {} does not fit into A of rank {} at axis {}", rank_b, rank_a, axis));
  Shape aligned(a.size(), 1);
  for (int64_t i = 0; i < rank_b; ++i) {
    const int64_t d = b[static_cast<std::size_t>(i)];
    const int64_t ad = a[static_cast<std::size_t>(axis + i)];
    if (d != ad && d != 1)
      return mismatch(fmt::format("B's dim {} is {} but A's dim {} is {}; legacy broadcasting aligns B's dims "
                                  "with A's from axis {}", i, d, axis + i, ad, axis));
    aligned[static_cast<std::size_t>(axis + i)] = d;
  }
  return aligned;
}

KernelMatch require_legacy_broadcastable(const NodeContext& ctx, const LegacyBroadcast& legacy) {
  if (!legacy.legacy) return require_broadcastable(ctx, {0, 1});
  const auto a = ctx.input_static_shape(0);
  const auto b = ctx.input_static_shape(1);
  if (!a || !b) return KernelMatch::supported();
  auto aligned = align_legacy_shape(ctx.node().op_type, legacy, *a, *b);
  NXRT_REQUIRE(aligned.has_value(), "{} ({}); fix the shapes the model feeds to the node",
               aligned ? std::string() : aligned.error().what, aligned ? std::string() : aligned.error().why);
  return KernelMatch::supported();
}

}  // namespace nxrt::cpu
