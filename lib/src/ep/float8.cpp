// float8 decoding and rounding, from the format parameters of ONNX's docs/Float8.md.
#include "nxrt/ep/float8.h"

#include <cmath>
#include <limits>

#include "nxrt/ep/narrow_float.h"

namespace nxrt {
namespace {

struct Float8Format {
  int mant_bits;
  int bias;
  uint8_t max_finite;  // the largest finite magnitude's bits
  bool fnuz;           // NaN is 0x80; no infinity, no negative zero
  bool has_inf;        // E5M2: IEEE-like infinities and NaNs in the top exponent
};

Float8Format format_of(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FNUZ: return {3, 8, 0x7f, true, false};
    case DType::kFloat8E5M2: return {2, 15, 0x7b, false, true};
    case DType::kFloat8E5M2FNUZ: return {2, 16, 0x7f, true, false};
    default: return {3, 7, 0x7e, false, false};  // E4M3FN: NaN is S.1111.111, no infinity
  }
}

uint8_t nan_bits(const Float8Format& f, uint8_t sign) { return f.fnuz ? 0x80 : static_cast<uint8_t>(sign | 0x7f); }

// What a magnitude past the largest finite value becomes.
uint8_t overflow_bits(const Float8Format& f, uint8_t sign, bool saturate) {
  if (saturate) return static_cast<uint8_t>(sign | f.max_finite);
  if (f.has_inf) return static_cast<uint8_t>(sign | 0x7c);
  return nan_bits(f, sign);
}

}  // namespace

float float8_to_float(DType t, uint8_t bits) {
  const Float8Format f = format_of(t);
  const bool negative = (bits & 0x80) != 0;
  const uint8_t magnitude = bits & 0x7f;
  if (f.fnuz && bits == 0x80) return std::numeric_limits<float>::quiet_NaN();
  if (!f.fnuz && !f.has_inf && magnitude == 0x7f) return negative ? -std::numeric_limits<float>::quiet_NaN()
                                                                  : std::numeric_limits<float>::quiet_NaN();
  if (f.has_inf && magnitude >= 0x7c) {
    const float special = magnitude == 0x7c ? std::numeric_limits<float>::infinity()
                                            : std::numeric_limits<float>::quiet_NaN();
    return negative ? -special : special;
  }
  const int exponent = magnitude >> f.mant_bits;
  const int mantissa = magnitude & ((1 << f.mant_bits) - 1);
  const float value = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), 1 - f.bias - f.mant_bits)
                                    : std::ldexp(static_cast<float>(mantissa + (1 << f.mant_bits)),
                                                 exponent - f.bias - f.mant_bits);
  return negative ? -value : value;
}

uint8_t float_to_float8(DType t, double value, bool saturate) {
  const Float8Format f = format_of(t);
  const uint8_t sign = std::signbit(value) ? 0x80 : 0;
  if (std::isnan(value)) return nan_bits(f, sign);
  if (std::isinf(value)) return overflow_bits(f, sign, saturate);
  const uint64_t bits = value == 0 ? 0 : round_to_narrow_float_bits(std::abs(value), f.mant_bits, f.bias);
  if (bits > f.max_finite) return overflow_bits(f, sign, saturate);
  if (bits == 0 && f.fnuz) return 0;
  return static_cast<uint8_t>(sign | bits);
}

}  // namespace nxrt
