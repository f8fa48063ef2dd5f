// The reduction attribute of ScatterElements and ScatterND as every EP that runs them reads it:
// absent before opset 16, none/add/mul from 16, max/min from 18.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// The reduction `name` means at `opset`; nullopt when that opset does not define it.
std::optional<ScatterReduction> parse_scatter_reduction(std::string_view name, int64_t opset);

// The node's reduction (none when the attribute is absent or undefined: claims decline those).
ScatterReduction scatter_reduction_of(const Node& node);

// Declines a reduction the node's opset does not define, naming the ones it does.
KernelMatch check_scatter_reduction(const NodeContext& ctx);

}  // namespace nxrt
