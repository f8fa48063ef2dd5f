// DepthToSpace and SpaceToDepth: each is a transpose of a 6-D view of the input, one strided
// copy into the contiguous output.
#include <fmt/format.h>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_depth_space(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 4, "{}: input 0 has rank {}; expected N, C, H, W", ctx.node().op_type, rank.value_or(0));
  NXRT_REQUIRE(ctx.attrs().int_or("blocksize", 0) > 0, "{}: blocksize must be positive", ctx.node().op_type);
  const std::string mode = ctx.attrs().string_or("mode", "DCR");
  NXRT_REQUIRE(mode == "DCR" || mode == "CRD", "DepthToSpace: mode '{}' is not DCR or CRD", mode);
  return KernelMatch::supported();
}

// The copy's shape (the output as 6 dims) and where each of its dims reads in the input.
struct BlockCopy {
  Shape out_shape;  // the output, 4-D
  Shape shape;      // 6-D, laid out as the output
  Shape read;       // input strides per dim of `shape`
};

Expected<BlockCopy> depth_to_space(const StepContext& ctx, const Shape& x, int64_t b, bool crd) {
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  if (c % (b * b) != 0)
    return fail(ErrorCode::kRuntime, fmt::format("{}: {} channels do not split into {}x{} blocks", ctx.where(), c, b, b));
  const int64_t cc = c / (b * b);
  // The input as [N, b, b, C', H, W] (DCR) or [N, C', b, b, H, W] (CRD); the output is
  // [N, C', H, b, W, b].
  const Shape view = crd ? Shape{n, cc, b, b, h, w} : Shape{n, b, b, cc, h, w};
  const Shape s = contiguous_strides(view);
  const int64_t s_c = crd ? s[1] : s[3], s_b1 = crd ? s[2] : s[1], s_b2 = crd ? s[3] : s[2];
  return BlockCopy{{n, cc, h * b, w * b}, {n, cc, h, b, w, b}, {s[0], s_c, s[4], s_b1, s[5], s_b2}};
}

Expected<BlockCopy> space_to_depth(const StepContext& ctx, const Shape& x, int64_t b) {
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  if (h % b != 0 || w % b != 0)
    return fail(ErrorCode::kRuntime, fmt::format("{}: {}x{} does not split into {}x{} blocks", ctx.where(), h, w, b, b));
  // The input as [N, C, H', b, W', b]; the output is [N, b, b, C, H', W'].
  const Shape s = contiguous_strides(Shape{n, c, h / b, b, w / b, b});
  return BlockCopy{{n, c * b * b, h / b, w / b}, {n, b, b, c, h / b, w / b}, {s[0], s[3], s[5], s[1], s[2], s[4]}};
}

Expected<void> build_depth_space(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string kernel = strided_copy_kernel(b, dtype);
  const int64_t block = node.attributes.int_or("blocksize", 1);
  const bool to_space = node.op_type == "DepthToSpace";
  const bool crd = node.attributes.string_or("mode", "DCR") == "CRD";
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    if (x.shape().size() != 4)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} is not N, C, H, W", ctx.where(), shape_to_string(x.shape())));
    auto copy = to_space ? depth_to_space(ctx, x.shape(), block, crd) : space_to_depth(ctx, x.shape(), block);
    if (!copy) return std::unexpected(copy.error());
    auto y = ctx.output(0, dtype, copy->out_shape);
    if (!y) return std::unexpected(y.error());
    return strided_copy(ctx, kernel, copy->shape, copy->read, 0, dev(x), contiguous_strides(copy->shape), 0, dev_mut(*y));
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> depth_space_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("DepthToSpace", 1, check_depth_space, build_depth_space));
  ops.push_back(make_op("SpaceToDepth", 1, check_depth_space, build_depth_space));
  return ops;
}

}  // namespace nxrt::cuda
