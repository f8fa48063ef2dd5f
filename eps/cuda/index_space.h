// The index space a generated kernel walks: merging dimensions so that a kernel divides each
// linear index fewer times.
#pragma once

#include <span>

#include "nxrt/ep/tensor.h"

namespace nxrt::cuda {

// Rewrites `shape` (the index space of a kernel: linear index i walks it in row-major order)
// and every `strides[k]` (one tensor's strides over it, in elements, shape.size() values) to an
// equivalent space of fewer dimensions: extent-1 dimensions are dropped, and a dimension
// merges into the one before it when every tensor steps through the pair as through one
// dimension. Each tensor's offset at every linear index is unchanged. A space of one element
// becomes rank 0; a contiguous walk, rank 1.
void coalesce_dims(Shape& shape, std::span<Shape> strides);

}  // namespace nxrt::cuda
