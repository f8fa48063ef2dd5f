// The ONNX 4-bit integer types (INT4, UINT4): ONNX packs two per byte, low nibble first;
// nxrt holds one per byte in memory (see dtype_size).
#pragma once

#include <cstddef>
#include <cstdint>

#include "nxrt/ep/dtype.h"

namespace nxrt {

// Packs n one-per-byte elements into ceil(n/2) bytes: element 2i in the low nibble of byte i,
// element 2i+1 in its high nibble (zero when n is odd).
void pack_4bit(const uint8_t* elements, std::size_t n, uint8_t* packed);

// Unpacks ceil(n/2) bytes into n one-per-byte elements of `t`; int4 is sign-extended.
void unpack_4bit(DType t, const uint8_t* packed, std::size_t n, uint8_t* elements);

// The low 4 bits of v as an element of `t` (int4 sign-extended): ONNX's rule for integers
// out of the range of a narrower integer type (discard the higher bits).
uint8_t wrap_to_4bit(DType t, int64_t v);

// The range of `t`: [-8, 7] for int4, [0, 15] for uint4.
int64_t min_4bit(DType t);
int64_t max_4bit(DType t);

}  // namespace nxrt
