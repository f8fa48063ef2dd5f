// The ONNX float8 types (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ): decoding
// their bit patterns and rounding values into them as ONNX's Cast-19 specifies.
#pragma once

#include <cstdint>

#include "nxrt/ep/dtype.h"

namespace nxrt {

// The exact value of float8 `bits` of type `t` (every float8 value is a float). NaN patterns
// give a quiet NaN, E5M2's infinities infinity.
float float8_to_float(DType t, uint8_t bits);

// `value` rounded to the nearest float8 of type `t`, ties to even. Out of range ([x] beyond
// the largest finite value) and infinities give the largest finite value with `saturate`;
// without it, E5M2 gives infinity and the other types NaN. NaN gives NaN. The FNUZ types have
// no negative zero: a value that rounds to zero gives +0.
uint8_t float_to_float8(DType t, double value, bool saturate);

}  // namespace nxrt
