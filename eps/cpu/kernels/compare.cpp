// Comparisons and logic with multidirectional (opset 7+) or legacy (opset 1-6)
// broadcasting: Equal, Less, Greater, LessOrEqual, GreaterOrEqual (to bool), Not, And, Or,
// Xor, and the 3-way Where.
#include <string>
#include <type_traits>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using CompareTypes = TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                              int64_t, uint64_t, bool>;
using EqualTypes = TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                            int64_t, uint64_t, bool, std::string>;

struct EqualOp {
  template <class T>
  bool operator()(const T& a, const T& b) const { return a == b; }
};
struct LessOp {
  template <class T>
  bool operator()(const T& a, const T& b) const { return a < b; }
};
struct GreaterOp {
  template <class T>
  bool operator()(const T& a, const T& b) const { return a > b; }
};
struct LessOrEqualOp {
  template <class T>
  bool operator()(const T& a, const T& b) const { return a <= b; }
};
struct GreaterOrEqualOp {
  template <class T>
  bool operator()(const T& a, const T& b) const { return a >= b; }
};

// Two inputs of one type (from `Types`), broadcast against each other.
template <class Types>
KernelMatch check_compare(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_count() == 2, "{}: expected 2 inputs, got {}", op, ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, Types{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, Types{}));
  NXRT_REQUIRE(ctx.input_dtype(0) == ctx.input_dtype(1),
               "{}: inputs have types {} and {}; both must have the same type (insert a Cast)", op,
               dtype_name(ctx.input_dtype(0)), dtype_name(ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(require_legacy_broadcastable(ctx, LegacyBroadcast::from(ctx)));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// A comparison (output bool) or a logical op (bool inputs and output) over `Types`.
template <class Op, class Types>
class CompareKernel final : public Kernel {
 public:
  CompareKernel(std::string op, LegacyBroadcast legacy) : op_(std::move(op)), legacy_(legacy) {}
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(Types{}, ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return broadcast_binary_legacy<T, T, bool>(ctx, op_, legacy_, Op{});
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  std::string op_;
  LegacyBroadcast legacy_;
};

// Opsets 1-6 broadcast per the legacy `broadcast`/`axis` attributes, 7+ like numpy.
template <class Op, class Types>
KernelDef compare_def(const char* op, int64_t since, int64_t until = 0) {
  return KernelDef{{"", op, since}, until, check_compare<Types>, [op](const NodeContext& ctx) {
                     return make_kernel<CompareKernel<Op, Types>>(op, LegacyBroadcast::from(ctx));
                   }};
}

using BoolTypes = TypeList<bool>;

// Bitwise forms of the logic ops: on bools they equal the logical ones and vectorize.
struct LogicalAnd {
  bool operator()(bool a, bool b) const { return a & b; }
};
struct LogicalOr {
  bool operator()(bool a, bool b) const { return a | b; }
};
struct LogicalXor {
  bool operator()(bool a, bool b) const { return a ^ b; }
};

KernelMatch check_not(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, BoolTypes{}));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

class NotKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto y = ctx.output(0, DType::kBool, x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const bool* in = x.data_as<bool>();
    bool* out = y->mut_as<bool>();
    ctx.parallel().for_range(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = !in[i];
    });
    return {};
  }
};

// out[i] = c[i * sc] ? x[i * sx] : y[i * sy]; the unit-stride and scalar-branch patterns
// (a mask selecting between scores and a constant) get loops the compiler vectorizes.
template <class T>
void select_run(T* __restrict out, const bool* __restrict c, int64_t sc, const T* __restrict x,
                int64_t sx, const T* __restrict y, int64_t sy, int64_t n) {
  if (sc == 1 && sx == 1 && sy == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
  } else if (sc == 1 && sx == 1) {
    const T yv = *y;
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : yv;
  } else if (sc == 1 && sy == 1) {
    const T xv = *x;
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? xv : y[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i * sc] ? x[i * sx] : y[i * sy];
  }
}

KernelMatch check_where(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 3, "Where: expected 3 inputs, got {}", ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, BoolTypes{}));
  NXRT_REQUIRE(ctx.has_input(1) && ctx.has_input(2), "Where: inputs X and Y are required");
  NXRT_REQUIRE(ctx.input_dtype(1) != DType::kUndefined,
               "Where: the type of input 1 is unknown; run shape inference or give the model "
               "value_info for it");
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(2),
               "Where: X has type {} and Y {}; both must have the same type (insert a Cast)",
               dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(2)));
  NXRT_REQUIRE(dtype_size(ctx.input_dtype(1)) != 0, "Where: X has type {}, which the cpu EP cannot hold",
               dtype_name(ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(require_broadcastable(ctx, {0, 1, 2}));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Where over any dtype: elements are copied as unsigned integers of their size, strings as
// objects.
class WhereKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    return visit_element_type(ctx.input(1).dtype(), [&](auto tag) {
      return run<typename decltype(tag)::type>(ctx);
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    auto bc = Broadcast<3>::make("Where", {&c.shape(), &x.shape(), &y.shape()});
    if (!bc) return std::unexpected(std::move(bc.error()));
    auto out = ctx.output(0, x.dtype(), bc->shape());
    if (!out) return std::unexpected(std::move(out.error()));
    const bool* pc = c.data_as<bool>();
    const T* px = x.data_as<T>();
    const T* py = y.data_as<T>();
    T* po = out->mut_as<T>();
    parallel_runs(ctx.parallel(), *bc, [&](int64_t o, const auto& in, const auto& step, int64_t n) {
      select_run(po + o, pc + in[0], step[0], px + in[1], step[1], py + in[2], step[2], n);
    });
    return {};
  }
};

}  // namespace

std::vector<KernelDef> compare_kernels() {
  return {
      compare_def<EqualOp, EqualTypes>("Equal", 1, 6),
      compare_def<EqualOp, EqualTypes>("Equal", 7, 0),
      compare_def<LessOp, CompareTypes>("Less", 1, 6),
      compare_def<LessOp, CompareTypes>("Less", 7),
      compare_def<GreaterOp, CompareTypes>("Greater", 1, 6),
      compare_def<GreaterOp, CompareTypes>("Greater", 7),
      compare_def<LessOrEqualOp, CompareTypes>("LessOrEqual", 12),
      compare_def<GreaterOrEqualOp, CompareTypes>("GreaterOrEqual", 12),
      compare_def<LogicalAnd, BoolTypes>("And", 1, 6),
      compare_def<LogicalAnd, BoolTypes>("And", 7),
      compare_def<LogicalOr, BoolTypes>("Or", 1, 6),
      compare_def<LogicalOr, BoolTypes>("Or", 7),
      compare_def<LogicalXor, BoolTypes>("Xor", 1, 6),
      compare_def<LogicalXor, BoolTypes>("Xor", 7),
      KernelDef{{"", "Not", 1}, 0, check_not, [](const NodeContext&) { return make_kernel<NotKernel>(); }},
      KernelDef{{"", "Where", 9}, 0, check_where, [](const NodeContext&) { return make_kernel<WhereKernel>(); }},
  };
}

}  // namespace nxrt::cpu
