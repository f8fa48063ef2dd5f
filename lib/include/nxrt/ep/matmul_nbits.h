// ONNX Runtime's com.microsoft MatMulNBits as every EP reads it: a MatMul whose right operand is
// quantized to 2, 4 or 8 bits in blocks along K, as its MatMulNBitsQuantizer (and ONNX Runtime
// GenAI's model builder) writes the weights of int4 language models:
//   Y = A x W^T (+ bias),  W[n][k] = (q[n][k] - zero[n][k / block_size]) * scale[n][k / block_size].
// Inputs: A [..., K]; B uint8 [N, blocks, block_size * bits / 8] (blocks = ceil(K / block_size)),
// each block's values packed low bits first; scales [N, blocks] of A's type; zero_points
// (optional) uint8 packed as B is ([N, ceil(blocks * bits / 8)]) or of A's type ([N, blocks]),
// 2^(bits - 1) without; g_idx (deprecated: declined); bias [N] of A's type.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

// The inputs' positions.
inline constexpr std::size_t kNbitsA = 0, kNbitsB = 1, kNbitsScales = 2, kNbitsZeroPoints = 3, kNbitsGroupIndex = 4,
                             kNbitsBias = 5;

// The attributes' geometry of the quantized weight.
struct MatMulNBitsGeometry {
  int64_t k = 0, n = 0, bits = 4, block = 0;
  int64_t blocks() const { return (k + block - 1) / block; }
  int64_t block_bytes() const { return block * bits / 8; }
  int64_t fields() const { return 8 / bits; }  // values per byte
  int64_t padded_k() const { return blocks() * block; }
  // Bytes of packed zero points per column.
  int64_t zero_bytes() const { return (blocks() * bits + 7) / 8; }

  static MatMulNBitsGeometry of(const AttributeMap& attrs);
};

// Declines what no EP implements: B not uint8, scales, typed zero points or the bias of another
// type than A, g_idx, K or N missing, bits other than 2, 4 and 8, a block_size that is not a power
// of two of at least 16, weight_prepacked, and static shapes that do not hold what the geometry
// needs (check_matmul_nbits_inputs); `ep` names the EP in the reasons. The EPs add A's types.
KernelMatch check_matmul_nbits_node(const NodeContext& ctx, std::string_view ep);

// The inputs' sizes at run time: A's last dim K, B, scales, zero points and the bias holding what
// the geometry needs (zero points packed when uint8). An error names the input, what it holds and
// what it must.
struct MatMulNBitsSizes {
  const Shape* a = nullptr;  // null: not checked (weights read before any run)
  int64_t b = 0, scales = 0;
  std::optional<int64_t> zero_points;  // its element count, when given
  bool packed_zero_points = false;
  std::optional<int64_t> bias;
};
Expected<void> check_matmul_nbits_inputs(const MatMulNBitsGeometry& g, const MatMulNBitsSizes& sizes);
// The sizes of a run's tensors (zero_points and bias null when absent).
MatMulNBitsSizes matmul_nbits_sizes(const Tensor& a, const Tensor& b, const Tensor& scales, const Tensor* zero_points,
                                    const Tensor* bias);

}  // namespace nxrt
