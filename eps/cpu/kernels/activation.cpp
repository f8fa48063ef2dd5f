// Activation functions: Elu, Selu, Celu, HardSigmoid, HardSwish, Softplus, Softsign,
// ThresholdedRelu, Shrink, Mish, Gelu, Swish, and PRelu with its broadcast slope.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/prelu.h"

namespace nxrt::cpu {
namespace {

// log(1 + exp(x)) without overflow for large x.
template <class X>
X softplus(X x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Gelu-20: x * Phi(x) with the exact normal CDF (approximate "none") or its tanh form.
KernelDef gelu_def() {
  KernelDef def = map_def_with("Gelu", 20, [](const NodeContext& ctx) {
    const bool tanh_form = ctx.attrs().string_or("approximate", "none") == "tanh";
    return [tanh_form](auto x) {
      using X = decltype(x);
      const double v = x;
      if (tanh_form)
        return static_cast<X>(0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
      return static_cast<X>(0.5 * v * (1.0 + std::erf(v * 0.7071067811865476)));
    };
  });
  def.check = [](const NodeContext& ctx) {
    const std::string approximate = ctx.attrs().string_or("approximate", "none");
    NXRT_REQUIRE(approximate == "none" || approximate == "tanh",
                 "Gelu: approximate '{}' is not valid; use none or tanh", approximate);
    return check_map<FloatHalfTypes>(ctx);
  };
  return def;
}

// Swish-24: x * sigmoid(alpha * x).
KernelDef swish_def() {
  return map_def_with("Swish", 24, [](const NodeContext& ctx) {
    const float alpha = ctx.attrs().float_or("alpha", 1.0f);
    return [alpha](auto x) {
      using X = decltype(x);
      return static_cast<X>(x / (X(1) + std::exp(-static_cast<X>(alpha) * x)));
    };
  });
}

KernelDef elu_def() {
  return map_def_with("Elu", 1, [](const NodeContext& ctx) {
    const float alpha = ctx.attrs().float_or("alpha", 1.0f);
    return [alpha](auto x) { return x < 0 ? static_cast<decltype(x)>(alpha * std::expm1(x)) : x; };
  });
}

KernelDef selu_def() {
  return map_def_with("Selu", 1, [](const NodeContext& ctx) {
    const double alpha = ctx.attrs().float_or("alpha", 1.67326319217681884765625f);
    const double gamma = ctx.attrs().float_or("gamma", 1.05070102519989013671875f);
    return [alpha, gamma](auto x) {
      using X = decltype(x);
      return static_cast<X>(x > 0 ? gamma * x : gamma * alpha * std::expm1(static_cast<double>(x)));
    };
  });
}

KernelDef celu_def() {
  return map_def_with("Celu", 12, [](const NodeContext& ctx) {
    const float alpha = ctx.attrs().float_or("alpha", 1.0f);
    return [alpha](auto x) {
      using X = decltype(x);
      return x > 0 ? x : static_cast<X>(alpha * std::expm1(x / static_cast<X>(alpha)));
    };
  });
}

KernelDef hard_sigmoid_def() {
  return map_def_with("HardSigmoid", 1, [](const NodeContext& ctx) {
    const float alpha = ctx.attrs().float_or("alpha", 0.2f);
    const float beta = ctx.attrs().float_or("beta", 0.5f);
    return [alpha, beta](auto x) {
      using X = decltype(x);
      return std::clamp(static_cast<X>(alpha * x + beta), X(0), X(1));
    };
  });
}

KernelDef thresholded_relu_def() {
  return map_def_with("ThresholdedRelu", 10, [](const NodeContext& ctx) {
    const float alpha = ctx.attrs().float_or("alpha", 1.0f);
    return [alpha](auto x) { return x > alpha ? x : decltype(x)(0); };
  });
}

// Shrink on every numeric type: the thresholds compare and the bias applies in float.
KernelDef shrink_def() {
  return map_def_with<AllNumericTypes>("Shrink", 9, [](const NodeContext& ctx) {
    const float bias = ctx.attrs().float_or("bias", 0.0f);
    const float lambd = ctx.attrs().float_or("lambd", 0.5f);
    return [bias, lambd](auto x) {
      using X = decltype(x);
      if (x < -lambd) return static_cast<X>(x + bias);
      if (x > lambd) return static_cast<X>(x - bias);
      return X(0);
    };
  });
}

// The slope as numpy rules read it (lib's prelu_slope_per_channel: opset 6's per-channel slope
// viewed as [C, 1, ...]).
Shape prelu_slope_shape(int64_t opset, const Shape& x, const Shape& slope) {
  if (!prelu_slope_per_channel(opset, x, slope)) return slope;
  Shape aligned(x.size() - 1, 1);
  aligned[0] = slope[0];
  return aligned;
}

KernelMatch check_prelu(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2, "PRelu: expected 2 inputs, got {}", ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, SignedTypes{}));
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0),
               "PRelu: slope has type {} and X {}; both must have the same type (insert a Cast)",
               dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(0)));
  const auto x = ctx.input_static_shape(0);
  const auto slope = ctx.input_static_shape(1);
  if (!x || !slope) return KernelMatch::supported(elementwise_cost(ctx, 1));
  const Shape aligned = prelu_slope_shape(ctx.opset(), *x, *slope);
  auto out = broadcast_shape("PRelu", std::array{&*x, &aligned});
  NXRT_REQUIRE(out && *out == *x, "PRelu: slope {} does not broadcast onto X {}; give a slope whose dims are "
               "1 or X's, aligned at the right", shape_to_string(*slope), shape_to_string(*x));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

class PReluKernel final : public Kernel {
 public:
  explicit PReluKernel(int64_t opset) : opset_(opset) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor slope = ctx.input(1).reshaped(prelu_slope_shape(opset_, x.shape(), ctx.input(1).shape()));
    auto shape = broadcast_shape("PRelu", std::array{&x.shape(), &slope.shape()});
    if (!shape) return std::unexpected(std::move(shape.error()));
    if (*shape != x.shape())
      return fail(ErrorCode::kRuntime,
                  fmt::format("PRelu: slope {} does not broadcast onto X {}", shape_to_string(slope.shape()),
                              shape_to_string(x.shape())),
                  fmt::format("broadcasting gives {}; the output must have X's shape", shape_to_string(*shape)),
                  "give a slope whose dims are 1 or X's, aligned at the right");
    return dispatch_dtype(SignedTypes{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return broadcast_binary<T, T, T>(ctx, "PRelu", x, slope, [](T v, T a) {
        return v < T(0) ? static_cast<T>(a * v) : v;
      });
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  int64_t opset_;
};

KernelDef prelu_def(int64_t since, int64_t until) {
  return KernelDef{{"", "PRelu", since}, until, check_prelu,
                   [](const NodeContext& ctx) { return make_kernel<PReluKernel>(ctx.opset()); }};
}

}  // namespace

std::vector<KernelDef> activation_kernels() {
  return {
      elu_def(),
      selu_def(),
      celu_def(),
      hard_sigmoid_def(),
      map_def("HardSwish", 14,
              [](auto x) {
                using X = decltype(x);
                return x * std::clamp(static_cast<X>(x / X(6) + X(0.5)), X(0), X(1));
              }),
      map_def("Softplus", 1, [](auto x) { return softplus(x); }),
      map_def("Softsign", 1, [](auto x) { return x / (decltype(x)(1) + std::abs(x)); }),
      map_def("Mish", 18, [](auto x) { return x * std::tanh(softplus(x)); }),
      gelu_def(),
      swish_def(),
      thresholded_relu_def(),
      shrink_def(),
      prelu_def(1, 6),
      prelu_def(7, 0),
  };
}

}  // namespace nxrt::cpu
