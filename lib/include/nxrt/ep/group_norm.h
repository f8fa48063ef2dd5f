// GroupNormalization's geometry as every EP reads it: -18 scales and shifts each group, -21
// each channel (dim 1 of X); both normalize over each group of channels. The checks here are
// of shapes and attributes; each EP adds its own of element types and stash_type.
#pragma once

#include <cstdint>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// True from opset 21, where scale and bias hold one value per channel instead of per group.
inline bool group_norm_per_channel(int64_t opset) { return opset >= 21; }

// Declines inputs other than (X, scale, bias), a missing or non-positive num_groups, X of
// rank below 2, and, where X's shape is static, channels that do not split into the groups or
// scale or bias of a static size other than the version's count.
KernelMatch check_group_norm_node(const NodeContext& ctx);

// The run-time form of the shape checks, on the shapes of X, scale and bias (`per_channel`:
// group_norm_per_channel of the node's opset).
Expected<void> check_group_norm_shapes(bool per_channel, int64_t groups, const Shape& x, const Shape& scale,
                                       const Shape& bias);

}  // namespace nxrt
