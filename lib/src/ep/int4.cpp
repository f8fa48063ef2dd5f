// Packing and wrapping of int4 and uint4 elements.
#include "nxrt/ep/int4.h"

namespace nxrt {

void pack_4bit(const uint8_t* elements, std::size_t n, uint8_t* packed) {
  for (std::size_t i = 0; i < n; i += 2) {
    const auto low = static_cast<uint8_t>(elements[i] & 0x0f);
    const auto high = static_cast<uint8_t>(i + 1 < n ? (elements[i + 1] & 0x0f) << 4 : 0);
    packed[i / 2] = static_cast<uint8_t>(low | high);
  }
}

uint8_t wrap_to_4bit(DType t, int64_t v) {
  const auto nibble = static_cast<uint8_t>(static_cast<uint64_t>(v) & 0x0f);
  if (t == DType::kInt4 && (nibble & 0x08)) return static_cast<uint8_t>(nibble | 0xf0);
  return nibble;
}

void unpack_4bit(DType t, const uint8_t* packed, std::size_t n, uint8_t* elements) {
  for (std::size_t i = 0; i < n; ++i) {
    const uint8_t byte = packed[i / 2];
    elements[i] = wrap_to_4bit(t, i % 2 == 0 ? byte & 0x0f : byte >> 4);
  }
}

int64_t min_4bit(DType t) { return t == DType::kInt4 ? -8 : 0; }
int64_t max_4bit(DType t) { return t == DType::kInt4 ? 7 : 15; }

}  // namespace nxrt
