// Shared claim checks and broadcasting helpers of the oneDNN op families.
#include "ops/op_util.h"

namespace nxrt::onednn {

KernelMatch require_float_tensors(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) continue;
    const ValueType* t = ctx.input_type(i);
    NXRT_REQUIRE(t && t->kind == ValueType::Kind::kTensor, "{}: input {} is not a tensor; onednn takes tensors only",
                 op, i);
    NXRT_REQUIRE(t->dtype == DType::kFloat32,
                 "{}: input {} is {}; the onednn EP computes in float32 only (the cpu EP takes other types)", op, i,
                 dtype_name(t->dtype));
  }
  for (std::size_t i = 0; i < ctx.output_count(); ++i) {
    if (!ctx.has_output(i)) continue;
    const ValueType* t = ctx.output_type(i);
    NXRT_REQUIRE(!t || t->dtype == DType::kFloat32 || t->dtype == DType::kUndefined,
                 "{}: output {} is {}; the onednn EP computes in float32 only", op, i, dtype_name(t->dtype));
  }
  return KernelMatch::supported();
}

KernelMatch require_rank(const NodeContext& ctx, std::size_t i, int64_t lo, int64_t hi) {
  const std::string& op = ctx.node().op_type;
  const auto rank = ctx.input_rank(i);
  NXRT_REQUIRE(rank.has_value(), "{}: the rank of input {} is unknown; the onednn EP needs it (give --shape)", op, i);
  NXRT_REQUIRE(*rank >= lo && *rank <= hi, "{}: input {} has rank {}; the onednn EP supports ranks {} to {}", op, i,
               *rank, lo, hi);
  if (auto shape = ctx.input_static_shape(i))
    NXRT_REQUIRE(shape_numel(*shape) > 0, "{}: input {} is empty {}; the onednn EP needs non-empty tensors", op, i,
                 shape_to_string(*shape));
  return KernelMatch::supported();
}

KernelMatch require_constant(const NodeContext& ctx, std::size_t i, std::string_view what) {
  NXRT_REQUIRE(ctx.constant_input(i) != nullptr,
               "{}: {} (input {}) must be a constant initializer for the onednn EP, which reorders it once when it "
               "compiles; the cpu EP takes computed ones",
               ctx.node().op_type, what, i);
  return KernelMatch::supported();
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return std::nullopt;
  return a;
}

Dims pad_leading(const Dims& dims, std::size_t rank) {
  Dims out(rank > dims.size() ? rank - dims.size() : 0, 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

bool broadcasts_to(const Dims& small, const Dims& big) {
  if (small.size() != big.size()) return false;
  for (std::size_t i = 0; i < big.size(); ++i)
    if (small[i] != big[i] && small[i] != 1) return false;
  return true;
}

int64_t product(const Dims& d, std::size_t begin, std::size_t end) {
  int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= d[i];
  return p;
}

}  // namespace nxrt::onednn
