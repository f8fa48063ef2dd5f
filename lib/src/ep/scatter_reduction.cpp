// The scatters' reduction attribute (nxrt/ep/scatter_reduction.h).
#include "nxrt/ep/scatter_reduction.h"

#include <fmt/format.h>

#include <string>

namespace nxrt {

std::optional<ScatterReduction> parse_scatter_reduction(std::string_view name, int64_t opset) {
  if (name == "none") return ScatterReduction::kNone;
  if (opset >= 16 && name == "add") return ScatterReduction::kAdd;
  if (opset >= 16 && name == "mul") return ScatterReduction::kMul;
  if (opset >= 18 && name == "max") return ScatterReduction::kMax;
  if (opset >= 18 && name == "min") return ScatterReduction::kMin;
  return std::nullopt;
}

ScatterReduction scatter_reduction_of(const Node& node) {
  return parse_scatter_reduction(node.attributes.string_or("reduction", "none"), node.opset)
      .value_or(ScatterReduction::kNone);
}

KernelMatch check_scatter_reduction(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const std::string name = ctx.attrs().string_or("reduction", "none");
  NXRT_REQUIRE(parse_scatter_reduction(name, ctx.opset()).has_value(),
               "{}: reduction '{}' is not defined for {}-{}; it takes none{}{}", op, name, op, ctx.opset(),
               ctx.opset() >= 16 ? ", add, mul" : " (reductions start at opset 16)", ctx.opset() >= 18 ? ", max, min" : "");
  return KernelMatch::supported();
}

}  // namespace nxrt
