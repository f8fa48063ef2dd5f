// Element type sizes, names and ONNX code mapping.
#include "nxrt/ep/dtype.h"

#include <array>
#include <string>
#include <utility>

namespace nxrt {
namespace {

struct DTypeInfo {
  DType type;
  std::size_t size;
  std::string_view name;    // ONNX spelling
  std::string_view alias1;  // numpy spelling
  std::string_view alias2;  // short spelling
};

constexpr std::array kInfos = {
    DTypeInfo{DType::kFloat32, 4, "float", "float32", "f32"},
    DTypeInfo{DType::kUInt8, 1, "uint8", "uint8", "u8"},
    DTypeInfo{DType::kInt8, 1, "int8", "int8", "i8"},
    DTypeInfo{DType::kUInt16, 2, "uint16", "uint16", "u16"},
    DTypeInfo{DType::kInt16, 2, "int16", "int16", "i16"},
    DTypeInfo{DType::kInt32, 4, "int32", "int32", "i32"},
    DTypeInfo{DType::kInt64, 8, "int64", "int64", "i64"},
    DTypeInfo{DType::kString, sizeof(std::string), "string", "str", "string"},
    DTypeInfo{DType::kBool, 1, "bool", "bool_", "b8"},
    DTypeInfo{DType::kFloat16, 2, "float16", "half", "f16"},
    DTypeInfo{DType::kFloat64, 8, "double", "float64", "f64"},
    DTypeInfo{DType::kUInt32, 4, "uint32", "uint32", "u32"},
    DTypeInfo{DType::kUInt64, 8, "uint64", "uint64", "u64"},
    DTypeInfo{DType::kBFloat16, 2, "bfloat16", "bfloat16", "bf16"},
    // The ml_dtypes spellings as aliases.
    DTypeInfo{DType::kFloat8E4M3FN, 1, "float8e4m3fn", "float8_e4m3fn", "f8e4m3fn"},
    DTypeInfo{DType::kFloat8E4M3FNUZ, 1, "float8e4m3fnuz", "float8_e4m3fnuz", "f8e4m3fnuz"},
    DTypeInfo{DType::kFloat8E5M2, 1, "float8e5m2", "float8_e5m2", "f8e5m2"},
    DTypeInfo{DType::kFloat8E5M2FNUZ, 1, "float8e5m2fnuz", "float8_e5m2fnuz", "f8e5m2fnuz"},
    DTypeInfo{DType::kUInt4, 1, "uint4", "uint4", "u4"},
    DTypeInfo{DType::kInt4, 1, "int4", "int4", "i4"},
    DTypeInfo{DType::kFloat4E2M1, 1, "float4e2m1", "float4_e2m1fn", "f4e2m1"},
    DTypeInfo{DType::kFloat8E8M0, 1, "float8e8m0", "float8_e8m0fnu", "f8e8m0"},
    DTypeInfo{DType::kUInt2, 1, "uint2", "uint2", "u2"},
    DTypeInfo{DType::kInt2, 1, "int2", "int2", "i2"},
};

const DTypeInfo* find_info(DType t) {
  for (const auto& info : kInfos)
    if (info.type == t) return &info;
  return nullptr;
}

}  // namespace

std::size_t dtype_size(DType t) {
  const auto* info = find_info(t);
  return info ? info->size : 0;
}

std::size_t dtype_packed_bytes(DType t, std::size_t n) {
  if (const int bits = subbyte_bits(t)) {
    const std::size_t per_byte = 8 / static_cast<std::size_t>(bits);
    return (n + per_byte - 1) / per_byte;
  }
  return n * dtype_size(t);
}

int subbyte_bits(DType t) {
  switch (t) {
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kFloat4E2M1:
      return 4;
    case DType::kInt2:
    case DType::kUInt2:
      return 2;
    default:
      return 0;
  }
}

std::string_view dtype_name(DType t) {
  const auto* info = find_info(t);
  return info ? info->name : std::string_view("undefined");
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& info : kInfos)
    if (name == info.name || name == info.alias1 || name == info.alias2) return info.type;
  return std::nullopt;
}

std::optional<DType> dtype_from_onnx(int32_t code) {
  if (const auto* info = find_info(static_cast<DType>(code))) return info->type;
  return std::nullopt;
}

std::string describe_onnx_type(int32_t code) {
  if (const auto t = dtype_from_onnx(code)) return std::string(dtype_name(*t));
  switch (code) {
    case 14: return "14 (COMPLEX64)";
    case 15:
      return "15 (COMPLEX128)";
    default: return std::to_string(code);
  }
}

bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16 ||
         is_byte_float(t);
}

bool is_byte_float(DType t) { return is_float8(t) || t == DType::kFloat4E2M1 || t == DType::kFloat8E8M0; }

bool is_float8(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ;
}

bool is_subbyte(DType t) { return subbyte_bits(t) != 0; }

bool is_subbyte_integer(DType t) { return is_subbyte(t) && t != DType::kFloat4E2M1; }

int64_t first_opset_with(DType t) {
  switch (t) {
    case DType::kInt4: case DType::kUInt4: return 21;
    case DType::kFloat4E2M1: return 23;
    case DType::kFloat8E8M0: return 24;
    case DType::kInt2: case DType::kUInt2: return 25;
    default: return is_float8(t) ? 19 : 1;
  }
}

bool is_integer(DType t) {
  switch (t) {
    case DType::kUInt8: case DType::kInt8: case DType::kUInt16: case DType::kInt16:
    case DType::kInt32: case DType::kInt64: case DType::kUInt32: case DType::kUInt64:
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kInt2:
    case DType::kUInt2:
      return true;
    default:
      return false;
  }
}

}  // namespace nxrt
