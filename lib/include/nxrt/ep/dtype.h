// DType: element types, numbered as ONNX's TensorProto.DataType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nxrt {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// Bytes per element in memory; std::string's size for kString; 0 for kUndefined or unknown
// codes. The float8 types, float4e2m1 and float8e8m0 are held as their bit patterns, one per
// byte. The sub-byte types (int4, uint4, float4e2m1, int2, uint2) are held one element per
// byte (the signed integers sign-extended), so that views, strides and every kernel that moves
// bytes work on them unchanged; ONNX's packing (two or four per byte) exists only in files
// (dtype_packed_bytes, pack_subbyte, unpack_subbyte).
std::size_t dtype_size(DType t);
// Bytes `n` elements take in an ONNX TensorProto's raw_data or external data: ceil(n/2) for
// the 4-bit types, ceil(n/4) for the 2-bit ones, n * dtype_size otherwise.
std::size_t dtype_packed_bytes(DType t, std::size_t n);
// Bits per element in ONNX's packing: 4 for int4, uint4 and float4e2m1, 2 for int2 and uint2,
// 0 for every type of whole bytes.
int subbyte_bits(DType t);
// ONNX's spelling: "float", "int64", "bool", "float16", "string"...
std::string_view dtype_name(DType t);
// Accepts ONNX spellings and numpy-like ones ("float32", "f32", "i64").
std::optional<DType> dtype_from_name(std::string_view name);
// Maps an ONNX TensorProto.DataType code; nullopt for codes nxrt does not know.
std::optional<DType> dtype_from_onnx(int32_t code);
// A code for messages: the type's name when nxrt has it, else the code with ONNX's name for it
// where ONNX defines one ("14 (COMPLEX64)").
std::string describe_onnx_type(int32_t code);

bool is_floating(DType t);         // float8 types, float4e2m1 and float8e8m0 included
bool is_integer(DType t);          // signed or unsigned (int4, uint4, int2, uint2 included), not bool
bool is_float8(DType t);           // E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ: sign, exponent, mantissa
bool is_byte_float(DType t);       // float8 types, float4e2m1, float8e8m0: bit patterns, no C++ type
bool is_subbyte(DType t);          // int4, uint4, float4e2m1, int2, uint2
bool is_subbyte_integer(DType t);  // int4, uint4, int2, uint2

// The ai.onnx opset that introduced element type t (Cast and the data movement ops take it from
// there): 19 for the float8 types, 21 for int4 and uint4, 23 for float4e2m1, 24 for float8e8m0,
// 25 for int2 and uint2; 1 for the others.
int64_t first_opset_with(DType t);

// The C++ type of a DType, for kernels: dtype_of<float>() == DType::kFloat32.
template <class T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kInt8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::kInt16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::kUInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::kUInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::kUInt64; }
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }

}  // namespace nxrt
