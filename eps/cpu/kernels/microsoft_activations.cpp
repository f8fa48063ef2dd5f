// ONNX Runtime's fused activations (com.microsoft, opset 1), as its transformer optimizer writes
// them: Gelu (x * Phi(x), the exact normal CDF), FastGelu (its tanh approximation,
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))), BiasGelu (Gelu of A + B) and QuickGelu
// (x * sigmoid(alpha x), alpha 1.702 by default). FastGelu's optional bias and BiasGelu's B hold one
// value per element of the last dim, added before the activation. Float and float16 (computed in
// double, rounded once).
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

enum class Activation { kGelu, kFastGelu, kBiasGelu, kQuickGelu };

double activate(Activation a, double x, double alpha) {
  switch (a) {
    case Activation::kFastGelu:
      return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case Activation::kQuickGelu:
      return x / (1.0 + std::exp(-alpha * x));
    default:
      return 0.5 * x * (1.0 + std::erf(x * 0.7071067811865476));
  }
}

Activation activation_of(const std::string& op) {
  if (op == "FastGelu") return Activation::kFastGelu;
  if (op == "BiasGelu") return Activation::kBiasGelu;
  if (op == "QuickGelu") return Activation::kQuickGelu;
  return Activation::kGelu;
}

KernelMatch check_microsoft_activation(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_dtype(0) == DType::kFloat32 || ctx.input_dtype(0) == DType::kFloat16,
               "{}: X is {}; the cpu EP implements float and float16 (bfloat16 is not implemented)", op,
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(op != "BiasGelu" || ctx.has_input(1), "BiasGelu: B (input 1) is required");
  if (ctx.has_input(1)) {
    NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0), "{}: the bias is {} and X {}; they must be one type", op,
                 dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(0)));
    const auto x = ctx.input_static_shape(0), bias = ctx.input_static_shape(1);
    NXRT_REQUIRE(!x || !bias || (bias->size() == 1 && !x->empty() && bias->front() == x->back()),
                 "{}: the bias has shape {} for X {}; it must hold one value per element of X's last dim", op,
                 shape_to_string(bias.value_or(Shape{})), shape_to_string(x.value_or(Shape{})));
  }
  return KernelMatch::supported(elementwise_cost(ctx, 20));
}

class MicrosoftActivationKernel final : public Kernel {
 public:
  MicrosoftActivationKernel(std::string op, double alpha)
      : op_(std::move(op)), activation_(activation_of(op_)), alpha_(alpha) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat16) return run<Half>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "elementwise"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const int64_t last = x.shape().empty() ? 1 : x.shape().back();
    const T* bias = nullptr;
    if (ctx.has_input(1)) {
      if (x.shape().empty() || ctx.input(1).numel() != last)
        return fail(ErrorCode::kRuntime,
                    fmt::format("{}: the bias has {} values for X {}", op_, ctx.input(1).numel(),
                                shape_to_string(x.shape())),
                    "the bias adds one value per element of X's last dim",
                    fmt::format("give a bias of {} values", last));
      bias = ctx.input(1).data_as<T>();
    }
    auto y = ctx.output(0, x.dtype(), x.shape());
    if (!y) return std::unexpected(y.error());
    const T* in = x.data_as<T>();
    T* out = y->template mut_as<T>();
    ctx.parallel().for_range(x.numel(), kElementwiseGrain / 8, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const double v = static_cast<double>(static_cast<float>(in[i])) +
                         (bias ? static_cast<double>(static_cast<float>(bias[i % last])) : 0.0);
        out[i] = static_cast<T>(static_cast<float>(activate(activation_, v, alpha_)));
      }
    });
    return {};
  }

  std::string op_;
  Activation activation_;
  double alpha_;
};

}  // namespace

std::vector<KernelDef> microsoft_activation_kernels() {
  std::vector<KernelDef> defs;
  for (const char* op : {"Gelu", "FastGelu", "BiasGelu", "QuickGelu"})
    defs.push_back(KernelDef{{"com.microsoft", op, 1}, 0, check_microsoft_activation, [](const NodeContext& ctx) {
                               return make_kernel<MicrosoftActivationKernel>(ctx.node().op_type,
                                                                             ctx.attrs().float_or("alpha", 1.702f));
                             }});
  return defs;
}

}  // namespace nxrt::cpu
