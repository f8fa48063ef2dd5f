// CumSum (opset 11, 14): running sums along the axis given as input 1, optionally
// exclusive (each output leaves out its own element) and reversed (sums run from the end).
#include <algorithm>
#include <vector>

#include "common/axis_columns.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using CumSumTypes = TypeList<float, double, Half, int32_t, int64_t, uint32_t, uint64_t>;

struct CumSumAttrs {
  bool exclusive;
  bool reverse;
};

KernelMatch check_cumsum(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, CumSumTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  const auto n = static_numel(ctx.input_type(1));
  NXRT_REQUIRE(!n || *n == 1, "CumSum: axis (input 1) has {} elements; it must be a scalar", n.value_or(0));
  const std::optional<int64_t> rank = ctx.input_rank(0);
  if (auto axis = ctx.constant_ints(1); axis && axis->size() == 1 && rank)
    NXRT_REQUIRE(normalize_axis((*axis)[0], *rank),
                 "CumSum: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", (*axis)[0],
                 *rank, -*rank, std::max<int64_t>(*rank - 1, 0));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Sums run in double for floating types and in the integer type itself (wrapping) else.
template <class T>
using SumType = std::conditional_t<std::is_integral_v<T>, T, double>;

class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(CumSumAttrs attrs) : attrs_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& axis_t = ctx.input(1);
    const auto rank = static_cast<int64_t>(x.shape().size());
    const std::vector<int64_t> axis_values = numeric_as_int64(axis_t);
    const std::optional<int64_t> axis =
        axis_values.size() == 1 ? normalize_axis(axis_values[0], rank) : std::nullopt;
    if (!axis)
      return fail(ErrorCode::kRuntime,
                  fmt::format("CumSum: axis input {} is not a valid axis for an input of rank {}",
                              fmt::join(axis_values, ","), rank),
                  fmt::format("the axis must be one value in [{}, {}]", -rank, std::max<int64_t>(rank - 1, 0)),
                  "fix the axis input");
    auto y = ctx.output(0, x.dtype(), x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    if (x.numel() == 0) return {};
    const auto& s = x.shape();
    const auto a = static_cast<std::size_t>(*axis);
    const int64_t outer = dims_product(s, 0, a), len = s[a], inner = dims_product(s, a + 1, s.size());
    return dispatch_dtype(CumSumTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      run<T>(ctx.parallel(), x.data_as<T>(), y->template mut_as<T>(), outer, len, inner);
      return {};
    });
  }
  std::string_view variant() const override { return "columns"; }

 private:
  template <class T>
  void run(const Parallel& parallel, const T* x, T* y, int64_t outer, int64_t len, int64_t inner) const {
    using S = SumType<T>;
    for_axis_column_blocks(parallel, outer, len, inner, [&](int64_t o, int64_t c0, int64_t width) {
      S sum[kAxisColumnBlock];
      const int64_t offset = o * len * inner + c0;
      std::fill_n(sum, width, S{0});
      for (int64_t step = 0; step < len; ++step) {
        const int64_t j = attrs_.reverse ? len - 1 - step : step;
        const T* in = x + offset + j * inner;
        T* out = y + offset + j * inner;
        for (int64_t c = 0; c < width; ++c) {
          const auto v = static_cast<S>(static_cast<ComputeType<T>>(in[c]));
          if (attrs_.exclusive) out[c] = static_cast<T>(static_cast<ComputeType<T>>(sum[c]));
          sum[c] += v;
          if (!attrs_.exclusive) out[c] = static_cast<T>(static_cast<ComputeType<T>>(sum[c]));
        }
      }
    });
  }

  CumSumAttrs attrs_;
};

KernelDef cumsum_def(int64_t since, int64_t until) {
  return KernelDef{{"", "CumSum", since}, until, check_cumsum, [](const NodeContext& ctx) {
                     return make_kernel<CumSumKernel>(CumSumAttrs{ctx.attrs().int_or("exclusive", 0) != 0,
                                                                  ctx.attrs().int_or("reverse", 0) != 0});
                   }};
}

}  // namespace

std::vector<KernelDef> cumulative_kernels() { return {cumsum_def(11, 13), cumsum_def(14, 0)}; }

}  // namespace nxrt::cpu
