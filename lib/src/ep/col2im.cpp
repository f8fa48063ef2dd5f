// Col2Im-18's geometry (nxrt/ep/col2im.h).
#include "nxrt/ep/col2im.h"

#include <fmt/format.h>

#include <string>

namespace nxrt {

Col2ImAttrs read_col2im_attrs(const AttributeMap& attrs) {
  return {attrs.ints_or("dilations", {}), attrs.ints_or("pads", {}), attrs.ints_or("strides", {})};
}

Expected<std::vector<int64_t>> col2im_block_counts(const Col2ImAttrs& a, const std::vector<int64_t>& image,
                                                   const std::vector<int64_t>& block, int64_t columns) {
  const std::size_t n = image.size();
  auto bad = [&](std::string what) {
    return fail(ErrorCode::kRuntime, fmt::format("Col2Im: {}", what),
                "image_shape and block_shape give one size per spatial dim; dilations and strides one value per "
                "dim, pads two (all begins, then all ends)",
                "fix the node's attributes or its image_shape and block_shape inputs");
  };
  if (n == 0 || block.size() != n)
    return bad(fmt::format("image_shape {} and block_shape {} differ in length", shape_to_string(image),
                           shape_to_string(block)));
  if ((!a.dilations.empty() && a.dilations.size() != n) || (!a.strides.empty() && a.strides.size() != n) ||
      (!a.pads.empty() && a.pads.size() != 2 * n))
    return bad(fmt::format("dilations, strides or pads do not fit {} spatial dims", n));
  std::vector<int64_t> counts(n);
  int64_t total = 1;
  for (std::size_t d = 0; d < n; ++d) {
    const int64_t dil = a.dilation(d), stride = a.stride(d);
    const int64_t pad = a.pads.empty() ? 0 : a.pads[d] + a.pads[d + n];
    const int64_t extent = dil * (block[d] - 1) + 1;
    if (dil < 1 || stride < 1 || block[d] < 1 || image[d] + pad < extent)
      return bad(fmt::format("a block of {} (dilation {}) does not fit image size {} with padding {} in dim {}",
                             block[d], dil, image[d], pad, d));
    counts[d] = (image[d] + pad - extent) / stride + 1;
    total *= counts[d];
  }
  if (total != columns)
    return bad(fmt::format("the input has {} columns; image_shape {} and block_shape {} give {}", columns,
                           shape_to_string(image), shape_to_string(block), total));
  return counts;
}

KernelMatch check_col2im_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 3 && ctx.has_input(1) && ctx.has_input(2),
               "Col2Im: expected 3 inputs (input, image_shape, block_shape), got {}", ctx.input_count());
  for (std::size_t i : {1, 2})
    NXRT_REQUIRE(ctx.input_dtype(i) == DType::kInt64, "Col2Im: input {} ({}) has type {}; it must be int64", i,
                 i == 1 ? "image_shape" : "block_shape", dtype_name(ctx.input_dtype(i)));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) == 3, "Col2Im: input has rank {}; expected [N, C * prod(block), L]",
               ctx.input_rank(0).value_or(3));
  const auto image = ctx.constant_ints(1), block = ctx.constant_ints(2);
  const auto x = ctx.input_static_shape(0);
  if (image && block && x) {
    auto counts = col2im_block_counts(read_col2im_attrs(ctx.attrs()), *image, *block, (*x)[2]);
    if (!counts) return declined_by(counts.error());
    const int64_t per_channel = shape_numel(*block);
    NXRT_REQUIRE((*x)[1] % per_channel == 0, "Col2Im: dim 1 of the input ({}) is not a multiple of prod(block_shape) {}",
                 (*x)[1], per_channel);
  }
  return KernelMatch::supported();
}

}  // namespace nxrt
