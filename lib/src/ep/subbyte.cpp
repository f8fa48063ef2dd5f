// Packing and wrapping of the sub-byte element types.
#include "nxrt/ep/subbyte.h"

namespace nxrt {
namespace {

bool is_signed_subbyte(DType t) { return t == DType::kInt4 || t == DType::kInt2; }

uint8_t low_bits_mask(DType t) { return static_cast<uint8_t>((1u << subbyte_bits(t)) - 1); }

// The element in the low bits of `bits`, sign-extended for the signed integers.
uint8_t element_of(DType t, uint8_t bits) {
  const int width = subbyte_bits(t);
  const auto value = static_cast<uint8_t>(bits & low_bits_mask(t));
  const bool negative = is_signed_subbyte(t) && (value >> (width - 1)) != 0;
  return negative ? static_cast<uint8_t>(value | ~low_bits_mask(t)) : value;
}

}  // namespace

void pack_subbyte(DType t, const uint8_t* elements, std::size_t n, uint8_t* packed) {
  const int width = subbyte_bits(t);
  const std::size_t per_byte = 8 / static_cast<std::size_t>(width);
  for (std::size_t byte = 0; byte * per_byte < n; ++byte) {
    uint8_t value = 0;
    for (std::size_t k = 0; k < per_byte && byte * per_byte + k < n; ++k)
      value = static_cast<uint8_t>(value | (elements[byte * per_byte + k] & low_bits_mask(t)) << (k * width));
    packed[byte] = value;
  }
}

void unpack_subbyte(DType t, const uint8_t* packed, std::size_t n, uint8_t* elements) {
  const int width = subbyte_bits(t);
  const std::size_t per_byte = 8 / static_cast<std::size_t>(width);
  for (std::size_t i = 0; i < n; ++i)
    elements[i] = element_of(t, static_cast<uint8_t>(packed[i / per_byte] >> ((i % per_byte) * width)));
}

uint8_t wrap_to_subbyte(DType t, int64_t v) { return element_of(t, static_cast<uint8_t>(static_cast<uint64_t>(v))); }

int64_t subbyte_min(DType t) { return is_signed_subbyte(t) ? -(int64_t{1} << (subbyte_bits(t) - 1)) : 0; }

int64_t subbyte_max(DType t) {
  const int width = subbyte_bits(t);
  return is_signed_subbyte(t) ? (int64_t{1} << (width - 1)) - 1 : (int64_t{1} << width) - 1;
}

}  // namespace nxrt
