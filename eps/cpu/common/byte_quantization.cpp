// Per-tensor quantization of 8-bit tensors (see byte_quantization.h).
#include "common/byte_quantization.h"

#include <fmt/format.h>

#include "common/kernel_util.h"

namespace nxrt::cpu {

KernelMatch require_per_tensor_quantization(const NodeContext& ctx, std::size_t scale, std::size_t zero, DType type,
                                            std::string_view tensor) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.has_input(scale), "{}: the scale of {} (input {}) is missing; it is required", op, tensor, scale);
  NXRT_REQUIRE(ctx.input_dtype(scale) == DType::kFloat32, "{}: the scale of {} (input {}) is {}; it must be float",
               op, tensor, scale, dtype_name(ctx.input_dtype(scale)));
  const auto scales = static_numel(ctx.input_type(scale));
  NXRT_REQUIRE(!scales || *scales == 1,
               "{}: the scale of {} (input {}) has {} values; the cpu EP implements one scale per tensor", op, tensor,
               scale, scales.value_or(0));
  if (!ctx.has_input(zero)) return KernelMatch::supported();
  NXRT_REQUIRE(ctx.input_dtype(zero) == type, "{}: the zero point of {} (input {}) is {}; it must be {}, as {} is", op,
               tensor, zero, dtype_name(ctx.input_dtype(zero)), dtype_name(type), tensor);
  const auto zeros = static_numel(ctx.input_type(zero));
  NXRT_REQUIRE(!zeros || *zeros == 1,
               "{}: the zero point of {} (input {}) has {} values; the cpu EP implements one zero point per tensor",
               op, tensor, zero, zeros.value_or(0));
  return KernelMatch::supported();
}

Expected<ByteQuantization> read_per_tensor_quantization(const KernelContext& ctx, std::string_view op,
                                                        std::size_t scale, std::size_t zero) {
  const bool has_zero = ctx.has_input(zero);
  for (std::size_t i : {scale, zero}) {
    if (i == zero && !has_zero) continue;
    if (const int64_t n = ctx.input(i).numel(); n != 1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: input {} (a scale or zero point) has {} values; it needs 1", op, i, n),
                  "the cpu EP implements per-tensor quantization here: one scale and one zero point",
                  "give one value per scale and zero point");
  }
  ByteQuantization q{ctx.input(scale).data_as<float>()[0], 0};
  if (has_zero) {
    const Tensor& z = ctx.input(zero);
    q.zero = z.dtype() == DType::kInt8 ? z.data_as<int8_t>()[0] : z.data_as<uint8_t>()[0];
  }
  return q;
}

}  // namespace nxrt::cpu
