// Arithmetic elementwise ops with multidirectional (opset 7+) or legacy (opset 1-6)
// broadcasting: Add, Sub, Mul, Div, Pow, Mod.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "common/broadcast.h"
#include "common/elementwise.h"
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

template <class T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half>;

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

// Integer Div and Mod fail on a zero divisor (input 1), naming the node.
template <class T>
Expected<void> require_nonzero_divisor(const KernelContext& ctx, const std::string& node) {
  const Tensor& b = ctx.input(1);
  if (ctx.input(0).numel() == 0) return {};
  const T* pb = b.data_as<T>();
  const T* zero = std::find(pb, pb + b.numel(), T{0});
  if (zero == pb + b.numel()) return {};
  return fail(ErrorCode::kRuntime, fmt::format("integer division by zero in {}", node),
              fmt::format("element {} of the divisor (input 1, {} {}) is 0", zero - pb,
                          dtype_name(b.dtype()), shape_to_string(b.shape())),
              "keep zeros out of the divisor or divide in floating point");
}

KernelMatch check_arithmetic(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_count() == 2, "{}: expected 2 inputs, got {}", op, ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, AllNumericTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, AllNumericTypes{}));
  NXRT_REQUIRE(ctx.input_dtype(0) == ctx.input_dtype(1),
               "{}: inputs have types {} and {}; both must have the same type (insert a Cast)", op,
               dtype_name(ctx.input_dtype(0)), dtype_name(ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(require_legacy_broadcastable(ctx, LegacyBroadcast::from(ctx)));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Add, Sub, Mul and Div; Div also names its node in a division-by-zero error.
template <class Op>
class ArithmeticKernel final : public Kernel {
 public:
  explicit ArithmeticKernel(const NodeContext& ctx)
      : op_(ctx.node().op_type), node_(ctx.node().describe()), legacy_(LegacyBroadcast::from(ctx)) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(AllNumericTypes{}, ctx.input(0).dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<Op, DivOp> && std::is_integral_v<T>)
        if (auto r = require_nonzero_divisor<T>(ctx, node_); !r) return r;
      return broadcast_binary_legacy<T, T, T>(ctx, op_, legacy_, Op{});
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  std::string op_;
  std::string node_;
  LegacyBroadcast legacy_;
};

// Opsets 1-6 broadcast per the legacy attributes, 7+ like numpy.
template <class Op>
KernelDef arithmetic_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_arithmetic,
                   [](const NodeContext& ctx) { return make_kernel<ArithmeticKernel<Op>>(ctx); }};
}

using PowBaseTypes = TypeList<float, double, Half, int32_t, int64_t>;
using PowExponentTypes = AllNumericTypes;

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
    if constexpr (kIsFloat<T>) {
      using C = ComputeType<T>;
      return static_cast<T>(std::pow(static_cast<C>(base), static_cast<C>(exponent)));
    } else if constexpr (kIsFloat<E>) {
      return static_cast<T>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
    } else {
      return integer_power(base, exponent);
    }
  }
};

// Pow-1 and -7 take one type for both inputs; Pow-12+ lets the exponent's type differ.
KernelMatch check_pow(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2, "Pow: expected 2 inputs, got {}", ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, PowBaseTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, PowExponentTypes{}));
  NXRT_REQUIRE_MATCH(require_legacy_broadcastable(ctx, LegacyBroadcast::from(ctx)));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Pow; a scalar exponent of 1, 2, 3 or 0.5 (squares in norms, roots) skips std::pow, which
// is a libm call per element.
class PowKernel final : public Kernel {
 public:
  explicit PowKernel(const NodeContext& ctx) : legacy_(LegacyBroadcast::from(ctx)) {}
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(PowBaseTypes{}, ctx.input(0).dtype(), [&](auto base) {
      return dispatch_dtype(PowExponentTypes{}, ctx.input(1).dtype(), [&](auto exponent) {
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
      if (ev == 2) return broadcast_binary<T, E, T>(ctx, "Pow", [](T x, E) { return static_cast<T>(MulOp{}(x, x)); });
      if (ev == 3)
        return broadcast_binary<T, E, T>(ctx, "Pow", [](T x, E) { return static_cast<T>(MulOp{}(MulOp{}(x, x), x)); });
      if constexpr (kIsFloat<T>)
        if (ev == 0.5)
          return broadcast_binary<T, E, T>(ctx, "Pow", [](T x, E) { return static_cast<T>(std::sqrt(ComputeType<T>(x))); });
    }
    return broadcast_binary_legacy<T, E, T>(ctx, "Pow", legacy_, PowOp{});
  }
  LegacyBroadcast legacy_;
};

// Mod with fmod=1 takes the dividend's sign (C's fmod and %); with fmod=0 the divisor's
// (Python's %), which ONNX defines for integers and this EP also computes for floats.
template <bool kFmod>
struct ModOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      using C = ComputeType<T>;
      C r = std::fmod(static_cast<C>(a), static_cast<C>(b));
      if (!kFmod && r != 0 && ((r < 0) != (static_cast<C>(b) < 0))) r += static_cast<C>(b);
      return static_cast<T>(r);
    } else if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;  // INT_MIN % -1 traps on x86
      T r = static_cast<T>(a % b);
      if (!kFmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  }
};

KernelMatch check_mod(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_arithmetic(ctx));
  const int64_t fmod = ctx.attrs().int_or("fmod", 0);
  NXRT_REQUIRE(fmod == 0 || fmod == 1, "Mod: fmod is {}; it must be 0 or 1", fmod);
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

class ModKernel final : public Kernel {
 public:
  explicit ModKernel(const NodeContext& ctx)
      : node_(ctx.node().describe()), fmod_(ctx.attrs().int_or("fmod", 0) != 0) {}
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(AllNumericTypes{}, ctx.input(0).dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>)
        if (auto r = require_nonzero_divisor<T>(ctx, node_); !r) return r;
      if (fmod_) return broadcast_binary<T, T, T>(ctx, "Mod", ModOp<true>{});
      return broadcast_binary<T, T, T>(ctx, "Mod", ModOp<false>{});
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  std::string node_;
  bool fmod_;
};

}  // namespace

std::vector<KernelDef> binary_kernels() {
  return {
      arithmetic_def<AddOp>("Add", 1, 6),
      arithmetic_def<AddOp>("Add", 7, 0),
      arithmetic_def<SubOp>("Sub", 1, 6),
      arithmetic_def<SubOp>("Sub", 7, 0),
      arithmetic_def<MulOp>("Mul", 1, 6),
      arithmetic_def<MulOp>("Mul", 7, 0),
      arithmetic_def<DivOp>("Div", 1, 6),
      arithmetic_def<DivOp>("Div", 7, 0),
      KernelDef{{"", "Pow", 1}, 6, check_pow, [](const NodeContext& ctx) { return make_kernel<PowKernel>(ctx); }},
      KernelDef{{"", "Pow", 7}, 0, check_pow, [](const NodeContext& ctx) { return make_kernel<PowKernel>(ctx); }},
      KernelDef{{"", "Mod", 10}, 0, check_mod, [](const NodeContext& ctx) { return make_kernel<ModKernel>(ctx); }},
  };
}

}  // namespace nxrt::cpu
