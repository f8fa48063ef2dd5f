// N-ary elementwise ops with multidirectional broadcasting: Min, Max, Sum, Mean (1..N inputs).
#include <string>
#include <vector>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

struct MinOp {
  template <class T>
  T operator()(T a, T b) const { return b < a ? b : a; }
};
struct MaxOp {
  template <class T>
  T operator()(T a, T b) const { return a < b ? b : a; }
};
struct SumOp {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a + b); }
};

// At least one input, all tensors of one type from `Types`, with static shapes that
// broadcast together (opsets 1 and 6 require equal shapes, a case of the same rule).
template <class Types>
KernelMatch check_variadic(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_count() >= 1, "{}: expected at least 1 input, got 0", op);
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, i, Types{}));
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "{}: input {} has type {} and input 0 {}; all inputs must have the same type (insert a Cast)",
                 op, i, dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
    if (auto s = ctx.input_static_shape(i)) shapes.push_back(std::move(*s));
  }
  std::vector<const Shape*> ptrs;
  for (const Shape& s : shapes) ptrs.push_back(&s);
  auto out = broadcast_shape(op, ptrs);
  NXRT_REQUIRE(out.has_value(), "{} ({}); fix the shapes the model feeds to the node",
               out ? std::string() : out.error().what, out ? std::string() : out.error().why);
  return KernelMatch::supported(elementwise_cost(ctx, static_cast<double>(ctx.input_count())));
}

// Folds the inputs into output 0 left to right with op; Mean divides the sum by N after.
template <class Types, class Op, bool kMean = false>
class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(std::string op) : op_(std::move(op)) {}
  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input_count() == 1 && !kMean) {
      ctx.set_output(0, ctx.input(0));
      return {};
    }
    return dispatch_dtype(Types{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    std::vector<const Shape*> shapes;
    for (std::size_t i = 0; i < ctx.input_count(); ++i) shapes.push_back(&ctx.input(i).shape());
    auto shape = broadcast_shape(op_, shapes);
    if (!shape) return std::unexpected(std::move(shape.error()));
    auto y = ctx.output(0, ctx.input(0).dtype(), *shape);
    if (!y) return std::unexpected(std::move(y.error()));
    T* out = y->template mut_as<T>();
    for (std::size_t k = 0; k < ctx.input_count(); ++k) {
      const Tensor& x = ctx.input(k);
      auto bc = Broadcast<2>::make(op_, {&*shape, &x.shape()});
      if (!bc) return std::unexpected(std::move(bc.error()));
      const T* in = x.data_as<T>();
      // Output and accumulator are one array: the first input initializes it.
      if (k == 0)
        binary_run_into(ctx, *bc, out, in, [](T, T v) { return v; });
      else
        binary_run_into(ctx, *bc, out, in, Op{});
    }
    if constexpr (kMean) {
      using C = ComputeType<T>;
      const C n = static_cast<C>(ctx.input_count());
      ctx.parallel().for_range(y->numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(static_cast<C>(out[i]) / n);
      });
    }
    return {};
  }

  // out[i] = op(out[i], in[...]) over the broadcast of in onto out's shape.
  template <class T, class F>
  static void binary_run_into(KernelContext& ctx, const Broadcast<2>& bc, T* out, const T* in, F op) {
    parallel_runs(ctx.parallel(), bc, [&](int64_t o, const auto& at, const auto& step, int64_t n) {
      T* acc = out + o;
      const T* src = in + at[1];
      if (step[1] == 1) {
        for (int64_t i = 0; i < n; ++i) acc[i] = op(acc[i], src[i]);
        return;
      }
      const T v = *src;
      for (int64_t i = 0; i < n; ++i) acc[i] = op(acc[i], v);
    });
  }

  std::string op_;
};

template <class Types, class Op, bool kMean = false>
KernelDef variadic_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_variadic<Types>, [op](const NodeContext&) {
                     return make_kernel<VariadicKernel<Types, Op, kMean>>(op);
                   }};
}

}  // namespace

// Min and Max take every numeric type from opset 12; before, and for Sum and Mean, floats.
std::vector<KernelDef> variadic_kernels() {
  return {
      variadic_def<FloatHalfTypes, MinOp>("Min", 1, 11),
      variadic_def<AllNumericTypes, MinOp>("Min", 12, 0),
      variadic_def<FloatHalfTypes, MaxOp>("Max", 1, 11),
      variadic_def<AllNumericTypes, MaxOp>("Max", 12, 0),
      variadic_def<FloatHalfTypes, SumOp>("Sum", 1, 0),
      variadic_def<FloatHalfTypes, SumOp, true>("Mean", 1, 0),
  };
}

}  // namespace nxrt::cpu
