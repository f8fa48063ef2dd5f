// Matrix products: MatMul (numpy semantics, batched with broadcasting) and Gemm; float runs
// on the packed GEMM with constant B packed at creation, other types on a reference loop.
#include <algorithm>

#include "common/gemm.h"
#include "common/matmul_plan.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// Flop and byte counts of a product when every shape involved is static.
Cost product_cost(const NodeContext& ctx, double multiply_adds) {
  Cost cost;
  cost.flops = 2 * multiply_adds;
  for (std::size_t i = 0; i < ctx.input_count(); ++i)
    if (auto n = static_numel(ctx.input_type(i)))
      cost.bytes_moved += static_cast<double>(*n) * static_cast<double>(dtype_size(ctx.input_dtype(i)));
  if (auto n = static_numel(ctx.output_type(0)))
    cost.bytes_moved += static_cast<double>(*n) * static_cast<double>(dtype_size(ctx.input_dtype(0)));
  return cost;
}

// ---- MatMul ----

// Static shapes of A and B, when both are known.
std::optional<Expected<MatMulPlan>> static_matmul_plan(const NodeContext& ctx) {
  auto a = ctx.input_static_shape(0), b = ctx.input_static_shape(1);
  if (!a || !b) return std::nullopt;
  return plan_matmul(*a, *b);
}

KernelMatch check_matmul(const NodeContext& ctx) {
  if (ctx.opset() < 9)
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  else
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}));
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0), "MatMul: B has type {} and A {}; they must match",
               dtype_name(ctx.input_dtype(1)), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(1) >= 1 && ctx.input_rank(1).value_or(1) >= 1,
               "MatMul: A has rank {} and B rank {}; both must be at least 1", ctx.input_rank(0).value_or(1),
               ctx.input_rank(1).value_or(1));
  auto plan = static_matmul_plan(ctx);
  if (!plan) return KernelMatch::supported();
  NXRT_REQUIRE(plan->has_value(), "{}", plan->error().what);
  const MatMulPlan& p = **plan;
  return KernelMatch::supported(
      product_cost(ctx, static_cast<double>(p.a_offsets.size()) * static_cast<double>(p.m * p.n * p.k)));
}

class MatMulKernel final : public Kernel {
 public:
  // `packed_b`: every matrix of a constant float B, packed; empty when B is not constant.
  explicit MatMulKernel(std::vector<PackedMatrix> packed_b) : packed_b_(std::move(packed_b)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    auto plan = plan_matmul(a.shape(), b.shape());
    if (!plan) return std::unexpected(plan.error());
    auto y = ctx.output(0, a.dtype(), plan->out);
    if (!y) return std::unexpected(y.error());
    switch (a.dtype()) {
      case DType::kFloat32:
        run_float(*plan, a, b, *y, ctx.parallel());
        break;
      case DType::kFloat64:
        run_reference<double>(*plan, a, b, *y, ctx.parallel());
        break;
      case DType::kInt32:
        run_reference<int32_t>(*plan, a, b, *y, ctx.parallel());
        break;
      default:
        run_reference<int64_t>(*plan, a, b, *y, ctx.parallel());
        break;
    }
    return {};
  }
  std::string_view variant() const override { return packed_b_.empty() ? "matmul-gemm" : "matmul-packed"; }
  std::vector<std::byte> save_packed() const override { return save_packed_matrices(packed_b_); }

 private:
  void run_float(const MatMulPlan& p, const Tensor& a, const Tensor& b, const Tensor& y,
                 const Parallel& parallel) const {
    const float* ad = a.data_as<float>();
    const float* bd = b.data_as<float>();
    float* yd = y.mut_as<float>();
    auto b_operand = [&](std::size_t i) {
      if (!packed_b_.empty()) return GemmOperand::of(packed_b_[static_cast<std::size_t>(p.b_offsets[i] / (p.k * p.n))]);
      return GemmOperand::matrix(bd + p.b_offsets[i], p.n);
    };
    const int64_t count = static_cast<int64_t>(p.a_offsets.size());
    if (count == 0) return;
    // One B for the whole batch (so A's matrices are back to back): a single taller product.
    if (p.b_shared) {
      gemm(count * p.m, p.n, p.k, 1.f, GemmOperand::matrix(ad, p.k), b_operand(0), 0.f, yd, p.n, parallel);
      return;
    }
    auto one = [&](int64_t i, const Parallel& par) {
      const auto s = static_cast<std::size_t>(i);
      gemm(p.m, p.n, p.k, 1.f, GemmOperand::matrix(ad + p.a_offsets[s], p.k), b_operand(s), 0.f, yd + i * p.m * p.n,
           p.n, par);
    };
    if (static_cast<double>(p.m * p.n * p.k) < kSmallGemm && count >= 2 * parallel.threads()) {
      parallel.for_range(count, 1, [&](int64_t i0, int64_t i1) {
        const SerialParallel serial;
        for (int64_t i = i0; i < i1; ++i) one(i, serial);
      });
      return;
    }
    for (int64_t i = 0; i < count; ++i) one(i, parallel);
  }

  template <class T>
  static void run_reference(const MatMulPlan& p, const Tensor& a, const Tensor& b, const Tensor& y,
                            const Parallel& parallel) {
    const T* ad = a.data_as<T>();
    const T* bd = b.data_as<T>();
    T* yd = y.mut_as<T>();
    parallel.for_range(static_cast<int64_t>(p.a_offsets.size()), 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const auto s = static_cast<std::size_t>(i);
        reference_gemm<T>(p.m, p.n, p.k, T(1), ad + p.a_offsets[s], false, bd + p.b_offsets[s], false, T(0),
                          yd + i * p.m * p.n);
      }
    });
  }

  std::vector<PackedMatrix> packed_b_;
};

Expected<std::unique_ptr<Kernel>> create_matmul(const NodeContext& ctx) {
  auto packed = pack_constant_b(ctx, 1, false);
  if (!packed) return std::unexpected(packed.error());
  return make_kernel<MatMulKernel>(std::move(*packed));
}

// ---- Gemm ----

struct GemmAttrs {
  float alpha = 1, beta = 1;
  bool trans_a = false, trans_b = false;
};

GemmAttrs read_gemm_attrs(const AttributeMap& attrs) {
  return GemmAttrs{attrs.float_or("alpha", 1.f), attrs.float_or("beta", 1.f), attrs.int_or("transA", 0) != 0,
                   attrs.int_or("transB", 0) != 0};
}

// True when a C of shape `c` broadcasts unidirectionally to m x n.
bool broadcasts_to(const Shape& c, int64_t m, int64_t n) {
  if (c.size() > 2) return false;
  const int64_t cm = c.size() == 2 ? c[0] : 1;
  const int64_t cn = c.empty() ? 1 : c.back();
  return (cm == 1 || cm == m) && (cn == 1 || cn == n);
}

KernelMatch check_gemm(const NodeContext& ctx) {
  if (ctx.opset() < 9)
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  else
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}));
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(ctx.input_dtype(1) == t, "Gemm: B has type {} and A {}; they must match", dtype_name(ctx.input_dtype(1)),
               dtype_name(t));
  NXRT_REQUIRE(ctx.opset() >= 11 || ctx.has_input(2),
               "Gemm: input C is missing; it is optional only from opset 11 (the model imports opset {})", ctx.opset());
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == t, "Gemm: C has type {} and A {}; they must match",
               dtype_name(ctx.input_dtype(2)), dtype_name(t));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(2) == 2,
               "Gemm: A has rank {}; Gemm takes 2-D A and B (use MatMul for batched products)",
               ctx.input_rank(0).value_or(2));
  NXRT_REQUIRE(ctx.input_rank(1).value_or(2) == 2,
               "Gemm: B has rank {}; Gemm takes 2-D A and B (use MatMul for batched products)",
               ctx.input_rank(1).value_or(2));
  auto a = ctx.input_static_shape(0), b = ctx.input_static_shape(1);
  if (!a || !b) return KernelMatch::supported();
  const GemmAttrs g = read_gemm_attrs(ctx.attrs());
  const int64_t m = g.trans_a ? (*a)[1] : (*a)[0], ka = g.trans_a ? (*a)[0] : (*a)[1];
  const int64_t kb = g.trans_b ? (*b)[1] : (*b)[0], n = g.trans_b ? (*b)[0] : (*b)[1];
  NXRT_REQUIRE(ka == kb, "Gemm: op(A) is {}x{} and op(B) {}x{} (transA={}, transB={}); the inner dims must match", m,
               ka, kb, n, int(g.trans_a), int(g.trans_b));
  auto c = ctx.has_input(2) ? ctx.input_static_shape(2) : std::nullopt;
  NXRT_REQUIRE(!c || broadcasts_to(*c, m, n), "Gemm: C {} does not broadcast to the {}x{} result", shape_to_string(*c),
               m, n);
  // Gemm-1 and -6 broadcast C only when asked to.
  NXRT_REQUIRE(!c || ctx.opset() >= 7 || ctx.attrs().int_or("broadcast", 0) != 0 || *c == Shape({m, n}),
               "Gemm: C {} is not {}x{} and broadcast=0; set broadcast=1 or give C the result's shape",
               shape_to_string(*c), m, n);
  return KernelMatch::supported(product_cost(ctx, static_cast<double>(m * n * ka)));
}

class GemmKernel final : public Kernel {
 public:
  GemmKernel(GemmAttrs attrs, std::vector<PackedMatrix> packed_b) : attrs_(attrs), packed_b_(std::move(packed_b)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.shape().size() != 2 || b.shape().size() != 2)
      return fail(ErrorCode::kRuntime, fmt::format("Gemm: A {} and B {} must be 2-D", shape_to_string(a.shape()),
                                                   shape_to_string(b.shape())));
    const int64_t m = attrs_.trans_a ? a.shape()[1] : a.shape()[0];
    const int64_t k = attrs_.trans_a ? a.shape()[0] : a.shape()[1];
    const int64_t kb = attrs_.trans_b ? b.shape()[1] : b.shape()[0];
    const int64_t n = attrs_.trans_b ? b.shape()[0] : b.shape()[1];
    if (k != kb)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Gemm: op(A) is {}x{} and op(B) {}x{}; the inner dims must match", m, k, kb, n),
                  fmt::format("A {} (transA={}), B {} (transB={})", shape_to_string(a.shape()), int(attrs_.trans_a),
                              shape_to_string(b.shape()), int(attrs_.trans_b)));
    const bool use_c = ctx.has_input(2) && attrs_.beta != 0;
    if (use_c && !broadcasts_to(ctx.input(2).shape(), m, n))
      return fail(ErrorCode::kRuntime, fmt::format("Gemm: C {} does not broadcast to the {}x{} result",
                                                   shape_to_string(ctx.input(2).shape()), m, n));
    auto y = ctx.output(0, a.dtype(), {m, n});
    if (!y) return std::unexpected(y.error());
    switch (a.dtype()) {
      case DType::kFloat32:
        return run<float>(ctx, m, n, k, use_c, *y);
      case DType::kFloat64:
        return run<double>(ctx, m, n, k, use_c, *y);
      case DType::kInt32:
        return run<int32_t>(ctx, m, n, k, use_c, *y);
      default:
        return run<int64_t>(ctx, m, n, k, use_c, *y);
    }
  }
  std::string_view variant() const override { return packed_b_.empty() ? "gemm" : "gemm-packed"; }
  std::vector<std::byte> save_packed() const override { return save_packed_matrices(packed_b_); }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx, int64_t m, int64_t n, int64_t k, bool use_c, const Tensor& y) const {
    T* yd = y.mut_as<T>();
    if (use_c) broadcast_c<T>(ctx.input(2), m, n, yd);
    const T beta = use_c ? static_cast<T>(attrs_.beta) : T(0);
    const T* a = ctx.input(0).data_as<T>();
    const T* b = ctx.input(1).data_as<T>();
    if constexpr (std::is_same_v<T, float>) {
      const GemmOperand bo = packed_b_.empty() ? GemmOperand::matrix(b, attrs_.trans_b ? k : n, attrs_.trans_b)
                                               : GemmOperand::of(packed_b_[0]);
      gemm(m, n, k, attrs_.alpha, GemmOperand::matrix(a, attrs_.trans_a ? m : k, attrs_.trans_a), bo, beta, yd, n,
           ctx.parallel());
    } else {
      reference_gemm<T>(m, n, k, static_cast<T>(attrs_.alpha), a, attrs_.trans_a, b, attrs_.trans_b, beta, yd);
    }
    return {};
  }

  // Writes C, broadcast to m x n, into y: a size-1 (or missing) dim of C repeats.
  template <class T>
  static void broadcast_c(const Tensor& c, int64_t m, int64_t n, T* y) {
    const Shape& s = c.shape();
    const T* cd = c.data_as<T>();
    const int64_t cn = s.empty() ? 1 : s.back();
    const int64_t row_stride = s.size() == 2 && s[0] == m ? cn : 0;
    const int64_t col_stride = cn == n ? 1 : 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) y[i * n + j] = cd[i * row_stride + j * col_stride];
  }

  GemmAttrs attrs_;
  std::vector<PackedMatrix> packed_b_;
};

Expected<std::unique_ptr<Kernel>> create_gemm(const NodeContext& ctx) {
  const GemmAttrs attrs = read_gemm_attrs(ctx.attrs());
  auto packed = pack_constant_b(ctx, 1, attrs.trans_b);
  if (!packed) return std::unexpected(packed.error());
  return make_kernel<GemmKernel>(attrs, std::move(*packed));
}

}  // namespace

std::vector<KernelDef> matmul_kernels() {
  return {
      {{"", "MatMul", 1}, 8, check_matmul, create_matmul},  {{"", "MatMul", 9}, 12, check_matmul, create_matmul},
      {{"", "MatMul", 13}, 0, check_matmul, create_matmul}, {{"", "Gemm", 1}, 5, check_gemm, create_gemm},
      {{"", "Gemm", 6}, 6, check_gemm, create_gemm},        {{"", "Gemm", 7}, 8, check_gemm, create_gemm},
      {{"", "Gemm", 9}, 10, check_gemm, create_gemm},       {{"", "Gemm", 11}, 12, check_gemm, create_gemm},
      {{"", "Gemm", 13}, 0, check_gemm, create_gemm},
  };
}

}  // namespace nxrt::cpu
