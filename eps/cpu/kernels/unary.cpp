// Unary elementwise ops: math (Exp, Log, Sqrt, trigonometric and hyperbolic functions, Erf),
// rounding (Floor, Ceil, Round), Relu, LeakyRelu, Neg, Abs, Sign, Reciprocal, IsNaN,
// IsInf, Clip.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/float8.h"

namespace nxrt::cpu {
namespace {

// A float8 element of type K, read as the float it encodes (IsNaN-20 and IsInf-20 test it).
template <DType K>
struct Float8 {
  uint8_t bits = 0;
  operator float() const { return float8_to_float(K, bits); }  // NOLINT: reads like a float type
};

}  // namespace

template <DType K>
struct ElementDType<Float8<K>> {
  static constexpr DType kValue = K;
};

namespace {

// Opset 20 added the float8 types to IsNaN and IsInf.
using FloatHalfFloat8Types = TypeList<float, double, Half, Float8<DType::kFloat8E4M3FN>, Float8<DType::kFloat8E4M3FNUZ>,
                                      Float8<DType::kFloat8E5M2>, Float8<DType::kFloat8E5M2FNUZ>>;

// The value of an element of any of those types (double holds each exactly).
template <class X>
double value_of(X x) {
  return static_cast<double>(x);
}

// LeakyRelu: alpha from the attribute.
KernelDef leaky_relu_def() {
  return map_def_with("LeakyRelu", 1, [](const NodeContext& ctx) {
    const float alpha = ctx.attrs().float_or("alpha", 0.01f);
    return [alpha](auto x) { return x >= 0 ? x : static_cast<decltype(x)>(x * alpha); };
  });
}

// IsInf: which infinities count comes from detect_positive / detect_negative.
template <class Types>
KernelDef is_inf_def(int64_t since, int64_t until) {
  return map_def_with<Types, bool>("IsInf", since, [](const NodeContext& ctx) {
    const bool positive = ctx.attrs().int_or("detect_positive", 1) != 0;
    const bool negative = ctx.attrs().int_or("detect_negative", 1) != 0;
    return [positive, negative](auto x) {
      const double v = value_of(x);
      return std::isinf(v) && (v > 0 ? positive : negative);
    };
  }, until);
}

// Clip-1 and -6 take min/max as attributes (floats only); Clip-11 takes them as optional
// scalar inputs, Clip-12+ for every numeric type.
KernelMatch check_clip(const NodeContext& ctx) {
  if (ctx.opset() >= 12) NXRT_REQUIRE_MATCH(check_map<AllNumericTypes>(ctx));
  else NXRT_REQUIRE_MATCH(check_map<FloatHalfTypes>(ctx));
  for (std::size_t i = 1; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) continue;
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "Clip: bound input {} has type {}, expected {} like the data", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
    const auto n = static_numel(ctx.input_type(i));
    NXRT_REQUIRE(!n || *n <= 1, "Clip: bound input {} has {} elements; it must be a scalar", i, *n);
  }
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

class ClipKernel final : public Kernel {
 public:
  ClipKernel(std::optional<float> min, std::optional<float> max) : min_attr_(min), max_attr_(max) {}
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(AllNumericTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    using C = ComputeType<T>;
    C lo = min_attr_ ? static_cast<C>(*min_attr_) : std::numeric_limits<C>::lowest();
    C hi = max_attr_ ? static_cast<C>(*max_attr_) : std::numeric_limits<C>::max();
    // An empty bound tensor stands for an omitted one.
    if (ctx.has_input(1) && ctx.input(1).numel() == 1) lo = static_cast<C>(ctx.input(1).data_as<T>()[0]);
    if (ctx.has_input(2) && ctx.input(2).numel() == 1) hi = static_cast<C>(ctx.input(2).data_as<T>()[0]);
    // min(max(x, lo), hi): with lo > hi every element becomes hi, as the spec defines.
    return map_elements<T>(ctx, [lo, hi](C x) {
      const C up = x < lo ? lo : x;
      return up > hi ? hi : up;
    });
  }
  std::optional<float> min_attr_, max_attr_;
};

KernelDef clip_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Clip", since}, until, check_clip, [](const NodeContext& ctx) {
                     return make_kernel<ClipKernel>(ctx.attrs().get_float("min"), ctx.attrs().get_float("max"));
                   }};
}

template <class X>
X absolute(X x) {
  if constexpr (std::is_unsigned_v<X>) return x;
  else return x < 0 ? static_cast<X>(-x) : x;
}

template <class X>
X sign(X x) {
  if (x > 0) return X(1);
  if constexpr (std::is_signed_v<X> || std::is_floating_point_v<X>)
    if (x < 0) return X(-1);
  return x;  // 0, and NaN stays NaN
}

// Output 0 (float, input 0's shape) from float input 0, a chunk at a time in parallel:
// chunk(in, out, count).
template <class Chunk>
Expected<void> map_float_chunks(KernelContext& ctx, Chunk chunk) {
  const Tensor& x = ctx.input(0);
  auto y = ctx.output(0, DType::kFloat32, x.shape());
  if (!y) return std::unexpected(std::move(y.error()));
  const float* in = x.data_as<float>();
  float* out = y->mut_as<float>();
  ctx.parallel().for_range(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) { chunk(in + b, out + b, e - b); });
  return {};
}

// Sigmoid: float in SIMD vectors (vector_math's exp), double and float16 by the formula.
class SigmoidKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float>) {
        return map_float_chunks(ctx, [](const float* in, float* out, int64_t n) { sigmoid(in, out, n); });
      } else {
        return map_elements<T>(ctx, [](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); });
      }
    });
  }
  std::string_view variant() const override { return "vector-exp"; }
};

// y = x * sigmoid(x) = x / (1 + exp(-x)), a chunk at a time: ONNX Runtime's QuickGelu with alpha
// 1, in one pass (where the sigmoids were stored, then multiplied by x in a second pass, it took
// 1.18 times as long for Llama's [128, 1376]), and rounded once instead of twice.
void times_sigmoid(const float* x, float* y, int64_t n) { quick_gelu(x, 1.0f, y, n); }

// Sigmoid and the Mul of its input by it (SiLU, as Llama's MLP writes it) as one float step,
// built by the cpu EP's fusion step (fusion.h): the sigmoids are never stored.
class TimesSigmoidKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override { return map_float_chunks(ctx, times_sigmoid); }
  std::string_view variant() const override { return "vector-exp*x"; }
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_times_sigmoid() { return make_kernel<TimesSigmoidKernel>(); }

std::vector<KernelDef> unary_kernels() {
  using std::exp, std::log;
  auto relu = [](auto x) { return x > 0 ? x : decltype(x)(0); };
  return {
      map_def("Relu", 1, relu, 13),
      map_def<SignedTypes>("Relu", 14, relu),
      map_def<SignedTypes>("Neg", 1, [](auto x) { return static_cast<decltype(x)>(-x); }),
      map_def<AllNumericTypes>("Abs", 1, [](auto x) { return absolute(x); }),
      map_def<AllNumericTypes>("Sign", 9, [](auto x) { return sign(x); }),
      map_def("Exp", 1, [](auto x) { return exp(x); }),
      map_def("Log", 1, [](auto x) { return log(x); }),
      map_def("Sqrt", 1, [](auto x) { return std::sqrt(x); }),
      map_def("Tanh", 1, [](auto x) { return std::tanh(x); }),
      map_def("Erf", 9, [](auto x) { return std::erf(x); }),
      KernelDef{{"", "Sigmoid", 1},
                0,
                check_map<FloatHalfTypes>,
                [](const NodeContext&) { return make_kernel<SigmoidKernel>(); }},
      map_def("Sin", 7, [](auto x) { return std::sin(x); }),
      map_def("Cos", 7, [](auto x) { return std::cos(x); }),
      map_def("Tan", 7, [](auto x) { return std::tan(x); }),
      map_def("Asin", 7, [](auto x) { return std::asin(x); }),
      map_def("Acos", 7, [](auto x) { return std::acos(x); }),
      map_def("Atan", 7, [](auto x) { return std::atan(x); }),
      map_def("Sinh", 9, [](auto x) { return std::sinh(x); }),
      map_def("Cosh", 9, [](auto x) { return std::cosh(x); }),
      map_def("Asinh", 9, [](auto x) { return std::asinh(x); }),
      map_def("Acosh", 9, [](auto x) { return std::acosh(x); }),
      map_def("Atanh", 9, [](auto x) { return std::atanh(x); }),
      map_def("Floor", 1, [](auto x) { return std::floor(x); }),
      map_def("Ceil", 1, [](auto x) { return std::ceil(x); }),
      // nearbyint in the default rounding mode rounds halves to even, as Round specifies.
      map_def("Round", 11, [](auto x) { return std::nearbyint(x); }),
      map_def("Reciprocal", 1, [](auto x) { return decltype(x)(1) / x; }),
      map_def<FloatHalfTypes, bool>(
          "IsNaN", 9, [](auto x) { return std::isnan(value_of(x)); }, 19),
      map_def<FloatHalfFloat8Types, bool>("IsNaN", 20, [](auto x) { return std::isnan(value_of(x)); }),
      is_inf_def<FloatHalfTypes>(10, 19),
      is_inf_def<FloatHalfFloat8Types>(20, 0),
      leaky_relu_def(),
      clip_def(1, 10),
      clip_def(11, 0),
  };
}

}  // namespace nxrt::cpu
