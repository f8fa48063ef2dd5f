// RotaryEmbedding-23: rotates the leading channels of each head of X in pairs by the angles in
// cos_cache and sin_cache (the geometry is lib's, nxrt/ep/rotary_embedding.h).
#include "nxrt/ep/rotary_embedding.h"

#include <fmt/format.h>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_rotary_embedding(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_rotary_embedding_node(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  for (std::size_t i : {1, 2})
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "RotaryEmbedding: input {} has type {} and X {}; the cpu EP needs them equal", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  return KernelMatch::supported(elementwise_cost(ctx, 3));
}

class RotaryEmbeddingKernel final : public Kernel {
 public:
  explicit RotaryEmbeddingKernel(AttributeMap attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Shape* ids = ctx.has_input(3) ? &ctx.input(3).shape() : nullptr;
    auto plan = plan_rotary_embedding(attrs_, ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape(), ids);
    if (!plan) return std::unexpected(std::move(plan.error()));
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx, *plan); });
  }
  std::string_view variant() const override { return "pairs"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx, const RotaryEmbeddingPlan& p) const {
    using C = ComputeType<T>;
    const Tensor& x = ctx.input(0);
    const int64_t* ids = p.with_position_ids ? ctx.input(3).data_as<int64_t>() : nullptr;
    if (ids)
      for (int64_t i = 0; i < p.batch * p.seq; ++i)
        if (ids[i] < 0 || ids[i] >= p.cache_rows)
          return fail(ErrorCode::kRuntime,
                      fmt::format("RotaryEmbedding: position_ids[{}][{}] is {}, outside the {} rows of cos_cache",
                                  i / p.seq, i % p.seq, ids[i], p.cache_rows),
                      "each position picks a row of cos_cache and sin_cache",
                      "give positions below the caches' first dim, or longer caches");
    auto y = ctx.output(0, x.dtype(), x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const T* in = x.data_as<T>();
    const T* cos = ctx.input(1).data_as<T>();
    const T* sin = ctx.input(2).data_as<T>();
    T* out = y->mut_as<T>();
    const int64_t half = p.half();
    // One task per (batch, token, head): its cache row, then each pair, then the copied tail.
    ctx.parallel().for_range(p.batch * p.seq * p.heads,
                             std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(p.head_size, 1)),
                             [&](int64_t begin, int64_t end) {
                               for (int64_t task = begin; task < end; ++task) {
                                 const int64_t h = task % p.heads, token = task / p.heads;
                                 const int64_t b = token / p.seq, s = token % p.seq;
                                 const int64_t row = ids ? ids[token] : token;
                                 const T* c = cos + row * half;
                                 const T* sn = sin + row * half;
                                 const int64_t base = b * p.batch_stride + s * p.seq_stride + h * p.head_stride;
                                 const T* xh = in + base;
                                 T* yh = out + base;
                                 for (int64_t i = 0; i < half; ++i) {
                                   const int64_t first = p.first_of_pair(i), second = p.second_of_pair(i);
                                   const C x1 = static_cast<C>(xh[first]), x2 = static_cast<C>(xh[second]);
                                   const C ci = static_cast<C>(c[i]), si = static_cast<C>(sn[i]);
                                   yh[first] = static_cast<T>(ci * x1 - si * x2);
                                   yh[second] = static_cast<T>(si * x1 + ci * x2);
                                 }
                                 for (int64_t i = p.rotary_dim; i < p.head_size; ++i) yh[i] = xh[i];
                               }
                             });
    return {};
  }

  AttributeMap attrs_;
};

}  // namespace

std::vector<KernelDef> rotary_embedding_kernels() {
  return {KernelDef{{"", "RotaryEmbedding", 23}, 0, check_rotary_embedding, [](const NodeContext& ctx) {
                      return make_kernel<RotaryEmbeddingKernel>(ctx.attrs());
                    }}};
}

}  // namespace nxrt::cpu
