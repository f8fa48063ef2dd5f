// AffineGrid-20's geometry as every EP reads it: theta [N, 2, 3] with size [N, C, H, W] makes
// a 2-D grid [N, H, W, 2]; theta [N, 3, 4] with size [N, C, D, H, W] a 3-D one [N, D, H, W, 3].
#pragma once

#include <cstdint>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// The output shape; fails when theta does not fit size or size has a negative dim.
Expected<Shape> affine_grid_output_shape(const Shape& theta, const std::vector<int64_t>& size);

// Declines inputs other than (theta, size), size that is not int64, and, where known before
// running, a size of other than 4 or 5 values or a theta of neither shape.
KernelMatch check_affine_grid_node(const NodeContext& ctx);

}  // namespace nxrt
