// GroupNormalization: -18 scales and shifts each group, -21 each channel (statistics per
// group in both, computed in double whatever stash_type asks, which is at least as precise).
#include <cmath>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/group_norm.h"

namespace nxrt::cpu {
namespace {

// lib checks the shapes; the cpu EP adds element types and stash_type.
KernelMatch check_group_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_group_norm_node(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  for (std::size_t i = 1; i < 3; ++i)
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "GroupNormalization: input {} has type {} and X {}; the cpu EP needs them equal", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  const int64_t stash = ctx.attrs().int_or("stash_type", 1);
  NXRT_REQUIRE(stash == 1 || stash == 11 || ctx.opset() < 21,
               "GroupNormalization: stash_type {} is not supported; the cpu EP computes statistics in double, which "
               "serves stash_type 1 (float) and 11 (double)", stash);
  return KernelMatch::supported(elementwise_cost(ctx, 6));
}

class GroupNormKernel final : public Kernel {
 public:
  GroupNormKernel(int64_t groups, float epsilon, bool per_channel)
      : groups_(groups), epsilon_(epsilon), per_channel_(per_channel) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return per_channel_ ? "per-channel" : "per-group"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (auto fits = check_group_norm_shapes(per_channel_, groups_, s, ctx.input(1).shape(),
                                            ctx.input(2).shape());
        !fits)
      return fits;
    const int64_t channels = s[1];
    auto y = ctx.output(0, x.dtype(), s);
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t per_group = channels / groups_, plane = shape_numel(std::span(s).subspan(2));
    const int64_t len = per_group * plane;
    const T* in = x.data_as<T>();
    const T* scale = ctx.input(1).data_as<T>();
    const T* bias = ctx.input(2).data_as<T>();
    T* out = y->mut_as<T>();
    ctx.parallel().for_range(s[0] * groups_, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len, 1)),
                             [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* xp = in + p * len;
        T* yp = out + p * len;
        double sum = 0;
        for (int64_t i = 0; i < len; ++i) sum += static_cast<double>(xp[i]);
        const double mean = len ? sum / static_cast<double>(len) : 0.0;
        double sq = 0;
        for (int64_t i = 0; i < len; ++i) sq += (static_cast<double>(xp[i]) - mean) * (static_cast<double>(xp[i]) - mean);
        const double inv_std = 1.0 / std::sqrt((len ? sq / static_cast<double>(len) : 0.0) + epsilon_);
        const int64_t g = p % groups_;
        for (int64_t c = 0; c < per_group; ++c) {
          const int64_t k = per_channel_ ? g * per_group + c : g;
          const double a = static_cast<double>(scale[k]) * inv_std, b = static_cast<double>(bias[k]);
          for (int64_t i = c * plane; i < (c + 1) * plane; ++i)
            yp[i] = static_cast<T>((static_cast<double>(xp[i]) - mean) * a + b);
        }
      }
    });
    return {};
  }

  int64_t groups_;
  float epsilon_;
  bool per_channel_;
};

KernelDef group_norm_def(int64_t since, int64_t until) {
  return KernelDef{{"", "GroupNormalization", since}, until, check_group_norm, [](const NodeContext& ctx) {
                     return make_kernel<GroupNormKernel>(*ctx.attrs().get_int("num_groups"),
                                                         ctx.attrs().float_or("epsilon", 1e-5f),
                                                         group_norm_per_channel(ctx.opset()));
                   }};
}

}  // namespace

std::vector<KernelDef> group_normalization_kernels() {
  return {group_norm_def(18, 20), group_norm_def(21, 0)};
}

}  // namespace nxrt::cpu
