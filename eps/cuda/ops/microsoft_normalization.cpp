// ONNX Runtime's residual-and-normalization fusions (com.microsoft), as its transformer optimizer
// and GenAI model builder write them: each row of the hidden (last) dim of
//   sum = input + skip (+ bias)
// normalized, a block per row (kernel_library's skip_layer_norm). SkipLayerNormalization: inputs
// input, skip, gamma, beta, bias; (sum - mean) / sqrt(variance + epsilon) · gamma (+ beta).
// SkipSimplifiedLayerNormalization (RMS): inputs input, skip, gamma, bias; sum / sqrt(mean(sum²) +
// epsilon) · gamma. Input [batch, sequence, hidden] or [tokens, hidden]; skip input's shape or its
// trailing dims; gamma, beta and bias [hidden]; all of one float type (statistics in float).
// Optional outputs: mean and inv_std_var (float, [..., 1]; 0 for the simplified form's mean, as
// ONNX Runtime writes) and input_skip_bias_sum (input's type and shape).
#include <fmt/format.h>

#include <algorithm>

#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

// Where a form's inputs are: beta only in SkipLayerNormalization, bias after it.
struct SkipNormInputs {
  bool simplified;
  std::string_view op() const { return simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization"; }
  std::optional<std::size_t> beta() const { return simplified ? std::nullopt : std::optional<std::size_t>(3); }
  std::size_t bias() const { return simplified ? 3 : 4; }
  // gamma, bias and (when the form has it) beta: one value per hidden element.
  std::vector<std::size_t> vectors() const {
    std::vector<std::size_t> v = {2, bias()};
    if (beta()) v.push_back(*beta());
    return v;
  }

  static SkipNormInputs of(const Node& node) { return {node.op_type == "SkipSimplifiedLayerNormalization"}; }
};

// Skip's shape, leading ones dropped, must be input's trailing dims.
bool skip_shape_fits(const Shape& x, Shape skip) {
  while (skip.size() > 1 && skip.front() == 1) skip.erase(skip.begin());
  return skip.size() <= x.size() && std::equal(skip.rbegin(), skip.rend(), x.rbegin());
}

KernelMatch check_skip_layer_norm(const NodeContext& ctx) {
  const SkipNormInputs form = SkipNormInputs::of(ctx.node());
  const std::string_view op = form.op();
  NXRT_REQUIRE(ctx.has_input(1) && ctx.has_input(2), "{}: skip (input 1) and gamma (input 2) are required", op);
  std::vector<std::size_t> inputs;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) inputs.push_back(i);
  NXRT_REQUIRE_MATCH(require_float(ctx, inputs));
  for (std::size_t i = 1; i < 4; ++i)
    if (ctx.has_output(i)) {
      const DType want = i == 3 ? ctx.input_dtype(0) : DType::kFloat32;
      const DType t = ctx.output_type(i) ? ctx.output_type(i)->dtype : DType::kUndefined;
      NXRT_REQUIRE(t == want || t == DType::kUndefined, "{}: output {} is {}; the cuda EP writes it as {}", op, i,
                   dtype_name(t), dtype_name(want));
    }
  const auto x = ctx.input_static_shape(0);
  NXRT_REQUIRE(!x || x->size() == 2 || x->size() == 3,
               "{}: input has rank {}; it must be 3 [batch, sequence, hidden] or 2 [tokens, hidden]", op,
               x ? x->size() : 0);
  if (!x) return KernelMatch::supported();
  const auto skip = ctx.input_static_shape(1);
  NXRT_REQUIRE(!skip || skip_shape_fits(*x, *skip), "{}: skip has shape {}; it must be input's {} or its trailing dims",
               op, shape_to_string(skip.value_or(Shape{})), shape_to_string(*x));
  for (std::size_t i : form.vectors()) {
    const auto s = ctx.has_input(i) ? ctx.input_static_shape(i) : std::nullopt;
    NXRT_REQUIRE(!s || (s->size() == 1 && s->front() == x->back()),
                 "{}: input {} has shape {}; it must be [{}], one value per element of the hidden dim", op, i,
                 shape_to_string(s.value_or(Shape{})), x->back());
  }
  return KernelMatch::supported();
}

// The shapes a claim could not see: input rank 2 or 3, skip its trailing dims, the vectors one
// value per hidden element.
Expected<void> check_skip_norm_shapes(const StepContext& ctx, SkipNormInputs form) {
  const Shape& s = ctx.input(0).shape();
  auto wrong = [&](std::string what, std::string why) -> Expected<void> {
    return fail(ErrorCode::kRuntime, fmt::format("{}: {}", ctx.where(), what), std::move(why),
                "give tensors of the shapes ONNX Runtime's definition of the op states");
  };
  if (s.size() != 2 && s.size() != 3)
    return wrong(fmt::format("input has shape {}", shape_to_string(s)),
                 "it must be [batch, sequence, hidden] or [tokens, hidden]");
  if (!skip_shape_fits(s, ctx.input(1).shape()))
    return wrong(
        fmt::format("skip has shape {} for input {}", shape_to_string(ctx.input(1).shape()), shape_to_string(s)),
        "skip must have input's shape or its trailing dims");
  for (std::size_t i : form.vectors())
    if (ctx.has_input(i) && ctx.input(i).numel() != s.back())
      return wrong(fmt::format("input {} has {} values", i, ctx.input(i).numel()),
                   fmt::format("gamma, beta and bias hold one value per element of the hidden dim, {}", s.back()));
  return {};
}

Expected<void> build_skip_layer_norm(PlanBuilder& b, const Node& node) {
  const SkipNormInputs form = SkipNormInputs::of(node);
  const float eps = node.attributes.float_or("epsilon", 1e-12f);
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "skip_layer_norm", t,
      fmt::format("i64 rows, i64 cols, i64 skip_rows, const {0}* x, const {0}* skip, const {0}* gamma, "
                  "const {0}* beta, const {0}* bias, float eps, int simplified, {0}* y, float* mean_out, "
                  "float* inv_out, {0}* sum_out",
                  t),
      "rows, cols, skip_rows, x, skip, gamma, beta, bias, eps, simplified, y, mean_out, inv_out, sum_out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    if (auto shapes = check_skip_norm_shapes(ctx, form); !shapes) return shapes;
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const int64_t cols = s.back(), rows = cols ? x.numel() / cols : 0;
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    Shape stat_shape = s;
    stat_shape.back() = 1;
    void* outs[3] = {nullptr, nullptr, nullptr};  // mean, inv_std_var, input_skip_bias_sum
    for (std::size_t i : {1, 2, 3})
      if (ctx.wants_output(i)) {
        auto out = i == 3 ? ctx.output(i, dtype, s) : ctx.output(i, DType::kFloat32, stat_shape);
        if (!out) return std::unexpected(out.error());
        outs[i - 1] = dev_mut(*out);
      }
    if (x.numel() == 0) return {};
    auto optional_input = [&](std::optional<std::size_t> i) {
      return i && ctx.has_input(*i) ? dev(ctx.input(*i)) : nullptr;
    };
    KernelArgs args;
    args.add(rows).add(cols).add(std::max<int64_t>(1, ctx.input(1).numel() / cols));
    args.ptr(dev(x)).ptr(dev(ctx.input(1))).ptr(dev(ctx.input(2))).ptr(optional_input(form.beta()));
    args.ptr(optional_input(form.bias())).add(eps).add(int{form.simplified}).ptr(dev_mut(*y));
    args.ptr(outs[0]).ptr(outs[1]).ptr(outs[2]);
    return ctx.launch_rows(kernel, rows, kRowBlockThreads, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> microsoft_normalization_ops() {
  std::vector<CudaOpDef> ops;
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"})
    ops.push_back(make_microsoft_op(op, check_skip_layer_norm, build_skip_layer_norm));
  return ops;
}

}  // namespace nxrt::cuda
