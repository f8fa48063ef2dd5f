// The ONNX element types narrower than a byte: int4, uint4 and float4e2m1 (packed two per
// byte, low nibble first) and int2, uint2 (four per byte, lowest bits first). nxrt holds them
// one element per byte in memory (see dtype_size); the packing exists only in files.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nxrt/ep/dtype.h"

namespace nxrt {

// Packs n one-per-byte elements of sub-byte type `t` into dtype_packed_bytes(t, n) bytes:
// element k of a byte in its bits [k * bits, (k + 1) * bits); unused high bits are zero.
void pack_subbyte(DType t, const uint8_t* elements, std::size_t n, uint8_t* packed);

// Unpacks dtype_packed_bytes(t, n) bytes into n one-per-byte elements of `t`: int4 and int2
// sign-extended, float4e2m1 as its 4-bit pattern.
void unpack_subbyte(DType t, const uint8_t* packed, std::size_t n, uint8_t* elements);

// The low bits of v as an element of the sub-byte integer type `t` (int4 and int2
// sign-extended): ONNX's rule for integers out of the range of a narrower integer type
// (discard the higher bits).
uint8_t wrap_to_subbyte(DType t, int64_t v);

// The range of the sub-byte integer type `t`: [-8, 7] for int4, [0, 15] for uint4, [-2, 1]
// for int2, [0, 3] for uint2.
int64_t subbyte_min(DType t);
int64_t subbyte_max(DType t);

}  // namespace nxrt
