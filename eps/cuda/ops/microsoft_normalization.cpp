// ONNX Runtime's com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization (what
// they compute, their claim check and shapes in nxrt/ep/skip_layer_normalization.h): a block per
// row (kernel_library's skip_layer_norm), float, float16 and bfloat16, statistics in float.
#include <fmt/format.h>

#include <algorithm>

#include "nxrt/ep/skip_layer_normalization.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_skip_layer_norm(const NodeContext& ctx) {
  const std::string_view op = SkipNormForm::of(ctx.node()).op();
  NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  for (std::size_t i = 1; i < 4; ++i)
    if (ctx.has_output(i)) {
      const DType want = i == 3 ? ctx.input_dtype(0) : DType::kFloat32;
      const DType t = ctx.output_type(i) ? ctx.output_type(i)->dtype : DType::kUndefined;
      NXRT_REQUIRE(t == want || t == DType::kUndefined, "{}: output {} is {}; the cuda EP writes it as {}", op, i,
                   dtype_name(t), dtype_name(want));
    }
  return check_skip_norm_node(ctx);
}

Expected<void> build_skip_layer_norm(PlanBuilder& b, const Node& node) {
  const SkipNormForm form = SkipNormForm::of(node);
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
    if (auto shapes = check_skip_norm_shapes(form, ctx); !shapes) return forward_error(std::move(shapes), ctx.where());
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
