// Arithmetic elementwise ops with multidirectional broadcasting: Add, Sub, Mul, Div, Pow.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// Integer results wrap like the hardware's: the arithmetic runs in an unsigned type at least
// as wide as int, where overflow is defined (signed overflow, and uint16 promoted to int
// and multiplied, would be undefined behaviour).
template <class T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
constexpr bool kWraps = std::is_integral_v<T>;

struct AddOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kWraps<T>) return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    else return a + b;
  }
};

struct SubOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kWraps<T>) return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
    else return a - b;
  }
};

struct MulOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kWraps<T>) return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    else return a * b;
  }
};

// Integer division truncates toward zero (C++ and ONNX Runtime semantics); a divisor of -1
// negates instead, because INT_MIN / -1 traps on x86. Zero divisors are rejected before.
struct DivOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return b == -1 ? static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a)) : static_cast<T>(a / b);
    else return a / b;
  }
};

KernelMatch check_arithmetic(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_count() == 2, "{}: expected 2 inputs, got {}", op, ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, NumericTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, NumericTypes{}));
  NXRT_REQUIRE(ctx.input_dtype(0) == ctx.input_dtype(1),
               "{}: inputs have types {} and {}; both must have the same type (insert a Cast)", op,
               dtype_name(ctx.input_dtype(0)), dtype_name(ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(require_broadcastable(ctx, {0, 1}));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Add, Sub, Mul and Div; Div also names its node in a division-by-zero error.
template <class Op>
class ArithmeticKernel final : public Kernel {
 public:
  explicit ArithmeticKernel(const NodeContext& ctx)
      : op_(ctx.node().op_type), node_(ctx.node().describe()) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(NumericTypes{}, ctx.input(0).dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<Op, DivOp> && std::is_integral_v<T>)
        if (auto r = require_nonzero_divisor<T>(ctx); !r) return r;
      return broadcast_binary<T, T, T>(ctx, op_, Op{});
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  template <class T>
  Expected<void> require_nonzero_divisor(const KernelContext& ctx) const {
    const Tensor& b = ctx.input(1);
    if (ctx.input(0).numel() == 0) return {};
    const T* pb = b.data_as<T>();
    const T* zero = std::find(pb, pb + b.numel(), T{0});
    if (zero == pb + b.numel()) return {};
    return fail(ErrorCode::kRuntime, fmt::format("integer division by zero in {}", node_),
                fmt::format("element {} of the divisor (input 1, {} {}) is 0", zero - pb,
                            dtype_name(b.dtype()), shape_to_string(b.shape())),
                "keep zeros out of the divisor or divide in floating point");
  }

  std::string op_;
  std::string node_;
};

template <class Op>
KernelDef arithmetic_def(const char* op) {
  return KernelDef{{"", op, 7}, 0, check_arithmetic,
                   [](const NodeContext& ctx) { return make_kernel<ArithmeticKernel<Op>>(ctx); }};
}

using PowBaseTypes = TypeList<float, double, int32_t, int64_t>;

// Integer base and exponent: exact repeated squaring (std::pow through double loses int64
// precision); a negative exponent gives the truncated reciprocal, 0 unless |base| is 1.
template <class T, class E>
T integer_power(T base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? -1 : 1;
      return 0;
    }
  }
  WrapType<T> result = 1, factor = static_cast<WrapType<T>>(base);
  for (auto n = static_cast<std::make_unsigned_t<E>>(exponent); n != 0; n >>= 1) {
    if (n & 1) result *= factor;
    factor *= factor;
  }
  return static_cast<T>(result);
}

struct PowOp {
  template <class T, class E>
  T operator()(T base, E exponent) const {
    if constexpr (std::is_floating_point_v<T>) return std::pow(base, static_cast<T>(exponent));
    else if constexpr (std::is_floating_point_v<E>)
      return static_cast<T>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    else return integer_power(base, exponent);
  }
};

KernelMatch check_pow(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2, "Pow: expected 2 inputs, got {}", ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, PowBaseTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, NumericTypes{}));
  NXRT_REQUIRE_MATCH(require_broadcastable(ctx, {0, 1}));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Pow; a scalar exponent of 1, 2, 3 or 0.5 (squares in norms, roots) skips std::pow, which
// is a libm call per element.
class PowKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(PowBaseTypes{}, ctx.input(0).dtype(), [&](auto base) {
      return dispatch_dtype(NumericTypes{}, ctx.input(1).dtype(), [&](auto exponent) {
        return run<typename decltype(base)::type, typename decltype(exponent)::type>(ctx);
      });
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  template <class T, class E>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& e = ctx.input(1);
    if (e.numel() == 1 && e.shape().size() <= ctx.input(0).shape().size()) {
      const double ev = static_cast<double>(e.data_as<E>()[0]);
      if (ev == 1) return broadcast_binary<T, E, T>(ctx, "Pow", [](T x, E) { return x; });
      if (ev == 2) return broadcast_binary<T, E, T>(ctx, "Pow", [](T x, E) { return MulOp{}(x, x); });
      if (ev == 3)
        return broadcast_binary<T, E, T>(ctx, "Pow", [](T x, E) { return MulOp{}(MulOp{}(x, x), x); });
      if constexpr (std::is_floating_point_v<T>)
        if (ev == 0.5) return broadcast_binary<T, E, T>(ctx, "Pow", [](T x, E) { return std::sqrt(x); });
    }
    return broadcast_binary<T, E, T>(ctx, "Pow", PowOp{});
  }
};

}  // namespace

std::vector<KernelDef> binary_kernels() {
  return {
      arithmetic_def<AddOp>("Add"),
      arithmetic_def<SubOp>("Sub"),
      arithmetic_def<MulOp>("Mul"),
      arithmetic_def<DivOp>("Div"),
      KernelDef{{"", "Pow", 7}, 0, check_pow, [](const NodeContext&) { return make_kernel<PowKernel>(); }},
  };
}

}  // namespace nxrt::cpu
