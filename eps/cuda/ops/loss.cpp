// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12, 13) over (N, C, d1..dk):
// per-class weights, ignore_index, reduction none / sum / mean, and SoftmaxCrossEntropyLoss's
// log-probability output. SoftmaxCrossEntropyLoss first runs LogSoftmax over axis 1; the
// per-position losses are one kernel, a sum or mean one block more.
#include <fmt/format.h>

#include "nxrt/ep/loss.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_loss(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 2}));
  const DType target = ctx.input_dtype(1);
  NXRT_REQUIRE(target == DType::kInt32 || target == DType::kInt64, "{}: target (input 1) is {}; ONNX takes int32 or int64",
               op, dtype_name(target));
  return check_loss_node(ctx);
}

Expected<void> build_loss(PlanBuilder& b, const Node& node) {
  const bool softmax = node.op_type == "SoftmaxCrossEntropyLoss";
  const std::string reduction = node.attributes.string_or("reduction", "mean");
  const std::optional<int64_t> ignore = node.attributes.get_int("ignore_index");
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string index(chain_storage_type(b.graph().value(node.inputs[1]).type.dtype));
  // Per-position losses go to the output itself (reduction none) or to float scratch.
  const std::string per_position = reduction == "none" ? t : "float";
  const std::string nll = b.instantiate(
      "nll_loss", fmt::format("{}, {}, {}", t, index, per_position),
      fmt::format("i64 n, i64 classes, i64 d, const {0}* lp, const {1}* target, const {0}* weight, int has_ignore, "
                  "i64 ignore, {2}* loss, float* weights",
                  t, index, per_position),
      "n, classes, d, lp, target, weight, has_ignore, ignore, loss, weights");
  const std::string total =
      reduction == "none" ? std::string()
                          : b.instantiate("loss_total", t, fmt::format("i64 n, const float* loss, const float* weights, {}* out", t),
                                          "n, loss, weights, out");
  const std::optional<SoftmaxKernels> log_softmax = softmax ? std::optional(softmax_kernels(b, dtype)) : std::nullopt;
  b.add_step(make_step(node, "nvrtc:" + nll, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input 0 is {}; expected (N, C, d1..dk)", ctx.where(), shape_to_string(s)));
    const int64_t n = s[0], classes = s[1], d = dims_product(s, 2, s.size());
    Shape target_shape = s;
    target_shape.erase(target_shape.begin() + 1);
    if (ctx.input(1).shape() != target_shape)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: target is {} for input 0 of {}; expected {}", ctx.where(), shape_to_string(ctx.input(1).shape()),
                              shape_to_string(s), shape_to_string(target_shape)),
                  {}, "fix the inputs");
    if (ctx.has_input(2) && ctx.input(2).numel() != classes)
      return fail(ErrorCode::kRuntime, fmt::format("{}: the weights have {} values for {} classes", ctx.where(),
                                                   ctx.input(2).numel(), classes),
                  {}, "give one weight per class");
    auto loss = ctx.output(0, dtype, reduction == "none" ? target_shape : Shape{});
    if (!loss) return std::unexpected(loss.error());
    // The log-probabilities: the input itself, or its LogSoftmax over the classes.
    Tensor log_prob;  // lives until the losses are computed
    if (softmax) {
      auto out = ctx.wants_output(1) ? ctx.output(1, dtype, s) : ctx.scratch(std::max<std::size_t>(x.nbytes(), 1));
      if (!out) return std::unexpected(out.error());
      log_prob = std::move(*out);
      if (auto r = launch_softmax(ctx, *log_softmax, n, classes, d, dev(x), dev_mut(log_prob), 1); !r) return r;
    }
    const void* lp = softmax ? dev(log_prob) : dev(x);
    const int64_t positions = n * d;
    if (reduction == "none" && positions == 0) return {};
    auto scratch = [&](bool needed) -> Expected<Tensor> {
      return needed ? ctx.scratch(static_cast<std::size_t>(std::max<int64_t>(positions, 1)) * sizeof(float)) : Tensor();
    };
    auto losses = scratch(reduction != "none");
    auto weights = scratch(reduction == "mean");
    if (!losses) return std::unexpected(losses.error());
    if (!weights) return std::unexpected(weights.error());
    const void* weight = ctx.has_input(2) ? dev(ctx.input(2)) : nullptr;
    void* per_position_loss = reduction == "none" ? dev_mut(*loss) : dev_mut(*losses);
    float* per_position_weight = reduction == "mean" ? static_cast<float*>(dev_mut(*weights)) : nullptr;
    if (positions > 0) {
      KernelArgs args;
      args.add(n).add(classes).add(d).ptr(lp).ptr(dev(ctx.input(1))).ptr(weight).add(int{ignore.has_value()});
      args.add(ignore.value_or(0)).ptr(per_position_loss).ptr(per_position_weight);
      if (auto r = ctx.launch(nll, positions, args); !r) return r;
    }
    if (reduction == "none") return {};
    KernelArgs args;
    args.add(positions).ptr(dev(*losses)).ptr(per_position_weight).ptr(dev_mut(*loss));
    return ctx.launch_rows(total, 1, kRowBlockThreads, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> loss_ops() {
  std::vector<CudaOpDef> ops = make_op_versions("NegativeLogLikelihoodLoss", {12, 13}, check_loss, build_loss);
  for (auto& op : make_op_versions("SoftmaxCrossEntropyLoss", {12, 13}, check_loss, build_loss)) ops.push_back(std::move(op));
  return ops;
}

}  // namespace nxrt::cuda
