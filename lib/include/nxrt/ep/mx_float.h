// The OCP Microscaling (MX) types ONNX added: FLOAT4E2M1 (opset 23; sign, 2 exponent bits,
// 1 mantissa bit; no infinity or NaN; largest 6) and FLOAT8E8M0 (opset 24; a power of two
// 2^(bits - 127), no sign, no zero; 0xFF is NaN), as ONNX's Cast specifies them; and decoding
// of every float held as a bit pattern.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "nxrt/ep/dtype.h"

namespace nxrt {

// The exact value of float4e2m1 `bits` (the low 4 bits): 0, 0.5, 1, 1.5, 2, 3, 4 or 6, signed.
float float4e2m1_to_float(uint8_t bits);

// `value` rounded to the nearest float4e2m1, ties to even; beyond ±6 (infinities included) it
// saturates to ±6, and NaN gives +6, as ONNX's float4 conversion does. -0 stays -0.
uint8_t float_to_float4e2m1(double value);

// Cast-24's round_mode for float8e8m0: "up" (away from zero, the default), "down" (towards
// zero), "nearest" (ties up).
enum class E8M0Rounding { kUp, kDown, kNearest };
std::optional<E8M0Rounding> e8m0_rounding_from_name(std::string_view name);

// 2^(bits - 127); NaN for 0xFF.
float float8e8m0_to_float(uint8_t bits);

// `value` as float8e8m0, per Cast-24's table. NaN gives NaN. Values above 2^127 (infinity
// included) give 2^127 with `saturate`, else NaN; values below 2^-127 (zero, negatives and
// -infinity included, for which ONNX leaves the result unspecified) give 2^-127 with
// `saturate`, else NaN. Between the two, the power of two `rounding` picks.
uint8_t float_to_float8e8m0(double value, bool saturate, E8M0Rounding rounding);

// The value of a float held as its bit pattern (is_byte_float(t): the float8 types,
// float4e2m1, float8e8m0).
float byte_float_to_float(DType t, uint8_t bits);

// `value` as the float type `t` held as bit patterns, rounded as Cast does: `saturate` applies
// to the float8 types and float8e8m0 (float4e2m1 always saturates), `rounding` to float8e8m0.
uint8_t float_to_byte_float(DType t, double value, bool saturate, E8M0Rounding rounding = E8M0Rounding::kUp);

}  // namespace nxrt
