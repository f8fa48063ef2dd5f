// Unary elementwise ops on floating tensors: Relu, LeakyRelu, Sigmoid, Tanh, Erf, Exp,
// Log, Sqrt, Neg, Abs, Clip.
#include <cmath>
#include <limits>

#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// Applies fn to every element of input 0 of type T, in parallel chunks.
template <class T, class Fn>
Expected<void> map_elements(KernelContext& ctx, Fn fn) {
  const Tensor& x = ctx.input(0);
  auto y = ctx.output(0, x.dtype(), x.shape());
  if (!y) return std::unexpected(y.error());
  const T* in = x.data_as<T>();
  T* out = y->mut_as<T>();
  ctx.parallel().for_range(x.numel(), 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = fn(in[i]);
  });
  return {};
}

// A kernel applying one scalar function, for float and double.
template <class Fn>
class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(Fn fn) : fn_(fn) {}
  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return map_elements<double>(ctx, fn_);
    return map_elements<float>(ctx, fn_);
  }
  std::string_view variant() const override { return "unary-scalar"; }

 private:
  Fn fn_;
};

KernelMatch check_unary(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// A registration for an attribute-free op computing fn(x).
template <class Fn>
KernelDef unary_def(const char* op, int64_t since, Fn fn) {
  return KernelDef{{"", op, since}, 0, check_unary,
                   [fn](const NodeContext&) { return make_kernel<UnaryKernel<Fn>>(fn); }};
}

// LeakyRelu: alpha from the attribute.
KernelDef leaky_relu_def() {
  return KernelDef{{"", "LeakyRelu", 6}, 0, check_unary, [](const NodeContext& ctx) {
                     const float alpha = ctx.attrs().float_or("alpha", 0.01f);
                     auto fn = [alpha](auto x) { return x >= 0 ? x : x * alpha; };
                     return make_kernel<UnaryKernel<decltype(fn)>>(fn);
                   }};
}

// Clip-6 takes min/max as attributes; Clip-11+ as optional constant-or-runtime inputs.
KernelMatch check_clip(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_unary(ctx));
  for (std::size_t i = 1; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) continue;
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "Clip: bound input {} has type {}, expected {} like the data", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  }
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

class ClipKernel final : public Kernel {
 public:
  ClipKernel(float min, float max) : min_attr_(min), max_attr_(max) {}
  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    T lo = static_cast<T>(min_attr_), hi = static_cast<T>(max_attr_);
    if (ctx.has_input(1) && ctx.input(1).numel() == 1) lo = ctx.input(1).data_as<T>()[0];
    if (ctx.has_input(2) && ctx.input(2).numel() == 1) hi = ctx.input(2).data_as<T>()[0];
    return map_elements<T>(ctx, [lo, hi](T x) { return x < lo ? lo : (x > hi ? hi : x); });
  }
  float min_attr_, max_attr_;
};

KernelDef clip_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Clip", since}, until, check_clip, [](const NodeContext& ctx) {
                     return make_kernel<ClipKernel>(
                         ctx.attrs().float_or("min", std::numeric_limits<float>::lowest()),
                         ctx.attrs().float_or("max", std::numeric_limits<float>::max()));
                   }};
}

}  // namespace

std::vector<KernelDef> unary_kernels() {
  using std::abs, std::erf, std::exp, std::log, std::sqrt, std::tanh;
  return {
      unary_def("Relu", 6, [](auto x) { return x > 0 ? x : decltype(x)(0); }),
      unary_def("Neg", 6, [](auto x) { return -x; }),
      unary_def("Abs", 6, [](auto x) { return abs(x); }),
      unary_def("Exp", 6, [](auto x) { return exp(x); }),
      unary_def("Log", 6, [](auto x) { return log(x); }),
      unary_def("Sqrt", 6, [](auto x) { return sqrt(x); }),
      unary_def("Tanh", 6, [](auto x) { return tanh(x); }),
      unary_def("Erf", 9, [](auto x) { return erf(x); }),
      unary_def("Sigmoid", 6, [](auto x) { return decltype(x)(1) / (decltype(x)(1) + exp(-x)); }),
      leaky_relu_def(),
      clip_def(6, 10),
      clip_def(11, 0),
  };
}

}  // namespace nxrt::cpu
