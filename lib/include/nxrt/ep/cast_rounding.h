// How Cast and CastLike round into the floats held as bit patterns (the float8 types,
// float4e2m1, float8e8m0): Cast-19's saturate and Cast-24's round_mode, as every EP reads them.
#pragma once

#include <cstdint>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/mx_float.h"

namespace nxrt {

struct CastRounding {
  bool saturate = true;                   // out-of-range values saturate (the default) or not
  E8M0Rounding e8m0 = E8M0Rounding::kUp;  // for float8e8m0 targets
};

// The node's rounding at `opset`; round_mode must have been checked (check_cast_rounding).
CastRounding read_cast_rounding(const AttributeMap& attrs, int64_t opset);

// Declines a round_mode other than up, down and nearest (Cast-24 and CastLike-24 on).
KernelMatch check_cast_rounding(const NodeContext& ctx);

}  // namespace nxrt
