// Normalization: BatchNormalization (running or batch statistics), LayerNormalization,
// RMSNormalization, InstanceNormalization, MeanVarianceNormalization, LRN and LpNormalization.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr const char* kBatchNormInputs[] = {"X", "scale", "B", "input_mean", "input_var"};

// Whether the node normalizes with the batch's own statistics: training_mode from opset 14;
// before, is_test=0 (opsets 1 and 6) or requesting the statistics outputs (opsets 7 to 13).
bool batch_norm_training(const NodeContext& ctx) {
  if (ctx.opset() >= 14) return ctx.attrs().int_or("training_mode", 0) != 0;
  if (ctx.opset() < 7) return ctx.attrs().int_or("is_test", 0) == 0;
  for (std::size_t o = 1; o < ctx.output_count(); ++o)
    if (ctx.has_output(o)) return true;
  return false;
}

KernelMatch check_batch_norm(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 5,
               "BatchNormalization: expected 5 inputs (X, scale, B, input_mean, input_var), got {}",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  for (std::size_t i = 1; i < 5; ++i)
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "BatchNormalization: input {} ({}) has type {} and X {}; the cpu EP needs them equal",
                 i, kBatchNormInputs[i], dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.output_count() <= 5, "BatchNormalization: {} outputs requested; the op defines at most 5",
               ctx.output_count());
  NXRT_REQUIRE(ctx.opset() < 14 || ctx.output_count() <= 3,
               "BatchNormalization: {} outputs requested; opset {} defines Y, running_mean and running_var",
               ctx.output_count(), ctx.opset());
  const std::optional<int64_t> rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 2, "BatchNormalization: X has rank {}; expected N x C x ... (rank 2 or more)",
               rank.value_or(0));
  return KernelMatch::supported(elementwise_cost(ctx, batch_norm_training(ctx) ? 6 : 2));
}

// y = x * a[c] + b[c] with a = scale / sqrt(var + eps), b = B - mean * a, folded per channel.
// Opset 7-8 with spatial=0 keeps statistics per (C, D1, ...) position instead of per C.
// In training, mean and var are the batch's (biased variance); outputs 1 and 2 are the
// running statistics moved towards them by momentum, outputs 3 and 4 (opsets below 14)
// the batch mean and variance themselves.
class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(float epsilon, bool spatial, bool training, float momentum)
      : epsilon_(epsilon), spatial_(spatial), training_(training), momentum_(momentum) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return training_ ? "batch-statistics" : "folded-affine"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 2)
      return fail(ErrorCode::kRuntime, fmt::format("BatchNormalization: X has shape {}; expected rank 2 or more",
                                                   shape_to_string(s)));
    const int64_t batch = s[0];
    const int64_t channels = spatial_ ? s[1] : shape_numel(std::span(s).subspan(1));
    const int64_t inner = spatial_ ? shape_numel(std::span(s).subspan(2)) : 1;
    for (std::size_t i = 1; i < 5; ++i)
      if (ctx.input(i).numel() != channels)
        return fail(ErrorCode::kRuntime,
                    fmt::format("BatchNormalization: input {} ({}) has shape {}; expected {} values for X of "
                                "shape {}", i, kBatchNormInputs[i], shape_to_string(ctx.input(i).shape()),
                                channels, shape_to_string(s)),
                    spatial_ ? "statistics are per channel (dim 1 of X)"
                             : "with spatial=0 statistics are per position of X's dims 1..",
                    "fix the statistics tensors of the node");
    const T* in = x.data_as<T>();
    const auto count = static_cast<std::size_t>(channels);
    std::vector<double> mean(count), var(count);
    const T* input_mean = ctx.input(3).data_as<T>();
    const T* input_var = ctx.input(4).data_as<T>();
    if (training_) {
      batch_statistics(in, batch, channels, inner, mean, var, ctx.parallel());
      auto r = write_statistics<T>(ctx, mean, var);
      if (!r) return r;
    } else {
      for (std::size_t c = 0; c < count; ++c) {
        mean[c] = static_cast<double>(input_mean[c]);
        var[c] = static_cast<double>(input_var[c]);
      }
    }
    std::vector<T> a(count), b(count);
    const T* scale = ctx.input(1).data_as<T>();
    const T* bias = ctx.input(2).data_as<T>();
    for (std::size_t c = 0; c < count; ++c) {
      const double f = static_cast<double>(scale[c]) / std::sqrt(var[c] + epsilon_);
      a[c] = static_cast<T>(f);
      b[c] = static_cast<T>(static_cast<double>(bias[c]) - mean[c] * f);
    }
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    T* out = y->mut_as<T>();
    const T* pa = a.data();
    const T* pb = b.data();
    if (inner == 1) {  // [N, C]: vectorize across channels
      ctx.parallel().for_range(batch, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(channels, 1)),
                               [&](int64_t begin, int64_t end) {
                                 for (int64_t n = begin; n < end; ++n) {
                                   const T* xr = in + n * channels;
                                   T* yr = out + n * channels;
                                   for (int64_t c = 0; c < channels; ++c) yr[c] = xr[c] * pa[c] + pb[c];
                                 }
                               });
      return {};
    }
    ctx.parallel().for_range(batch * channels, std::max<int64_t>(1, kElementwiseGrain / inner),
                             [&](int64_t begin, int64_t end) {
                               for (int64_t row = begin; row < end; ++row) {
                                 const T ar = pa[row % channels], br = pb[row % channels];
                                 const T* xr = in + row * inner;
                                 T* yr = out + row * inner;
                                 for (int64_t i = 0; i < inner; ++i) yr[i] = xr[i] * ar + br;
                               }
                             });
    return {};
  }

  // Per channel: mean and biased variance over the batch and the `inner` positions.
  template <class T>
  static void batch_statistics(const T* x, int64_t batch, int64_t channels, int64_t inner, std::vector<double>& mean,
                               std::vector<double>& var, const Parallel& parallel) {
    const double count = static_cast<double>(batch * inner);
    parallel.for_range(channels, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < batch; ++n) sum += lane_sum<double>(x + (n * channels + c) * inner, inner);
        const double m = count > 0 ? sum / count : 0.0;
        double dev = 0;
        for (int64_t n = 0; n < batch; ++n) dev += lane_squared_deviation<double>(x + (n * channels + c) * inner, inner, m);
        mean[static_cast<std::size_t>(c)] = m;
        var[static_cast<std::size_t>(c)] = count > 0 ? dev / count : 0.0;
      }
    });
  }

  // The requested statistics outputs of training mode, shaped like input_mean.
  template <class T>
  Expected<void> write_statistics(KernelContext& ctx, const std::vector<double>& mean,
                                  const std::vector<double>& var) const {
    const double keep = momentum_;
    for (std::size_t o = 1; o < 5; ++o) {
      if (!ctx.wants_output(o)) continue;
      const Tensor& like = ctx.input(o % 2 == 1 ? 3 : 4);
      auto t = ctx.output(o, like.dtype(), like.shape());
      if (!t) return std::unexpected(std::move(t.error()));
      const std::vector<double>& batch = o % 2 == 1 ? mean : var;
      const T* running = like.data_as<T>();
      T* out = t->mut_as<T>();
      for (std::size_t c = 0; c < batch.size(); ++c)
        out[c] = static_cast<T>(o <= 2 ? static_cast<double>(running[c]) * keep + batch[c] * (1 - keep) : batch[c]);
    }
    return {};
  }

  float epsilon_;
  bool spatial_;
  bool training_;
  float momentum_;
};

KernelDef batch_norm_def(int64_t since, int64_t until) {
  return KernelDef{{"", "BatchNormalization", since}, until, check_batch_norm, [](const NodeContext& ctx) {
                     const bool spatial = ctx.opset() >= 9 || ctx.attrs().int_or("spatial", 1) != 0;
                     return make_kernel<BatchNormKernel>(ctx.attrs().float_or("epsilon", 1e-5f), spatial,
                                                         batch_norm_training(ctx),
                                                         ctx.attrs().float_or("momentum", 0.9f));
                   }};
}

// Scale or B (of LayerNormalization or RMSNormalization, `op`) as a vector over the
// normalized elements: used in place when it already has one value per element, else
// expanded (it may broadcast, e.g. [D] over [S, D]).
template <class T>
Expected<const T*> per_element(const char* op, const Tensor& t, const Shape& normalized, const char* name,
                               std::vector<T>& expanded) {
  const int64_t n = shape_numel(normalized);
  Shape stripped = t.shape();
  while (!stripped.empty() && stripped.front() == 1 && stripped.size() > normalized.size()) stripped.erase(stripped.begin());
  auto bc = Broadcast<2>::make(op, {&normalized, &stripped});
  if (!bc || bc->shape() != normalized)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: {} has shape {}, which does not broadcast to the normalized shape {}", op, name,
                            shape_to_string(t.shape()), shape_to_string(normalized)),
                "the scale (and bias) must broadcast to X's dims from axis on", "fix the shapes of the node's inputs");
  if (t.numel() == n) return t.data_as<T>();
  expanded.resize(static_cast<std::size_t>(n));
  const T* src = t.data_as<T>();
  bc->for_each_run(0, n, [&](int64_t out, const std::array<int64_t, 2>& in, const std::array<int64_t, 2>& step,
                             int64_t count) {
    for (int64_t i = 0; i < count; ++i) expanded[static_cast<std::size_t>(out + i)] = src[in[1] + i * step[1]];
  });
  return expanded.data();
}

// Declines an axis outside X's rank, where the rank is known (`op` names the node's op).
KernelMatch check_axis_of_x(const NodeContext& ctx, std::string_view op, int64_t axis) {
  const std::optional<int64_t> rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || normalize_axis(axis, *rank),
               "{}: axis {} is out of range for X of rank {}; valid axes are [{}, {}]", op, axis, rank.value_or(0),
               -rank.value_or(0), std::max<int64_t>(rank.value_or(0) - 1, 0));
  return KernelMatch::supported();
}

// The run-time form: `axis` resolved against X's shape `s` (a scalar has none), or an error.
Expected<std::size_t> axis_of_x(std::string_view op, int64_t axis, const Shape& s) {
  const auto rank = static_cast<int64_t>(s.size());
  const std::optional<int64_t> resolved = normalize_axis(axis, rank);
  if (!resolved || rank == 0)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: axis {} is out of range for X of shape {}", op, axis, shape_to_string(s)),
                fmt::format("valid axes are [{}, {}]", -rank, std::max<int64_t>(rank - 1, 0)), "fix the axis attribute");
  return static_cast<std::size_t>(*resolved);
}

KernelMatch check_layer_norm(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() >= 2, "LayerNormalization: expected inputs X, Scale and optional B, got {} inputs",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0),
               "LayerNormalization: Scale has type {} and X {}; the cpu EP needs them equal",
               dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == ctx.input_dtype(0),
               "LayerNormalization: B has type {} and X {}; the cpu EP needs them equal",
               dtype_name(ctx.input_dtype(2)), dtype_name(ctx.input_dtype(0)));
  const int64_t stash = ctx.attrs().int_or("stash_type", 1);
  NXRT_REQUIRE(stash == 1 || stash == 11, "LayerNormalization: stash_type {} is not supported by the cpu EP; it "
               "computes statistics in float (stash_type 1) or double (11)", stash);
  NXRT_REQUIRE_MATCH(check_axis_of_x(ctx, "LayerNormalization", ctx.attrs().int_or("axis", -1)));
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

// Per row of the trailing `axis..` dims: mean and variance (two passes, accumulated in
// double), then y = (x - mean) / sqrt(var + eps) * scale + B. Mean and InvStdDev have the
// stash type (float or double); with a double stash the normalized values are computed in
// double before the scale and bias apply in X's type, as ONNX's function body does.
class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, float epsilon, DType stash) : axis_(axis), epsilon_(epsilon), stash_(stash) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "rows-vectorized"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto axis = axis_of_x("LayerNormalization", axis_, s);
    if (!axis) return std::unexpected(std::move(axis.error()));
    const std::size_t a = *axis;
    const Shape normalized(s.begin() + static_cast<std::ptrdiff_t>(a), s.end());
    const int64_t rows = shape_numel(std::span(s).first(a));
    const int64_t len = shape_numel(normalized);
    std::vector<T> scale_buf, bias_buf;
    auto scale = per_element<T>("LayerNormalization", ctx.input(1), normalized, "Scale", scale_buf);
    if (!scale) return std::unexpected(std::move(scale.error()));
    const T* bias = nullptr;
    if (ctx.has_input(2)) {
      auto b = per_element<T>("LayerNormalization", ctx.input(2), normalized, "B", bias_buf);
      if (!b) return std::unexpected(std::move(b.error()));
      bias = *b;
    }
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    Shape stat_shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a));
    stat_shape.resize(s.size(), 1);
    void* mean_out = nullptr;
    void* inv_out = nullptr;
    if (ctx.wants_output(1)) {
      auto m = ctx.output(1, stash_, stat_shape);
      if (!m) return std::unexpected(std::move(m.error()));
      mean_out = m->mut().data();
    }
    if (ctx.wants_output(2)) {
      auto v = ctx.output(2, stash_, stat_shape);
      if (!v) return std::unexpected(std::move(v.error()));
      inv_out = v->mut().data();
    }
    const bool wide = stash_ == DType::kFloat64;
    auto store = [wide](void* stats, int64_t r, double v) {
      if (wide) static_cast<double*>(stats)[r] = v;
      else static_cast<float*>(stats)[r] = static_cast<float>(v);
    };
    const T* in = x.data_as<T>();
    T* out = y->mut_as<T>();
    const T* pscale = *scale;
    ctx.parallel().for_range(rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len, 1)),
                             [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* xr = in + r * len;
        T* yr = out + r * len;
        const double mean = len ? lane_sum<double>(xr, len) / static_cast<double>(len) : 0.0;
        const double var = len ? lane_squared_deviation<double>(xr, len, mean) / static_cast<double>(len) : 0.0;
        const double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon_));
        if (mean_out) store(mean_out, r, mean);
        if (inv_out) store(inv_out, r, inv);
        if (wide) {
          for (int64_t i = 0; i < len; ++i)
            yr[i] = static_cast<T>((static_cast<double>(xr[i]) - mean) * inv) * pscale[i] + (bias ? bias[i] : T(0));
          continue;
        }
        const T m = static_cast<T>(mean), k = static_cast<T>(inv);
        if (bias)
          for (int64_t i = 0; i < len; ++i) yr[i] = (xr[i] - m) * k * pscale[i] + bias[i];
        else
          for (int64_t i = 0; i < len; ++i) yr[i] = (xr[i] - m) * k * pscale[i];
      }
    });
    return {};
  }

  int64_t axis_;
  float epsilon_;
  DType stash_;
};

// ---- RMSNormalization ----

// RMSNormalization-23, and ONNX Runtime's SimplifiedLayerNormalization (registered in the ONNX
// domain since version 1, what its GenAI models' first normalization is): the same computation.
KernelMatch check_rms_norm(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_count() == 2 && ctx.has_input(1), "{}: expected inputs X and scale, got {} inputs", op,
               ctx.input_count());
  NXRT_REQUIRE(!ctx.has_output(1), "{}: inv_std_var (output 1) is not implemented by the cpu EP", op);
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0), "{}: scale has type {} and X {}; the cpu EP needs them equal",
               op, dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(0)));
  const int64_t stash = ctx.attrs().int_or("stash_type", 1);
  NXRT_REQUIRE(stash == 1 || stash == 11, "{}: stash_type {} is not supported by the cpu EP; it "
               "computes the mean square in double, which serves stash_type 1 (float) and 11 (double)", op, stash);
  NXRT_REQUIRE_MATCH(check_axis_of_x(ctx, op, ctx.attrs().int_or("axis", -1)));
  return KernelMatch::supported(elementwise_cost(ctx, 4));
}

// Per row of the trailing `axis..` dims: y = x / sqrt(mean(x^2) + epsilon) in X's type, then
// times scale, as ONNX's function body casts Normalized back to X's type before the Mul.
class RmsNormKernel final : public Kernel {
 public:
  RmsNormKernel(std::string op, int64_t axis, float epsilon) : op_(std::move(op)), axis_(axis), epsilon_(epsilon) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "rows"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    using C = ComputeType<T>;
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto axis = axis_of_x(op_, axis_, s);
    if (!axis) return std::unexpected(std::move(axis.error()));
    const std::size_t a = *axis;
    const Shape normalized(s.begin() + static_cast<std::ptrdiff_t>(a), s.end());
    const int64_t rows = shape_numel(std::span(s).first(a));
    const int64_t len = shape_numel(normalized);
    std::vector<T> scale_buf;
    auto scale = per_element<T>(op_.c_str(), ctx.input(1), normalized, "scale", scale_buf);
    if (!scale) return std::unexpected(std::move(scale.error()));
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    const T* in = x.data_as<T>();
    const T* pscale = *scale;
    T* out = y->mut_as<T>();
    ctx.parallel().for_range(rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len, 1)),
                             [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* xr = in + r * len;
        T* yr = out + r * len;
        const double squares = lane_squared_deviation<double>(xr, len, 0.0);
        const double inv = 1.0 / std::sqrt((len ? squares / static_cast<double>(len) : 0.0) + epsilon_);
        for (int64_t i = 0; i < len; ++i) {
          const T normalized_value = static_cast<T>(static_cast<double>(xr[i]) * inv);
          yr[i] = static_cast<T>(static_cast<C>(normalized_value) * static_cast<C>(pscale[i]));
        }
      }
    });
    return {};
  }

  std::string op_;
  int64_t axis_;
  float epsilon_;
};

// ---- InstanceNormalization ----

KernelMatch check_instance_norm(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 3, "InstanceNormalization: expected 3 inputs (input, scale, B), got {}",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  for (std::size_t i = 1; i < 3; ++i)
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "InstanceNormalization: input {} has type {} and X {}; the cpu EP needs them equal", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) >= 3,
               "InstanceNormalization: X has rank {}; expected N x C x at least one spatial dim",
               ctx.input_rank(0).value_or(3));
  return KernelMatch::supported(elementwise_cost(ctx, 6));
}

// Per (image, channel) plane: y = (x - mean) / sqrt(var + eps) * scale[c] + B[c].
class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(float epsilon) : epsilon_(epsilon) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "planes"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 3 || ctx.input(1).numel() != s[1] || ctx.input(2).numel() != s[1])
      return fail(ErrorCode::kRuntime,
                  fmt::format("InstanceNormalization: X {}, scale {} and B {} do not fit", shape_to_string(s),
                              shape_to_string(ctx.input(1).shape()), shape_to_string(ctx.input(2).shape())),
                  "X needs rank 3 or more and scale and B one value per channel (dim 1 of X)",
                  "fix the shapes of the node's inputs");
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t channels = s[1], len = shape_numel(std::span(s).subspan(2));
    const T* in = x.data_as<T>();
    const T* scale = ctx.input(1).data_as<T>();
    const T* bias = ctx.input(2).data_as<T>();
    T* out = y->mut_as<T>();
    ctx.parallel().for_range(s[0] * channels, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len, 1)),
                             [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* xp = in + p * len;
        T* yp = out + p * len;
        const double mean = len ? lane_sum<double>(xp, len) / static_cast<double>(len) : 0.0;
        const double var = len ? lane_squared_deviation<double>(xp, len, mean) / static_cast<double>(len) : 0.0;
        const double a = static_cast<double>(scale[p % channels]) / std::sqrt(var + epsilon_);
        const T ta = static_cast<T>(a), tb = static_cast<T>(static_cast<double>(bias[p % channels]) - mean * a);
        for (int64_t i = 0; i < len; ++i) yp[i] = xp[i] * ta + tb;
      }
    });
    return {};
  }

  float epsilon_;
};

// ---- MeanVarianceNormalization ----

KernelMatch check_mvn(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  const std::vector<int64_t> axes = ctx.attrs().ints_or("axes", {0, 2, 3});
  if (auto rank = ctx.input_rank(0)) {
    auto normalized = normalize_axes("MeanVarianceNormalization", axes, *rank, true);
    NXRT_REQUIRE(normalized.has_value(), "{}", normalized.error().what);
  }
  return KernelMatch::supported(elementwise_cost(ctx, 5));
}

// y = (x - mean) / (std + 1e-9) with mean and (biased) std over `axes`, as the op's
// function body defines it.
class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "grouped-reference"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    auto axes = normalize_axes("MeanVarianceNormalization", axes_, static_cast<int64_t>(s.size()), true);
    if (!axes) return std::unexpected(std::move(axes.error()));
    // Each element's group is its position over the kept axes.
    Shape kept(s.size(), 1);
    for (std::size_t d = 0; d < s.size(); ++d)
      if (std::ranges::find(*axes, static_cast<int64_t>(d)) == axes->end()) kept[d] = s[d];
    const Shape kept_strides = contiguous_strides(kept);
    const int64_t n = x.numel(), groups = shape_numel(kept);
    std::vector<int64_t> group(static_cast<std::size_t>(n));
    Shape index(s.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t g = 0;
      for (std::size_t d = 0; d < s.size(); ++d) g += kept[d] == 1 ? 0 : index[d] * kept_strides[d];
      group[static_cast<std::size_t>(i)] = g;
      for (std::size_t d = s.size(); d-- > 0;) {
        if (++index[d] < s[d]) break;
        index[d] = 0;
      }
    }
    const T* in = x.data_as<T>();
    std::vector<double> sum(static_cast<std::size_t>(groups)), dev(sum.size());
    const double count = groups > 0 ? static_cast<double>(n) / static_cast<double>(groups) : 1.0;
    for (int64_t i = 0; i < n; ++i) sum[static_cast<std::size_t>(group[static_cast<std::size_t>(i)])] += in[i];
    for (double& v : sum) v /= count;
    for (int64_t i = 0; i < n; ++i) {
      const auto g = static_cast<std::size_t>(group[static_cast<std::size_t>(i)]);
      dev[g] += (in[i] - sum[g]) * (in[i] - sum[g]);
    }
    for (double& v : dev) v = std::sqrt(v / count) + 1e-9;
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    T* out = y->mut_as<T>();
    for (int64_t i = 0; i < n; ++i) {
      const auto g = static_cast<std::size_t>(group[static_cast<std::size_t>(i)]);
      out[i] = static_cast<T>((in[i] - sum[g]) / dev[g]);
    }
    return {};
  }

  std::vector<int64_t> axes_;
};

// ---- LRN ----

KernelMatch check_lrn(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  const auto size = ctx.attrs().get_int("size");
  NXRT_REQUIRE(size.has_value(), "LRN: the size attribute is missing; it is required");
  NXRT_REQUIRE(*size >= 1, "LRN: size {} is below 1", *size);
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) >= 3, "LRN: X has rank {}; expected N x C x at least one spatial dim",
               ctx.input_rank(0).value_or(3));
  return KernelMatch::supported(elementwise_cost(ctx, static_cast<double>(*size) + 4));
}

// y = x / (bias + alpha / size * sum of x^2 over the channels [c - (size-1)/2, c + size/2])^beta.
class LrnKernel final : public Kernel {
 public:
  LrnKernel(int64_t size, float alpha, float beta, float bias) : size_(size), alpha_(alpha), beta_(beta), bias_(bias) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "channel-window"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 3)
      return fail(ErrorCode::kRuntime, fmt::format("LRN: X has shape {}; expected rank 3 or more", shape_to_string(s)));
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t channels = s[1], len = shape_numel(std::span(s).subspan(2));
    const int64_t below = (size_ - 1) / 2, above = size_ - 1 - below;
    const T* in = x.data_as<T>();
    T* out = y->mut_as<T>();
    const double k = static_cast<double>(alpha_) / static_cast<double>(size_);
    ctx.parallel().for_range(s[0] * channels, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len, 1)),
                             [&](int64_t begin, int64_t end) {
      std::vector<double> square_sum(static_cast<std::size_t>(len));
      for (int64_t p = begin; p < end; ++p) {
        const int64_t n = p / channels, c = p % channels;
        std::fill(square_sum.begin(), square_sum.end(), 0.0);
        for (int64_t j = std::max<int64_t>(0, c - below); j <= std::min(channels - 1, c + above); ++j) {
          const T* xj = in + (n * channels + j) * len;
          for (int64_t i = 0; i < len; ++i) square_sum[static_cast<std::size_t>(i)] += double(xj[i]) * double(xj[i]);
        }
        const T* xp = in + p * len;
        T* yp = out + p * len;
        for (int64_t i = 0; i < len; ++i)
          yp[i] = static_cast<T>(double(xp[i]) / std::pow(bias_ + k * square_sum[static_cast<std::size_t>(i)], beta_));
      }
    });
    return {};
  }

  int64_t size_;
  float alpha_, beta_, bias_;
};

// ---- LpNormalization ----

KernelMatch check_lp_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  const int64_t p = ctx.attrs().int_or("p", 2);
  NXRT_REQUIRE(p == 1 || p == 2, "LpNormalization: p {} is not supported; the op defines p = 1 or 2", p);
  NXRT_REQUIRE_MATCH(check_axis_of_x(ctx, "LpNormalization", ctx.attrs().int_or("axis", -1)));
  return KernelMatch::supported(elementwise_cost(ctx, 3));
}

// y = x / ||x||_p along the axis; an all-zero line stays zero.
class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(int64_t axis, int64_t p) : axis_(axis), p_(p) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "lines"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto axis = axis_of_x("LpNormalization", axis_, s);
    if (!axis) return std::unexpected(std::move(axis.error()));
    const std::size_t a = *axis;
    const int64_t len = s[a], inner = shape_numel(std::span(s).subspan(a + 1));
    const int64_t outer = shape_numel(std::span(s).first(a));
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    const T* in = x.data_as<T>();
    T* out = y->mut_as<T>();
    ctx.parallel().for_range(outer * inner, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len, 1)),
                             [&](int64_t begin, int64_t end) {
      for (int64_t line = begin; line < end; ++line) {
        const int64_t base = (line / inner) * len * inner + line % inner;
        double norm = 0;
        for (int64_t i = 0; i < len; ++i) {
          const double v = in[base + i * inner];
          norm += p_ == 1 ? std::abs(v) : v * v;
        }
        if (p_ == 2) norm = std::sqrt(norm);
        for (int64_t i = 0; i < len; ++i)
          out[base + i * inner] = norm > 0 ? static_cast<T>(in[base + i * inner] / norm) : T(0);
      }
    });
    return {};
  }

  int64_t axis_, p_;
};

KernelDef instance_norm_def(int64_t since, int64_t until) {
  return KernelDef{{"", "InstanceNormalization", since}, until, check_instance_norm, [](const NodeContext& ctx) {
                     return make_kernel<InstanceNormKernel>(ctx.attrs().float_or("epsilon", 1e-5f));
                   }};
}

KernelDef mvn_def(int64_t since, int64_t until) {
  return KernelDef{{"", "MeanVarianceNormalization", since}, until, check_mvn, [](const NodeContext& ctx) {
                     return make_kernel<MvnKernel>(ctx.attrs().ints_or("axes", {0, 2, 3}));
                   }};
}

KernelDef lrn_def(int64_t since, int64_t until) {
  return KernelDef{{"", "LRN", since}, until, check_lrn, [](const NodeContext& ctx) {
                     return make_kernel<LrnKernel>(ctx.attrs().int_or("size", 1), ctx.attrs().float_or("alpha", 1e-4f),
                                                   ctx.attrs().float_or("beta", 0.75f),
                                                   ctx.attrs().float_or("bias", 1.f));
                   }};
}

Expected<std::unique_ptr<Kernel>> make_rms_norm(const NodeContext& ctx) {
  return make_kernel<RmsNormKernel>(ctx.node().op_type, ctx.attrs().int_or("axis", -1),
                                    ctx.attrs().float_or("epsilon", 1e-5f));
}

}  // namespace

std::vector<KernelDef> normalization_kernels() {
  return {
      batch_norm_def(1, 5),
      batch_norm_def(6, 6),
      batch_norm_def(7, 8),
      batch_norm_def(9, 13),
      batch_norm_def(14, 14),
      batch_norm_def(15, 0),
      instance_norm_def(1, 5),
      instance_norm_def(6, 0),
      mvn_def(9, 12),
      mvn_def(13, 0),
      lrn_def(1, 12),
      lrn_def(13, 0),
      KernelDef{{"", "LpNormalization", 1}, 0, check_lp_norm,
                [](const NodeContext& ctx) {
                  return make_kernel<LpNormKernel>(ctx.attrs().int_or("axis", -1), ctx.attrs().int_or("p", 2));
                }},
      // From opset 1: ONNX Runtime registered LayerNormalization in the ONNX domain before ONNX
      // defined it (17), with the same attributes and outputs; its optimizer writes it into the
      // opset 11 to 16 models it fuses.
      KernelDef{{"", "LayerNormalization", 1}, 0, check_layer_norm, [](const NodeContext& ctx) {
                  const bool wide = ctx.attrs().int_or("stash_type", 1) == 11;
                  return make_kernel<LayerNormKernel>(ctx.attrs().int_or("axis", -1),
                                                      ctx.attrs().float_or("epsilon", 1e-5f),
                                                      wide ? DType::kFloat64 : DType::kFloat32);
                }},
      KernelDef{{"", "RMSNormalization", 23}, 0, check_rms_norm, make_rms_norm},
      KernelDef{{"", "SimplifiedLayerNormalization", 1}, 0, check_rms_norm, make_rms_norm},
  };
}

}  // namespace nxrt::cpu
