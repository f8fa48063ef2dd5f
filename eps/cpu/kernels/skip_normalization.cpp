// ONNX Runtime's residual-and-normalization fusions (com.microsoft, opset 1), as its transformer
// optimizer and GenAI model builder write them: each row of the last dim (hidden) of
//   sum = input + skip (+ bias)
// normalized. SkipLayerNormalization: y = (sum - mean) / sqrt(variance + epsilon) * gamma (+ beta);
// inputs input, skip, gamma, beta, bias. SkipSimplifiedLayerNormalization (RMS): y = sum /
// sqrt(mean(sum^2) + epsilon) * gamma; inputs input, skip, gamma, bias. Both: input [B, S, H] or
// [tokens, H], skip of input's shape or its trailing dims (repeated over the leading ones), gamma,
// beta and bias [H], all of one type (float or float16, computed in float, statistics in double);
// epsilon defaults to 1e-12. Optional outputs: mean and inv_std_var (float, [..., 1]; the
// simplified form writes 0 for mean, as ONNX Runtime does) and input_skip_bias_sum (the input's
// type and shape).
#include <fmt/format.h>

#include <cmath>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/row_norm.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// Where a form's inputs are: beta only in SkipLayerNormalization, bias after it.
struct SkipNormForm {
  bool simplified;
  std::string_view op() const { return simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization"; }
  std::optional<std::size_t> beta() const { return simplified ? std::nullopt : std::optional<std::size_t>(3); }
  std::size_t bias() const { return simplified ? 3 : 4; }

  static SkipNormForm of(const NodeContext& ctx) {
    return {ctx.node().op_type == "SkipSimplifiedLayerNormalization"};
  }
};

// Skip's shape, leading ones dropped, must be X's trailing dims.
bool skip_fits(const Shape& x, Shape skip) {
  while (!skip.empty() && skip.front() == 1 && skip.size() > 1) skip.erase(skip.begin());
  return skip.size() <= x.size() && std::equal(skip.rbegin(), skip.rend(), x.rbegin());
}

KernelMatch check_skip_norm(const NodeContext& ctx) {
  const SkipNormForm form = SkipNormForm::of(ctx);
  const std::string_view op = form.op();
  NXRT_REQUIRE(ctx.input_dtype(0) == DType::kFloat32 || ctx.input_dtype(0) == DType::kFloat16,
               "{}: input is {}; the cpu EP implements float and float16 (bfloat16 is not implemented)", op,
               dtype_name(ctx.input_dtype(0)));
  for (std::size_t i = 1; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == ctx.input_dtype(0),
                 "{}: input {} is {} and input 0 {}; all must be one type", op, i, dtype_name(ctx.input_dtype(i)),
                 dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.has_input(1) && ctx.has_input(2), "{}: skip (input 1) and gamma (input 2) are required", op);
  const auto x = ctx.input_static_shape(0);
  NXRT_REQUIRE(!x || x->size() == 2 || x->size() == 3, "{}: input has rank {}; it must be 3 [batch, sequence, "
               "hidden] or 2 [tokens, hidden]", op, x ? x->size() : 0);
  if (!x) return KernelMatch::supported(elementwise_cost(ctx, 8));
  const auto skip = ctx.input_static_shape(1);
  NXRT_REQUIRE(!skip || skip_fits(*x, *skip), "{}: skip has shape {}; it must be input's {} or its trailing dims",
               op, shape_to_string(skip.value_or(Shape{})), shape_to_string(*x));
  std::vector<std::size_t> vectors = {2, form.bias()};
  if (form.beta()) vectors.push_back(*form.beta());
  for (std::size_t i : vectors) {
    const auto s = ctx.has_input(i) ? ctx.input_static_shape(i) : std::nullopt;
    NXRT_REQUIRE(!s || (s->size() == 1 && s->front() == x->back()),
                 "{}: input {} has shape {}; it must be [{}], one value per element of the hidden dim", op, i,
                 shape_to_string(s.value_or(Shape{})), x->back());
  }
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

class SkipNormKernel final : public Kernel {
 public:
  SkipNormKernel(SkipNormForm form, float epsilon) : form_(form), epsilon_(epsilon) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat16) return run<Half>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "rows"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& skip = ctx.input(1);
    const Shape& s = x.shape();
    if (auto shapes = check_shapes(ctx); !shapes) return shapes;
    const int64_t hidden = s.back(), rows = hidden ? x.numel() / hidden : 0;
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(y.error());
    Shape stat_shape = s;
    stat_shape.back() = 1;
    float* stats[2] = {nullptr, nullptr};  // mean, inv_std_var
    for (std::size_t i : {1, 2})
      if (ctx.wants_output(i)) {
        auto t = ctx.output(i, DType::kFloat32, stat_shape);
        if (!t) return std::unexpected(t.error());
        stats[i - 1] = t->mut_as<float>();
      }
    T* sum_out = nullptr;
    if (ctx.wants_output(3)) {
      auto t = ctx.output(3, x.dtype(), s);
      if (!t) return std::unexpected(t.error());
      sum_out = t->template mut_as<T>();
    }
    auto optional_floats = [&](std::optional<std::size_t> i) {
      return i && ctx.has_input(*i) ? float_or_half_as_floats(ctx.input(*i)) : std::vector<float>{};
    };
    const std::vector<float> gamma = float_or_half_as_floats(ctx.input(2));
    const std::vector<float> beta = optional_floats(form_.beta());
    const std::vector<float> bias = optional_floats(form_.bias());
    const T* in = x.data_as<T>();
    const T* sk = skip.data_as<T>();
    const int64_t skip_rows = hidden ? skip.numel() / hidden : 1;
    T* out = y->template mut_as<T>();
    ctx.parallel().for_range(rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(hidden, 1)),
                             [&](int64_t r0, int64_t r1) {
      std::vector<float> sum(static_cast<std::size_t>(hidden));
      for (int64_t r = r0; r < r1; ++r) {
        const T* xr = in + r * hidden;
        const T* sr = sk + (r % skip_rows) * hidden;
        for (int64_t i = 0; i < hidden; ++i)
          sum[static_cast<std::size_t>(i)] = static_cast<float>(xr[i]) + static_cast<float>(sr[i]) +
                                             (bias.empty() ? 0.f : bias[static_cast<std::size_t>(i)]);
        if (sum_out)
          for (int64_t i = 0; i < hidden; ++i)
            sum_out[r * hidden + i] = static_cast<T>(sum[static_cast<std::size_t>(i)]);
        const RowStatistics st = row_statistics(sum.data(), hidden, epsilon_, form_.simplified);
        if (stats[0]) stats[0][r] = static_cast<float>(st.mean);
        if (stats[1]) stats[1][r] = static_cast<float>(st.inv_std);
        normalize_row_to(sum.data(), hidden, st, gamma, beta, out + r * hidden);
      }
    });
    return {};
  }

  // Run-time shapes (a claim saw only static ones): X rank 2 or 3, skip X's trailing dims, the
  // vectors one value per hidden element.
  Expected<void> check_shapes(KernelContext& ctx) const {
    const Shape& s = ctx.input(0).shape();
    auto wrong = [&](std::string what, std::string why) {
      return fail(ErrorCode::kRuntime, fmt::format("{}: {}", form_.op(), what), std::move(why),
                  "give tensors of the shapes ONNX Runtime's definition of the op states");
    };
    if (s.size() != 2 && s.size() != 3)
      return wrong(fmt::format("input has shape {}", shape_to_string(s)), "it must be [batch, sequence, hidden] or "
                                                                          "[tokens, hidden]");
    if (!skip_fits(s, ctx.input(1).shape()))
      return wrong(fmt::format("skip has shape {} for input {}", shape_to_string(ctx.input(1).shape()),
                               shape_to_string(s)),
                   "skip must have input's shape or its trailing dims");
    std::vector<std::size_t> vectors = {2, form_.bias()};
    if (form_.beta()) vectors.push_back(*form_.beta());
    for (std::size_t i : vectors)
      if (ctx.has_input(i) && ctx.input(i).numel() != s.back())
        return wrong(fmt::format("input {} has {} values", i, ctx.input(i).numel()),
                     fmt::format("gamma, beta and bias hold one value per element of the hidden dim, {}", s.back()));
    return {};
  }

  SkipNormForm form_;
  float epsilon_;
};

}  // namespace

std::vector<KernelDef> skip_normalization_kernels() {
  std::vector<KernelDef> defs;
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"})
    defs.push_back(KernelDef{{"com.microsoft", op, 1}, 0, check_skip_norm, [](const NodeContext& ctx) {
                               return make_kernel<SkipNormKernel>(SkipNormForm::of(ctx),
                                                                  ctx.attrs().float_or("epsilon", 1e-12f));
                             }});
  return defs;
}

}  // namespace nxrt::cpu
