// ONNX Runtime's com.microsoft GatherBlockQuantized as every EP reads it: Gather of rows of a table
// quantized in blocks along its last axis, dequantized as they are gathered (the int4 embedding
// tables of ONNX Runtime GenAI's models). data: uint8 holding `bits` (2, 4 or 8; 4 by default)
// values per element packed along the last axis, low bits first, or int4 / uint4 (one value each,
// as nxrt holds them); scales (the output's type) one per block of block_size values (128 by
// default) of a row; zero_points (optional) packed as data is, else 2^(bits - 1) for uint8 and 0
// for int4 / uint4. output = indices' shape + data's dims after the first (its last one unpacked):
//   output[i..., j] = (q[idx, j] - zero[idx, j / block_size]) * scale[idx, j / block_size],
// a negative index counting from the end. gather_axis 0 and quantize_axis the last one (what an
// embedding table needs).
#pragma once

#include <cstdint>
#include <string_view>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

inline constexpr std::size_t kGbqData = 0, kGbqIndices = 1, kGbqScales = 2, kGbqZeroPoints = 3;

// The layout of data's rows: how many values a row holds and how they are stored.
struct QuantizedRows {
  DType type = DType::kUInt8;
  int64_t bits = 4, block = 128;
  int64_t per_element() const { return type == DType::kUInt8 ? 8 / bits : 1; }
  // Values of a row stored in `elements` elements of the last axis; blocks of them; elements of
  // zero points a row needs.
  int64_t values(int64_t elements) const { return elements * per_element(); }
  int64_t blocks(int64_t elements) const { return (values(elements) + block - 1) / block; }
  int64_t zero_elements(int64_t elements) const { return (blocks(elements) + per_element() - 1) / per_element(); }
  // The zero point without zero_points.
  int32_t default_zero() const { return type == DType::kUInt8 ? 1 << (bits - 1) : 0; }

  static QuantizedRows of(const NodeContext& ctx);
};

// Declines what no EP implements: data other than uint8, int4 and uint4, indices not int32 or
// int64, zero points of another type than data, bits other than 2, 4 and 8 for uint8, a
// block_size that is not a power of two of at least 16, and axes other than gathering the first
// of a table quantized along its last; `ep` names the EP in the reasons. The EPs add the scales'
// types.
KernelMatch check_gather_block_quantized_node(const NodeContext& ctx, std::string_view ep);

// The output's shape for data, indices, scales and zero_points (null: absent), or an error when
// the scales or zero points do not fit data's rows.
Expected<Shape> gather_block_quantized_shape(const QuantizedRows& q, const Shape& data, const Shape& indices,
                                             const Shape& scales, const Shape* zero_points);

}  // namespace nxrt
