// float4e2m1 and float8e8m0 conversions, from the formats' definitions in ONNX's docs.
#include "nxrt/ep/mx_float.h"

#include <cmath>
#include <limits>

#include "nxrt/ep/float8.h"
#include "nxrt/ep/narrow_float.h"

namespace nxrt {
namespace {

constexpr uint8_t kFloat4Sign = 0x8;
constexpr uint8_t kFloat4Max = 0x7;  // 0.11.1: 6
constexpr uint8_t kE8M0Nan = 0xff;
constexpr uint8_t kE8M0Max = 0xfe;  // 2^127
constexpr uint8_t kE8M0Min = 0x00;  // 2^-127

}  // namespace

float float4e2m1_to_float(uint8_t bits) {
  const int exponent = (bits >> 1) & 0x3;
  const int mantissa = bits & 0x1;
  const float magnitude = exponent == 0 ? 0.5f * static_cast<float>(mantissa)
                                        : std::ldexp(1.0f + 0.5f * static_cast<float>(mantissa), exponent - 1);
  return (bits & kFloat4Sign) ? -magnitude : magnitude;
}

uint8_t float_to_float4e2m1(double value) {
  if (std::isnan(value)) return kFloat4Max;
  const uint8_t sign = std::signbit(value) ? kFloat4Sign : 0;
  if (std::isinf(value)) return static_cast<uint8_t>(sign | kFloat4Max);
  const uint64_t bits = value == 0 ? 0 : round_to_narrow_float_bits(std::abs(value), 1, 1);
  return static_cast<uint8_t>(sign | (bits > kFloat4Max ? kFloat4Max : bits));
}

std::optional<E8M0Rounding> e8m0_rounding_from_name(std::string_view name) {
  if (name == "up") return E8M0Rounding::kUp;
  if (name == "down") return E8M0Rounding::kDown;
  if (name == "nearest") return E8M0Rounding::kNearest;
  return std::nullopt;
}

float float8e8m0_to_float(uint8_t bits) {
  if (bits == kE8M0Nan) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

uint8_t float_to_float8e8m0(double value, bool saturate, E8M0Rounding rounding) {
  if (std::isnan(value)) return kE8M0Nan;
  if (value > 0x1p127) return saturate ? kE8M0Max : kE8M0Nan;
  if (!(value >= 0x1p-127)) return saturate ? kE8M0Min : kE8M0Nan;
  // value = fraction * 2^exponent with fraction in [1, 2).
  int exponent = 0;
  const double fraction = 2 * std::frexp(value, &exponent);
  --exponent;
  const bool next_power = rounding == E8M0Rounding::kUp     ? fraction > 1
                          : rounding == E8M0Rounding::kDown ? false
                                                            : fraction >= 1.5;
  return static_cast<uint8_t>(exponent + (next_power ? 1 : 0) + 127);
}

float byte_float_to_float(DType t, uint8_t bits) {
  if (t == DType::kFloat4E2M1) return float4e2m1_to_float(bits);
  if (t == DType::kFloat8E8M0) return float8e8m0_to_float(bits);
  return float8_to_float(t, bits);
}

uint8_t float_to_byte_float(DType t, double value, bool saturate, E8M0Rounding rounding) {
  if (t == DType::kFloat4E2M1) return float_to_float4e2m1(value);
  if (t == DType::kFloat8E8M0) return float_to_float8e8m0(value, saturate, rounding);
  return float_to_float8(t, value, saturate);
}

}  // namespace nxrt
