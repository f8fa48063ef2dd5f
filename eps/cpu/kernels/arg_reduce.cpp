// ArgMax and ArgMin along one axis: opset 1 (non-negative axis), 11 (negative axes), 12+
// (select_last_index picks the last of equal extremes instead of the first).
#include <algorithm>
#include <vector>

#include "common/axis_columns.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using ArgTypes = TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
                          uint64_t>;

struct ArgAttrs {
  int64_t axis;
  bool keepdims;
  bool select_last;
};

ArgAttrs arg_attrs(const NodeContext& ctx) {
  return {ctx.attrs().int_or("axis", 0), ctx.attrs().int_or("keepdims", 1) != 0,
          ctx.opset() >= 12 && ctx.attrs().int_or("select_last_index", 0) != 0};
}

KernelMatch check_arg_reduce(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_type(0) == nullptr || ctx.input_type(0)->kind == ValueType::Kind::kTensor,
               "{}: input 0 is not a tensor; the cpu EP supports tensors only", op);
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, ArgTypes{}));
  const ArgAttrs a = arg_attrs(ctx);
  NXRT_REQUIRE(ctx.opset() >= 11 || a.axis >= 0,
               "{}: axis {} is negative, which opset {} does not allow; use axis {} + rank or opset 11+", op,
               a.axis, ctx.opset(), a.axis);
  const std::optional<int64_t> rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || (*rank > 0 && normalize_axis(a.axis, *rank)),
               "{}: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", op, a.axis,
               rank.value_or(0), -rank.value_or(0), std::max<int64_t>(rank.value_or(0) - 1, 0));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Whether v replaces the current extreme e: strictly better, or equal when the last index
// is wanted.
template <bool kMax, class C>
bool better(C v, C e, bool select_last) {
  if (kMax ? v > e : v < e) return true;
  return select_last && v == e;
}

template <bool kMax>
class ArgReduceKernel final : public Kernel {
 public:
  explicit ArgReduceKernel(ArgAttrs attrs) : attrs_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const auto& s = x.shape();
    const auto rank = static_cast<int64_t>(s.size());
    const std::optional<int64_t> axis = rank > 0 ? normalize_axis(attrs_.axis, rank) : std::nullopt;
    const char* op = kMax ? "ArgMax" : "ArgMin";
    if (!axis)
      return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} is out of range for an input of rank {}", op,
                                                   attrs_.axis, rank),
                  "the axis must name a dimension of the input", "fix the axis attribute or the input's rank");
    const auto a = static_cast<std::size_t>(*axis);
    const int64_t len = s[a];
    const int64_t outer = dims_product(s, 0, a), inner = dims_product(s, a + 1, s.size());
    if (len == 0 && outer * inner != 0)
      return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} of the input has size 0", op, *axis),
                  "an empty set has no index of its extreme", "feed an input with a non-empty reduced axis");
    Shape out_shape = s;
    if (attrs_.keepdims) out_shape[a] = 1;
    else out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(a));
    auto y = ctx.output(0, DType::kInt64, out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    if (y->numel() == 0) return {};
    return dispatch_dtype(ArgTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      run<T>(ctx.parallel(), x.data_as<T>(), y->template mut_as<int64_t>(), outer, len, inner);
      return {};
    });
  }
  std::string_view variant() const override { return "columns"; }

 private:
  template <class T>
  void run(const Parallel& parallel, const T* x, int64_t* y, int64_t outer, int64_t len, int64_t inner) const {
    using C = ComputeType<T>;
    const bool last = attrs_.select_last;
    for_axis_column_blocks(parallel, outer, len, inner, [&](int64_t o, int64_t c0, int64_t width) {
      C best[kAxisColumnBlock];
      const T* base = x + o * len * inner + c0;
      int64_t* out = y + o * inner + c0;
      for (int64_t c = 0; c < width; ++c) {
        best[c] = static_cast<C>(base[c]);
        out[c] = 0;
      }
      for (int64_t j = 1; j < len; ++j)
        for (int64_t c = 0; c < width; ++c) {
          const C v = static_cast<C>(base[j * inner + c]);
          if (!better<kMax>(v, best[c], last)) continue;
          best[c] = v;
          out[c] = j;
        }
    });
  }

  ArgAttrs attrs_;
};

template <bool kMax>
KernelDef arg_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_arg_reduce,
                   [](const NodeContext& ctx) { return make_kernel<ArgReduceKernel<kMax>>(arg_attrs(ctx)); }};
}

}  // namespace

std::vector<KernelDef> arg_reduce_kernels() {
  return {
      arg_def<true>("ArgMax", 1, 10),  arg_def<true>("ArgMax", 11, 11),  arg_def<true>("ArgMax", 12, 0),
      arg_def<false>("ArgMin", 1, 10), arg_def<false>("ArgMin", 11, 11), arg_def<false>("ArgMin", 12, 0),
  };
}

}  // namespace nxrt::cpu
