// Col2Im-18's geometry as every EP reads it: the attributes, the blocks along each spatial dim
// (checked against the input's column count), and the claim checks of what is known before
// running.
#pragma once

#include <cstdint>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct Col2ImAttrs {
  std::vector<int64_t> dilations, pads, strides;  // empty: the defaults (1, 0, 1)
  int64_t dilation(std::size_t d) const { return dilations.empty() ? 1 : dilations[d]; }
  int64_t stride(std::size_t d) const { return strides.empty() ? 1 : strides[d]; }
  int64_t pad_begin(std::size_t d) const { return pads.empty() ? 0 : pads[d]; }
};
Col2ImAttrs read_col2im_attrs(const AttributeMap& attrs);

// The blocks along each spatial dim of an image of `image` sizes scanned by `block`, whose
// product must be `columns` (dim 2 of the input).
Expected<std::vector<int64_t>> col2im_block_counts(const Col2ImAttrs& attrs, const std::vector<int64_t>& image,
                                                   const std::vector<int64_t>& block, int64_t columns);

// Declines image_shape or block_shape that is not int64, an input of rank other than 3, and,
// where they are constants and the input's shape is static, geometry that does not fit it.
KernelMatch check_col2im_node(const NodeContext& ctx);

}  // namespace nxrt
