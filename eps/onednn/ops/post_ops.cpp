// Fused and unfused post-ops (Add, activations) of a step.
#include "ops/post_ops.h"

#include <set>

#include "ops/op_util.h"

namespace nxrt::onednn {
namespace {

FusedOp single(NodeId node) {
  FusedOp f;
  f.anchor = node;
  f.members = {node};
  return f;
}

}  // namespace

Expected<PlannedPostOps> plan_post_ops(const PlanBuilder& b, const FusedOp& f, const Dims& dst_dims,
                                       std::size_t first) {
  PlannedPostOps p;
  dnnl::post_ops ops;
  for (std::size_t i = first; i < f.post_ops.size(); ++i) {
    const PostOp& op = f.post_ops[i];
    if (op.kind == PostOp::Kind::kEltwise) {
      for (const EltwiseSpec& e : op.eltwise) ops.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
      continue;
    }
    auto od = b.dims(op.operand);
    if (!od) return std::unexpected(std::move(od.error()));
    const Dims padded = pad_leading(*od, dst_dims.size());
    // Accumulating into dst needs dst pre-filled with the addend: free when the addend's
    // buffer can be taken over, a copy otherwise (then a binary post-op reads it instead).
    if (padded == dst_dims && p.sum_operand == kNoValue && b.is_last_use(op.operand)) {
      p.sum_operand = op.operand;
      ops.append_sum(1.0f);
      continue;
    }
    const memory::desc md = plain_md(padded);
    p.binary_operands.push_back({ops.len(), op.operand, md});
    ops.append_binary(dnnl::algorithm::binary_add, md);
  }
  p.attr.set_post_ops(ops);
  return p;
}

Expected<int> bind_fused_output(PlanBuilder& b, const FusedOp& f, const PlannedPostOps& p, const memory::desc& dst_md,
                                std::vector<std::pair<int, int>>& args) {
  for (const auto& operand : p.binary_operands) {
    auto view = b.use(operand.value, operand.md);
    if (!view) return std::unexpected(std::move(view.error()));
    args.emplace_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(operand.index) | DNNL_ARG_SRC_1, *view);
  }
  if (p.sum_operand == kNoValue) return b.define(f.output, dst_md);
  auto addend = b.use(p.sum_operand, dst_md);
  if (!addend) return std::unexpected(std::move(addend.error()));
  std::set<int> read_buffers;
  for (const auto& [arg, view] : args) read_buffers.insert(b.buffer_of(view));
  if (b.can_overwrite(p.sum_operand, *addend) && !read_buffers.contains(b.buffer_of(*addend)))
    return b.define_in_place(f.output, dst_md, *addend);
  const int dst = b.define(f.output, dst_md);
  auto r = emit(b, f.anchor, [&] {
    dnnl::reorder::primitive_desc pd(b.engine(), dst_md, b.engine(), dst_md, PlanBuilder::base_attr());
    b.add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, *addend}, {DNNL_ARG_TO, dst}}, f, "Copy");
  });
  if (!r) return std::unexpected(std::move(r.error()));
  return dst;
}

Expected<void> emit_unfused_post_ops(PlanBuilder& b, const FusedOp& f, int dst, std::size_t first) {
  const memory::desc dst_md = b.md(f.output);
  for (std::size_t i = first; i < f.post_ops.size(); ++i) {
    const PostOp& op = f.post_ops[i];
    const FusedOp step = single(op.node);
    if (op.kind == PostOp::Kind::kEltwise) {
      for (const EltwiseSpec& e : op.eltwise) {
        auto r = emit(b, op.node, [&] {
          dnnl::eltwise_forward::primitive_desc pd(
              dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, e.alg, dst_md, e.alpha, e.beta),
              PlanBuilder::base_attr(), b.engine());
          b.add_step(dnnl::eltwise_forward(pd), pd, {{DNNL_ARG_SRC, dst}, {DNNL_ARG_DST, dst}}, step);
        });
        if (!r) return r;
      }
      continue;
    }
    auto od = b.dims(op.operand);
    if (!od) return std::unexpected(std::move(od.error()));
    const Dims padded = pad_leading(*od, dst_md.dims().size());
    const memory::desc other_md = padded == dst_md.dims() ? dst_md : plain_md(padded);
    auto other = b.use(op.operand, other_md);
    if (!other) return std::unexpected(std::move(other.error()));
    auto r = emit(b, op.node, [&] {
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(dnnl::algorithm::binary_add, dst_md, other_md, dst_md),
                                      PlanBuilder::base_attr(), b.engine());
      b.add_step(dnnl::binary(pd), pd, {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, *other}, {DNNL_ARG_DST, dst}}, step);
    });
    if (!r) return r;
  }
  return {};
}

}  // namespace nxrt::onednn
