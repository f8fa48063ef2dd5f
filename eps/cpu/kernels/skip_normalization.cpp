// ONNX Runtime's com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization (what
// they compute, their claim check and shapes in nxrt/ep/skip_layer_normalization.h): float and
// float16, computed in float, statistics in double.
#include <fmt/format.h>

#include <cmath>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/row_norm.h"
#include "kernels/kernels.h"
#include "nxrt/ep/skip_layer_normalization.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_skip_norm(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_dtype(0) == DType::kFloat32 || ctx.input_dtype(0) == DType::kFloat16,
               "{}: input is {}; the cpu EP implements float and float16 (bfloat16 is not implemented)",
               SkipNormForm::of(ctx.node()).op(), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(check_skip_norm_node(ctx));
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
    // Run-time shapes (a claim saw only static ones).
    if (auto shapes = check_skip_norm_shapes(form_, ctx); !shapes) return shapes;
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

  SkipNormForm form_;
  float epsilon_;
};

}  // namespace

std::vector<KernelDef> skip_normalization_kernels() {
  std::vector<KernelDef> defs;
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"})
    defs.push_back(KernelDef{{"com.microsoft", op, 1}, 0, check_skip_norm, [](const NodeContext& ctx) {
                               return make_kernel<SkipNormKernel>(SkipNormForm::of(ctx.node()),
                                                                  ctx.attrs().float_or("epsilon", 1e-12f));
                             }});
  return defs;
}

}  // namespace nxrt::cpu
