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
};

// Bytes per element in memory; std::string's size for kString; 0 for kUndefined or unknown
// codes. float8 elements are their bit patterns (one byte). int4 and uint4 are held one
// element per byte (int4 sign-extended), so that views, strides and every kernel that moves
// bytes work on them unchanged; ONNX's two-per-byte packing exists only in files
// (dtype_packed_bytes, pack_4bit, unpack_4bit).
std::size_t dtype_size(DType t);
// Bytes `n` elements take in an ONNX TensorProto's raw_data or external data: ceil(n/2) for
// int4 and uint4, n * dtype_size otherwise.
std::size_t dtype_packed_bytes(DType t, std::size_t n);
// ONNX's spelling: "float", "int64", "bool", "float16", "string"...
std::string_view dtype_name(DType t);
// Accepts ONNX spellings and numpy-like ones ("float32", "f32", "i64").
std::optional<DType> dtype_from_name(std::string_view name);
// Maps an ONNX TensorProto.DataType code; nullopt for codes nxrt does not know.
std::optional<DType> dtype_from_onnx(int32_t code);
// A code for messages: the type's name when nxrt has it, else the code with ONNX's name for it
// where ONNX defines one ("25 (UINT2, ONNX 1.20)").
std::string describe_onnx_type(int32_t code);

bool is_floating(DType t);  // float8 types included
bool is_integer(DType t);   // signed or unsigned (int4 and uint4 included), not bool
bool is_float8(DType t);
bool is_4bit(DType t);      // int4 or uint4

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
