// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12, 13) over inputs
// (N, C, d1..dk): per-class weights, an ignore_index, reduction none / sum / mean, and
// SoftmaxCrossEntropyLoss's optional log-probability output.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"
#include "nxrt/ep/loss.h"

namespace nxrt::cpu {
namespace {

using LossTypes = FloatHalfTypes;

enum class Reduction { kNone, kSum, kMean };

struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  std::optional<int64_t> ignore_index;
};

LossAttrs loss_attrs(const NodeContext& ctx) {
  const std::string r = ctx.attrs().string_or("reduction", "mean");
  return {r == "none" ? Reduction::kNone : r == "sum" ? Reduction::kSum : Reduction::kMean,
          ctx.attrs().get_int("ignore_index")};
}

// Inputs: scores or log-probabilities (N, C, d1..dk), targets (N, d1..dk), weights (C).
KernelMatch check_loss(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, LossTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == ctx.input_dtype(0),
               "{}: weights (input 2) have type {}, expected {} like input 0", op, dtype_name(ctx.input_dtype(2)),
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(check_loss_node(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, 4));
}

// Per-position loss -x[n, t, d] * w[t] (0 where t is ignored) over log-probabilities lp of
// shape (N, C, D), reduced as asked: the mean divides by the weights of counted positions.
Expected<std::vector<double>> nll(const char* op, const LossAttrs& a, const double* lp,
                                  const std::vector<int64_t>& target, const std::vector<double>& weight,
                                  int64_t n, int64_t c, int64_t d) {
  std::vector<double> loss(static_cast<std::size_t>(n * d));
  double loss_sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      const int64_t p = i * d + j;
      const int64_t t = target[static_cast<std::size_t>(p)];
      if (a.ignore_index && t == *a.ignore_index) {
        loss[static_cast<std::size_t>(p)] = 0;
        continue;
      }
      if (t < 0 || t >= c)
        return fail(ErrorCode::kRuntime, fmt::format("{}: target {} at position {} is out of range", op, t, p),
                    fmt::format("targets must be class indices in [0, {}) or the ignore_index", c),
                    "fix the targets or set ignore_index");
      const double w = weight.empty() ? 1.0 : weight[static_cast<std::size_t>(t)];
      const double v = -lp[(i * c + t) * d + j] * w;
      loss[static_cast<std::size_t>(p)] = v;
      loss_sum += v;
      weight_sum += w;
    }
  if (a.reduction == Reduction::kNone) return loss;
  if (a.reduction == Reduction::kSum) return std::vector<double>{loss_sum};
  return std::vector<double>{loss_sum / weight_sum};
}

// log_softmax over axis 1 of x (N, C, D), in double.
std::vector<double> log_softmax(const Parallel& parallel, const std::vector<double>& x, int64_t n, int64_t c,
                                int64_t d) {
  std::vector<double> lp(x.size());
  parallel.for_range(n * d, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(c, 1)),
                     [&](int64_t b, int64_t e) {
                       for (int64_t p = b; p < e; ++p) {
                         const int64_t base = (p / d) * c * d + p % d;
                         double m = -INFINITY;
                         for (int64_t k = 0; k < c; ++k) m = std::max(m, x[static_cast<std::size_t>(base + k * d)]);
                         double s = 0;
                         for (int64_t k = 0; k < c; ++k) s += std::exp(x[static_cast<std::size_t>(base + k * d)] - m);
                         const double log_s = std::log(s);
                         for (int64_t k = 0; k < c; ++k) {
                           const auto at = static_cast<std::size_t>(base + k * d);
                           lp[at] = (x[at] - m) - log_s;
                         }
                       }
                     });
  return lp;
}

template <bool kSoftmax>
class LossKernel final : public Kernel {
 public:
  explicit LossKernel(LossAttrs attrs) : attrs_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    const char* op = kSoftmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
    const Tensor& x = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Shape& s = x.shape();
    if (s.size() < 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input 0 has rank {}", op, s.size()),
                  "expected (N, C, d1..dk) of rank 2 or more", "reshape the input");
    const int64_t n = s[0], c = s[1], d = dims_product(s, 2, s.size());
    Shape target_shape = s;
    target_shape.erase(target_shape.begin() + 1);
    if (target.shape() != target_shape)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: target has shape [{}] for input 0 of shape [{}]", op,
                              fmt::join(target.shape(), ","), fmt::join(s, ",")),
                  fmt::format("expected the target shape [{}]", fmt::join(target_shape, ",")), "fix the inputs");
    std::vector<double> weight;
    if (ctx.has_input(2)) {
      weight = numeric_as_double(ctx.input(2));
      if (static_cast<int64_t>(weight.size()) != c)
        return fail(ErrorCode::kRuntime, fmt::format("{}: weights have {} elements for {} classes", op, weight.size(), c),
                    "expected one weight per class", "fix the weights input");
    }
    std::vector<double> lp = numeric_as_double(x);
    if constexpr (kSoftmax) lp = log_softmax(ctx.parallel(), lp, n, c, d);
    auto loss = nll(op, attrs_, lp.data(), numeric_as_int64(target), weight, n, c, d);
    if (!loss) return std::unexpected(std::move(loss.error()));
    auto y = ctx.output(0, x.dtype(), attrs_.reduction == Reduction::kNone ? target_shape : Shape{});
    if (!y) return std::unexpected(std::move(y.error()));
    if (auto r = store(*loss, *y); !r) return r;
    if (!kSoftmax || ctx.output_count() < 2 || !ctx.wants_output(1)) return {};
    auto log_prob = ctx.output(1, x.dtype(), s);
    if (!log_prob) return std::unexpected(std::move(log_prob.error()));
    return store(lp, *log_prob);
  }
  std::string_view variant() const override { return "reference"; }

 private:
  static Expected<void> store(const std::vector<double>& values, const Tensor& out) {
    return dispatch_dtype(LossTypes{}, out.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      T* p = out.template mut_as<T>();
      for (std::size_t i = 0; i < values.size(); ++i) p[i] = static_cast<T>(static_cast<ComputeType<T>>(values[i]));
      return {};
    });
  }

  LossAttrs attrs_;
};

template <bool kSoftmax>
KernelDef loss_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_loss,
                   [](const NodeContext& ctx) { return make_kernel<LossKernel<kSoftmax>>(loss_attrs(ctx)); }};
}

}  // namespace

std::vector<KernelDef> loss_kernels() {
  return {
      loss_def<false>("NegativeLogLikelihoodLoss", 12, 12),
      loss_def<false>("NegativeLogLikelihoodLoss", 13, 0),
      loss_def<true>("SoftmaxCrossEntropyLoss", 12, 12),
      loss_def<true>("SoftmaxCrossEntropyLoss", 13, 0),
  };
}

}  // namespace nxrt::cpu
