// Post-ops: the Add and activations fused into a step's primitive, or run after it as
// their own primitives when oneDNN cannot fuse them.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "fusion.h"
#include "plan_builder.h"

namespace nxrt::onednn {

struct PlannedPostOps {
  dnnl::primitive_attr attr = PlanBuilder::base_attr();
  struct Operand {
    int index;  // position in the post-op chain
    ValueId value;
    memory::desc md;
  };
  std::vector<Operand> binary_operands;
  ValueId sum_operand = kNoValue;  // dst holds this value before the primitive adds into it
};

// The attribute for f.post_ops[first...] on a primitive whose output has `dst_dims`.
Expected<PlannedPostOps> plan_post_ops(const PlanBuilder& b, const FusedOp& f, const Dims& dst_dims,
                                       std::size_t first = 0);
// The primitive descriptor for `desc` with f's post-ops fused when oneDNN takes them
// (second: true), else without them (the caller then runs emit_unfused_post_ops).
template <class Pd, class Desc>
Expected<std::pair<Pd, bool>> pd_with_post_ops(const PlanBuilder& b, const FusedOp& f, const Desc& desc,
                                               const PlannedPostOps& post) {
  if (!f.post_ops.empty()) {
    try {
      Pd fused(desc, post.attr, b.engine());
      // Only oneDNN's reference kernel taking these post-ops is far slower than unfused steps.
      if (!std::string_view(fused.impl_info_str()).starts_with("ref")) return std::pair<Pd, bool>(std::move(fused), true);
    } catch (const dnnl::error&) {
      // oneDNN has no implementation with these post-ops: run them as their own steps.
    }
  }
  return dnnl_call(fmt::format("the onednn EP cannot build {}", b.graph().node(f.anchor).describe()),
                   [&] { return std::pair<Pd, bool>(Pd(desc, PlanBuilder::base_attr(), b.engine()), false); });
}

// The step's output view (defining f.output as `dst_md`) with the post-ops' operands bound
// in `args`; adds the copy that pre-fills dst for a sum when it cannot reuse the addend.
Expected<int> bind_fused_output(PlanBuilder& b, const FusedOp& f, const PlannedPostOps& p,
                                const memory::desc& dst_md, std::vector<std::pair<int, int>>& args);
// Appends those post-ops after the step that wrote view `dst` (the anchor's output).
Expected<void> emit_unfused_post_ops(PlanBuilder& b, const FusedOp& f, int dst, std::size_t first = 0);

}  // namespace nxrt::onednn
