// ONNX Runtime's fused activations (com.microsoft, opset 1), as its transformer optimizer writes
// them: Gelu (x * Phi(x), the exact normal CDF), FastGelu (its tanh approximation,
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))), BiasGelu (Gelu of A + B) and QuickGelu
// (x * sigmoid(alpha x), alpha 1.702 by default). FastGelu's optional bias and BiasGelu's B hold one
// value per element of the last dim, added before the activation. Float and float16 (computed in
// float in SIMD registers, blocks of elements at a time; erf approximated as vector_math.h says,
// as ONNX Runtime's MLAS approximates it).
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <string>
#include <utility>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

enum class Activation { kGelu, kFastGelu, kBiasGelu, kQuickGelu };

// y = the activation of x over n floats.
void activate(Activation a, float alpha, const float* x, float* y, int64_t n) {
  switch (a) {
    case Activation::kFastGelu:
      return gelu_tanh(x, y, n);
    case Activation::kQuickGelu:
      return quick_gelu(x, alpha, y, n);
    default:
      return gelu_erf(x, y, n);
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
  MicrosoftActivationKernel(std::string op, float alpha)
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
    // Blocks of a row's elements (of the last dim, where the bias repeats): X (+ bias) in float,
    // activated, written back.
    constexpr int64_t kBlock = 256;
    const int64_t blocks_per_row = (last + kBlock - 1) / kBlock, rows = last ? x.numel() / last : 0;
    ctx.parallel().for_range(rows * blocks_per_row, std::max<int64_t>(1, kElementwiseGrain / kBlock),
                             [&](int64_t b0, int64_t b1) {
      float v[kBlock];
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t row = blk / blocks_per_row, col = blk % blocks_per_row * kBlock;
        const int64_t n = std::min(kBlock, last - col), at = row * last + col;
        for (int64_t i = 0; i < n; ++i)
          v[i] = static_cast<float>(in[at + i]) + (bias ? static_cast<float>(bias[col + i]) : 0.f);
        if constexpr (std::is_same_v<T, float>) {
          activate(activation_, alpha_, v, out + at, n);
        } else {
          activate(activation_, alpha_, v, v, n);
          for (int64_t i = 0; i < n; ++i) out[at + i] = static_cast<T>(v[i]);
        }
      }
    });
    return {};
  }

  std::string op_;
  Activation activation_;
  float alpha_;
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
