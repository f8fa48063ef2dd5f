// QuantizeLinear's and DequantizeLinear's scale maps (nxrt/ep/quantize_scale.h).
#include "nxrt/ep/quantize_scale.h"

#include <fmt/format.h>

#include <string>

namespace nxrt {

// Blocked scales: x's shape with ceil(dim / block) at the axis.
Shape blocked_scale_shape(const Shape& x, std::size_t axis, int64_t block) {
  Shape s = x;
  s[axis] = (x[axis] + block - 1) / block;
  return s;
}

Expected<ScaleMap> scale_map(std::string_view op, const Shape& x, const Shape& scale, int64_t axis, int64_t block) {
  ScaleMap m;
  if (block == 0 && shape_numel(scale) == 1) return m;
  const auto rank = static_cast<int64_t>(x.size());
  const int64_t a = axis < 0 ? axis + rank : axis;
  const auto bad = [&](std::string why) {
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: the scale {} does not fit x {} with axis {}{}", op, shape_to_string(scale),
                            shape_to_string(x), axis, block ? fmt::format(" and block_size {}", block) : ""),
                std::move(why), "check the axis and block_size attributes and the scale");
  };
  if (a < 0 || a >= rank) return bad("the axis is out of range for x");
  const auto ax = static_cast<std::size_t>(a);
  if (block == 0 && (scale.size() != 1 || scale[0] != x[ax]))
    return bad("a per-axis scale is 1-D with one value per index of the axis");
  if (block > 0 && scale != blocked_scale_shape(x, ax, block))
    return bad(fmt::format("blocked scales have x's shape with ceil(dim / block_size) at the axis: {}",
                           shape_to_string(blocked_scale_shape(x, ax, block))));
  m.per_tensor = false;
  m.axis_size = x[ax];
  m.block = block;
  m.scale_axis_size = block ? scale[ax] : 1;
  for (std::size_t d = ax + 1; d < x.size(); ++d) m.inner *= x[d];
  return m;
}

bool is_quantized_type(DType t, int64_t opset) {
  if (t == DType::kInt8 || t == DType::kUInt8) return true;
  if (t == DType::kInt16 || t == DType::kUInt16) return opset >= 21;
  const bool narrow = is_float8(t) || t == DType::kFloat4E2M1 || is_subbyte_integer(t);
  return narrow && opset >= first_opset_with(t);
}

std::pair<int32_t, int32_t> quantized_integer_range(DType t) {
  switch (t) {
    case DType::kInt8: return {-128, 127};
    case DType::kUInt16: return {0, 65535};
    case DType::kInt16: return {-32768, 32767};
    case DType::kInt4: return {-8, 7};
    case DType::kUInt4: return {0, 15};
    case DType::kInt2:
      return {-2, 1};
    case DType::kUInt2:
      return {0, 3};
    default: return {0, 255};
  }
}

}  // namespace nxrt
