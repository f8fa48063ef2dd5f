// Softmax, LogSoftmax (numerically stable: the maximum is subtracted first) and Hardmax:
// opset 1..12 coerce the input to 2-D at `axis`, opset 13+ normalize along the one axis.
#include <algorithm>
#include <cmath>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/numeric_input.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// One contiguous row. LogSoftmax writes exp(x - max) into y only to sum it, then
// overwrites y with (x - max) - log(sum).
template <class T, bool kLog>
void normalize_row(const T* x, T* y, int64_t n) {
  const T m = lane_max(x, n);
  exp_shifted(x, m, y, n);
  const T sum = lane_sum<T>(y, n);
  if constexpr (kLog) {
    // (x - max) - log(sum): folding max + log(sum) first would round at max's magnitude.
    const T log_sum = std::log(sum);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
  } else {
    const T scale = T(1) / sum;
    for (int64_t i = 0; i < n; ++i) y[i] *= scale;
  }
}

// Inner positions per task when the axis is not the innermost: the running max and sum of
// a block live on the stack.
constexpr int64_t kColumnBlock = 256;

// Normalizes x[j * inner + c] over j < len for c in [c0, c0 + width), vectorized across c.
template <class T, bool kLog>
void normalize_columns(const T* x, T* y, int64_t len, int64_t inner, int64_t width) {
  T m[kColumnBlock], s[kColumnBlock];
  std::copy_n(x, width, m);
  std::fill_n(s, width, T(0));
  for (int64_t j = 0; j < len; ++j)
    for (int64_t c = 0; c < width; ++c) {
      const T v = x[j * inner + c];
      m[c] = m[c] < v ? v : m[c];
    }
  for (int64_t j = 0; j < len; ++j) {
    exp_shifted(x + j * inner, m, y + j * inner, width);
    for (int64_t c = 0; c < width; ++c) s[c] += y[j * inner + c];
  }
  if constexpr (kLog) {
    for (int64_t c = 0; c < width; ++c) s[c] = std::log(s[c]);
    for (int64_t j = 0; j < len; ++j)
      for (int64_t c = 0; c < width; ++c) y[j * inner + c] = (x[j * inner + c] - m[c]) - s[c];
  } else {
    for (int64_t c = 0; c < width; ++c) s[c] = T(1) / s[c];
    for (int64_t j = 0; j < len; ++j)
      for (int64_t c = 0; c < width; ++c) y[j * inner + c] *= s[c];
  }
}

// Axis handling: opset 1..12 default 1, flatten [0, axis) x [axis, rank); 13+ default -1.
struct SoftmaxAttrs {
  int64_t axis;
  bool coerce_2d;
};

SoftmaxAttrs softmax_attrs(const NodeContext& ctx) {
  const bool coerce = ctx.opset() < 13;
  return {ctx.attrs().int_or("axis", coerce ? 1 : -1), coerce};
}

// The input seen as (outer, len, inner) around the normalized axis (or the 2-D coercion);
// nullopt when the axis is out of range.
struct AxisSplit {
  int64_t outer, len, inner;
};

std::optional<AxisSplit> split_at_axis(const Shape& s, const SoftmaxAttrs& attrs) {
  const std::optional<int64_t> axis = normalize_axis(attrs.axis, static_cast<int64_t>(s.size()));
  if (!axis) return std::nullopt;
  const auto a = static_cast<std::size_t>(*axis);
  const int64_t outer = shape_numel(std::span(s).first(std::min(a, s.size())));
  if (attrs.coerce_2d || s.empty()) return AxisSplit{outer, shape_numel(std::span(s).subspan(std::min(a, s.size()))), 1};
  return AxisSplit{outer, s[a], shape_numel(std::span(s).subspan(a + 1))};
}

KernelMatch check_softmax(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  const SoftmaxAttrs a = softmax_attrs(ctx);
  const std::optional<int64_t> rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || normalize_axis(a.axis, *rank),
               "{}: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", op,
               a.axis, rank.value_or(0), -rank.value_or(0), std::max<int64_t>(rank.value_or(0) - 1, 0));
  return KernelMatch::supported(elementwise_cost(ctx, 4));
}

template <bool kLog>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(SoftmaxAttrs attrs) : attrs_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::optional<AxisSplit> split = split_at_axis(x.shape(), attrs_);
    if (!split) {
      const auto rank = static_cast<int64_t>(x.shape().size());
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: axis {} is out of range for an input of rank {}", op_name(), attrs_.axis, rank),
                  fmt::format("valid axes are [{}, {}]", -rank, std::max<int64_t>(rank - 1, 0)),
                  "fix the axis attribute or the input's rank");
    }
    auto y = ctx.output(0, x.dtype(), x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    if (x.numel() == 0) return {};
    const auto [outer, len, inner] = *split;
    if (x.dtype() == DType::kFloat64) run<double>(ctx, x, *y, outer, len, inner);
    else run<float>(ctx, x, *y, outer, len, inner);
    return {};
  }
  std::string_view variant() const override { return "rows-vectorized"; }

 private:
  static const char* op_name() { return kLog ? "LogSoftmax" : "Softmax"; }

  template <class T>
  static void run(KernelContext& ctx, const Tensor& xt, const Tensor& yt, int64_t outer, int64_t len,
                  int64_t inner) {
    const T* x = xt.data_as<T>();
    T* y = yt.mut_as<T>();
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (len * std::min(inner, kColumnBlock)));
    if (inner == 1) {
      ctx.parallel().for_range(outer, grain, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) normalize_row<T, kLog>(x + r * len, y + r * len, len);
      });
      return;
    }
    const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
    ctx.parallel().for_range(outer * blocks, grain, [&](int64_t b, int64_t e) {
      for (int64_t task = b; task < e; ++task) {
        const int64_t o = task / blocks, c0 = (task % blocks) * kColumnBlock;
        const int64_t offset = o * len * inner + c0;
        normalize_columns<T, kLog>(x + offset, y + offset, len, inner, std::min(kColumnBlock, inner - c0));
      }
    });
  }

  SoftmaxAttrs attrs_;
};

KernelMatch check_hardmax(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  const SoftmaxAttrs a = softmax_attrs(ctx);
  const std::optional<int64_t> rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || normalize_axis(a.axis, *rank),
               "Hardmax: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", a.axis,
               rank.value_or(0), -rank.value_or(0), std::max<int64_t>(rank.value_or(0) - 1, 0));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// 1 at the first maximum along the axis, 0 elsewhere.
class HardmaxKernel final : public Kernel {
 public:
  explicit HardmaxKernel(SoftmaxAttrs attrs) : attrs_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::optional<AxisSplit> split = split_at_axis(x.shape(), attrs_);
    if (!split)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Hardmax: axis {} is out of range for an input of rank {}", attrs_.axis,
                              x.shape().size()),
                  "the axis must name a dimension of the input", "fix the axis attribute or the input's rank");
    auto y = ctx.output(0, x.dtype(), x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    if (x.numel() == 0) return {};
    return dispatch_dtype(FloatHalfTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      run<T>(ctx.parallel(), x.data_as<T>(), y->template mut_as<T>(), *split);
      return {};
    });
  }
  std::string_view variant() const override { return "reference"; }

 private:
  template <class T>
  static void run(const Parallel& parallel, const T* x, T* y, AxisSplit sp) {
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(sp.len, 1));
    parallel.for_range(sp.outer * sp.inner, grain, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const int64_t base = (p / sp.inner) * sp.len * sp.inner + p % sp.inner;
        int64_t best = 0;
        auto m = static_cast<ComputeType<T>>(x[base]);
        for (int64_t j = 0; j < sp.len; ++j) {
          const auto v = static_cast<ComputeType<T>>(x[base + j * sp.inner]);
          if (v > m) m = v, best = j;
          y[base + j * sp.inner] = T(0.0f);
        }
        y[base + best * sp.inner] = T(1.0f);
      }
    });
  }

  SoftmaxAttrs attrs_;
};

KernelDef hardmax_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Hardmax", since}, until, check_hardmax,
                   [](const NodeContext& ctx) { return make_kernel<HardmaxKernel>(softmax_attrs(ctx)); }};
}

template <bool kLog>
KernelDef softmax_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_softmax, [](const NodeContext& ctx) {
                     return make_kernel<SoftmaxKernel<kLog>>(softmax_attrs(ctx));
                   }};
}

}  // namespace

std::vector<KernelDef> softmax_kernels() {
  return {
      softmax_def<false>("Softmax", 1, 12),
      softmax_def<false>("Softmax", 13, 0),
      softmax_def<true>("LogSoftmax", 1, 12),
      softmax_def<true>("LogSoftmax", 13, 0),
      hardmax_def(1, 12),
      hardmax_def(13, 0),
  };
}

}  // namespace nxrt::cpu
