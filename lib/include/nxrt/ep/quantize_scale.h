// QuantizeLinear's and DequantizeLinear's scales as every EP reads them: which scale (and zero
// point) element applies to each element of x, for a scale per tensor, per index of `axis`, or
// (opset 21's block_size) per block of indices of `axis` and per index of every other dim; and
// the range an integer quantized type saturates to.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

struct ScaleMap {
  bool per_tensor = true;
  int64_t axis_size = 1, inner = 1, block = 0, scale_axis_size = 1;
  int64_t index(int64_t i) const {
    if (per_tensor) return 0;
    const int64_t a = (i / inner) % axis_size;
    if (block == 0) return a;
    const int64_t outer = i / (inner * axis_size);
    return (outer * scale_axis_size + a / block) * inner + i % inner;
  }
};

// Blocked scales: x's shape with ceil(dim / block) at the axis.
Shape blocked_scale_shape(const Shape& x, std::size_t axis, int64_t block);

// The map of a scale of shape `scale` over x of shape `x` (block 0: per tensor or per axis);
// `op` names the node in the error when the scale does not fit.
Expected<ScaleMap> scale_map(std::string_view op, const Shape& x, const Shape& scale, int64_t axis, int64_t block);

// Whether QuantizeLinear and DequantizeLinear of `opset` take quantized type t: int8 and uint8
// from opset 10, int16 and uint16 from 21, and the float8 types, int4, uint4, float4e2m1, int2
// and uint2 from the opset that introduced them (float8e8m0 is not a quantized type).
bool is_quantized_type(DType t, int64_t opset);

// The values an integer quantized type holds (int8, uint8, int16, uint16, int4, uint4, int2,
// uint2; uint8's for any other type).
std::pair<int32_t, int32_t> quantized_integer_range(DType t);

}  // namespace nxrt
