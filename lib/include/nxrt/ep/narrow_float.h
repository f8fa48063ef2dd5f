// Rounding a double into a narrower binary float format (float16, bfloat16, the float8 types)
// in integer arithmetic, so that there is no double rounding through float.
#pragma once

#include <bit>
#include <cstdint>

namespace nxrt {

// The bits (exponent and mantissa, no sign) of `magnitude` rounded to nearest even in a format
// with `mant_bits` mantissa bits and exponent bias `bias`, without an upper limit: the caller
// decides what a result past its largest finite value becomes. `magnitude` is finite and not
// negative; zero, double subnormals and anything below half the smallest subnormal give 0.
inline uint64_t round_to_narrow_float_bits(double magnitude, int mant_bits, int bias) {
  const uint64_t x = std::bit_cast<uint64_t>(magnitude);
  const int exponent = static_cast<int>(x >> 52) - 1023;
  if (exponent < -bias - mant_bits) return 0;
  const uint64_t mantissa = (x & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  int biased = exponent + bias;
  int shift = 52 - mant_bits;
  if (biased <= 0) {
    shift += 1 - biased;
    biased = 0;
  }
  uint64_t q = mantissa >> shift;
  const uint64_t rest = mantissa & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (q & 1))) ++q;
  // A normal q carries the implicit bit, which adding onto (biased - 1) turns into the
  // exponent; a rounding carry moves to the next binade (or past the largest) by itself.
  return biased > 0 ? (static_cast<uint64_t>(biased - 1) << mant_bits) + q : q;
}

}  // namespace nxrt
