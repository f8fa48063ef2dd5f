// RotaryEmbedding: rotates the leading channels of each head of X in pairs by the angles of a row
// of cos_cache and sin_cache. Two ops: ONNX's RotaryEmbedding-23 (the geometry is lib's,
// nxrt/ep/rotary_embedding.h) and ONNX Runtime's com.microsoft RotaryEmbedding (inputs X,
// position_ids, cos_cache, sin_cache; position_ids int64 [batch, seq], or one value: the first
// token's position, the next ones following; num_heads needed with a partial
// rotary_embedding_dim; a rank-4 X is [batch, heads, seq, head_size]; the scale attribute is
// ignored, as ONNX Runtime's CPU EP ignores it).
#include "nxrt/ep/rotary_embedding.h"

#include <fmt/format.h>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// The `half` pairs of one head rotated: channel x1[i * Step] with x2[i * Step] by the angle
// whose cosine and sine are c[i] and s[i]. Y is another tensor than X.
template <class T, int64_t Step>
void rotate_pairs(int64_t half, const T* __restrict x1, const T* __restrict x2, const T* __restrict c,
                  const T* __restrict s, T* __restrict y1, T* __restrict y2) {
  using C = ComputeType<T>;
  for (int64_t i = 0; i < half; ++i) {
    const C a = static_cast<C>(x1[i * Step]), b = static_cast<C>(x2[i * Step]);
    const C ci = static_cast<C>(c[i]), si = static_cast<C>(s[i]);
    y1[i * Step] = static_cast<T>(ci * a - si * b);
    y2[i * Step] = static_cast<T>(si * a + ci * b);
  }
}

// Y = X rotated: token t of the plan (batch-major) takes row rows[t] of the caches (rows[t] = t
// without a row list).
template <class T>
void rotate(const Parallel& parallel, const RotaryEmbeddingPlan& p, const T* in, const T* cos, const T* sin,
            const int64_t* rows, T* out) {
  const int64_t half = p.half();
  // One task per (batch, token, head): its cache row, then each pair, then the copied tail.
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(p.head_size, 1));
  parallel.for_range(p.batch * p.seq * p.heads, grain,
                     [&](int64_t begin, int64_t end) {
                       for (int64_t task = begin; task < end; ++task) {
                         const int64_t h = task % p.heads, token = task / p.heads;
                         const int64_t b = token / p.seq, s = token % p.seq;
                         const int64_t row = rows ? rows[token] : token;
                         const T* c = cos + row * half;
                         const T* sn = sin + row * half;
                         const int64_t base = b * p.batch_stride + s * p.seq_stride + h * p.head_stride;
                         const T* xh = in + base;
                         T* yh = out + base;
                         // The halves side by side (vectors), or each pair's two channels neighbours.
                         if (p.interleaved)
                           rotate_pairs<T, 2>(half, xh, xh + 1, c, sn, yh, yh + 1);
                         else
                           rotate_pairs<T, 1>(half, xh, xh + half, c, sn, yh, yh + half);
                         for (int64_t i = p.rotary_dim; i < p.head_size; ++i) yh[i] = xh[i];
                       }
                     });
}

// Each token's cache row from position_ids, checked against the caches' rows.
Expected<std::vector<int64_t>> cache_rows(std::string_view op, const RotaryEmbeddingPlan& p, const int64_t* ids,
                                          bool offset) {
  std::vector<int64_t> rows(static_cast<std::size_t>(p.batch * p.seq));
  for (int64_t i = 0; i < p.batch * p.seq; ++i) {
    const int64_t row = offset ? ids[0] + i % p.seq : ids[i];
    if (row < 0 || row >= p.cache_rows)
      return fail(ErrorCode::kRuntime,
                  offset ? fmt::format("{}: position_ids is {}, so token {} is at position {}, outside the {} rows "
                                       "of cos_cache", op, ids[0], i % p.seq, row, p.cache_rows)
                         : fmt::format("{}: position_ids[{}][{}] is {}, outside the {} rows of cos_cache", op,
                                       i / p.seq, i % p.seq, row, p.cache_rows),
                  offset ? "position_ids holds the first token's position; the next ones follow it"
                         : "each position picks a row of cos_cache and sin_cache",
                  "give positions below the caches' first dim, or longer caches");
    rows[static_cast<std::size_t>(i)] = row;
  }
  return rows;
}

template <class T>
Expected<void> run_rotation(KernelContext& ctx, std::string_view op, const RotaryEmbeddingPlan& p, std::size_t cos,
                            std::size_t sin, const int64_t* ids, bool offset) {
  std::vector<int64_t> rows;
  if (ids) {
    auto checked = cache_rows(op, p, ids, offset);
    if (!checked) return std::unexpected(std::move(checked.error()));
    rows = std::move(*checked);
  }
  const Tensor& x = ctx.input(0);
  auto y = ctx.output(0, x.dtype(), x.shape());
  if (!y) return std::unexpected(std::move(y.error()));
  rotate<T>(ctx.parallel(), p, x.data_as<T>(), ctx.input(cos).data_as<T>(), ctx.input(sin).data_as<T>(),
            ids ? rows.data() : nullptr, y->mut_as<T>());
  return {};
}

// ---- RotaryEmbedding-23: X, cos_cache, sin_cache[, position_ids] ----

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
    const Shape* ids = given_shape(ctx, 3);
    auto plan = plan_rotary_embedding(attrs_, ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape(), ids);
    if (!plan) return std::unexpected(std::move(plan.error()));
    const int64_t* positions = ids ? ctx.input(3).data_as<int64_t>() : nullptr;
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(), [&](auto tag) {
      return run_rotation<typename decltype(tag)::type>(ctx, "RotaryEmbedding", *plan, 1, 2, positions, false);
    });
  }
  std::string_view variant() const override { return "pairs"; }

 private:
  AttributeMap attrs_;
};

// ---- com.microsoft RotaryEmbedding: X, position_ids, cos_cache, sin_cache ----

constexpr std::string_view kMsRotary = "com.microsoft RotaryEmbedding";

KernelMatch check_microsoft_rotary(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_microsoft_rotary_embedding_node(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  return KernelMatch::supported(elementwise_cost(ctx, 3));
}

class MicrosoftRotaryKernel final : public Kernel {
 public:
  explicit MicrosoftRotaryKernel(AttributeMap attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& ids = ctx.input(1);
    auto plan = plan_microsoft_rotary_embedding(attrs_, ctx.input(0).shape(), ids.shape(), ctx.input(2).shape(),
                                                ctx.input(3).shape());
    if (!plan) return std::unexpected(std::move(plan.error()));
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(), [&](auto tag) {
      return run_rotation<typename decltype(tag)::type>(ctx, kMsRotary, *plan, 2, 3, ids.data_as<int64_t>(),
                                                        plan->first_position_only);
    });
  }
  std::string_view variant() const override { return "pairs"; }

 private:
  AttributeMap attrs_;
};

}  // namespace

std::vector<KernelDef> rotary_embedding_kernels() {
  return {KernelDef{{"", "RotaryEmbedding", 23}, 0, check_rotary_embedding,
                    [](const NodeContext& ctx) { return make_kernel<RotaryEmbeddingKernel>(ctx.attrs()); }},
          KernelDef{{"com.microsoft", "RotaryEmbedding", 1}, 0, check_microsoft_rotary,
                    [](const NodeContext& ctx) { return make_kernel<MicrosoftRotaryKernel>(ctx.attrs()); }}};
}

}  // namespace nxrt::cpu
