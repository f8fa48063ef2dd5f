// Normalization for inference: BatchNormalization with running statistics, and
// LayerNormalization over the trailing axes.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr const char* kBatchNormInputs[] = {"X", "scale", "B", "input_mean", "input_var"};

KernelMatch check_batch_norm(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 5,
               "BatchNormalization: expected 5 inputs (X, scale, B, input_mean, input_var), got {}",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  for (std::size_t i = 1; i < 5; ++i)
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "BatchNormalization: input {} ({}) has type {} and X {}; the cpu EP needs them equal",
                 i, kBatchNormInputs[i], dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.attrs().int_or("training_mode", 0) == 0,
               "BatchNormalization: training_mode=1 is not supported by the cpu EP, which runs "
               "inference only; export the model in eval mode");
  for (std::size_t o = 1; o < ctx.output_count(); ++o)
    NXRT_REQUIRE(!ctx.has_output(o),
                 "BatchNormalization: output {} (training statistics) is requested; the cpu EP runs "
                 "inference only and produces Y alone; export the model in eval mode", o);
  const std::optional<int64_t> rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 2, "BatchNormalization: X has rank {}; expected N x C x ... (rank 2 or more)",
               rank.value_or(0));
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

// y = x * a[c] + b[c] with a = scale / sqrt(var + eps), b = B - mean * a, folded per channel.
// Opset 7-8 with spatial=0 keeps statistics per (C, D1, ...) position instead of per C.
class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(float epsilon, bool spatial) : epsilon_(epsilon), spatial_(spatial) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "folded-affine"; }

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
    std::vector<T> a(static_cast<std::size_t>(channels)), b(a.size());
    const T* scale = ctx.input(1).data_as<T>();
    const T* bias = ctx.input(2).data_as<T>();
    const T* mean = ctx.input(3).data_as<T>();
    const T* var = ctx.input(4).data_as<T>();
    for (std::size_t c = 0; c < a.size(); ++c) {
      const double f = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + epsilon_);
      a[c] = static_cast<T>(f);
      b[c] = static_cast<T>(static_cast<double>(bias[c]) - static_cast<double>(mean[c]) * f);
    }
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    const T* in = x.data_as<T>();
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

  float epsilon_;
  bool spatial_;
};

KernelDef batch_norm_def(int64_t since, int64_t until) {
  return KernelDef{{"", "BatchNormalization", since}, until, check_batch_norm, [](const NodeContext& ctx) {
                     const bool spatial = ctx.opset() >= 9 || ctx.attrs().int_or("spatial", 1) != 0;
                     return make_kernel<BatchNormKernel>(ctx.attrs().float_or("epsilon", 1e-5f), spatial);
                   }};
}

// Scale or B as a vector over the normalized elements: used in place when it already has
// one value per element, else expanded (it may broadcast, e.g. [D] over [S, D]).
template <class T>
Expected<const T*> per_element(const Tensor& t, const Shape& normalized, const char* name,
                               std::vector<T>& expanded) {
  const int64_t n = shape_numel(normalized);
  Shape stripped = t.shape();
  while (!stripped.empty() && stripped.front() == 1 && stripped.size() > normalized.size()) stripped.erase(stripped.begin());
  auto bc = Broadcast<2>::make("LayerNormalization", {&normalized, &stripped});
  if (!bc || bc->shape() != normalized)
    return fail(ErrorCode::kRuntime,
                fmt::format("LayerNormalization: {} has shape {}, which does not broadcast to the "
                            "normalized shape {}", name, shape_to_string(t.shape()), shape_to_string(normalized)),
                "Scale and B must broadcast to X's dims from axis on", "fix the shapes of Scale and B");
  if (t.numel() == n) return t.data_as<T>();
  expanded.resize(static_cast<std::size_t>(n));
  const T* src = t.data_as<T>();
  bc->for_each_run(0, n, [&](int64_t out, const std::array<int64_t, 2>& in, const std::array<int64_t, 2>& step,
                             int64_t count) {
    for (int64_t i = 0; i < count; ++i) expanded[static_cast<std::size_t>(out + i)] = src[in[1] + i * step[1]];
  });
  return expanded.data();
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
  NXRT_REQUIRE(stash == 1, "LayerNormalization: stash_type {} is not supported by the cpu EP; it computes "
               "statistics in float (stash_type 1)", stash);
  const int64_t axis = ctx.attrs().int_or("axis", -1);
  const std::optional<int64_t> rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || normalize_axis(axis, *rank),
               "LayerNormalization: axis {} is out of range for X of rank {}; valid axes are [{}, {}]",
               axis, rank.value_or(0), -rank.value_or(0), std::max<int64_t>(rank.value_or(0) - 1, 0));
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

// Per row of the trailing `axis..` dims: mean and variance (two passes, accumulated in
// double), then y = (x - mean) / sqrt(var + eps) * scale + B.
class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, float epsilon) : axis_(axis), epsilon_(epsilon) {}

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
    const int64_t rank = static_cast<int64_t>(s.size());
    const std::optional<int64_t> axis = normalize_axis(axis_, rank);
    if (!axis || rank == 0)
      return fail(ErrorCode::kRuntime,
                  fmt::format("LayerNormalization: axis {} is out of range for X of shape {}", axis_,
                              shape_to_string(s)),
                  fmt::format("valid axes are [{}, {}]", -rank, std::max<int64_t>(rank - 1, 0)),
                  "fix the axis attribute");
    const auto a = static_cast<std::size_t>(*axis);
    const Shape normalized(s.begin() + static_cast<std::ptrdiff_t>(a), s.end());
    const int64_t rows = shape_numel(std::span(s).first(a));
    const int64_t len = shape_numel(normalized);
    std::vector<T> scale_buf, bias_buf;
    auto scale = per_element<T>(ctx.input(1), normalized, "Scale", scale_buf);
    if (!scale) return std::unexpected(std::move(scale.error()));
    const T* bias = nullptr;
    if (ctx.has_input(2)) {
      auto b = per_element<T>(ctx.input(2), normalized, "B", bias_buf);
      if (!b) return std::unexpected(std::move(b.error()));
      bias = *b;
    }
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    Shape stat_shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a));
    stat_shape.resize(s.size(), 1);
    float* mean_out = nullptr;
    float* inv_out = nullptr;
    if (ctx.wants_output(1)) {
      auto m = ctx.output(1, DType::kFloat32, stat_shape);
      if (!m) return std::unexpected(std::move(m.error()));
      mean_out = m->mut_as<float>();
    }
    if (ctx.wants_output(2)) {
      auto v = ctx.output(2, DType::kFloat32, stat_shape);
      if (!v) return std::unexpected(std::move(v.error()));
      inv_out = v->mut_as<float>();
    }
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
        if (mean_out) mean_out[r] = static_cast<float>(mean);
        if (inv_out) inv_out[r] = static_cast<float>(inv);
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
};

}  // namespace

std::vector<KernelDef> normalization_kernels() {
  return {
      batch_norm_def(7, 8),
      batch_norm_def(9, 13),
      batch_norm_def(14, 0),
      KernelDef{{"", "LayerNormalization", 17}, 0, check_layer_norm, [](const NodeContext& ctx) {
                  return make_kernel<LayerNormKernel>(ctx.attrs().int_or("axis", -1),
                                                      ctx.attrs().float_or("epsilon", 1e-5f));
                }},
  };
}

}  // namespace nxrt::cpu
