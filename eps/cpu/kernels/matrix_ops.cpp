// Ops on (batches of) matrices and general contractions: Trilu (triangular part), Det
// (determinant by LU with partial pivoting) and Einsum (Einstein summation over any terms).
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "common/elementwise.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"
#include "nxrt/ir/einsum.h"

namespace nxrt::cpu {
namespace {

// Trilu: any element type, rank >= 2, an optional scalar int64 k.
KernelMatch check_trilu(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE(ctx.input_dtype(0) != DType::kUndefined && dtype_size(ctx.input_dtype(0)) > 0,
               "Trilu: the type of input 0 is unknown; run shape inference or give the model value_info for it");
  if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(*rank >= 2, "Trilu: input has rank {}; it must be a matrix or a batch of matrices (rank >= 2)", *rank);
  }
  if (ctx.has_input(1)) {
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
    const auto n = static_numel(ctx.input_type(1));
    NXRT_REQUIRE(!n || *n == 1, "Trilu: k has {} elements; it must be a scalar", *n);
  }
  return KernelMatch::supported(copy_cost(ctx));
}

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(bool upper) : upper_(upper) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    if (shape.size() < 2)
      return fail(ErrorCode::kRuntime, fmt::format("Trilu: input has shape {}", shape_to_string(shape)),
                  "Trilu takes a matrix or a batch of matrices", "give an input of rank 2 or more");
    int64_t k = 0;
    if (ctx.has_input(1)) {
      const auto ks = ctx.input(1).to_int64_vector();
      if (ks.size() != 1)
        return fail(ErrorCode::kRuntime, fmt::format("Trilu: k has {} elements", ks.size()), "k must be a scalar",
                    "give a scalar k");
      k = ks[0];
    }
    auto y = ctx.output(0, x.dtype(), shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t rows = shape[shape.size() - 2], cols = shape.back();
    const int64_t matrices = dims_product(shape, 0, shape.size() - 2);
    visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
      const T* in = x.data_as<T>();
      T* out = y->mut_as<T>();
      ctx.parallel().for_range(matrices * rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)),
                               [&](int64_t b, int64_t e) {
                                 for (int64_t r = b; r < e; ++r) {
                                   const int64_t i = r % rows;
                                   // Row i keeps columns j with j - i >= k (upper) or <= k (lower).
                                   const int64_t edge = std::clamp<int64_t>(upper_ ? i + k : i + k + 1, 0, cols);
                                   const T* src = in + r * cols;
                                   T* dst = out + r * cols;
                                   if (upper_) {
                                     std::fill_n(dst, edge, T{});
                                     std::copy(src + edge, src + cols, dst + edge);
                                   } else {
                                     std::copy(src, src + edge, dst);
                                     std::fill(dst + edge, dst + cols, T{});
                                   }
                                 }
                               });
    });
    return {};
  }

 private:
  bool upper_;
};

using DetTypes = TypeList<float, double, Half>;

// Det: square matrices [*, M, M] of a float type.
KernelMatch check_det(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, DetTypes{}));
  if (const auto shape = ctx.input_static_shape(0)) {
    const std::size_t r = shape->size();
    NXRT_REQUIRE(r >= 2 && (*shape)[r - 1] == (*shape)[r - 2],
                 "Det: input has shape {}; it must be square matrices [*, M, M]", shape_to_string(*shape));
  } else if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(*rank >= 2, "Det: input has rank {}; it must be square matrices [*, M, M]", *rank);
  }
  return KernelMatch::supported();
}

// The determinant of the n x n row-major matrix in `a` (overwritten by its LU factors).
double lu_determinant(std::vector<double>& a, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r * n + c]) > std::fabs(a[pivot * n + c])) pivot = r;
    if (a[pivot * n + c] == 0) return 0;
    if (pivot != c) {
      std::swap_ranges(a.begin() + pivot * n, a.begin() + (pivot + 1) * n, a.begin() + c * n);
      det = -det;
    }
    const double p = a[c * n + c];
    det *= p;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / p;
      if (f == 0) continue;
      for (int64_t j = c + 1; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    const std::size_t r = shape.size();
    if (r < 2 || shape[r - 1] != shape[r - 2])
      return fail(ErrorCode::kRuntime, fmt::format("Det: input has shape {}", shape_to_string(shape)),
                  "Det takes square matrices [*, M, M]", "give square matrices");
    const int64_t n = shape.back();
    Shape out_shape(shape.begin(), shape.end() - 2);
    auto y = ctx.output(0, x.dtype(), out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    return dispatch_dtype(DetTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      const T* in = x.data_as<T>();
      T* out = y->template mut_as<T>();
      ctx.parallel().for_range(shape_numel(out_shape), 1, [&](int64_t b, int64_t e) {
        std::vector<double> a(static_cast<std::size_t>(n * n));
        for (int64_t m = b; m < e; ++m) {
          for (int64_t i = 0; i < n * n; ++i)
            a[i] = static_cast<double>(static_cast<ComputeType<T>>(in[m * n * n + i]));
          out[m] = static_cast<T>(static_cast<ComputeType<T>>(lu_determinant(a, n)));
        }
      });
      return {};
    });
  }
};

// ---- Einsum -------------------------------------------------------------------------

using EinsumTypes = AllNumericTypes;

// Einsum: a well-formed equation with one term per input, all inputs of one numeric type.
KernelMatch check_einsum(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  const auto equation = ctx.attrs().get_string("equation");
  NXRT_REQUIRE(equation.has_value(), "Einsum: the equation attribute is missing; it is required");
  NXRT_REQUIRE(ctx.input_count() >= 1, "Einsum: the node has no inputs; it needs one per term");
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, EinsumTypes{}));
  for (std::size_t i = 1; i < ctx.input_count(); ++i) {
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0), "Einsum: input {} has type {}, expected {} like input 0", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  }
  auto eq = parse_einsum_equation(*equation);
  if (!eq) return declined_by(eq.error());
  NXRT_REQUIRE(eq->inputs.size() == ctx.input_count(),
               "Einsum: equation '{}' has {} input terms but the node has {} inputs", *equation, eq->inputs.size(),
               ctx.input_count());
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    auto s = ctx.input_static_shape(i);
    if (!s) return KernelMatch::supported();
    shapes.push_back(std::move(*s));
  }
  auto plan = plan_einsum(*eq, shapes, *equation);
  if (!plan) return declined_by(plan.error());
  double macs = static_cast<double>(shape_numel(plan->output_shape));
  for (int64_t e : plan->sum_extents) macs *= static_cast<double>(e);
  return KernelMatch::supported(Cost{macs * static_cast<double>(shapes.size()), 0, std::nullopt});
}

// Visits every index of `extents` in row-major order, keeping per-input offsets current:
// fn(offsets) for each. The odometer adds and subtracts strides instead of dividing; when
// it returns, `offsets` and `idx` (all zeros, one per extent) hold their starting values.
template <class Fn>
void for_each_offset(const std::vector<int64_t>& extents, const std::vector<std::vector<int64_t>>& strides,
                     std::vector<int64_t>& offsets, std::vector<int64_t>& idx, Fn&& fn) {
  const std::size_t rank = extents.size(), n = strides.size();
  for (int64_t e : extents)
    if (e == 0) return;
  for (;;) {
    fn(offsets);
    std::size_t ax = rank;
    for (; ax-- > 0;) {
      for (std::size_t k = 0; k < n; ++k) offsets[k] += strides[k][ax];
      if (++idx[ax] < extents[ax]) break;
      for (std::size_t k = 0; k < n; ++k) offsets[k] -= extents[ax] * strides[k][ax];
      idx[ax] = 0;
    }
    if (ax == static_cast<std::size_t>(-1)) return;
  }
}

// Copies the elements of `src` that the axes (extent, stride) walk to contiguous `dst`, in
// row-major order of the axes.
void gather(const float* src, const std::vector<int64_t>& extents, const std::vector<int64_t>& strides, float* dst) {
  std::vector<int64_t> offset(1, 0), idx(extents.size(), 0);
  for_each_offset(extents, {strides}, offset, idx, [&](const std::vector<int64_t>& off) { *dst++ = src[off[0]]; });
}

// The inverse of gather: contiguous `src` goes to the elements of `dst` the axes walk.
void scatter(const float* src, const std::vector<int64_t>& extents, const std::vector<int64_t>& strides, float* dst) {
  std::vector<int64_t> offset(1, 0), idx(extents.size(), 0);
  for_each_offset(extents, {strides}, offset, idx, [&](const std::vector<int64_t>& off) { dst[off[0]] = *src++; });
}

// Gathers both operands into [batch, m, k] and [batch, k, n], multiplies, scatters the
// [batch, m, n] product into the output.
void run_einsum_gemm(const EinsumGemm& g, const float* a, const float* b, float* y, const Parallel& parallel) {
  std::vector<float> pa(static_cast<std::size_t>(g.batch * g.m * g.k)),
      pb(static_cast<std::size_t>(g.batch * g.k * g.n)), pc(static_cast<std::size_t>(g.batch * g.m * g.n));
  gather(a, g.a_extents, g.a_strides, pa.data());
  gather(b, g.b_extents, g.b_strides, pb.data());
  auto one = [&](int64_t i, const Parallel& p) {
    gemm(g.m, g.n, g.k, 1.0f, GemmOperand::matrix(pa.data() + i * g.m * g.k, g.k),
         GemmOperand::matrix(pb.data() + i * g.k * g.n, g.n), 0.0f, pc.data() + i * g.m * g.n, g.n, p);
  };
  if (static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) >= kSmallGemm || g.batch == 1) {
    for (int64_t i = 0; i < g.batch; ++i) one(i, parallel);
  } else {
    const SerialParallel serial;
    parallel.for_range(g.batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) one(i, serial);
    });
  }
  scatter(pc.data(), g.c_extents, g.c_strides, y);
}

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(std::string equation, EinsumEquation eq) : equation_(std::move(equation)), eq_(std::move(eq)) {}

  Expected<void> compute(KernelContext& ctx) override {
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < ctx.input_count(); ++i) shapes.push_back(ctx.input(i).shape());
    auto plan = plan_einsum(eq_, shapes, equation_);
    if (!plan) return std::unexpected(std::move(plan.error()));
    auto y = ctx.output(0, ctx.input(0).dtype(), plan->output_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    if (ctx.input(0).dtype() == DType::kFloat32 && y->numel() > 0) {
      if (const auto g = plan_einsum_gemm(*plan)) {
        run_einsum_gemm(*g, ctx.input(0).data_as<float>(), ctx.input(1).data_as<float>(), y->mut_as<float>(),
                        ctx.parallel());
        return {};
      }
    }
    return dispatch_dtype(EinsumTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx, *plan, *y); });
  }

 private:
  template <class T>
  static Expected<void> run(KernelContext& ctx, const EinsumPlan& plan, const Tensor& y) {
    using C = ComputeType<T>;
    using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
    const std::size_t n = ctx.input_count();
    std::vector<const T*> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = ctx.input(i).data_as<T>();
    T* out = y.mut_as<T>();
    const int64_t total = shape_numel(plan.output_shape);
    int64_t inner = 1;
    for (int64_t e : plan.sum_extents) inner *= e;
    ctx.parallel().for_range(
        total, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
          std::vector<int64_t> base(n), idx(plan.sum_extents.size(), 0);
          for (int64_t o = b; o < e; ++o) {
            std::fill(base.begin(), base.end(), 0);
            int64_t rest = o;
            for (std::size_t ax = plan.out_extents.size(); ax-- > 0;) {
              const int64_t idx = rest % plan.out_extents[ax];
              rest /= plan.out_extents[ax];
              for (std::size_t k = 0; k < n; ++k) base[k] += idx * plan.out_strides[k][ax];
            }
            Acc acc = 0;
            for_each_offset(plan.sum_extents, plan.sum_strides, base, idx, [&](const std::vector<int64_t>& off) {
              Acc p = static_cast<Acc>(static_cast<C>(in[0][off[0]]));
              for (std::size_t k = 1; k < n; ++k) p *= static_cast<Acc>(static_cast<C>(in[k][off[k]]));
              acc += p;
            });
            out[o] = static_cast<T>(static_cast<C>(acc));
          }
        });
    return {};
  }

  std::string equation_;
  EinsumEquation eq_;
};

}  // namespace

std::vector<KernelDef> matrix_ops_kernels() {
  return {
      KernelDef{{"", "Trilu", 14},
                0,
                check_trilu,
                [](const NodeContext& ctx) { return make_kernel<TriluKernel>(ctx.attrs().int_or("upper", 1) != 0); }},
      KernelDef{{"", "Det", 11}, 0, check_det, [](const NodeContext&) { return make_kernel<DetKernel>(); }},
      KernelDef{{"", "Einsum", 12},
                0,
                check_einsum,
                [](const NodeContext& ctx) {
                  const std::string equation = ctx.attrs().string_or("equation", "");
                  return make_kernel<EinsumKernel>(equation, *parse_einsum_equation(equation));
                }},
  };
}

}  // namespace nxrt::cpu
