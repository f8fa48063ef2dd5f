// Col2Im-18: sliding blocks (columns, as im2col makes them) summed back into an n-D image, one
// thread per image element; the geometry is lib's (nxrt/ep/col2im.h), as every EP reads it.
#include <fmt/format.h>

#include "nxrt/ep/col2im.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_col2im(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_number, kCudaNumbers));
  NXRT_REQUIRE_MATCH(check_col2im_node(ctx));
  for (std::size_t i : {1, 2}) NXRT_REQUIRE_MATCH(require_ints(ctx, i, i == 1 ? "image_shape" : "block_shape"));
  return KernelMatch::supported();
}

Expected<void> build_col2im(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const Col2ImAttrs attrs = read_col2im_attrs(node.attributes);
  const IntsInput image_input(b.graph(), node, 1), block_input(b.graph(), node, 2);
  const std::string t(is_cuda_float(dtype) ? float_type(dtype) : chain_storage_type(dtype));
  const std::string kernel = b.instantiate(
      "col2im", t,
      fmt::format("i64 n, int sr, Dims image, Dims block, Dims blocks, Dims strides, Dims pads, Dims dilations, "
                  "const {0}* x, {0}* y",
                  t),
      "n, sr, image, block, blocks, strides, pads, dilations, x, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    auto image = image_input.read(ctx);
    if (!image) return std::unexpected(image.error());
    auto block = block_input.read(ctx);
    if (!block) return std::unexpected(block.error());
    const std::vector<int64_t> image_shape = image->value_or(std::vector<int64_t>{});
    const std::vector<int64_t> block_shape = block->value_or(std::vector<int64_t>{});
    if (x.shape().size() != 3)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: input {} is not [N, C * prod(block), L]", ctx.where(), shape_to_string(x.shape())));
    auto counts = col2im_block_counts(attrs, image_shape, block_shape, x.shape()[2]);
    if (!counts) return forward_error(std::move(counts), ctx.where());
    const std::size_t spatial = image_shape.size();
    const int64_t per_channel = shape_numel(block_shape);
    if (spatial + 2 > kMaxRank || per_channel == 0 || x.shape()[1] % per_channel != 0)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: input {} with block_shape {}: dim 1 is not a multiple of prod(block_shape), or the "
                              "image has more than {} dims",
                              ctx.where(), shape_to_string(x.shape()), shape_to_string(block_shape), kMaxRank - 2));
    Shape out{x.shape()[0], x.shape()[1] / per_channel};
    out.insert(out.end(), image_shape.begin(), image_shape.end());
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    Shape strides, pads, dilations;
    for (std::size_t d = 0; d < spatial; ++d) {
      strides.push_back(attrs.stride(d));
      pads.push_back(attrs.pad_begin(d));
      dilations.push_back(attrs.dilation(d));
    }
    KernelArgs args;
    args.add(n).add(static_cast<int>(spatial)).add(to_kernel_dims(image_shape)).add(to_kernel_dims(block_shape));
    args.add(to_kernel_dims(*counts)).add(to_kernel_dims(strides)).add(to_kernel_dims(pads)).add(to_kernel_dims(dilations));
    args.ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> col2im_ops() { return {make_op("Col2Im", 18, check_col2im, build_col2im)}; }

}  // namespace nxrt::cuda
