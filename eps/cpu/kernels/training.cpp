// ai.onnx.preview.training optimizers: Adagrad, Momentum (standard and Nesterov) and Adam,
// each updating several tensors in one node with the spec's formulas.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

// Inputs are R, T, then groups of n tensors: X, G and the rule's kStates state tensors.
// Outputs are n new X followed by n new tensors per state.
template <class Rule>
KernelMatch check_optimizer(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  constexpr std::size_t kGroups = 2 + Rule::kStates;
  const std::size_t tensors = ctx.input_count() >= 2 ? (ctx.input_count() - 2) / kGroups : 0;
  NXRT_REQUIRE(ctx.input_count() >= 2 + kGroups && (ctx.input_count() - 2) % kGroups == 0,
               "{}: {} inputs do not form R, T and {} groups of n tensors (X, G{})", op, ctx.input_count(), kGroups,
               Rule::kStates == 1 ? ", state" : ", V, H");
  NXRT_REQUIRE(ctx.output_count() <= tensors * (Rule::kStates + 1),
               "{}: {} outputs for {} optimized tensors; expected at most {}", op, ctx.output_count(), tensors,
               tensors * (Rule::kStates + 1));
  for (std::size_t i = 0; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(ctx.input_type(i) && ctx.input_type(i)->kind == ValueType::Kind::kTensor,
                 "{}: input {} is not a tensor; the cpu EP supports tensors only", op, i);
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 2, {DType::kFloat32, DType::kFloat64}));
  for (std::size_t i = 3; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(2), "{}: input {} has type {}, expected {} like the first X",
                 op, i, dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(2)));
  for (std::size_t i = 0; i < 2; ++i) {
    const auto n = static_numel(ctx.input_type(i));
    NXRT_REQUIRE(!n || *n == 1, "{}: input {} ({}) has {} elements; it must be a scalar", op, i, i == 0 ? "R" : "T",
                 *n);
  }
  NXRT_REQUIRE_MATCH(Rule::check(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, Rule::kFlops));
}

template <class Rule>
class OptimizerKernel final : public Kernel {
 public:
  explicit OptimizerKernel(Rule rule) : rule_(rule) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(2).dtype(), [&](auto tag) {
      return run<typename decltype(tag)::type>(ctx);
    });
  }

 private:
  static constexpr std::size_t kGroups = 2 + Rule::kStates;

  template <class T>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& r_tensor = ctx.input(0);
    const double r = r_tensor.dtype() == DType::kFloat32 ? r_tensor.data_as<float>()[0] : r_tensor.data_as<double>()[0];
    const int64_t t = ctx.input(1).data_as<int64_t>()[0];
    const auto step = rule_.at(r, t);
    const std::size_t n = (ctx.input_count() - 2) / kGroups;
    for (std::size_t k = 0; k < n; ++k) {
      const Tensor& x = ctx.input(2 + k);
      const T* in[kGroups];
      for (std::size_t g = 0; g < kGroups - 1; ++g) {
        const Tensor& v = ctx.input(2 + k + (g + 1) * n);
        if (v.shape() != x.shape())
          return fail(ErrorCode::kRuntime,
                      fmt::format("{}: input {} has shape {}, expected {} like its X (input {})", Rule::kName,
                                  2 + k + (g + 1) * n, shape_to_string(v.shape()), shape_to_string(x.shape()), 2 + k),
                      "every gradient and state tensor matches the tensor it updates", "fix the model's shapes");
        in[g + 1] = v.data_as<T>();
      }
      in[0] = x.data_as<T>();
      T* out[Rule::kStates + 1];
      std::size_t unused = 0;
      for (std::size_t o = 0; o <= Rule::kStates; ++o) {
        const std::size_t index = k + o * n;
        out[o] = nullptr;
        if (index >= ctx.output_count() || !ctx.wants_output(index)) {
          ++unused;
          continue;
        }
        auto y = ctx.output(index, x.dtype(), x.shape());
        if (!y) return std::unexpected(std::move(y.error()));
        out[o] = y->mut_as<T>();
      }
      // Outputs the model does not use still receive the update, into scratch memory.
      std::vector<T> scratch(unused * static_cast<std::size_t>(x.numel()));
      T* next = scratch.data();
      for (auto& o : out)
        if (!o) o = std::exchange(next, next + x.numel());
      ctx.parallel().for_range(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        double s_in[Rule::kStates], s_out[Rule::kStates];
        for (int64_t i = b; i < e; ++i) {
          for (std::size_t s = 0; s < Rule::kStates; ++s) s_in[s] = in[2 + s][i];
          out[0][i] = static_cast<T>(step(in[0][i], in[1][i], s_in, s_out));
          for (std::size_t s = 0; s < Rule::kStates; ++s) out[1 + s][i] = static_cast<T>(s_out[s]);
        }
      });
    }
    return {};
  }

  Rule rule_;
};

template <class Rule>
KernelDef optimizer_def() {
  return KernelDef{{kTrainingDomain, Rule::kName, 1}, 0, check_optimizer<Rule>,
                   [](const NodeContext& ctx) { return make_kernel<OptimizerKernel<Rule>>(Rule(ctx.attrs())); }};
}

// Adagrad: H accumulates squared gradients; the step shrinks with T through decay_factor.
struct AdagradRule {
  static constexpr const char* kName = "Adagrad";
  static constexpr std::size_t kStates = 1;
  static constexpr int kFlops = 8;
  double decay, epsilon, norm;

  explicit AdagradRule(const AttributeMap& a)
      : decay(a.float_or("decay_factor", 0)), epsilon(a.float_or("epsilon", 1e-6f)),
        norm(a.float_or("norm_coefficient", 0)) {}
  static KernelMatch check(const NodeContext&) { return KernelMatch::supported(); }

  auto at(double r, int64_t t) const {
    const double rate = r / (1 + static_cast<double>(t) * decay);
    return [rate, *this](double x, double g, const double* h, double* h_new) {
      const double gr = norm * x + g;
      h_new[0] = h[0] + gr * gr;
      return x - rate * gr / (std::sqrt(h_new[0]) + epsilon);
    };
  }
};

// Momentum: V accumulates gradients; the first step (T = 0) takes the full gradient.
struct MomentumRule {
  static constexpr const char* kName = "Momentum";
  static constexpr std::size_t kStates = 1;
  static constexpr int kFlops = 8;
  double alpha, beta, norm;
  bool nesterov;

  explicit MomentumRule(const AttributeMap& a)
      : alpha(a.float_or("alpha", 0)), beta(a.float_or("beta", 0)), norm(a.float_or("norm_coefficient", 0)),
        nesterov(a.string_or("mode", "") == "nesterov") {}
  static KernelMatch check(const NodeContext& ctx) {
    const auto& a = ctx.attrs();
    NXRT_REQUIRE(a.get_float("alpha") && a.get_float("beta") && a.get_float("norm_coefficient") && a.get_string("mode"),
                 "Momentum: the float attributes alpha, beta, norm_coefficient and the string mode are required");
    const std::string mode = a.string_or("mode", "");
    NXRT_REQUIRE(mode == "standard" || mode == "nesterov", "Momentum: mode '{}' is not one of standard, nesterov",
                 mode);
    return KernelMatch::supported();
  }

  auto at(double r, int64_t t) const {
    const double beta_adjusted = t > 0 ? beta : 1.0;
    return [r, beta_adjusted, *this](double x, double g, const double* v, double* v_new) {
      const double gr = norm * x + g;
      v_new[0] = alpha * v[0] + beta_adjusted * gr;
      return nesterov ? x - r * (gr + alpha * v_new[0]) : x - r * v_new[0];
    };
  }
};

// Adam: V and H are the running first and second moments, bias-corrected through R.
struct AdamRule {
  static constexpr const char* kName = "Adam";
  static constexpr std::size_t kStates = 2;
  static constexpr int kFlops = 14;
  double alpha, beta, epsilon, norm, norm_post;

  explicit AdamRule(const AttributeMap& a)
      : alpha(a.float_or("alpha", 0.9f)), beta(a.float_or("beta", 0.999f)), epsilon(a.float_or("epsilon", 1e-6f)),
        norm(a.float_or("norm_coefficient", 0)), norm_post(a.float_or("norm_coefficient_post", 0)) {}
  static KernelMatch check(const NodeContext&) { return KernelMatch::supported(); }

  auto at(double r, int64_t t) const {
    const double td = static_cast<double>(t);
    const double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta, td)) / (1 - std::pow(alpha, td)) : r;
    return [rate, *this](double x, double g, const double* s, double* s_new) {
      const double gr = norm * x + g;
      s_new[0] = alpha * s[0] + (1 - alpha) * gr;
      s_new[1] = beta * s[1] + (1 - beta) * gr * gr;
      const double x_new = x - rate * s_new[0] / (std::sqrt(s_new[1]) + epsilon);
      return (1 - norm_post) * x_new;
    };
  }
};

}  // namespace

std::vector<KernelDef> training_kernels() {
  return {
      optimizer_def<AdagradRule>(),
      optimizer_def<MomentumRule>(),
      optimizer_def<AdamRule>(),
  };
}

}  // namespace nxrt::cpu
