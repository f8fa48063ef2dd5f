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

constexpr int kLetterLabels = 52;  // a-z then A-Z; ellipsis dims get labels from 52 on

int label_of(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

char letter_of(int label) { return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26)); }

// One term of the equation: its labels in order, -1 where the ellipsis stands.
using Term = std::vector<int>;

// The parsed equation, before ranks are known.
struct EinsumEquation {
  std::vector<Term> inputs;
  std::optional<Term> output;  // nullopt: implicit mode
};

Expected<Term> parse_term(std::string_view text, std::string_view equation) {
  Term term;
  bool ellipsis = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '.') {
      if (text.substr(i, 3) != "..." || ellipsis)
        return fail(
            ErrorCode::kInvalidInput,
            fmt::format("Einsum: equation '{}' has a stray '.' or a second ellipsis in term '{}'", equation, text),
            "each term may hold one '...'", "fix the equation attribute");
      ellipsis = true;
      term.push_back(-1);
      i += 2;
      continue;
    }
    const int label = label_of(text[i]);
    if (label < 0)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("Einsum: equation '{}' has character '{}' in term '{}'", equation, text[i], text),
                  "terms hold letters and '...'", "fix the equation attribute");
    term.push_back(label);
  }
  return term;
}

Expected<EinsumEquation> parse_equation(std::string equation) {
  std::erase(equation, ' ');
  EinsumEquation eq;
  const std::size_t arrow = equation.find("->");
  const std::string_view lhs = std::string_view(equation).substr(0, arrow);
  for (std::size_t begin = 0;;) {
    const std::size_t comma = lhs.find(',', begin);
    auto term = parse_term(lhs.substr(begin, comma - begin), equation);
    if (!term) return std::unexpected(std::move(term.error()));
    eq.inputs.push_back(std::move(*term));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  if (arrow == std::string::npos) return eq;
  auto out = parse_term(std::string_view(equation).substr(arrow + 2), equation);
  if (!out) return std::unexpected(std::move(out.error()));
  std::array<bool, kLetterLabels> seen{};
  for (int label : *out) {
    if (label < 0) continue;
    bool in_inputs = false;
    for (const Term& t : eq.inputs) in_inputs = in_inputs || std::find(t.begin(), t.end(), label) != t.end();
    if (seen[label] || !in_inputs)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("Einsum: output label '{}' of equation '{}' {}", letter_of(label), equation,
                              seen[label] ? "appears twice" : "appears in no input"),
                  "each output label must appear once on the right and in some input", "fix the equation attribute");
    seen[label] = true;
  }
  eq.output = std::move(*out);
  return eq;
}

// The contraction planned for concrete input shapes: every label's extent, the output's
// labels, the summed labels and each input's element stride per label.
struct EinsumPlan {
  Shape output_shape;
  std::vector<int64_t> out_extents, sum_extents;
  std::vector<std::vector<int64_t>> out_strides, sum_strides;  // [input][label position]
  bool diagonal = false;                                       // some term repeats a label
};

Expected<EinsumPlan> plan_einsum(const EinsumEquation& eq, std::span<const Shape> shapes, std::string_view equation) {
  auto error = [&](std::string what, std::string why) {
    return fail(ErrorCode::kRuntime, fmt::format("Einsum: {} (equation '{}')", what, equation), std::move(why),
                "make the input shapes agree with the equation");
  };
  if (shapes.size() != eq.inputs.size())
    return error(
        fmt::format("the equation has {} input terms but the node has {} inputs", eq.inputs.size(), shapes.size()),
        "each input needs one term");
  // Ellipsis dims are right-aligned and broadcast like numpy's.
  std::size_t ellipsis_rank = 0;
  std::vector<std::size_t> term_ellipsis(shapes.size(), 0);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Term& t = eq.inputs[i];
    const bool has_ellipsis = std::find(t.begin(), t.end(), -1) != t.end();
    const std::size_t letters = t.size() - (has_ellipsis ? 1 : 0);
    if (shapes[i].size() < letters || (!has_ellipsis && shapes[i].size() != letters))
      return error(fmt::format("input {} has shape {} but its term has {} labels{}", i, shape_to_string(shapes[i]),
                               letters, has_ellipsis ? " and '...'" : ""),
                   "a term names each dim of its input");
    term_ellipsis[i] = shapes[i].size() - letters;
    ellipsis_rank = std::max(ellipsis_rank, term_ellipsis[i]);
  }
  const int labels = kLetterLabels + static_cast<int>(ellipsis_rank);
  std::vector<int64_t> extent(labels, -1);
  std::vector<int> occurrences(labels, 0);
  bool diagonal = false;
  // Per input and label: summed stride (a repeated label walks the diagonal).
  std::vector<std::vector<int64_t>> stride(shapes.size(), std::vector<int64_t>(labels, 0));
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape strides = contiguous_strides(shapes[i]);
    std::size_t axis = 0;
    auto bind = [&](int label, std::size_t ax, bool broadcastable) -> Expected<void> {
      const int64_t d = shapes[i][ax];
      if (broadcastable && d == 1) {
        if (extent[label] < 0) extent[label] = 1;
        return {};
      }
      if (extent[label] >= 0 && extent[label] != d && !(broadcastable && extent[label] == 1))
        return error(fmt::format("dim {} of input {} (shape {}) has size {} but its label has size {} elsewhere", ax, i,
                                 shape_to_string(shapes[i]), d, extent[label]),
                     "dims with the same label must have the same size");
      extent[label] = d;
      if (stride[i][label] != 0) diagonal = true;
      stride[i][label] += strides[ax];
      return {};
    };
    for (int label : eq.inputs[i]) {
      if (label >= 0) {
        if (auto r = bind(label, axis++, false); !r) return std::unexpected(std::move(r.error()));
        ++occurrences[label];
        continue;
      }
      for (std::size_t e = 0; e < term_ellipsis[i]; ++e) {
        const int l = kLetterLabels + static_cast<int>(ellipsis_rank - term_ellipsis[i] + e);
        if (auto r = bind(l, axis++, true); !r) return std::unexpected(std::move(r.error()));
      }
    }
  }
  std::vector<int> out_labels;
  if (eq.output) {
    for (int label : *eq.output) {
      if (label >= 0) {
        out_labels.push_back(label);
        continue;
      }
      for (std::size_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kLetterLabels + static_cast<int>(e));
    }
  } else {
    // Implicit mode: the ellipsis dims, then the letters that occur exactly once in the
    // equation, in ASCII order ('A'-'Z', labels 26-51, before 'a'-'z').
    for (std::size_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kLetterLabels + static_cast<int>(e));
    std::vector<int> letters;
    for (int l = 26; l < kLetterLabels; ++l)
      if (occurrences[l] == 1) letters.push_back(l);
    for (int l = 0; l < 26; ++l)
      if (occurrences[l] == 1) letters.push_back(l);
    out_labels.insert(out_labels.end(), letters.begin(), letters.end());
  }
  EinsumPlan plan;
  plan.diagonal = diagonal;
  std::vector<bool> in_output(labels, false);
  for (int l : out_labels) {
    in_output[l] = true;
    plan.output_shape.push_back(extent[l]);
  }
  plan.out_strides.assign(shapes.size(), {});
  plan.sum_strides.assign(shapes.size(), {});
  for (int l : out_labels) {
    plan.out_extents.push_back(extent[l]);
    for (std::size_t i = 0; i < shapes.size(); ++i) plan.out_strides[i].push_back(stride[i][l]);
  }
  for (int l = 0; l < labels; ++l) {
    if (in_output[l] || extent[l] < 0) continue;
    plan.sum_extents.push_back(extent[l]);
    for (std::size_t i = 0; i < shapes.size(); ++i) plan.sum_strides[i].push_back(stride[i][l]);
  }
  return plan;
}

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
  auto eq = parse_equation(*equation);
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

// A two-input float contraction as batched GEMM: every label of size > 1 is a batch label
// (in both inputs and the output), m (first input and output), n (second input and
// output) or k (both inputs, summed). Diagonals and labels summed within one input have
// no such form, and an empty sum is left to the reference loop; plan_gemm returns nullopt
// for them.
struct EinsumGemm {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> a_extents, a_strides, b_extents, b_strides, c_extents, c_strides;
};

std::optional<EinsumGemm> plan_gemm(const EinsumPlan& plan) {
  if (plan.diagonal || plan.out_strides.size() != 2) return std::nullopt;
  struct Axis {
    int64_t extent, a, b, c;
  };
  std::vector<Axis> batch, m, n, k;
  const Shape out_strides = contiguous_strides(plan.output_shape);
  for (std::size_t p = 0; p < plan.out_extents.size(); ++p) {
    const Axis axis{plan.out_extents[p], plan.out_strides[0][p], plan.out_strides[1][p], out_strides[p]};
    if (axis.extent == 1) continue;
    if (axis.a != 0 && axis.b != 0)
      batch.push_back(axis);
    else if (axis.a != 0)
      m.push_back(axis);
    else if (axis.b != 0)
      n.push_back(axis);
    else
      return std::nullopt;
  }
  for (std::size_t q = 0; q < plan.sum_extents.size(); ++q) {
    const Axis axis{plan.sum_extents[q], plan.sum_strides[0][q], plan.sum_strides[1][q], 0};
    if (axis.extent == 1) continue;
    if (axis.extent == 0 || axis.a == 0 || axis.b == 0) return std::nullopt;
    k.push_back(axis);
  }
  EinsumGemm g;
  auto add = [](const std::vector<Axis>& axes, int64_t& size, std::vector<int64_t>& extents,
                std::vector<int64_t>& strides, int64_t Axis::*member) {
    for (const Axis& a : axes) {
      size *= a.extent;
      extents.push_back(a.extent);
      strides.push_back(a.*member);
    }
  };
  int64_t unused = 1;
  add(batch, g.batch, g.a_extents, g.a_strides, &Axis::a);
  add(m, g.m, g.a_extents, g.a_strides, &Axis::a);
  add(k, g.k, g.a_extents, g.a_strides, &Axis::a);
  add(batch, unused, g.b_extents, g.b_strides, &Axis::b);
  add(k, unused, g.b_extents, g.b_strides, &Axis::b);
  add(n, g.n, g.b_extents, g.b_strides, &Axis::b);
  add(batch, unused, g.c_extents, g.c_strides, &Axis::c);
  add(m, unused, g.c_extents, g.c_strides, &Axis::c);
  add(n, unused, g.c_extents, g.c_strides, &Axis::c);
  return g;
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
      if (const auto g = plan_gemm(*plan)) {
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
                  return make_kernel<EinsumKernel>(equation, *parse_equation(equation));
                }},
  };
}

}  // namespace nxrt::cpu
