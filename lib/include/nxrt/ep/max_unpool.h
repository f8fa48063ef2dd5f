// MaxUnpool's shapes as every EP that runs it reads them: the unpooled shape MaxPool's indices
// address, and the output (that shape, or a larger output_shape keeping the same positions).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ir/window.h"

namespace nxrt {

struct UnpoolShapes {
  Shape pooled;  // (in - 1) * stride + kernel - pads per spatial dim: what the indices address
  Shape output;  // `pooled`, or output_shape when given
};

// X's shape with the node's kernel, strides and pads, and the output_shape input when given;
// a kRuntime error names what does not fit.
Expected<UnpoolShapes> max_unpool_shapes(const WindowAttrs& attrs, const Shape& x,
                                         const std::optional<std::vector<int64_t>>& output_shape);

}  // namespace nxrt
