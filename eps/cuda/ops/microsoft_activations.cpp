// ONNX Runtime's fused activations (com.microsoft), as its transformer optimizer writes them:
// Gelu (x·Φ(x), the exact normal CDF), FastGelu (the tanh approximation, of X + bias when the
// optional bias is given), BiasGelu (Gelu of A + B) and QuickGelu (x·sigmoid(alpha·x), alpha
// 1.702 by default). The bias holds one value per element of X's last dim, so numpy broadcasting
// adds it. Each is an expression the chain fuser inlines (float, float16 and bfloat16, computed in
// float), so a bias Add before it and the MatMul's neighbours fuse into one kernel.
#include <fmt/format.h>

#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

using Args = std::span<const std::string>;

KernelMatch check_microsoft_activation(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(op != "BiasGelu" || ctx.has_input(1), "BiasGelu: B (input 1) is required");
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1}));
  if (ctx.has_input(1)) {
    const auto x = ctx.input_static_shape(0), bias = ctx.input_static_shape(1);
    NXRT_REQUIRE(!x || !bias || (bias->size() == 1 && !x->empty() && bias->front() == x->back()),
                 "{}: the bias has shape {} for X {}; it must hold one value per element of X's last dim", op,
                 shape_to_string(bias.value_or(Shape{})), shape_to_string(x.value_or(Shape{})));
  }
  return KernelMatch::supported();
}

// X, or X + bias where the node has one.
std::string with_bias(Args a) { return a.size() > 1 && !a[1].empty() ? fmt::format("({} + {})", a[0], a[1]) : a[0]; }

CudaOpDef activation(std::string op, ExprFn expr) {
  CudaOpDef def = make_microsoft_op(std::move(op), check_microsoft_activation, nullptr);
  def.elementwise = ElementwiseDef{std::move(expr)};
  return def;
}

}  // namespace

std::vector<CudaOpDef> microsoft_activation_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(activation("Gelu", [](const Node&, Args a) { return gelu_expr(false, a[0]); }));
  ops.push_back(activation("BiasGelu", [](const Node&, Args a) { return gelu_expr(false, with_bias(a)); }));
  ops.push_back(activation("FastGelu", [](const Node&, Args a) { return gelu_expr(true, with_bias(a)); }));
  ops.push_back(activation("QuickGelu", [](const Node& n, Args a) {
    return fmt::format("({0} / (1.f + expf(-{1} * {0})))", a[0], float_literal(n.attributes.float_or("alpha", 1.702f)));
  }));
  return ops;
}

}  // namespace nxrt::cuda
