// Cast's saturate and round_mode (nxrt/ep/cast_rounding.h).
#include "nxrt/ep/cast_rounding.h"

#include <string>

namespace nxrt {
namespace {

std::string round_mode_of(const AttributeMap& attrs, int64_t opset) {
  return opset >= 24 ? attrs.string_or("round_mode", "up") : "up";
}

}  // namespace

CastRounding read_cast_rounding(const AttributeMap& attrs, int64_t opset) {
  return {opset < 19 || attrs.int_or("saturate", 1) != 0,
          e8m0_rounding_from_name(round_mode_of(attrs, opset)).value_or(E8M0Rounding::kUp)};
}

KernelMatch check_cast_rounding(const NodeContext& ctx) {
  const std::string mode = round_mode_of(ctx.attrs(), ctx.opset());
  NXRT_REQUIRE(e8m0_rounding_from_name(mode).has_value(), "{}: round_mode '{}' is not one of 'up', 'down', 'nearest'",
               ctx.node().op_type, mode);
  return KernelMatch::supported();
}

}  // namespace nxrt
