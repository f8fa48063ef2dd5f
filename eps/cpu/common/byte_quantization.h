// Per-tensor quantization of 8-bit tensors, one scale and one zero point, as ONNX Runtime's
// com.microsoft QLinear* ops (QLinearAdd, QLinearGlobalAveragePool, ...) and the cpu EP's fused
// QDQ steps take them: the claim check, the values read at run time, and a dispatch over uint8
// and int8.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/requantize.h"
#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

// x = (q - zero) * scale.
struct ByteQuantization {
  float scale = 1;
  int32_t zero = 0;
};

inline bool is_byte_type(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

// Declines unless input `scale` is float with one value (where its shape is known) and input
// `zero`, when the node has it, one value of `type`. `tensor` names what they quantize ("A").
KernelMatch require_per_tensor_quantization(const NodeContext& ctx, std::size_t scale, std::size_t zero, DType type,
                                            std::string_view tensor);

// The scale at input `scale` and the zero point at input `zero` (0 when the node omits it),
// each one value; a run-time error naming `op` otherwise.
Expected<ByteQuantization> read_per_tensor_quantization(const KernelContext& ctx, std::string_view op,
                                                        std::size_t scale, std::size_t zero);

// read_per_tensor_quantization of each input in `scales`, its zero point the input after it.
template <std::size_t N>
Expected<std::array<ByteQuantization, N>> read_per_tensor_quantizations(const KernelContext& ctx, std::string_view op,
                                                                       const std::array<std::size_t, N>& scales) {
  std::array<ByteQuantization, N> q;
  for (std::size_t t = 0; t < N; ++t) {
    auto read = read_per_tensor_quantization(ctx, op, scales[t], scales[t] + 1);
    if (!read) return std::unexpected(read.error());
    q[t] = *read;
  }
  return q;
}

// Calls fn with a value of the byte type `t` (uint8 or int8) as a tag.
template <class Fn>
auto visit_byte_type(DType t, Fn&& fn) {
  return t == DType::kInt8 ? fn(int8_t{}) : fn(uint8_t{});
}

}  // namespace nxrt::cpu
