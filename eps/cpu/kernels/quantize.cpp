// DynamicQuantizeLinear and the integer products QLinearMatMul, MatMulInteger, QLinearConv,
// ConvInteger (uint8/int8, int32 sums) and ONNX Runtime's QGemm, MatMulIntegerToFloat and
// DynamicQuantizeMatMul. QuantizeLinear and DequantizeLinear: quantize_linear.cpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "common/broadcast.h"
#include "common/block_transpose.h"
#include "common/channels_last.h"
#include "common/elementwise.h"
#include "common/gemm.h"
#include "common/int_depthwise.h"
#include "common/int_gemm.h"
#include "common/kernel_util.h"
#include "common/requantize.h"
#include "common/scratch_pool.h"
#include "kernels/kernels.h"
#include "nxrt/ir/window.h"

namespace nxrt::cpu {
namespace {

using QuantTypes = TypeList<uint8_t, int8_t>;

// ---- DynamicQuantizeLinear ----

KernelMatch check_dynamic_quantize_linear(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32}));
  return KernelMatch::supported(elementwise_cost(ctx, 4));
}

// min(x, 0) and max(x, 0) over the elements [begin, end), sixteen lanes at a time. (NaNs are
// passed over, as the scalar loop's std::min and std::max do.)
std::pair<float, float> range_with_zero(const float* x, int64_t begin, int64_t end) {
  using Lanes = float __attribute__((vector_size(64)));
  constexpr int64_t kLanes = sizeof(Lanes) / sizeof(float);
  Lanes lo = {}, hi = {};
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
    Lanes v;
    std::memcpy(&v, x + i, sizeof v);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  float low = 0, high = 0;
  for (int64_t l = 0; l < kLanes; ++l) {
    low = std::min(low, lo[l]);
    high = std::max(high, hi[l]);
  }
  for (; i < end; ++i) {
    low = std::min(low, x[i]);
    high = std::max(high, x[i]);
  }
  return {low, high};
}

// y = saturate(round(x / scale) + zero) as uint8. (A function of its own: inside a lambda, the
// byte stores might alias the captured pointers, and the loop would not vectorize.)
void quantize_to_uint8(const float* x, uint8_t* y, int64_t count, float scale, float zero) {
  for (int64_t i = 0; i < count; ++i) y[i] = quantize_rounded<uint8_t>(x[i] / scale, zero);
}

// DynamicQuantizeLinear's uint8 scale and zero point for x, covering [min(x, 0), max(x, 0)].
struct DynamicQuantization {
  float scale = 0;
  uint8_t zero = 0;
};

// x (count floats) quantized to uint8 into `out` as DynamicQuantizeLinear does; its scale and
// zero point.
DynamicQuantization dynamic_quantize(const float* x, int64_t count, uint8_t* out, const Parallel& parallel) {
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(64, count / kElementwiseGrain));
  std::vector<std::pair<float, float>> ranges(static_cast<std::size_t>(chunks));
  parallel.for_range(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      ranges[static_cast<std::size_t>(c)] = range_with_zero(x, count * c / chunks, count * (c + 1) / chunks);
  });
  float lo = 0, hi = 0;
  for (const auto& [l, h] : ranges) {
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }
  DynamicQuantization q;
  q.scale = (hi - lo) / 255.f;
  // All zeros: any scale reproduces them; zero point 0 keeps the division defined.
  q.zero = q.scale == 0 ? uint8_t(0) : saturate_round<uint8_t>(0.f - lo / q.scale);
  if (q.scale == 0) {
    std::fill(out, out + count, q.zero);
    return q;
  }
  parallel.for_range(count, kElementwiseGrain, [&](int64_t b, int64_t e) {
    quantize_to_uint8(x + b, out + b, e - b, q.scale, static_cast<float>(q.zero));
  });
  return q;
}

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  std::string_view variant() const override { return "vector-range-then-quantize"; }
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto y = ctx.output(0, DType::kUInt8, x.shape());
    auto y_scale = ctx.output(1, DType::kFloat32, {});
    auto y_zp = ctx.output(2, DType::kUInt8, {});
    if (!y) return std::unexpected(y.error());
    if (!y_scale) return std::unexpected(y_scale.error());
    if (!y_zp) return std::unexpected(y_zp.error());
    const DynamicQuantization q = dynamic_quantize(x.data_as<float>(), x.numel(), y->mut_as<uint8_t>(), ctx.parallel());
    *y_scale->mut_as<float>() = q.scale;
    *y_zp->mut_as<uint8_t>() = q.zero;
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

// Every matrix of B (uint8 or int8), packed for the integer GEMM; one (empty) when k or n is 0.
template <class TB>
std::vector<PackedIntB> pack_int_matrices(const TB* b, int64_t numel, int64_t k, int64_t n) {
  const int64_t count = k * n == 0 ? 1 : numel / (k * n);
  std::vector<PackedIntB> packed;
  for (int64_t i = 0; i < count; ++i) packed.push_back(PackedIntB::pack(b + i * k * n, n, false, k, n));
  return packed;
}

// An error unless input `input` holds 1 value or `count` (one per `per`: "row of A", "output
// channel"...). Zero points and scales share it.
Expected<void> require_one_or_per(const Tensor& t, int64_t count, std::string_view op, std::string_view what,
                                  std::size_t input, std::string_view per) {
  if (t.numel() == 1 || t.numel() == count) return {};
  return fail(ErrorCode::kRuntime,
              fmt::format("{}: {} (input {}) has {} values; it needs 1 or {}", op, what, input, t.numel(), count),
              fmt::format("it holds one value for every {0}, or one per {0}", per),
              fmt::format("give one value, or {} (one per {})", count, per));
}

// A zero point input (or its absence) as int32 values, checked to hold 1 or `count` of them.
template <class T>
Expected<std::vector<int32_t>> zero_point_values(KernelContext& ctx, std::size_t input, int64_t count,
                                                 std::string_view op, std::string_view what, std::string_view per) {
  if (!ctx.has_input(input)) return std::vector<int32_t>{};
  const Tensor& t = ctx.input(input);
  if (auto r = require_one_or_per(t, count, op, what, input, per); !r) return std::unexpected(r.error());
  return std::vector<int32_t>(t.data_as<T>(), t.data_as<T>() + t.numel());
}

// Y = (A - a_zero) * (B - b_zero) for every product of the plan, written one matrix after
// another (`y` is the first); `packed` holds B's matrices in order. A batch of products that
// share B is one GEMM over all their rows.
template <class TA>
void int_products(const IntMatMulPlan& p, const TA* a, std::vector<int32_t> a_zero,
                  const std::vector<PackedIntB>& packed, IntZeroPoints b_zero, const IntGemmOutput& y,
                  const Parallel& parallel) {
  const auto count = static_cast<int64_t>(p.a_offsets.size());
  auto b_of = [&](int64_t i) -> const PackedIntB& {
    const int64_t size = p.k * p.n;
    return packed[size == 0 ? 0 : static_cast<std::size_t>(p.b_offsets[static_cast<std::size_t>(i)] / size)];
  };
  bool one_gemm = count > 1;
  for (int64_t i = 0; i < count && one_gemm; ++i)
    one_gemm = p.b_offsets[static_cast<std::size_t>(i)] == p.b_offsets[0] &&
               p.a_offsets[static_cast<std::size_t>(i)] == i * p.m * p.k;
  if (one_gemm) {
    std::vector<int32_t> rows_zero;
    for (int64_t i = 0; a_zero.size() > 1 && i < count; ++i)
      rows_zero.insert(rows_zero.end(), a_zero.begin(), a_zero.end());
    int_gemm(count * p.m, a, p.k, a_zero.size() > 1 ? rows_zero : a_zero, b_of(0), b_zero, y, parallel);
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    int_gemm(p.m, a + p.a_offsets[static_cast<std::size_t>(i)], p.k, a_zero, b_of(i), b_zero, y.advanced(i * p.m * p.n),
             parallel);
}

// A zero point or scale of an integer product: a scalar or a 1-D tensor.
KernelMatch check_vector_param(const NodeContext& ctx, std::size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return KernelMatch::supported();
  NXRT_REQUIRE(ctx.input_rank(i).value_or(0) <= 1, "{}: {} (input {}) has rank {}; the cpu EP supports a scalar or 1-D",
               ctx.node().op_type, what, i, *ctx.input_rank(i));
  return KernelMatch::supported();
}

// Claims an integer product, with its multiply-adds as the cost when both shapes are known;
// shapes that cannot be multiplied are declined with plan_int_matmul's reason.
KernelMatch int_matmul_claim(const NodeContext& ctx, std::size_t a, std::size_t b) {
  auto as = ctx.input_static_shape(a), bs = ctx.input_static_shape(b);
  if (!as || !bs) return KernelMatch::supported();
  auto plan = plan_int_matmul(ctx.node().op_type, *as, *bs);
  NXRT_REQUIRE(plan.has_value(), "{}", plan.error().what);
  const auto products = static_cast<double>(plan->a_offsets.size());
  Cost cost;
  cost.flops = 2.0 * products * static_cast<double>(plan->m * plan->n * plan->k);
  // Bytes of A and B read, int32 sums written (QLinearMatMul's bytes are fewer).
  cost.bytes_moved = static_cast<double>(shape_numel(*as) + shape_numel(*bs)) +
                     4.0 * products * static_cast<double>(plan->m * plan->n);
  return KernelMatch::supported(cost);
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
  return int_matmul_claim(ctx, 0, 1);
}

// A constant B (uint8 or int8), packed at creation; empty when B is computed.
std::vector<PackedIntB> pack_constant_int_b(const NodeContext& ctx, std::size_t input) {
  const WeightHandle* w = ctx.constant_input(input);
  if (!w || w->shape().empty()) return {};
  auto t = w->materialize();
  if (!t) return {};  // packed at run time instead, where a read error reaches the user
  const Shape& s = w->shape();
  const int64_t k = s.size() == 1 ? s[0] : s[s.size() - 2], n = s.size() == 1 ? 1 : s.back();
  std::vector<PackedIntB> packed;
  (void)dispatch_dtype(QuantTypes{}, t->dtype(), [&](auto tag) -> Expected<void> {
    using TB = typename decltype(tag)::type;
    packed = pack_int_matrices(t->data_as<TB>(), t->numel(), k, n);
    return {};
  });
  return packed;  // empty for other types: the claim declined them
}

// The int32 sums of an integer product: inputs a, b and their zero points az, bz.
class IntMatMulBase : public Kernel {
 public:
  // `fused` names what the kernel does after the product, for its variant ("+cast+mul").
  explicit IntMatMulBase(std::vector<PackedIntB> packed_b, std::string_view fused = {})
      : packed_b_(std::move(packed_b)), variant_(fmt::format("int-gemm:{}{}", int_gemm_isa(), fused)) {}
  std::string_view variant() const override { return variant_; }

 protected:
  Expected<void> sums(KernelContext& ctx, std::string_view op, const IntMatMulPlan& plan, std::size_t a_in,
                      std::size_t b_in, std::size_t az_in, std::size_t bz_in, const IntGemmOutput& y) const {
    const Tensor& a = ctx.input(a_in);
    return dispatch_dtype(QuantTypes{}, a.dtype(), [&](auto ta) -> Expected<void> {
      using TA = typename decltype(ta)::type;
      auto a_zero = zero_point_values<TA>(ctx, az_in, plan.m, op, "the zero point of A", "row of A");
      if (!a_zero) return std::unexpected(a_zero.error());
      return sums_of(ctx, op, plan, a.data_as<TA>(), std::move(*a_zero), b_in, bz_in, y);
    });
  }

  // The same of A given as it is, with its zero points (none, one, or one per row).
  template <class TA>
  Expected<void> sums_of(KernelContext& ctx, std::string_view op, const IntMatMulPlan& plan, const TA* a,
                         std::vector<int32_t> a_zero, std::size_t b_in, std::size_t bz_in,
                         const IntGemmOutput& y) const {
    const Tensor& b = ctx.input(b_in);
    return dispatch_dtype(QuantTypes{}, b.dtype(), [&](auto tb) -> Expected<void> {
      using TB = typename decltype(tb)::type;
      auto b_zero = zero_point_values<TB>(ctx, bz_in, plan.n, op, "the zero point of B", "column of B");
      if (!b_zero) return std::unexpected(b_zero.error());
      const std::vector<PackedIntB> packed_now =
          packed_b_.empty() ? pack_int_matrices(b.data_as<TB>(), b.numel(), plan.k, plan.n) : std::vector<PackedIntB>{};
      int_products(plan, a, std::move(a_zero), packed_b_.empty() ? packed_now : packed_b_, *b_zero, y, ctx.parallel());
      return {};
    });
  }

 private:
  std::vector<PackedIntB> packed_b_;
  std::string variant_;
};

class MatMulIntegerKernel final : public IntMatMulBase {
 public:
  using IntMatMulBase::IntMatMulBase;
  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_int_matmul("MatMulInteger", ctx.input(0).shape(), ctx.input(1).shape());
    if (!plan) return std::unexpected(plan.error());
    auto y = ctx.output(0, DType::kInt32, plan->out);
    if (!y) return std::unexpected(y.error());
    return sums(ctx, "MatMulInteger", *plan, 0, 1, 2, 3, IntGemmOutput::int32(y->mut_as<int32_t>(), plan->n));
  }
};

// MatMulInteger, then Cast to float, then Mul by a scale that is one value or one per column
// of B, as one step (eps/cpu/fusion.h finds the chain): the int32 sums are never stored.
// Inputs: MatMulInteger's four, then the Mul's scale; output: the Mul's float Y.
class MatMulIntegerScaledKernel final : public IntMatMulBase {
 public:
  explicit MatMulIntegerScaledKernel(std::vector<PackedIntB> packed_b)
      : IntMatMulBase(std::move(packed_b), "+cast+mul") {}
  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_int_matmul("MatMulInteger", ctx.input(0).shape(), ctx.input(1).shape());
    if (!plan) return std::unexpected(plan.error());
    const Tensor& scale = ctx.input(4);
    if (auto r = require_one_or_per(scale, plan->n, "MatMulInteger+Cast+Mul", "the Mul's scale", 4, "column of B"); !r)
      return r;
    auto y = ctx.output(0, DType::kFloat32, plan->out);
    if (!y) return std::unexpected(y.error());
    return sums(ctx, "MatMulInteger", *plan, 0, 1, 2, 3,
                IntGemmOutput::scaled_float(y->mut_as<float>(), plan->n, scale.data_as<float>(), scale.numel() > 1));
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
  return int_matmul_claim(ctx, 0, 3);
}

// out[j] = saturate(round(sums[j] * scales[j]) + zero) for one row of QLinearMatMul. (A function
// of its own, so that the loop vectorizes: in a lambda, Q's stores could alias the captures.)
template <class Q>
void requantize_matmul_row(const int32_t* sums, const float* scales, int64_t count, float zero, Q* out) {
  for (int64_t j = 0; j < count; ++j)
    out[j] = quantize_rounded<Q>(static_cast<float>(sums[j]) * scales[j], zero);
}

class QLinearMatMulKernel final : public IntMatMulBase {
 public:
  using IntMatMulBase::IntMatMulBase;
  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_int_matmul("QLinearMatMul", ctx.input(0).shape(), ctx.input(3).shape());
    if (!plan) return std::unexpected(plan.error());
    auto acc = accumulators_.take();
    acc->resize(static_cast<std::size_t>(shape_numel(plan->out)));
    if (auto r = sums(ctx, "QLinearMatMul", *plan, 0, 3, 2, 5, IntGemmOutput::int32(acc->data(), plan->n)); !r)
      return r;
    if (auto r = require_one_or_per(ctx.input(1), plan->m, "QLinearMatMul", "a_scale", 1, "row of a"); !r) return r;
    if (auto r = require_one_or_per(ctx.input(4), plan->n, "QLinearMatMul", "b_scale", 4, "column of b"); !r) return r;
    const float* a_scale = ctx.input(1).data_as<float>();
    const float* b_scale = ctx.input(4).data_as<float>();
    const bool a_per_row = ctx.input(1).numel() > 1, b_per_column = ctx.input(4).numel() > 1;
    return dispatch_dtype(QuantTypes{}, ctx.input(7).dtype(), [&](auto tag) -> Expected<void> {
      using Q = typename decltype(tag)::type;
      auto y = ctx.output(0, dtype_of<Q>(), plan->out);
      if (!y) return std::unexpected(y.error());
      const float y_scale = *ctx.input(6).data_as<float>();
      const float y_zp = static_cast<float>(*ctx.input(7).data_as<Q>());
      Q* out = y->template mut_as<Q>();
      const int64_t n = plan->n;
      // Each row's scales, a_scale * b_scale / y_scale per column, found once per row of A's scale.
      const auto row_scales = [&](int64_t r, std::vector<float>& scales) {
        const float as = a_scale[a_per_row ? r % plan->m : 0];
        for (int64_t j = 0; j < n; ++j)
          scales[static_cast<std::size_t>(j)] = as * b_scale[b_per_column ? j : 0] / y_scale;
      };
      ctx.parallel().for_range(
          static_cast<int64_t>(acc->size()) / std::max<int64_t>(n, 1),
          std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1)), [&](int64_t r0, int64_t r1) {
            std::vector<float> scales(static_cast<std::size_t>(n));
            if (!a_per_row) row_scales(0, scales);
            for (int64_t r = r0; r < r1; ++r) {
              if (a_per_row) row_scales(r, scales);
              requantize_matmul_row(acc->data() + r * n, scales.data(), n, y_zp, out + r * n);
            }
          });
      return {};
    });
  }

 private:
  ScratchPool<std::vector<int32_t>> accumulators_;  // the int32 sums, reused between runs
};

// ---- MatMulIntegerToFloat, DynamicQuantizeMatMul (com.microsoft) ----

// ONNX Runtime's integer products with a float Y, as its optimizer fuses quantize_dynamic's
// MatMulInteger -> Cast -> Mul (-> Add of a bias): Y = (A - a_zero)(B - b_zero) * a_scale *
// b_scale (+ bias), a_scale one value, b_scale and b_zero one value or one per column of B, the
// bias one per column. MatMulIntegerToFloat's inputs: A, B, a_scale, b_scale, a_zero_point,
// b_zero_point, bias; DynamicQuantizeMatMul's: float A (quantized as DynamicQuantizeLinear
// does), B, b_scale, b_zero_point, bias.
KernelMatch check_integer_to_float(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const bool dynamic = op == "DynamicQuantizeMatMul";
  const std::size_t b_scale = dynamic ? 2 : 3, b_zero = dynamic ? 3 : 5, bias = dynamic ? 4 : 6;
  if (dynamic) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32}));
  else NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, QuantTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, QuantTypes{}));
  NXRT_REQUIRE(ctx.input_dtype(b_scale) == DType::kFloat32 && (dynamic || ctx.input_dtype(2) == DType::kFloat32),
               "{}: the scales are {}; the cpu EP implements float scales and Y (not float16)", op,
               dtype_name(ctx.input_dtype(b_scale)));
  if (!dynamic) {
    const auto a_scales = static_numel(ctx.input_type(2));
    NXRT_REQUIRE(!a_scales || *a_scales == 1, "{}: a_scale has {} values; the cpu EP implements one", op, *a_scales);
    NXRT_REQUIRE(!ctx.has_input(4) || ctx.input_dtype(4) == ctx.input_dtype(0),
                 "{}: a_zero_point has type {} and A {}; they must match", op, dtype_name(ctx.input_dtype(4)),
                 dtype_name(ctx.input_dtype(0)));
    const auto a_zeros = ctx.has_input(4) ? static_numel(ctx.input_type(4)) : std::optional<int64_t>{1};
    NXRT_REQUIRE(!a_zeros || *a_zeros == 1, "{}: a_zero_point has {} values; the cpu EP implements one", op,
                 *a_zeros);
  }
  NXRT_REQUIRE(!ctx.has_input(b_zero) || ctx.input_dtype(b_zero) == ctx.input_dtype(1),
               "{}: b_zero_point has type {} and B {}; they must match", op, dtype_name(ctx.input_dtype(b_zero)),
               dtype_name(ctx.input_dtype(1)));
  for (std::size_t i : {b_scale, b_zero}) NXRT_REQUIRE_MATCH(check_vector_param(ctx, i, "b_scale or b_zero_point"));
  NXRT_REQUIRE(!ctx.has_input(bias) || (ctx.input_dtype(bias) == DType::kFloat32 &&
                                        ctx.input_rank(bias).value_or(1) == 1),
               "{}: the bias is {} of rank {}; it must be float, one value per column of B", op,
               dtype_name(ctx.input_dtype(bias)), ctx.input_rank(bias).value_or(1));
  if (dynamic) {
    auto as = ctx.input_static_shape(0), bs = ctx.input_static_shape(1);
    if (!as || !bs) return KernelMatch::supported();
    auto plan = plan_int_matmul(op, *as, *bs);
    NXRT_REQUIRE(plan.has_value(), "{}", plan.error().what);
    Cost cost;
    cost.flops = 2.0 * static_cast<double>(shape_numel(plan->out) * plan->k);
    return KernelMatch::supported(cost);
  }
  return int_matmul_claim(ctx, 0, 1);
}

class IntegerToFloatKernel final : public IntMatMulBase {
 public:
  IntegerToFloatKernel(std::vector<PackedIntB> packed_b, bool dynamic)
      : IntMatMulBase(std::move(packed_b), dynamic ? "+dynamic-quantize" : "+float"), dynamic_(dynamic) {}

  Expected<void> compute(KernelContext& ctx) override {
    const std::string_view op = dynamic_ ? "DynamicQuantizeMatMul" : "MatMulIntegerToFloat";
    const std::size_t b_scale_in = dynamic_ ? 2 : 3, b_zero_in = dynamic_ ? 3 : 5, bias_in = dynamic_ ? 4 : 6;
    auto plan = plan_int_matmul(op, ctx.input(0).shape(), ctx.input(1).shape());
    if (!plan) return std::unexpected(plan.error());
    const Tensor& b_scale = ctx.input(b_scale_in);
    if (auto r = require_one_or_per(b_scale, plan->n, op, "b_scale", b_scale_in, "column of B"); !r) return r;
    const float* bias = nullptr;
    if (ctx.has_input(bias_in)) {
      if (ctx.input(bias_in).numel() != plan->n)
        return fail(ErrorCode::kRuntime,
                    fmt::format("{}: the bias has {} values; Y has {} columns", op, ctx.input(bias_in).numel(),
                                plan->n),
                    "the bias adds one value per column of B", fmt::format("give a bias of {} values", plan->n));
      bias = ctx.input(bias_in).data_as<float>();
    }
    auto y = ctx.output(0, DType::kFloat32, plan->out);
    if (!y) return std::unexpected(y.error());
    // a_scale * b_scale per column: the product's scales.
    auto scales_for = [&](float a_scale) {
      std::vector<float> scales(static_cast<std::size_t>(b_scale.numel()));
      for (std::size_t j = 0; j < scales.size(); ++j) scales[j] = a_scale * b_scale.data_as<float>()[j];
      return scales;
    };
    if (dynamic_) {
      const Tensor& a = ctx.input(0);
      auto quantized = a_bytes_.take();
      quantized->resize(static_cast<std::size_t>(a.numel()));
      const DynamicQuantization q = dynamic_quantize(a.data_as<float>(), a.numel(), quantized->data(), ctx.parallel());
      const std::vector<float> scales = scales_for(q.scale);
      const IntGemmOutput out =
          IntGemmOutput::scaled_float(y->mut_as<float>(), plan->n, scales.data(), scales.size() > 1, bias);
      return sums_of<uint8_t>(ctx, op, *plan, quantized->data(), {q.zero}, 1, b_zero_in, out);
    }
    const Tensor& a_scale = ctx.input(2);
    if (a_scale.numel() != 1)
      return fail(ErrorCode::kRuntime, fmt::format("{}: a_scale (input 2) has {} values", op, a_scale.numel()),
                  "the cpu EP implements one scale for all of A", "give a_scale one value");
    const std::vector<float> scales = scales_for(*a_scale.data_as<float>());
    return sums(ctx, op, *plan, 0, 1, 4, b_zero_in,
                IntGemmOutput::scaled_float(y->mut_as<float>(), plan->n, scales.data(), scales.size() > 1, bias));
  }

 private:
  bool dynamic_;
  ScratchPool<std::vector<uint8_t>> a_bytes_;  // DynamicQuantizeMatMul's quantized A, reused between runs
};

// ---- QGemm (com.microsoft) ----

// ONNX Runtime's quantized Gemm (what fuse-qdq makes of DequantizeLinear -> Gemm ->
// QuantizeLinear): Y = saturate(round(((A - a_zp)(B' - b_zp) + C) * alpha * a_scale * b_scale
// / y_scale + y_zp)), B' = B or its transpose, C an int32 bias per column, as QLinearConv
// requantizes. Inputs: A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale,
// y_zero_point; attributes alpha, transA, transB.
KernelMatch check_qgemm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, QuantTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 3, QuantTypes{}));
  NXRT_REQUIRE(ctx.has_input(7),
               "QGemm: without y_scale (input 7) Y is float; the cpu EP implements the quantized Y only");
  for (std::size_t i : {1, 4, 7}) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, i, {DType::kFloat32}));
  NXRT_REQUIRE(ctx.input_dtype(2) == ctx.input_dtype(0) && ctx.input_dtype(5) == ctx.input_dtype(3),
               "QGemm: zero points have types {} and {} for A {} and B {}; each must match its operand",
               dtype_name(ctx.input_dtype(2)), dtype_name(ctx.input_dtype(5)), dtype_name(ctx.input_dtype(0)),
               dtype_name(ctx.input_dtype(3)));
  if (ctx.has_input(8)) NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 8, QuantTypes{}));
  NXRT_REQUIRE(!ctx.has_input(6) || ctx.input_dtype(6) == DType::kInt32, "QGemm: C has type {}; it must be int32",
               dtype_name(ctx.input_dtype(6)));
  NXRT_REQUIRE(ctx.attrs().int_or("transA", 0) == 0,
               "QGemm: transA 1 is not implemented by the cpu EP; transpose A before it (transB is)");
  NXRT_REQUIRE(ctx.input_rank(0).value_or(2) == 2 && ctx.input_rank(3).value_or(2) == 2,
               "QGemm: A and B have ranks {} and {}; both must be matrices", ctx.input_rank(0).value_or(2),
               ctx.input_rank(3).value_or(2));
  for (std::size_t i : {4, 5}) NXRT_REQUIRE_MATCH(check_vector_param(ctx, i, "b_scale or b_zero_point"));
  for (std::size_t i : {1, 2, 7, 8}) {
    const auto n = ctx.has_input(i) ? static_numel(ctx.input_type(i)) : std::optional<int64_t>{1};
    NXRT_REQUIRE(!n || *n == 1, "QGemm: input {} (a scale or zero point of A or Y) has {} values; it must have one", i,
                 n.value_or(0));
  }
  auto as = ctx.input_static_shape(0), bs = ctx.input_static_shape(3);
  if (!as || !bs) return KernelMatch::supported();
  const bool trans_b = ctx.attrs().int_or("transB", 0) != 0;
  const int64_t k = (*bs)[trans_b ? 1 : 0], n = (*bs)[trans_b ? 0 : 1];
  NXRT_REQUIRE((*as)[1] == k, "QGemm: A {} and B {}{} do not multiply", shape_to_string(*as), shape_to_string(*bs),
               trans_b ? " (transposed)" : "");
  Cost cost;
  cost.flops = 2.0 * static_cast<double>((*as)[0] * k * n);
  return KernelMatch::supported(cost);
}

class QGemmKernel final : public Kernel {
 public:
  explicit QGemmKernel(const NodeContext& ctx)
      : alpha_(ctx.attrs().float_or("alpha", 1.f)),
        trans_b_(ctx.attrs().int_or("transB", 0) != 0),
        packed_b_(pack_constant_b(ctx)),
        variant_(fmt::format("int-gemm:{}", int_gemm_isa())) {}
  std::string_view variant() const override { return variant_; }

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    const Shape& as = a.shape();
    const Shape& bs = b.shape();
    if (as.size() != 2 || bs.size() != 2 || as[1] != bs[trans_b_ ? 1 : 0])
      return fail(ErrorCode::kRuntime,
                  fmt::format("QGemm: A {} and B {}{} do not multiply", shape_to_string(as), shape_to_string(bs),
                              trans_b_ ? " (transposed)" : ""),
                  "A is M x K and B K x N (N x K with transB)", "give matrices whose K agree");
    const int64_t m = as[0], k = as[1], n = bs[trans_b_ ? 0 : 1];
    if (auto r = require_one_or_per(ctx.input(4), n, "QGemm", "b_scale", 4, "column of B"); !r) return r;
    if (ctx.has_input(6) && ctx.input(6).numel() != n)
      return fail(ErrorCode::kRuntime, fmt::format("QGemm: C has shape {}", shape_to_string(ctx.input(6).shape())),
                  fmt::format("the cpu EP takes C as one int32 bias per column of Y, {} values", n),
                  fmt::format("give C of shape [{}]", n));
    const DType y_type = ctx.has_input(8) ? ctx.input(8).dtype() : DType::kUInt8;
    auto y = ctx.output(0, y_type, {m, n});
    if (!y) return std::unexpected(y.error());
    const float* b_scale = ctx.input(4).data_as<float>();
    const float factor = alpha_ * *ctx.input(1).data_as<float>() / *ctx.input(7).data_as<float>();
    std::vector<float> scales(static_cast<std::size_t>(n));
    const bool per_column = ctx.input(4).numel() > 1;
    for (int64_t j = 0; j < n; ++j) scales[static_cast<std::size_t>(j)] = factor * b_scale[per_column ? j : 0];
    const int32_t* bias = ctx.has_input(6) ? ctx.input(6).data_as<int32_t>() : nullptr;
    return dispatch_pair(a.dtype(), b.dtype(), [&](auto ta, auto tb) -> Expected<void> {
      using TA = typename decltype(ta)::type;
      using TB = typename decltype(tb)::type;
      const std::vector<int32_t> a_zero = {static_cast<int32_t>(*ctx.input(2).data_as<TA>())};
      auto b_zero = zero_point_values<TB>(ctx, 5, n, "QGemm", "b_zero_point", "column of B");
      if (!b_zero) return std::unexpected(b_zero.error());
      std::optional<PackedIntB> packed_now;
      if (!packed_b_ || packed_b_->k() != k || packed_b_->n() != n)
        packed_now = PackedIntB::pack(b.data_as<TB>(), trans_b_ ? k : n, trans_b_, k, n);
      const PackedIntB& packed = packed_now ? *packed_now : *packed_b_;
      return dispatch_dtype(QuantTypes{}, y_type, [&](auto ty) -> Expected<void> {
        using Q = typename decltype(ty)::type;
        const float y_zero = ctx.has_input(8) ? static_cast<float>(*ctx.input(8).data_as<Q>()) : 0.f;
        int_gemm(m, a.data_as<TA>(), k, a_zero, packed, *b_zero,
                 IntGemmOutput::requantized(y->template mut_as<Q>(), n, scales.data(), bias, y_zero), ctx.parallel());
        return {};
      });
    });
  }

 private:
  // A constant B (uint8 or int8 matrix), packed at creation; nullopt when B is computed.
  static std::optional<PackedIntB> pack_constant_b(const NodeContext& ctx) {
    const WeightHandle* w = ctx.constant_input(3);
    if (!w || w->shape().size() != 2) return std::nullopt;
    auto t = w->materialize();
    if (!t) return std::nullopt;  // packed at run time instead, where a read error reaches the user
    const bool trans = ctx.attrs().int_or("transB", 0) != 0;
    const Shape& s = w->shape();
    std::optional<PackedIntB> packed;
    (void)dispatch_dtype(QuantTypes{}, t->dtype(), [&](auto tag) -> Expected<void> {
      using TB = typename decltype(tag)::type;
      packed = PackedIntB::pack(t->data_as<TB>(), s[1], trans, s[trans ? 1 : 0], s[trans ? 0 : 1]);
      return {};
    });
    return packed;
  }

  float alpha_;
  bool trans_b_;
  std::optional<PackedIntB> packed_b_;
  std::string variant_;
};

// ---- Integer convolutions ----

struct IntConvPlan {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  std::size_t spatial = 0;
  Window3 window{};
  Shape out;  // Y's shape, N x C x spatial
  // X and Y stored channels-last (N x spatial x C): only convolutions of one group, and
  // depthwise ones of one output channel per input channel (layout.cpp decides).
  ChannelsLast layout;
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

// xt[px * ld + c] = x[c * pixels + px] for the pixels [p0, p1): X of one image and group
// channels-last, each pixel's row `ld` long, x_zp past its channels.
template <class TX>
void to_channels_last(const TX* x, int64_t channels, int64_t pixels, int64_t p0, int64_t p1, int64_t ld, TX x_zp,
                      TX* xt) {
  static_assert(sizeof(TX) == 1);
  transpose_bytes(reinterpret_cast<const uint8_t*>(x) + p0, pixels, channels, p1 - p0,
                  reinterpret_cast<uint8_t*>(xt) + p0 * ld, ld);
  if (ld > channels)
    for (int64_t px = p0; px < p1; ++px) std::fill(xt + px * ld + channels, xt + (px + 1) * ld, x_zp);
}

// dst[c] = src[c] for c in [0, count) bytes: one tap's channels, or a kernel row's. A call to
// memcpy per tap costs more than the copy, and a byte loop runs its tail (a 7-tap row of 3
// channels is 21 bytes) one byte at a time: up to 64 bytes move in runs of 16, 8 or 4, the
// last one ending at `count` (overlapping the one before). (No loop over the runs: the
// compiler would turn it back into a call to memcpy.)
template <class TX>
[[gnu::always_inline]] inline void copy_channels(const TX* __restrict src, int64_t count, TX* __restrict dst) {
  static_assert(sizeof(TX) == 1);
  auto run = [&]<int64_t kRun>(int64_t at) { std::memcpy(dst + at, src + at, kRun); };
  if (count > 64) {
    std::memcpy(dst, src, static_cast<std::size_t>(count));
  } else if (count >= 16) {
    run.template operator()<16>(0);
    if (count > 32) run.template operator()<16>(16);
    if (count > 48) run.template operator()<16>(32);
    run.template operator()<16>(count - 16);
  } else if (count >= 8) {
    run.template operator()<8>(0);
    run.template operator()<8>(count - 8);
  } else if (count >= 4) {
    run.template operator()<4>(0);
    run.template operator()<4>(count - 4);
  } else {
    for (int64_t c = 0; c < count; ++c) dst[c] = src[c];
  }
}

// rows[i * row_depth + c] = xt[(p0 + i) * channels + c] for the pixels [p0, p1) of X stored
// channels-last, x_zp from `channels` on to row_depth: a pointwise convolution's rows laid out
// as W's packed depth. With AVX-512, 64 bytes at a time by masked loads (which read nothing
// past the pixel's channels).
template <class TX>
void pad_pixel_rows(const TX* xt, int64_t channels, TX x_zp, int64_t p0, int64_t p1, int64_t row_depth, TX* rows) {
  static_assert(sizeof(TX) == 1);
  for (int64_t px = p0; px < p1; ++px) {
    const TX* src = xt + px * channels;
    TX* dst = rows + (px - p0) * row_depth;
    int64_t c = 0;
#if defined(__AVX512BW__)
    const __m512i zero_points = _mm512_set1_epi8(static_cast<char>(x_zp));
    for (; c + 64 <= row_depth; c += 64) {
      const int64_t inside = std::clamp<int64_t>(channels - c, 0, 64);
      const __mmask64 mask = inside == 64 ? ~__mmask64{0} : (__mmask64{1} << inside) - 1;
      _mm512_storeu_si512(dst + c, _mm512_mask_loadu_epi8(zero_points, mask, src + c));
    }
#endif
    const int64_t copied = std::clamp<int64_t>(channels - c, 0, row_depth - c);
    std::copy(src + c, src + c + copied, dst + c);
    std::fill(dst + c + copied, dst + row_depth, x_zp);
  }
}

// X unrolled for the GEMM (im2col) for the output pixels [p0, p1), one row of `row_depth` each
// from `rows` on: the pixel's window tap by tap, each tap the group's channels from xt
// (channels-last), then x_zp up to row_depth (the packed W's depth, at least the window's).
// Taps in the padding read x_zp, so that they add nothing. Where a kernel row lies inside the
// input without dilation, its taps are neighbours in xt and move as one run of bytes.
template <class TX>
void int_im2col_rows(const IntConvPlan& p, const TX* xt, TX x_zp, int64_t p0, int64_t p1, int64_t row_depth,
                     TX* rows) {
  const auto& [dd, dh, dw] = p.window;
  const int64_t channels = p.channels / p.group;
  const int64_t row_bytes = channels * dw.kernel;  // one kernel row of a window
  const int64_t depth = row_bytes * dd.kernel * dh.kernel;
  int64_t ow = p0 % dw.out, oh = p0 / dw.out % dh.out, od = p0 / (dw.out * dh.out);
#if defined(__AVX512BW__)
  const __m512i zero_points = _mm512_set1_epi8(static_cast<char>(x_zp));
#endif
  for (int64_t px = p0; px < p1; ++px) {
    TX* dst = rows + (px - p0) * row_depth;
#if defined(__AVX512BW__)
    // x_zp past the window (less than 64 bytes: W's depth is padded to whole quads of tiles) in
    // one masked store, where a call to memset per row cost more than the row's copies.
    if (row_depth - depth < 64) {
      _mm512_mask_storeu_epi8(dst + depth, (__mmask64{1} << (row_depth - depth)) - 1, zero_points);
    } else {
      std::fill(dst + depth, dst + row_depth, x_zp);
    }
#else
    std::fill(dst + depth, dst + row_depth, x_zp);
#endif
    const int64_t iw0 = ow * dw.stride - dw.pad_begin;
    const bool row_inside = dw.dilation == 1 && iw0 >= 0 && iw0 + dw.kernel <= dw.in;
    for (int64_t a = 0; a < dd.kernel; ++a) {
      const int64_t id = od * dd.stride - dd.pad_begin + a * dd.dilation;
      for (int64_t b = 0; b < dh.kernel; ++b, dst += row_bytes) {
        const int64_t ih = oh * dh.stride - dh.pad_begin + b * dh.dilation;
        if (id < 0 || id >= dd.in || ih < 0 || ih >= dh.in) {
          std::fill(dst, dst + row_bytes, x_zp);
          continue;
        }
        const TX* line = xt + (id * dh.in + ih) * dw.in * channels;
        if (row_inside) {
          copy_channels(line + iw0 * channels, row_bytes, dst);
          continue;
        }
        for (int64_t e = 0; e < dw.kernel; ++e) {
          const int64_t iw = iw0 + e * dw.dilation;
          if (iw < 0 || iw >= dw.in) {
            std::fill(dst + e * channels, dst + (e + 1) * channels, x_zp);
          } else {
            copy_channels(line + iw * channels, channels, dst + e * channels);
          }
        }
      }
    }
    if (++ow == dw.out) {
      ow = 0;
      if (++oh == dh.out) {
        oh = 0;
        ++od;
      }
    }
  }
}

// W as the GEMM's B, one matrix per group: depth (kernel tap, then input channel, as
// int_im2col_rows lays out X) by the group's output channels, with zero rows up to
// PackedIntB::padded_depth, so that X's rows, laid out that long, are read as they are (a
// pointwise convolution of a shallow depth: no zero rows, X's pixels are read as they are).
template <class TW>
std::vector<PackedIntB> pack_conv_weights(const TW* w, int64_t group, int64_t group_out, int64_t channels,
                                          int64_t taps) {
  const int64_t depth = channels * taps;
  const int64_t row_depth =
      taps == 1 && int_gemm_takes_shallow_rows<uint8_t>(depth) ? depth : PackedIntB::padded_depth(depth);
  std::vector<TW> reordered(static_cast<std::size_t>(group_out * row_depth));
  std::vector<PackedIntB> packed;
  for (int64_t g = 0; g < group; ++g) {
    // W[oc][c][tap] -> reordered[oc][tap][c]: each output channel's row of B^T.
    for (int64_t oc = 0; oc < group_out; ++oc)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t t = 0; t < taps; ++t)
          reordered[static_cast<std::size_t>(oc * row_depth + t * channels + c)] =
              w[((g * group_out + oc) * channels + c) * taps + t];
    packed.push_back(PackedIntB::pack(reordered.data(), row_depth, true, row_depth, group_out));
  }
  return packed;
}

// QLinearConv's Y from the sums: y = saturate(round((sum + bias[oc]) * scale[oc]) + zero) as
// uint8 or int8, per output channel oc.
struct ConvRequantization {
  void* y = nullptr;  // Y's first element, of Q
  bool is_signed = false;  // Q is int8, else uint8
  const float* scale = nullptr;  // per output channel
  const int32_t* bias = nullptr;  // per output channel, or none
  float zero = 0;

  // Y of convolution `p` from image `image`, output channel `channel` and pixel `pixel` on, as
  // the GEMM's output of pixels by channels: channels-last or, transposed, channel planes.
  IntGemmOutput gemm_output(const IntConvPlan& p, int64_t image, int64_t channel, int64_t pixel) const {
    const int64_t out_size = shape_numel(std::span(p.out).subspan(2));
    const int64_t offset = p.layout.y ? (image * out_size + pixel) * p.out_channels + channel
                                      : (image * p.out_channels + channel) * out_size + pixel;
    const int64_t ld = p.layout.y ? p.out_channels : out_size;
    const int32_t* b = bias ? bias + channel : nullptr;
    const float* s = scale + channel;
    auto output = [&](auto* first) {
      return p.layout.y ? IntGemmOutput::requantized(first + offset, ld, s, b, zero)
                        : IntGemmOutput::requantized_transposed(first + offset, ld, s, b, zero);
    };
    return is_signed ? output(static_cast<int8_t*>(y)) : output(static_cast<uint8_t*>(y));
  }
  // out[i] (bytes of Q) from `count` sums of output channel `channel`.
  void requantize_sums(const int32_t* sums, int64_t count, int64_t channel, uint8_t* out) const {
    const int32_t b = bias ? bias[channel] : 0;
    if (is_signed) {
      requantize_channel(sums, count, b, scale[channel], zero, reinterpret_cast<int8_t*>(out));
    } else {
      requantize_channel(sums, count, b, scale[channel], zero, out);
    }
  }
};

// dst[i] = src[i] - zero as int16 for i in [0, count). (Its own function, with restrict: a byte
// store could alias the source, and the loop would not vectorize.)
template <class TX>
void minus_zero_point(const TX* __restrict src, int64_t count, int32_t zero, int16_t* __restrict dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = static_cast<int16_t>(static_cast<int32_t>(src[i]) - zero);
}

// dst0[j] = src[2j] - zero and dst1[j] = src[2j + 1] - zero, as int16, for the `count` values
// of src: a row's values to the two column phases of a stride-2 window.
template <class TX>
void minus_zero_point_by_parity(const TX* __restrict src, int64_t count, int32_t zero, int16_t* __restrict dst0,
                                int16_t* __restrict dst1) {
  for (int64_t j = 0; j < count / 2; ++j) {
    dst0[j] = static_cast<int16_t>(static_cast<int32_t>(src[2 * j]) - zero);
    dst1[j] = static_cast<int16_t>(static_cast<int32_t>(src[2 * j + 1]) - zero);
  }
  if (count % 2 != 0) dst0[count / 2] = static_cast<int16_t>(static_cast<int32_t>(src[count - 1]) - zero);
}

// How a depthwise convolution lays out one input plane (or volume): as int16 values minus the
// zero point, zeros where the window reaches into the padding, split into the phases of its
// strides. An axis of stride 2 has two phases, its even and its odd (padded) positions, each
// half as long; an axis of stride 1 has one. Output (od, oh, ow) then sits at phase offset
// (od * rows + oh) * row + ow, and tap (a, b, e) reads a fixed distance from there in one
// phase, so each tap is one vector pass over all the outputs of a plane (the sums at the
// positions past each output row are left unused). Strides over 2 keep the padded plane as it
// is (one phase), and each output row adds its taps at their stride.
struct DepthwiseLayout {
  std::array<int64_t, 3> stride{}, padded{}, extent{};  // per axis (d, h, w): phases, padded and phase lengths
  int64_t phase_size = 0;
  bool by_phases = true;  // every stride at most 2: one pass over a plane per tap

  explicit DepthwiseLayout(const Window3& win) {
    for (std::size_t a = 0; a < 3; ++a) {
      const WindowDim& d = win[a];
      padded[a] = (d.out - 1) * d.stride + (d.kernel - 1) * d.dilation + 1;
      by_phases = by_phases && d.stride <= 2;
    }
    for (std::size_t a = 0; a < 3; ++a) {
      stride[a] = by_phases ? win[a].stride : 1;
      extent[a] = (padded[a] + stride[a] - 1) / stride[a];
    }
    phase_size = extent[0] * extent[1] * extent[2];
  }
  int64_t size() const { return stride[0] * stride[1] * stride[2] * phase_size; }
  // Where padded position (d, h, w) lies.
  int64_t at(int64_t d, int64_t h, int64_t w) const {
    const int64_t phase = ((d % stride[0]) * stride[1] + h % stride[1]) * stride[2] + w % stride[2];
    return phase * phase_size + ((d / stride[0]) * extent[1] + h / stride[1]) * extent[2] + w / stride[2];
  }
  // Output row (od, oh)'s first sum in a pass (by phases; a row pass starts at 0).
  int64_t row_at(int64_t od, int64_t oh) const { return by_phases ? (od * extent[1] + oh) * extent[2] : 0; }
};

// Input plane `x` laid out as `layout` says into `out`.
template <class TX>
void pad_plane(const Window3& win, const DepthwiseLayout& layout, const TX* x, int32_t x_zp, int16_t* out) {
  const auto& [dd, dh, dw] = win;
  std::fill(out, out + layout.size(), int16_t{0});
  const auto& padded = layout.padded;
  const int64_t w_first = std::max<int64_t>(0, -dw.pad_begin), w_last = std::min(dw.in, padded[2] - dw.pad_begin);
  if (w_first >= w_last) return;
  for (int64_t id = std::max<int64_t>(0, -dd.pad_begin); id < std::min(dd.in, padded[0] - dd.pad_begin); ++id)
    for (int64_t ih = std::max<int64_t>(0, -dh.pad_begin); ih < std::min(dh.in, padded[1] - dh.pad_begin); ++ih) {
      const TX* src = x + (id * dh.in + ih) * dw.in + w_first;
      const int64_t d = id + dd.pad_begin, h = ih + dh.pad_begin, w = w_first + dw.pad_begin;
      const int64_t count = w_last - w_first;
      if (layout.stride[2] == 1 || count == 1) {
        minus_zero_point(src, count, x_zp, out + layout.at(d, h, w));
      } else {
        minus_zero_point_by_parity(src, count, x_zp, out + layout.at(d, h, w), out + layout.at(d, h, w + 1));
      }
    }
}

// acc[o] += src[o * stride] * weight for o in [0, count): one tap along the outputs.
inline void add_tap(const int16_t* src, int64_t stride, int32_t weight, int64_t count, int32_t* acc) {
  if (stride == 1) {
    for (int64_t o = 0; o < count; ++o) acc[o] += static_cast<int32_t>(src[o]) * weight;
  } else {
    for (int64_t o = 0; o < count; ++o) acc[o] += static_cast<int32_t>(src[o * stride]) * weight;
  }
}

// acc[o] += sum over taps e of srcs[e][o] * weights[e] for o in [0, count): taps whose values
// for consecutive outputs are neighbours, in one pass over the outputs for a row of three.
inline void add_neighbour_taps(const int16_t* const* srcs, const int32_t* weights, int64_t taps, int64_t count,
                               int32_t* acc) {
  if (taps == 3) {
    const int32_t w0 = weights[0], w1 = weights[1], w2 = weights[2];
    const int16_t *s0 = srcs[0], *s1 = srcs[1], *s2 = srcs[2];
    for (int64_t o = 0; o < count; ++o)
      acc[o] += static_cast<int32_t>(s0[o]) * w0 + static_cast<int32_t>(s1[o]) * w1 + static_cast<int32_t>(s2[o]) * w2;
    return;
  }
  for (int64_t e = 0; e < taps; ++e) add_tap(srcs[e], 1, weights[e], count, acc);
}

// Planes of at most this many outputs are convolved channels-last even when X and Y are planes
// (see int_depthwise).
constexpr int64_t kSmallDepthwisePlane = 28 * 28;

// W of a convolution prepared when the kernel is built, where W and the zero points are
// constants: packed per group for the GEMM, or, depthwise, as the channels-last kernel
// multiplies it (prepare_conv_weights).
struct PreparedConvWeights {
  std::vector<PackedIntB> packed;  // per group; empty when not packed
  std::optional<DepthwiseWeights> depthwise;
};

// A depthwise convolution of one output channel per input channel, channels-last
// (depthwise_rows), over the output rows in parallel. X is channels-last as the plan says, or
// turned so per image; the sums go to `y` (int32 planes) or, given `requantize`, are
// requantized across the channels into Y, channels-last or (turned back per image) as planes. W
// is prepared here unless `prepared` holds it.
template <class TX, class TW>
void int_depthwise_channels_last(const IntConvPlan& p, const TX* x, const TW* w, int32_t x_zp,
                                 const std::vector<int32_t>& w_zero, const PreparedConvWeights& prepared, int32_t* y,
                                 const ConvRequantization* requantize, const Parallel& parallel) {
  const auto& [dd, dh, dw] = p.window;
  const int64_t in_size = dd.in * dh.in * dw.in, out_size = dd.out * dh.out * dw.out;
  const int64_t channels = p.channels, taps = dd.kernel * dh.kernel * dw.kernel;
  std::optional<DepthwiseWeights> prepared_now;
  const std::optional<DepthwiseWeights>& ready = prepared.depthwise;
  if (!ready || !ready->fit(x_zp, p.window, channels))
    prepared_now.emplace(w, w_zero, static_cast<TX>(x_zp), dd.kernel * dh.kernel, dw.kernel, channels);
  const DepthwiseWeights& weights = prepared_now ? *prepared_now : *ready;
  // X and Y turned, kept between runs (fresh pages every run cost more than the convolution).
  thread_local AlignedBuffer<TX> x_turned;
  thread_local AlignedBuffer<uint8_t> y_turned;
  AlignedBuffer<TX>& xt = x_turned;  // this thread's (inside the loops, `x_turned` would name each worker's own)
  AlignedBuffer<uint8_t>& yt = y_turned;
  if (!p.layout.x) xt.resize(static_cast<std::size_t>(in_size * channels));
  if (requantize && !p.layout.y) yt.resize(static_cast<std::size_t>(out_size * channels));
  const int64_t rows = dd.out * dh.out;
  for (int64_t n = 0; n < p.batch; ++n) {
    const TX* xn = x + n * channels * in_size;
    if (!p.layout.x) {
      parallel.for_range(in_size, std::max<int64_t>(1, 4096 / channels), [&](int64_t p0, int64_t p1) {
        to_channels_last(xn, channels, in_size, p0, p1, channels, TX{}, xt.data());
      });
      xn = xt.data();
    }
    DepthwiseOutput out;
    if (requantize) {
      out.requantized = p.layout.y ? static_cast<uint8_t*>(requantize->y) + n * out_size * channels : yt.data();
      out.is_signed = requantize->is_signed;
      out.scale = requantize->scale;
      out.bias = requantize->bias;
      out.zero = requantize->zero;
    } else {
      out.planes = y + n * channels * out_size;
      out.plane = out_size;
    }
    parallel.for_range(rows, std::max<int64_t>(1, 16384 / (dw.out * channels * taps)), [&](int64_t r0, int64_t r1) {
      depthwise_rows(p.window, xn, weights, out, r0, r1);
    });
    if (requantize && !p.layout.y)
      transpose_bytes(yt.data(), channels, out_size, channels,
                      static_cast<uint8_t*>(requantize->y) + n * channels * out_size, out_size);
  }
}

// A depthwise convolution (one input channel per group) directly: each input plane is laid out
// once (DepthwiseLayout), then the outputs add up their taps, a kernel row at a time. The sums
// go to `y`, or, given `requantize` instead, requantized to QLinearConv's Y. Convolutions of one
// output channel per input channel go channels-last instead where the planes are small, or
// where W is prepared for vpdpbusd in two blocks of 16 channels or more: then the turns of X and
// Y cost less than the planes' passes take longer (144 channels of 56x56, 0.28 -> 0.15 ms; 96
// of 112x112 at stride 2, 0.32 -> 0.16), where 16 channels of 224x224 go faster as planes.
template <class TX, class TW>
void int_depthwise(const IntConvPlan& p, const TX* x, const TW* w, int32_t x_zp, const std::vector<int32_t>& w_zero,
                   const PreparedConvWeights& prepared, int32_t* y, const ConvRequantization* requantize,
                   const Parallel& parallel) {
  const auto& [dd, dh, dw] = p.window;
  const int64_t in_size = dd.in * dh.in * dw.in, out_size = dd.out * dh.out * dw.out;
  if (out_size == 0) return;
  const bool vpdpbusd_blocks = prepared.depthwise && prepared.depthwise->blocks >= 2;
  if (p.layout.x || p.layout.y ||
      (p.out_channels == p.channels && (out_size <= kSmallDepthwisePlane || vpdpbusd_blocks))) {
    int_depthwise_channels_last(p, x, w, x_zp, w_zero, prepared, y, requantize, parallel);
    return;
  }
  const int64_t taps = dd.kernel * dh.kernel * dw.kernel, group_out = p.out_channels / p.group;
  const DepthwiseLayout layout(p.window);
  const bool flat = layout.by_phases;
  // How many sums a pass covers: a whole plane's outputs, or one row's.
  const int64_t pass = flat ? layout.row_at(dd.out - 1, dh.out - 1) + dw.out : dw.out;
  parallel.for_range(
      p.batch * p.out_channels, std::max<int64_t>(1, 4096 / (out_size * taps)), [&](int64_t p0, int64_t p1) {
        thread_local std::vector<int16_t> plane_buffer;
        thread_local std::vector<int32_t> sum_buffer;
        thread_local std::vector<uint8_t> byte_buffer;  // a flat pass requantized, rows then picked out
        std::vector<int32_t> weights(static_cast<std::size_t>(taps));  // one output channel's, minus its zero point
        std::vector<const int16_t*> sources(static_cast<std::size_t>(dw.kernel));  // a kernel row's, for output 0
        plane_buffer.resize(static_cast<std::size_t>(layout.size()));
        sum_buffer.resize(static_cast<std::size_t>(pass));
        byte_buffer.resize(static_cast<std::size_t>(flat && requantize ? pass : 0));
        int16_t* xp = plane_buffer.data();
        int32_t* sums = sum_buffer.data();
        for (int64_t plane = p0; plane < p1; ++plane) {
          const int64_t n = plane / p.out_channels, oc = plane % p.out_channels;
          // Output channels of one group read the same plane: laid out once for all of them.
          if (plane == p0 || oc % group_out == 0)
            pad_plane(p.window, layout, x + (n * p.channels + oc / group_out) * in_size, x_zp, xp);
          const int32_t wz = w_zero.empty() ? 0 : w_zero[w_zero.size() == 1 ? 0 : static_cast<std::size_t>(oc)];
          for (int64_t tap = 0; tap < taps; ++tap)
            weights[static_cast<std::size_t>(tap)] = static_cast<int32_t>(w[oc * taps + tap]) - wz;
          // The taps over the outputs from (od, oh) on (one row, or the whole plane when flat),
          // a kernel row at a time.
          const auto add_taps = [&](int64_t od, int64_t oh) {
            std::fill(sums, sums + pass, 0);
            for (int64_t a = 0; a < dd.kernel; ++a)
              for (int64_t b = 0; b < dh.kernel; ++b) {
                const int32_t* row_weights = weights.data() + (a * dh.kernel + b) * dw.kernel;
                const int64_t d = od * dd.stride + a * dd.dilation, h = oh * dh.stride + b * dh.dilation;
                if (!flat) {
                  for (int64_t e = 0; e < dw.kernel; ++e)
                    add_tap(xp + layout.at(d, h, e * dw.dilation), dw.stride, row_weights[e], pass, sums);
                  continue;
                }
                for (int64_t e = 0; e < dw.kernel; ++e)
                  sources[static_cast<std::size_t>(e)] = xp + layout.at(d, h, e * dw.dilation);
                add_neighbour_taps(sources.data(), row_weights, dw.kernel, pass, sums);
              }
          };
          if (flat) {
            add_taps(0, 0);
            if (requantize) requantize->requantize_sums(sums, pass, oc, byte_buffer.data());
          }
          for (int64_t od = 0; od < dd.out; ++od)
            for (int64_t oh = 0; oh < dh.out; ++oh) {
              if (!flat) add_taps(od, oh);
              const int32_t* row = sums + layout.row_at(od, oh);
              const int64_t at = plane * out_size + (od * dh.out + oh) * dw.out;
              if (!requantize) {
                std::copy(row, row + dw.out, y + at);
              } else if (flat) {
                const uint8_t* bytes = byte_buffer.data() + layout.row_at(od, oh);
                std::copy(bytes, bytes + dw.out, static_cast<uint8_t*>(requantize->y) + at);
              } else {
                requantize->requantize_sums(row, dw.out, oc, static_cast<uint8_t*>(requantize->y) + at);
              }
            }
        }
      });
}

// Below these a convolution runs on one thread (int_conv): a depthwise one of fewer outputs
// (pixels times channels), one of the GEMM of fewer output pixels than one chunk and fewer
// multiply-adds.
constexpr int64_t kParallelDepthwiseOutputs = 100'000;
constexpr double kParallelGemmMacs = 4e6;

// Y (int32) = sum over the window of (X - x_zp) * (W - w_zp[oc]); padding adds nothing.
// Depthwise convolutions run directly. Pointwise ones that keep their int32 sums are, per image
// and group, a GEMM of W's rows (output channels) by X's planes (channels x pixels), packed.
// The rest are a GEMM of X made channels-last (a pointwise convolution's rows as they are,
// others unrolled: one row of window values per output pixel) by W packed once (one matrix per
// group, from `prepared` or packed here), written back as channel planes or channels-last. The
// results go to `y` as int32 sums, or, given `requantize` instead (y null), to QLinearConv's Y,
// the sums never stored. Small groups run side by side, each on one thread.
template <class TX, class TW>
void int_conv(const IntConvPlan& p, const TX* x, const TW* w, int32_t x_zp, const std::vector<int32_t>& w_zero,
              const PreparedConvWeights& prepared, int32_t* y, const ConvRequantization* requantize,
              const Parallel& threads) {
  // Output pixels unrolled at a time: for a 3 x 3 kernel over 64 channels, 144 KiB of rows, which
  // stay in the second-level cache for the product.
  constexpr int64_t kPixelChunk = 256;
  constexpr int64_t kMinChunkPixels = 24;  // two of the int8 GEMM's register tiles
  const auto& [dd, dh, dw] = p.window;
  const int64_t in_size = dd.in * dh.in * dw.in, out_size = dd.out * dh.out * dw.out;
  const int64_t group_in = p.channels / p.group, group_out = p.out_channels / p.group;
  const int64_t taps = dd.kernel * dh.kernel * dw.kernel, depth = group_in * taps;
  const bool pointwise = is_pointwise(p.window);
  const bool depthwise = is_depthwise(p.group, group_in);
  // A small convolution runs on the calling thread alone: split over threads, the fork and
  // join (3.5 us for a new OpenMP team on a 2-core AMD EPYC VM, 0.8 for a held one), and its
  // values moving between the cores' caches, cost more than they save. (MobileNetV2's 14x14 and
  // 7x7 layers ran slower on two threads than on one; with each thread multiplying the pixels it
  // unrolled, its GEMM ones of 4 to 16 million multiply-adds no longer do: 14x14 64 -> 384
  // channels, 0.047 -> 0.034 ms. With the held team, quartering these thresholds gained nothing.)
  const int64_t outputs = p.batch * out_size;
  const double macs = static_cast<double>(outputs * p.out_channels) * static_cast<double>(depth);
  const bool small = depthwise ? outputs * p.out_channels < kParallelDepthwiseOutputs
                               : outputs < kPixelChunk && macs < kParallelGemmMacs;
  const SerialParallel serial;
  const Parallel& parallel = small ? serial : threads;
  if (depthwise) {
    int_depthwise(p, x, w, x_zp, w_zero, prepared, y, requantize, parallel);
    return;
  }
  const bool w_by_planes = pointwise && !requantize;
  const std::vector<PackedIntB>& packed_w = prepared.packed;
  const std::vector<PackedIntB> packed_now = w_by_planes || !packed_w.empty()
                                                 ? std::vector<PackedIntB>{}
                                                 : pack_conv_weights(w, p.group, group_out, group_in, taps);
  const std::vector<PackedIntB>& weights = packed_w.empty() ? packed_now : packed_w;
  // The GEMM's rows: X channels-last (a pointwise window's), or unrolled, each W's packed depth
  // long (padded past the window), as the GEMM reads them without a copy. X that is stored
  // channels-last (one group) has rows as long as its channels: a pointwise window reads them
  // as they are only where that is W's depth, else they are copied out, as a window is.
  const int64_t row_depth = w_by_planes ? depth : weights.front().k();
  const int64_t xt_ld = pointwise && !p.layout.x ? row_depth : group_in;
  const bool rows_as_they_are = pointwise && xt_ld == row_depth;
  const std::vector<int32_t> x_zero = {x_zp};
  auto product = [&](int64_t job, const Parallel& par) {
    const int64_t n = job / p.group, g = job % p.group;
    const IntZeroPoints w_zero_g =
        w_zero.size() > 1 ? IntZeroPoints(w_zero).subspan(g * group_out, group_out) : IntZeroPoints(w_zero);
    const TX* xg = x + (n * p.channels + g * group_in) * in_size;
    if (w_by_planes) {
      const int64_t plane = n * p.out_channels + g * group_out;  // Y's first plane of this image and group
      thread_local PackedIntB packed;
      PackedIntB& b = packed;  // this thread's: inside the loops, `packed` would name each worker's own
      b.assign(xg, out_size, false, depth, out_size, par);
      int_gemm(group_out, w + g * group_out * depth, depth, w_zero_g, b, x_zero,
               IntGemmOutput::int32(y + plane * out_size, out_size), par);
      return;
    }
    thread_local AlignedBuffer<TX> channels_last;
    AlignedBuffer<TX>& turned = channels_last;  // this thread's (see above)
    const TX* xt = xg;  // X of this image and group, channels-last
    if (!p.layout.x) {
      turned.resize(static_cast<std::size_t>(in_size * xt_ld));
      par.for_range(in_size, std::max<int64_t>(1, 4096 / group_in), [&](int64_t p0, int64_t p1) {
        to_channels_last(xg, group_in, in_size, p0, p1, xt_ld, static_cast<TX>(x_zp), turned.data());
      });
      xt = turned.data();
    }
    // Chunks of output pixels, each unrolled and multiplied while its rows are in cache: at most
    // kPixelChunk long and, where every thread gets two register tiles' rows, a multiple of the
    // threads of equal length. Each thread then unrolls the rows it multiplies, and the threads'
    // shares are even: 784 pixels on two threads make four chunks of 196, where chunks of 256
    // left one thread 512 pixels and the other 272 (ResNet-18's 28x28 layers: 0.21 -> 0.16 ms),
    // and 196 make two, where one chunk's rows, unrolled by both threads, were multiplied by
    // both, half of them read from the other core's cache (its 14x14 layers: 0.22 -> 0.17 ms).
    const int64_t threads = par.threads();
    int64_t chunks = (out_size + kPixelChunk - 1) / kPixelChunk;
    if (out_size >= threads * kMinChunkPixels) chunks = (chunks + threads - 1) / threads * threads;
    const int64_t chunk_pixels = std::max<int64_t>(1, (out_size + chunks - 1) / std::max<int64_t>(chunks, 1));
    chunks = (out_size + chunk_pixels - 1) / chunk_pixels;
    // Unrolls chunk `chunk` into `unrolled` (split over `chunk_par`) and multiplies it by W.
    auto run_chunk = [&](int64_t chunk, TX* unrolled, const Parallel& chunk_par) {
      const int64_t p0 = chunk * chunk_pixels, p1 = std::min(out_size, p0 + chunk_pixels);
      const TX* rows = xt + p0 * xt_ld;  // a pointwise window is its pixel's channels
      if (!rows_as_they_are) {
        chunk_par.for_range(p1 - p0, 16, [&](int64_t q0, int64_t q1) {
          TX* out = unrolled + q0 * row_depth;
          if (pointwise) {
            pad_pixel_rows(xt, group_in, static_cast<TX>(x_zp), p0 + q0, p0 + q1, row_depth, out);
          } else {
            int_im2col_rows(p, xt, static_cast<TX>(x_zp), p0 + q0, p0 + q1, row_depth, out);
          }
        });
        rows = unrolled;
      }
      const int64_t plane = n * p.out_channels + g * group_out;  // Y's first plane of this image and group
      int_gemm(p1 - p0, rows, row_depth, x_zero, weights[static_cast<std::size_t>(g)], w_zero_g,
               requantize ? requantize->gemm_output(p, n, g * group_out, p0)
                          : IntGemmOutput::int32_transposed(y + plane * out_size + p0, out_size),
               chunk_par);
    };
    thread_local AlignedBuffer<TX> unrolled;  // each worker's own; rows of a whole number of lines start on one
    if (chunks < threads) {
      // Fewer chunks than threads (too few pixels): one chunk after the other, each split over
      // the threads (the GEMM by strips of W's columns).
      if (!rows_as_they_are) unrolled.resize(static_cast<std::size_t>(chunk_pixels * row_depth));
      for (int64_t chunk = 0; chunk < chunks; ++chunk) run_chunk(chunk, unrolled.data(), par);
      return;
    }
    par.for_range(chunks, 1, [&](int64_t c0, int64_t c1) {
      AlignedBuffer<TX>& mine = unrolled;  // this worker's (see above)
      if (!rows_as_they_are) mine.resize(static_cast<std::size_t>(chunk_pixels * row_depth));
      const SerialParallel serial;
      for (int64_t chunk = c0; chunk < c1; ++chunk) run_chunk(chunk, mine.data(), serial);
    });
  };
  const int64_t jobs = p.batch * p.group;
  if (jobs > 1 && static_cast<double>(group_out * depth * out_size) < kSmallGemm) {
    const SerialParallel serial;
    parallel.for_range(jobs, 1, [&](int64_t j0, int64_t j1) {
      for (int64_t job = j0; job < j1; ++job) product(job, serial);
    });
  } else {
    for (int64_t job = 0; job < jobs; ++job) product(job, parallel);
  }
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

// The constant input `i` (x_zp or W's zero point), or nullopt where it is computed or cannot be
// read; an undefined tensor where it is omitted.
std::optional<Tensor> constant_or_omitted(const NodeContext& ctx, std::size_t i) {
  if (!ctx.has_input(i)) return Tensor();
  const WeightHandle* handle = ctx.constant_input(i);
  if (!handle) return std::nullopt;
  auto t = handle->materialize();
  if (!t) return std::nullopt;  // prepared at run time instead, where a read error reaches the user
  return std::move(*t);
}

// W (input `w`, its zero point at w + 2, x_zp at 2) of a convolution of `group` groups, prepared
// where it is a constant: packed per group where int_conv runs it as a GEMM of X channels-last
// by W (not depthwise; pointwise only when `requantized`), or, for a depthwise convolution of
// one output channel per input channel whose zero points are constants too, as its channels-last
// kernel multiplies it. Nothing where int_conv prepares W itself, or needs no packing.
PreparedConvWeights prepare_conv_weights(const NodeContext& ctx, std::size_t w, int64_t group,
                                         const WindowAttrs& attrs, bool requantized) {
  PreparedConvWeights prepared;
  const WeightHandle* weights = ctx.constant_input(w);
  if (!weights || weights->shape().size() < 3 || group < 1) return prepared;
  const Shape& s = weights->shape();
  const int64_t taps = shape_numel(std::span(s).subspan(2));
  if (s[0] % group != 0) return prepared;
  const bool pointwise = taps == 1 && std::ranges::all_of(attrs.strides, [](int64_t v) { return v == 1; }) &&
                         std::ranges::all_of(attrs.pads, [](int64_t v) { return v == 0; });
  const bool depthwise = is_depthwise(group, s[1]);
  if ((pointwise && !requantized && !depthwise) || (depthwise && (s[0] != group || taps == 0))) return prepared;
  auto t = weights->materialize();
  if (!t) return prepared;  // prepared at run time instead, where a read error reaches the user
  if (!depthwise) {
    (void)dispatch_dtype(QuantTypes{}, t->dtype(), [&](auto tag) -> Expected<void> {
      using TW = typename decltype(tag)::type;
      prepared.packed = pack_conv_weights(t->data_as<TW>(), group, s[0] / group, s[1], taps);
      return {};
    });
    return prepared;
  }
  const auto x_zero = constant_or_omitted(ctx, 2), w_zero = constant_or_omitted(ctx, w + 2);
  if (!x_zero || !w_zero || !ctx.has_input(0)) return prepared;
  (void)dispatch_pair(ctx.input_dtype(0), t->dtype(), [&](auto tx, auto tw) -> Expected<void> {
    using TX = typename decltype(tx)::type;
    using TW = typename decltype(tw)::type;
    const TX x_zp = x_zero->defined() && x_zero->numel() == 1 ? *x_zero->data_as<TX>() : TX{};
    std::vector<int32_t> w_zp;
    if (w_zero->defined()) w_zp.assign(w_zero->data_as<TW>(), w_zero->data_as<TW>() + w_zero->numel());
    if (w_zp.size() > 1 && static_cast<int64_t>(w_zp.size()) != s[0]) return {};  // an error at run time
    prepared.depthwise.emplace(t->data_as<TW>(), w_zp, x_zp, taps / s.back(), s.back(), s[0]);
    return {};
  });
  return prepared;
}

// Whether QLinearConv `ctx` (W at input `w`, of shape `ws`) writes channels-last Y from the GEMM's
// registers (int_gemm_takes_shallow_rows): uint8 X, pointwise over a shallow depth, W's zero
// points constant zeros.
bool multiplies_shallow_rows(const NodeContext& ctx, std::size_t w, const Shape& ws, ChannelsLast layout) {
  if (ctx.node().op_type != "QLinearConv" || !layout.y || ctx.input_dtype(0) != DType::kUInt8 || ws.size() < 3 ||
      shape_numel(std::span(ws).subspan(2)) != 1 || !int_gemm_takes_shallow_rows<uint8_t>(ws[1]))
    return false;
  const auto zeros = constant_or_omitted(ctx, w + 2);
  if (!zeros) return false;
  if (!zeros->defined()) return true;
  const auto* bytes = static_cast<const uint8_t*>(zeros->data());
  return std::all_of(bytes, bytes + zeros->numel(), [](uint8_t b) { return b == 0; });
}

// What profiles call the convolution's path: "depthwise-direct" where W's shape says depthwise,
// else the GEMM's ("int-gemm:vnni-shallow" where it multiplies in registers); then, where X or
// Y is stored channels-last, both layouts ("nchw>nhwc").
std::string int_conv_variant(const NodeContext& ctx, std::size_t w, int64_t group, ChannelsLast layout) {
  const auto ws = ctx.input_static_shape(w);
  std::string name = ws && ws->size() >= 3 && is_depthwise(group, (*ws)[1]) ? "depthwise-direct"
                     : ws && multiplies_shallow_rows(ctx, w, *ws, layout) ? "int-gemm:vnni-shallow"
                                                                          : fmt::format("int-gemm:{}", int_gemm_isa());
  if (layout.any()) name += fmt::format(" {}>{}", layout.x ? "nhwc" : "nchw", layout.y ? "nhwc" : "nchw");
  return name;
}

// ConvInteger and QLinearConv share the int32 sums; they differ in what happens to them.
class IntConvBase : public Kernel {
 public:
  // `w` is W's input index; a constant W is prepared here (prepare_conv_weights). QLinearConv's
  // kernel requantizes: int_conv then multiplies every convolution but a depthwise one by W packed.
  // X and Y are stored as `layout` says (channels-last only for QLinearConv's kernel).
  IntConvBase(const NodeContext& ctx, std::size_t spatial, std::size_t w, ChannelsLast layout = {})
      : op_(ctx.node().op_type),
        attrs_(read_window_attrs(ctx.attrs(), spatial)),
        group_(ctx.attrs().int_or("group", 1)),
        layout_(layout),
        prepared_(prepare_conv_weights(ctx, w, group_, attrs_, op_ == "QLinearConv")),
        variant_(int_conv_variant(ctx, w, group_, layout)) {}
  std::string_view variant() const override { return variant_; }

 protected:
  // The convolution of inputs x and w, from their shapes (X's as ONNX has it, whatever its
  // layout). A channels-last one must be of one group, or depthwise with one output channel per
  // input channel.
  Expected<IntConvPlan> plan(KernelContext& ctx, std::size_t x, std::size_t w) const {
    const Shape& xs = ctx.input(x).shape();
    auto p = plan_int_conv(op_, attrs_, group_, layout_.x ? channels_first_shape(xs) : xs, ctx.input(w).shape());
    if (!p || !layout_.any()) return p;
    if (p->group != 1 && !(is_depthwise(p->group, p->channels / p->group) && p->out_channels == p->channels))
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: channels-last X or Y with {} groups of {} input and {} output channels", op_,
                              p->group, p->channels / p->group, p->out_channels / p->group),
                  "the cpu EP keeps channels-last only convolutions of one group, or of one input and output "
                  "channel per group",
                  "report this as a bug in the cpu EP's layout step");
    p->layout = layout_;
    return p;
  }
  // Y's shape as it is stored.
  Shape stored_output_shape(const IntConvPlan& p) const { return layout_.y ? channels_last_shape(p.out) : p.out; }
  // The convolution of inputs x and w with zero points xz and wz: int32 sums into `y`, or,
  // given `requantize` instead, QLinearConv's Y (see int_conv).
  Expected<void> convolve(KernelContext& ctx, const IntConvPlan& plan, std::size_t x, std::size_t w, std::size_t xz,
                          std::size_t wz, int32_t* y, const ConvRequantization* requantize) {
    const Tensor& xt = ctx.input(x);
    const Tensor& wt = ctx.input(w);
    return dispatch_pair(xt.dtype(), wt.dtype(), [&](auto tx, auto tw) -> Expected<void> {
      using TX = typename decltype(tx)::type;
      using TW = typename decltype(tw)::type;
      const int32_t x_zp = ctx.has_input(xz) ? static_cast<int32_t>(*ctx.input(xz).data_as<TX>()) : 0;
      auto w_zero = zero_point_values<TW>(ctx, wz, plan.out_channels, op_, "the zero point of W", "output channel");
      if (!w_zero) return std::unexpected(w_zero.error());
      int_conv<TX, TW>(plan, xt.data_as<TX>(), wt.data_as<TW>(), x_zp, *w_zero, prepared_, y, requantize,
                       ctx.parallel());
      return {};
    });
  }

 private:
  std::string op_;
  WindowAttrs attrs_;
  int64_t group_;
  ChannelsLast layout_;
  PreparedConvWeights prepared_;
  std::string variant_;
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
    auto plan = this->plan(ctx, 0, 1);
    if (!plan) return std::unexpected(plan.error());
    auto y = ctx.output(0, DType::kInt32, plan->out);
    if (!y) return std::unexpected(y.error());
    return convolve(ctx, *plan, 0, 1, 2, 3, y->mut_as<int32_t>(), nullptr);
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
    auto plan = this->plan(ctx, 0, 3);
    if (!plan) return std::unexpected(plan.error());
    const int64_t channels = plan->out_channels;
    if (auto r = require_one_or_per(ctx.input(4), channels, "QLinearConv", "w_scale", 4, "output channel"); !r)
      return r;
    if (ctx.has_input(8) && ctx.input(8).numel() != channels)
      return fail(ErrorCode::kRuntime,
                  fmt::format("QLinearConv: the bias (input 8) has {} value{}; it needs {}", ctx.input(8).numel(),
                              ctx.input(8).numel() == 1 ? "" : "s", channels),
                  "it holds one value per output channel (W's first dimension)",
                  fmt::format("give a bias of shape [{}]", channels));
    return dispatch_dtype(QuantTypes{}, ctx.input(7).dtype(), [&](auto tag) -> Expected<void> {
      using Q = typename decltype(tag)::type;
      auto y = ctx.output(0, dtype_of<Q>(), stored_output_shape(*plan));
      if (!y) return std::unexpected(y.error());
      const float x_scale = *ctx.input(1).data_as<float>();
      const Tensor& ws = ctx.input(4);
      const float y_scale = *ctx.input(6).data_as<float>();
      std::vector<float> scales(static_cast<std::size_t>(channels));
      for (int64_t oc = 0; oc < channels; ++oc)
        scales[static_cast<std::size_t>(oc)] = x_scale * ws.data_as<float>()[ws.numel() == 1 ? 0 : oc] / y_scale;
      const float y_zp = static_cast<float>(*ctx.input(7).data_as<Q>());
      const int32_t* bias = ctx.has_input(8) ? ctx.input(8).data_as<int32_t>() : nullptr;
      const ConvRequantization requantize{y->template mut_as<Q>(), std::is_signed_v<Q>, scales.data(), bias, y_zp};
      return convolve(ctx, *plan, 0, 3, 2, 5, nullptr, &requantize);
    });
  }
};

// Spatial rank of a claimed convolution: from X's or W's rank, else from kernel_shape.
std::size_t conv_spatial_rank(const NodeContext& ctx, std::size_t w) {
  const auto rank = ctx.input_rank(0) ? ctx.input_rank(0) : ctx.input_rank(w);
  if (rank) return static_cast<std::size_t>(*rank - 2);
  return ctx.attrs().ints_or("kernel_shape", {}).size();
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_qlinear_conv(const NodeContext& conv, ChannelsLast layout) {
  return make_kernel<QLinearConvKernel>(conv, conv_spatial_rank(conv, 3), 3, layout);
}

Expected<std::unique_ptr<Kernel>> make_matmul_integer_scaled(const NodeContext& matmul) {
  return make_kernel<MatMulIntegerScaledKernel>(pack_constant_int_b(matmul, 1));
}

std::vector<KernelDef> quantize_kernels() {
  return {
      KernelDef{{"", "DynamicQuantizeLinear", 11},
                0,
                check_dynamic_quantize_linear,
                [](const NodeContext&) { return make_kernel<DynamicQuantizeLinearKernel>(); }},
      KernelDef{{"", "MatMulInteger", 10},
                0,
                check_matmul_integer,
                [](const NodeContext& ctx) { return make_kernel<MatMulIntegerKernel>(pack_constant_int_b(ctx, 1)); }},
      KernelDef{{"", "QLinearMatMul", 10},
                0,
                check_qlinear_matmul,
                [](const NodeContext& ctx) { return make_kernel<QLinearMatMulKernel>(pack_constant_int_b(ctx, 3)); }},
      KernelDef{
          {"", "ConvInteger", 10},
          0,
          check_conv_integer,
          [](const NodeContext& ctx) { return make_kernel<ConvIntegerKernel>(ctx, conv_spatial_rank(ctx, 1), 1); }},
      KernelDef{{"com.microsoft", "MatMulIntegerToFloat", 1},
                0,
                check_integer_to_float,
                [](const NodeContext& ctx) {
                  return make_kernel<IntegerToFloatKernel>(pack_constant_int_b(ctx, 1), false);
                }},
      KernelDef{{"com.microsoft", "DynamicQuantizeMatMul", 1},
                0,
                check_integer_to_float,
                [](const NodeContext& ctx) {
                  return make_kernel<IntegerToFloatKernel>(pack_constant_int_b(ctx, 1), true);
                }},
      KernelDef{{"com.microsoft", "QGemm", 1},
                0,
                check_qgemm,
                [](const NodeContext& ctx) { return make_kernel<QGemmKernel>(ctx); }},
      KernelDef{
          {"", "QLinearConv", 10},
          0,
          check_qlinear_conv,
          [](const NodeContext& ctx) { return make_kernel<QLinearConvKernel>(ctx, conv_spatial_rank(ctx, 3), 3); }},
  };
}

}  // namespace nxrt::cpu
