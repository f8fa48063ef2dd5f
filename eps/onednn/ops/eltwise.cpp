// Activations and unary math on oneDNN's eltwise primitive (in place when the input dies):
// Relu, LeakyRelu, Sigmoid, Tanh, Elu, Exp, Log, Sqrt, Abs, Clip, HardSigmoid, HardSwish.
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::onednn {
namespace {

KernelMatch check_eltwise(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 1, 6));
  NXRT_REQUIRE(eltwise_specs(ctx).has_value(),
               "{}: the bounds must be constant scalars for the onednn EP (it builds them into its kernel); the cpu "
               "EP takes computed bounds",
               ctx.node().op_type);
  Cost cost;
  if (auto shape = ctx.input_static_shape(0)) cost.bytes_moved = 8.0 * static_cast<double>(shape_numel(*shape));
  return KernelMatch::supported(cost);
}

Expected<void> lower_eltwise(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const ValueId x = ctx.node().inputs[0];
  const auto specs = eltwise_specs(ctx);
  auto src = b.use(x, b.md(x));
  if (!src) return std::unexpected(std::move(src.error()));
  const memory::desc md = b.md(x);
  const int dst = b.can_overwrite(x, *src) ? b.define_in_place(f.output, md, *src) : b.define(f.output, md);
  int from = *src;
  for (const EltwiseSpec& e : *specs) {
    auto r = emit(b, f.anchor, [&] {
      dnnl::eltwise_forward::primitive_desc pd(
          dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, e.alg, md, e.alpha, e.beta),
          PlanBuilder::base_attr(), b.engine());
      b.add_step(dnnl::eltwise_forward(pd), pd, {{DNNL_ARG_SRC, from}, {DNNL_ARG_DST, dst}}, f);
    });
    if (!r) return r;
    from = dst;
  }
  return {};
}

OnednnOpDef eltwise(const char* op, int64_t since) {
  return {{{"", op, since}, 0, check_eltwise, {}}, lower_eltwise};
}

}  // namespace

std::vector<OnednnOpDef> eltwise_ops() {
  return {eltwise("Relu", 1),    eltwise("LeakyRelu", 1),   eltwise("Sigmoid", 1), eltwise("Tanh", 1),
          eltwise("Elu", 1),     eltwise("Exp", 1),         eltwise("Log", 1),     eltwise("Sqrt", 1),
          eltwise("Abs", 1),     eltwise("Clip", 1),        eltwise("HardSigmoid", 1),
          eltwise("HardSwish", 14)};
}

}  // namespace nxrt::onednn
