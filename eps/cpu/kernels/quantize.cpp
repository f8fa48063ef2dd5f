// DynamicQuantizeLinear and the integer products QLinearMatMul, MatMulInteger, QLinearConv,
// ConvInteger (uint8/int8, int32 sums). QuantizeLinear and DequantizeLinear: quantize_linear.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/scratch_pool.h"
#include "nxrt/ir/window.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using QuantTypes = TypeList<uint8_t, int8_t>;

// round(v) half to even (the default rounding mode), then clamped to Q's range.
template <class Q>
Q saturate_round(float v) {
  const float r = std::nearbyint(v);
  const float lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(std::clamp(r, lo, hi));
}

// ---- DynamicQuantizeLinear ----

KernelMatch check_dynamic_quantize_linear(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32}));
  return KernelMatch::supported(elementwise_cost(ctx, 4));
}

// uint8 with a scale and zero point covering [min(x, 0), max(x, 0)].
class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const float* in = x.data_as<float>();
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      lo = std::min(lo, in[i]);
      hi = std::max(hi, in[i]);
    }
    const float scale = (hi - lo) / 255.f;
    // All zeros: any scale reproduces them; zero point 0 keeps the division defined.
    const uint8_t zp = scale == 0 ? uint8_t(0) : saturate_round<uint8_t>(0.f - lo / scale);
    auto y = ctx.output(0, DType::kUInt8, x.shape());
    auto y_scale = ctx.output(1, DType::kFloat32, {});
    auto y_zp = ctx.output(2, DType::kUInt8, {});
    if (!y) return std::unexpected(y.error());
    if (!y_scale) return std::unexpected(y_scale.error());
    if (!y_zp) return std::unexpected(y_zp.error());
    *y_scale->mut_as<float>() = scale;
    *y_zp->mut_as<uint8_t>() = zp;
    uint8_t* out = y->mut_as<uint8_t>();
    ctx.parallel().for_range(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        out[i] = scale == 0 ? zp : saturate_round<uint8_t>(std::nearbyint(in[i] / scale) + static_cast<float>(zp));
    });
    return {};
  }
};

// ---- Integer matrix products ----

// A numpy matmul of two integer operands: batch dims broadcast, 1-D operands promoted.
struct IntMatMulPlan {
  int64_t m = 1, k = 1, n = 1;
  Shape out;
  std::vector<int64_t> a_offsets, b_offsets;  // per product: first element of its matrices
};

Expected<IntMatMulPlan> plan_int_matmul(std::string_view op, const Shape& a, const Shape& b) {
  auto bad = [&](std::string why) {
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: A {} and B {} cannot be multiplied", op, shape_to_string(a), shape_to_string(b)),
                std::move(why), "check the shapes of the operands");
  };
  if (a.empty() || b.empty()) return bad("numpy matmul needs operands of rank >= 1");
  IntMatMulPlan p;
  p.m = a.size() == 1 ? 1 : a[a.size() - 2];
  p.k = a.back();
  p.n = b.size() == 1 ? 1 : b.back();
  if ((b.size() == 1 ? b[0] : b[b.size() - 2]) != p.k) return bad("the inner dimensions differ");
  const Shape a_batch(a.begin(), a.end() - std::min<std::ptrdiff_t>(2, std::ssize(a)));
  const Shape b_batch(b.begin(), b.end() - std::min<std::ptrdiff_t>(2, std::ssize(b)));
  const Shape* shapes[] = {&a_batch, &b_batch};
  auto batch = broadcast_shape(op, shapes);
  if (!batch) return std::unexpected(batch.error());
  p.out = *batch;
  if (a.size() > 1) p.out.push_back(p.m);
  if (b.size() > 1) p.out.push_back(p.n);
  const int64_t count = shape_numel(*batch);
  const std::size_t rank = batch->size();
  // Offsets of each output batch index in A and B, where broadcast dims do not advance.
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, ao = 0, bo = 0, a_stride = p.m * p.k, b_stride = p.k * p.n;
    for (std::size_t d = rank; d-- > 0;) {
      const int64_t idx = rest % (*batch)[d];
      rest /= (*batch)[d];
      const std::ptrdiff_t ad = static_cast<std::ptrdiff_t>(d) - static_cast<std::ptrdiff_t>(rank - a_batch.size());
      const std::ptrdiff_t bd = static_cast<std::ptrdiff_t>(d) - static_cast<std::ptrdiff_t>(rank - b_batch.size());
      if (ad >= 0) {
        if (a_batch[static_cast<std::size_t>(ad)] != 1) ao += idx * a_stride;
        a_stride *= a_batch[static_cast<std::size_t>(ad)];
      }
      if (bd >= 0) {
        if (b_batch[static_cast<std::size_t>(bd)] != 1) bo += idx * b_stride;
        b_stride *= b_batch[static_cast<std::size_t>(bd)];
      }
    }
    p.a_offsets.push_back(ao);
    p.b_offsets.push_back(bo);
  }
  return p;
}

// Y (int32) = (A - a_zp) * (B - b_zp) per product of the plan; a_zp is a scalar or one per
// row of A, b_zp a scalar or one per column of B.
template <class TA, class TB>
void int_matmul(const IntMatMulPlan& p, const TA* a, const TB* b, const TA* a_zp, int64_t a_zp_count,
                const TB* b_zp, int64_t b_zp_count, int32_t* y, const Parallel& parallel) {
  const int64_t count = static_cast<int64_t>(p.a_offsets.size());
  parallel.for_range(count * p.m, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t batch = r / p.m, i = r % p.m;
      const TA* arow = a + p.a_offsets[static_cast<std::size_t>(batch)] + i * p.k;
      const TB* bm = b + p.b_offsets[static_cast<std::size_t>(batch)];
      const int32_t az = a_zp ? a_zp[a_zp_count == 1 ? 0 : i] : 0;
      int32_t* yrow = y + r * p.n;
      for (int64_t j = 0; j < p.n; ++j) {
        const int32_t bz = b_zp ? b_zp[b_zp_count == 1 ? 0 : j] : 0;
        int32_t sum = 0;
        for (int64_t t = 0; t < p.k; ++t)
          sum += (static_cast<int32_t>(arow[t]) - az) * (static_cast<int32_t>(bm[t * p.n + j]) - bz);
        yrow[j] = sum;
      }
    }
  });
}

// A zero point or scale of an integer product: a scalar or a 1-D tensor.
KernelMatch check_vector_param(const NodeContext& ctx, std::size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return KernelMatch::supported();
  NXRT_REQUIRE(ctx.input_rank(i).value_or(0) <= 1, "{}: {} (input {}) has rank {}; the cpu EP supports a scalar or 1-D",
               ctx.node().op_type, what, i, *ctx.input_rank(i));
  return KernelMatch::supported();
}

// Dispatches on the uint8/int8 types of two inputs.
template <class Fn>
Expected<void> dispatch_pair(DType a, DType b, Fn&& fn) {
  return dispatch_dtype(QuantTypes{}, a, [&](auto ta) {
    return dispatch_dtype(QuantTypes{}, b, [&](auto tb) { return fn(ta, tb); });
  });
}

KernelMatch check_matmul_integer(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, QuantTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, QuantTypes{}));
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == ctx.input_dtype(0),
               "MatMulInteger: a_zero_point has type {} and A {}; they must match", dtype_name(ctx.input_dtype(2)),
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(!ctx.has_input(3) || ctx.input_dtype(3) == ctx.input_dtype(1),
               "MatMulInteger: b_zero_point has type {} and B {}; they must match", dtype_name(ctx.input_dtype(3)),
               dtype_name(ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(check_vector_param(ctx, 2, "a_zero_point"));
  NXRT_REQUIRE_MATCH(check_vector_param(ctx, 3, "b_zero_point"));
  return KernelMatch::supported();
}

class MatMulIntegerKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    auto plan = plan_int_matmul("MatMulInteger", a.shape(), b.shape());
    if (!plan) return std::unexpected(plan.error());
    auto y = ctx.output(0, DType::kInt32, plan->out);
    if (!y) return std::unexpected(y.error());
    return dispatch_pair(a.dtype(), b.dtype(), [&](auto ta, auto tb) -> Expected<void> {
      using TA = typename decltype(ta)::type;
      using TB = typename decltype(tb)::type;
      const Tensor* az = ctx.has_input(2) ? &ctx.input(2) : nullptr;
      const Tensor* bz = ctx.has_input(3) ? &ctx.input(3) : nullptr;
      int_matmul<TA, TB>(*plan, a.data_as<TA>(), b.data_as<TB>(), az ? az->data_as<TA>() : nullptr,
                         az ? az->numel() : 1, bz ? bz->data_as<TB>() : nullptr, bz ? bz->numel() : 1,
                         y->mut_as<int32_t>(), ctx.parallel());
      return {};
    });
  }
};

KernelMatch check_qlinear_matmul(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, QuantTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 3, QuantTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 7, QuantTypes{}));
  for (std::size_t i : {1, 4, 6}) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, i, {DType::kFloat32}));
  NXRT_REQUIRE(ctx.input_dtype(2) == ctx.input_dtype(0) && ctx.input_dtype(5) == ctx.input_dtype(3),
               "QLinearMatMul: zero points have types {} and {} for a {} and b {}; each must match its operand",
               dtype_name(ctx.input_dtype(2)), dtype_name(ctx.input_dtype(5)), dtype_name(ctx.input_dtype(0)),
               dtype_name(ctx.input_dtype(3)));
  for (std::size_t i : {1, 2, 4, 5}) NXRT_REQUIRE_MATCH(check_vector_param(ctx, i, "a scale or zero point"));
  for (std::size_t i : {6, 7}) {
    const auto n = static_numel(ctx.input_type(i));
    NXRT_REQUIRE(!n || *n == 1, "QLinearMatMul: input {} (y_scale or y_zero_point) has {} values; it must have one",
                 i, n.value_or(0));
  }
  return KernelMatch::supported();
}

class QLinearMatMulKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    auto plan = plan_int_matmul("QLinearMatMul", a.shape(), b.shape());
    if (!plan) return std::unexpected(plan.error());
    std::vector<int32_t> acc(static_cast<std::size_t>(shape_numel(plan->out)));
    auto sums = dispatch_pair(a.dtype(), b.dtype(), [&](auto ta, auto tb) -> Expected<void> {
      using TA = typename decltype(ta)::type;
      using TB = typename decltype(tb)::type;
      int_matmul<TA, TB>(*plan, a.data_as<TA>(), b.data_as<TB>(), ctx.input(2).data_as<TA>(), ctx.input(2).numel(),
                         ctx.input(5).data_as<TB>(), ctx.input(5).numel(), acc.data(), ctx.parallel());
      return {};
    });
    if (!sums) return sums;
    return dispatch_dtype(QuantTypes{}, ctx.input(7).dtype(), [&](auto tag) -> Expected<void> {
      using Q = typename decltype(tag)::type;
      auto y = ctx.output(0, dtype_of<Q>(), plan->out);
      if (!y) return std::unexpected(y.error());
      const Tensor& as = ctx.input(1);
      const Tensor& bs = ctx.input(4);
      const float y_scale = *ctx.input(6).data_as<float>();
      const float y_zp = static_cast<float>(*ctx.input(7).data_as<Q>());
      Q* out = y->template mut_as<Q>();
      for (std::size_t i = 0; i < acc.size(); ++i) {
        const int64_t row = static_cast<int64_t>(i) / plan->n % plan->m, col = static_cast<int64_t>(i) % plan->n;
        const float scale = as.data_as<float>()[as.numel() == 1 ? 0 : row] *
                            bs.data_as<float>()[bs.numel() == 1 ? 0 : col] / y_scale;
        out[i] = saturate_round<Q>(std::nearbyint(static_cast<float>(acc[i]) * scale) + y_zp);
      }
      return {};
    });
  }
};

// ---- Integer convolutions ----

struct IntConvPlan {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  std::size_t spatial = 0;
  Window3 window{};
  Shape out;
};

Expected<IntConvPlan> plan_int_conv(std::string_view op, const WindowAttrs& attrs, int64_t group, const Shape& x,
                                    const Shape& w) {
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size() || x[1] != w[1] * group || w[0] % group != 0)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: X {} and W {} do not fit group {}", op, shape_to_string(x), shape_to_string(w), group),
                "X needs rank 3 to 5, W the same rank, W[1]*group channels of X and W[0] a multiple of the group",
                "check the shapes of X and W");
  IntConvPlan p;
  p.batch = x[0];
  p.channels = x[1];
  p.out_channels = w[0];
  p.group = group;
  p.spatial = x.size() - 2;
  auto window = plan_window(attrs, std::span(x).subspan(2), std::span(w).subspan(2), std::string(op));
  if (!window) return std::unexpected(window.error());
  p.window = *window;
  p.out = window_output_shape(p.batch, p.out_channels, p.window, p.spatial);
  return p;
}

// Y (int32) = sum over the window of (X - x_zp) * (W - w_zp[oc]); padding adds nothing.
template <class TX, class TW>
void int_conv(const IntConvPlan& p, const TX* x, const TW* w, int32_t x_zp, const TW* w_zp, int64_t w_zp_count,
              int32_t* y, const Parallel& parallel) {
  const auto& [dd, dh, dw] = p.window;
  const int64_t in_size = dd.in * dh.in * dw.in, out_size = dd.out * dh.out * dw.out;
  const int64_t group_in = p.channels / p.group, group_out = p.out_channels / p.group;
  const int64_t taps = dd.kernel * dh.kernel * dw.kernel;
  parallel.for_range(p.batch * p.out_channels, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t job = b0; job < b1; ++job) {
      const int64_t n = job / p.out_channels, oc = job % p.out_channels, g = oc / group_out;
      const int32_t wz = w_zp ? w_zp[w_zp_count == 1 ? 0 : oc] : 0;
      int32_t* out = y + job * out_size;
      for (int64_t od = 0; od < dd.out; ++od)
        for (int64_t oh = 0; oh < dh.out; ++oh)
          for (int64_t ow = 0; ow < dw.out; ++ow) {
            int32_t sum = 0;
            for (int64_t ic = 0; ic < group_in; ++ic) {
              const TX* xc = x + (n * p.channels + g * group_in + ic) * in_size;
              const TW* wc = w + (oc * group_in + ic) * taps;
              for (int64_t kd = 0; kd < dd.kernel; ++kd) {
                const int64_t id = od * dd.stride - dd.pad_begin + kd * dd.dilation;
                if (id < 0 || id >= dd.in) continue;
                for (int64_t kh = 0; kh < dh.kernel; ++kh) {
                  const int64_t ih = oh * dh.stride - dh.pad_begin + kh * dh.dilation;
                  if (ih < 0 || ih >= dh.in) continue;
                  for (int64_t kw = 0; kw < dw.kernel; ++kw) {
                    const int64_t iw = ow * dw.stride - dw.pad_begin + kw * dw.dilation;
                    if (iw < 0 || iw >= dw.in) continue;
                    const int32_t xv = static_cast<int32_t>(xc[(id * dh.in + ih) * dw.in + iw]) - x_zp;
                    const int32_t wv = static_cast<int32_t>(wc[(kd * dh.kernel + kh) * dw.kernel + kw]) - wz;
                    sum += xv * wv;
                  }
                }
              }
            }
            out[(od * dh.out + oh) * dw.out + ow] = sum;
          }
    }
  });
}

// X, W and the window attributes of ConvInteger and QLinearConv (inputs `x` and `w`).
KernelMatch check_int_conv(const NodeContext& ctx, std::size_t x, std::size_t w) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, x, QuantTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, w, QuantTypes{}));
  const auto rank = ctx.input_rank(x) ? ctx.input_rank(x) : ctx.input_rank(w);
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  NXRT_REQUIRE(rank || kernel, "{}: the ranks of X and W are unknown and kernel_shape is absent; run shape inference",
               op);
  const int64_t spatial = rank ? *rank - 2 : static_cast<int64_t>(kernel->size());
  NXRT_REQUIRE(spatial >= 1 && spatial <= 3,
               "{}: {}-D convolution is not supported by the cpu EP; it supports 1-D, 2-D and 3-D", op, spatial);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, static_cast<std::size_t>(spatial), false));
  NXRT_REQUIRE(ctx.attrs().int_or("group", 1) >= 1, "{}: group {} is below 1", op, ctx.attrs().int_or("group", 1));
  auto xs = ctx.input_static_shape(x), ws = ctx.input_static_shape(w);
  if (!xs || !ws) return KernelMatch::supported();
  auto plan = plan_int_conv(op, read_window_attrs(ctx.attrs(), static_cast<std::size_t>(spatial)),
                            ctx.attrs().int_or("group", 1), *xs, *ws);
  NXRT_REQUIRE(plan.has_value(), "{}", plan.error().what);
  Cost cost;
  cost.flops = 2.0 * static_cast<double>(shape_numel(plan->out) * shape_numel(*ws) / plan->out_channels);
  return KernelMatch::supported(cost);
}

// ConvInteger and QLinearConv share the int32 sums; they differ in what happens to them.
class IntConvBase : public Kernel {
 public:
  IntConvBase(const NodeContext& ctx, std::size_t spatial)
      : op_(ctx.node().op_type), attrs_(read_window_attrs(ctx.attrs(), spatial)), group_(ctx.attrs().int_or("group", 1)) {}

 protected:
  // The int32 sums of inputs x and w with zero points xz and wz, written where
  // alloc(output shape) -> Expected<int32_t*> says.
  template <class Alloc>
  Expected<IntConvPlan> sums(KernelContext& ctx, std::size_t x, std::size_t w, std::size_t xz, std::size_t wz,
                             Alloc alloc) {
    const Tensor& xt = ctx.input(x);
    const Tensor& wt = ctx.input(w);
    auto plan = plan_int_conv(op_, attrs_, group_, xt.shape(), wt.shape());
    if (!plan) return plan;
    Expected<int32_t*> y = alloc(plan->out);
    if (!y) return std::unexpected(y.error());
    auto done = dispatch_pair(xt.dtype(), wt.dtype(), [&](auto tx, auto tw) -> Expected<void> {
      using TX = typename decltype(tx)::type;
      using TW = typename decltype(tw)::type;
      const bool has_wz = ctx.has_input(wz);
      const int32_t x_zp = ctx.has_input(xz) ? static_cast<int32_t>(*ctx.input(xz).data_as<TX>()) : 0;
      int_conv<TX, TW>(*plan, xt.data_as<TX>(), wt.data_as<TW>(), x_zp, has_wz ? ctx.input(wz).data_as<TW>() : nullptr,
                       has_wz ? ctx.input(wz).numel() : 1, *y, ctx.parallel());
      return {};
    });
    if (!done) return std::unexpected(done.error());
    return plan;
  }

 private:
  std::string op_;
  WindowAttrs attrs_;
  int64_t group_;
};

KernelMatch check_conv_integer(const NodeContext& ctx) {
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_rank(2).value_or(0) == 0,
               "ConvInteger: x_zero_point has rank {}; it must be a scalar", ctx.input_rank(2).value_or(0));
  NXRT_REQUIRE_MATCH(check_vector_param(ctx, 3, "w_zero_point"));
  return check_int_conv(ctx, 0, 1);
}

class ConvIntegerKernel final : public IntConvBase {
 public:
  using IntConvBase::IntConvBase;
  Expected<void> compute(KernelContext& ctx) override {
    auto plan = sums(ctx, 0, 1, 2, 3, [&](const Shape& shape) -> Expected<int32_t*> {
      auto y = ctx.output(0, DType::kInt32, shape);
      if (!y) return std::unexpected(y.error());
      return y->mut_as<int32_t>();
    });
    if (!plan) return std::unexpected(plan.error());
    return {};
  }
};

KernelMatch check_qlinear_conv(const NodeContext& ctx) {
  for (std::size_t i : {1, 4, 6}) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, i, {DType::kFloat32}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 7, QuantTypes{}));
  NXRT_REQUIRE(!ctx.has_input(8) || ctx.input_dtype(8) == DType::kInt32,
               "QLinearConv: the bias has type {}; it must be int32", dtype_name(ctx.input_dtype(8)));
  NXRT_REQUIRE(ctx.input_rank(2).value_or(0) == 0, "QLinearConv: x_zero_point has rank {}; it must be a scalar",
               ctx.input_rank(2).value_or(0));
  NXRT_REQUIRE_MATCH(check_vector_param(ctx, 4, "w_scale"));
  NXRT_REQUIRE_MATCH(check_vector_param(ctx, 5, "w_zero_point"));
  return check_int_conv(ctx, 0, 3);
}

class QLinearConvKernel final : public IntConvBase {
 public:
  using IntConvBase::IntConvBase;
  Expected<void> compute(KernelContext& ctx) override {
    auto acc = accumulators_.take();
    auto plan = sums(ctx, 0, 3, 2, 5, [&](const Shape& shape) -> Expected<int32_t*> {
      acc->resize(static_cast<std::size_t>(shape_numel(shape)));
      return acc->data();
    });
    if (!plan) return std::unexpected(plan.error());
    return dispatch_dtype(QuantTypes{}, ctx.input(7).dtype(), [&](auto tag) -> Expected<void> {
      using Q = typename decltype(tag)::type;
      auto y = ctx.output(0, dtype_of<Q>(), plan->out);
      if (!y) return std::unexpected(y.error());
      const float x_scale = *ctx.input(1).data_as<float>();
      const Tensor& ws = ctx.input(4);
      const float y_scale = *ctx.input(6).data_as<float>();
      const float y_zp = static_cast<float>(*ctx.input(7).data_as<Q>());
      const int32_t* bias = ctx.has_input(8) ? ctx.input(8).data_as<int32_t>() : nullptr;
      const int64_t out_size = shape_numel(plan->out) / std::max<int64_t>(1, plan->batch * plan->out_channels);
      Q* out = y->template mut_as<Q>();
      for (std::size_t i = 0; i < acc->size(); ++i) {
        const int64_t oc = static_cast<int64_t>(i) / out_size % plan->out_channels;
        const float scale = x_scale * ws.data_as<float>()[ws.numel() == 1 ? 0 : oc] / y_scale;
        const int32_t sum = (*acc)[i] + (bias ? bias[oc] : 0);
        out[i] = saturate_round<Q>(static_cast<float>(sum) * scale + y_zp);
      }
      return {};
    });
  }

 private:
  ScratchPool<std::vector<int32_t>> accumulators_;  // the int32 sums, reused between runs
};

// Spatial rank of a claimed convolution: from X's or W's rank, else from kernel_shape.
std::size_t conv_spatial_rank(const NodeContext& ctx, std::size_t w) {
  const auto rank = ctx.input_rank(0) ? ctx.input_rank(0) : ctx.input_rank(w);
  if (rank) return static_cast<std::size_t>(*rank - 2);
  return ctx.attrs().ints_or("kernel_shape", {}).size();
}

}  // namespace

std::vector<KernelDef> quantize_kernels() {
  return {
      KernelDef{{"", "DynamicQuantizeLinear", 11}, 0, check_dynamic_quantize_linear,
                [](const NodeContext&) { return make_kernel<DynamicQuantizeLinearKernel>(); }},
      KernelDef{{"", "MatMulInteger", 10}, 0, check_matmul_integer,
                [](const NodeContext&) { return make_kernel<MatMulIntegerKernel>(); }},
      KernelDef{{"", "QLinearMatMul", 10}, 0, check_qlinear_matmul,
                [](const NodeContext&) { return make_kernel<QLinearMatMulKernel>(); }},
      KernelDef{{"", "ConvInteger", 10}, 0, check_conv_integer,
                [](const NodeContext& ctx) { return make_kernel<ConvIntegerKernel>(ctx, conv_spatial_rank(ctx, 1)); }},
      KernelDef{{"", "QLinearConv", 10}, 0, check_qlinear_conv,
                [](const NodeContext& ctx) { return make_kernel<QLinearConvKernel>(ctx, conv_spatial_rank(ctx, 3)); }},
  };
}

}  // namespace nxrt::cpu
