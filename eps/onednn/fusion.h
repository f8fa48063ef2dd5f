// Groups a partition's nodes into fused steps: BatchNormalization folded into the Conv before
// it, Add and activations after Conv/MatMul/Gemm as oneDNN post-ops (x * Sigmoid(x), SiLU, as
// one swish), and the written-out LayerNormalization and Gelu subgraphs (patterns.h) as one
// step each.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "nxrt/ep/provider.h"
#include "patterns.h"

namespace nxrt::onednn {

// One oneDNN eltwise operation: dst = alg(src; alpha, beta).
struct EltwiseSpec {
  dnnl::algorithm alg = dnnl::algorithm::eltwise_relu;
  float alpha = 0;
  float beta = 0;
};

// An operation appended to an anchor node's primitive (a Gelu pattern is one eltwise post-op
// whose node is the pattern's anchor).
struct PostOp {
  enum class Kind { kEltwise, kAdd };
  Kind kind = Kind::kEltwise;
  NodeId node = -1;
  std::vector<EltwiseSpec> eltwise;  // kEltwise: one or more (HardSigmoid is linear + clip)
  ValueId operand = kNoValue;        // kAdd: the other addend
};

// One step of the plan: the anchor node's primitive with what was fused into it.
struct FusedOp {
  NodeId anchor = -1;
  std::optional<NodeId> folded_bn;  // BatchNormalization folded into the anchor Conv
  std::vector<PostOp> post_ops;
  std::vector<NodeId> members;      // anchor, folded and post-op nodes, in graph order
  ValueId output = kNoValue;        // the value the step produces (the last member's)
  // The members are this pattern, run as one primitive by the lowering of its anchor.
  std::optional<PatternMatch> pattern;
};

// The eltwise form of an activation node, or nullopt when the node is not one (or has
// inputs that are not constant where oneDNN needs constants, like Clip's bounds).
std::optional<std::vector<EltwiseSpec>> eltwise_specs(const NodeContext& ctx);

// Fused steps in an order that respects every dependency. `is_constant` says whether a
// value is a weight known at compile time.
std::vector<FusedOp> fuse_partition(const Partition& partition,
                                    const std::function<bool(ValueId)>& is_constant);

}  // namespace nxrt::onednn
