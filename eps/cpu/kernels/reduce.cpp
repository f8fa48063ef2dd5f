// The Reduce family (Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp) over
// any set of axes: axes as an attribute (ReduceSum 1..12, the others 1..17) or as an
// optional input with noop_with_empty_axes (ReduceSum 13+, the others 18+).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using ReduceTypes = TypeList<float, double, Half, int32_t, int64_t, int8_t, uint8_t>;

// Sums and products run in double for floating types (long rows stay accurate) and int64
// for integers.
template <class T>
using Wide = std::conditional_t<std::is_integral_v<T>, int64_t, double>;

template <class Out, class A>
Out narrow(A v) {
  return static_cast<Out>(static_cast<ComputeType<Out>>(v));
}

// A reduction: map each element (given the output's shift, LogSumExp only), combine the
// mapped values in any order starting from init(), finish with the element count.
template <class T>
struct SumOp {
  using In = T;
  using Out = T;
  using Acc = Wide<T>;
  static Acc init() { return 0; }
  static Acc map(T x, double) { return static_cast<Acc>(static_cast<ComputeType<T>>(x)); }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static Out finish(Acc a, int64_t, double) { return narrow<Out>(a); }
};

template <class T>
struct MeanOp : SumOp<T> {
  static T finish(Wide<T> a, int64_t n, double) {
    if constexpr (std::is_integral_v<T>) return n ? static_cast<T>(a / n) : T{0};
    else return narrow<T>(a / static_cast<double>(n));
  }
};

template <class T>
struct SumSquareOp : SumOp<T> {
  static Wide<T> map(T x, double) {
    const auto v = static_cast<Wide<T>>(static_cast<ComputeType<T>>(x));
    return v * v;
  }
};

template <class T>
struct L1Op : SumOp<T> {
  static Wide<T> map(T x, double) {
    const auto v = static_cast<Wide<T>>(static_cast<ComputeType<T>>(x));
    return v < 0 ? -v : v;
  }
};

template <class T>
struct L2Op : SumSquareOp<T> {
  static T finish(Wide<T> a, int64_t, double) { return narrow<T>(std::sqrt(static_cast<double>(a))); }
};

template <class T>
struct LogSumOp : SumOp<T> {
  static T finish(Wide<T> a, int64_t, double) { return narrow<T>(std::log(static_cast<double>(a))); }
};

// log(sum(exp(x - max))) + max: the shift is the output's maximum (0 when it is infinite,
// so that an all -inf or empty set gives -inf rather than NaN).
template <class T>
struct LogSumExpOp {
  using In = T;
  using Out = T;
  using Acc = double;
  static Acc init() { return 0; }
  static Acc map(T x, double shift) { return std::exp(static_cast<double>(static_cast<ComputeType<T>>(x)) - shift); }
  static Acc combine(Acc a, Acc b) { return a + b; }
  static Out finish(Acc a, int64_t, double shift) { return narrow<Out>(std::log(a) + shift); }
};

template <class T>
struct ProdOp : SumOp<T> {
  static Wide<T> init() { return 1; }
  static Wide<T> combine(Wide<T> a, Wide<T> b) { return a * b; }
};

// Max and min of the empty set are the type's lowest and highest value (-inf, +inf).
template <class T, bool kMax, class O = T>
struct ExtremeOp {
  using In = T;
  using Out = O;
  using Acc = ComputeType<T>;
  static Acc init() {
    if constexpr (std::numeric_limits<Acc>::has_infinity)
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    else return kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
  }
  static Acc map(T x, double) { return static_cast<Acc>(x); }
  // NaN wins, as in numpy.
  static Acc combine(Acc a, Acc b) {
    if (a != a) return a;
    return (kMax ? b > a : b < a) || b != b ? b : a;
  }
  static Out finish(Acc a, int64_t, double) { return static_cast<Out>(a); }
};
template <class T>
using MaxOp = ExtremeOp<T, true>;
template <class T>
using MinOp = ExtremeOp<T, false>;

// Input positions per reduction task when the innermost axis is kept: the running values
// of one block of columns stay on the stack.
constexpr int64_t kColumnBlock = 1024;
// Reduced elements per partial result when few outputs reduce many inputs each; fixed, so
// the order of combination (and result) does not depend on the thread count.
constexpr int64_t kPartLength = 65536;

// The input seen as: kept outer axes (one output block each), reduced outer axes (a list
// of offsets), and the innermost merged axis, reduced or kept. Axes of size 1 are dropped
// and neighbours of the same kind merged.
struct ReduceLayout {
  std::vector<int64_t> kept_dims, kept_strides;
  std::vector<int64_t> reduced_offsets;
  int64_t inner = 1;
  bool inner_reduced = false;
  int64_t blocks = 1;

  // Input offset of output block o.
  int64_t base(int64_t o) const {
    int64_t offset = 0;
    for (std::size_t d = kept_dims.size(); d-- > 0;) {
      offset += (o % kept_dims[d]) * kept_strides[d];
      o /= kept_dims[d];
    }
    return offset;
  }
};

ReduceLayout make_layout(const Shape& shape, const std::vector<bool>& reduced) {
  struct Axis {
    int64_t size, stride;
    bool reduced;
  };
  std::vector<Axis> axes;
  const Shape strides = contiguous_strides(shape);
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!axes.empty() && axes.back().reduced == reduced[d]) {
      axes.back().size *= shape[d];
      axes.back().stride = strides[d];
      continue;
    }
    axes.push_back({shape[d], strides[d], reduced[d]});
  }
  ReduceLayout l;
  if (axes.empty()) axes.push_back({1, 1, false});
  l.inner = axes.back().size;
  l.inner_reduced = axes.back().reduced;
  axes.pop_back();
  l.reduced_offsets = {0};
  for (const Axis& a : axes) {
    if (!a.reduced) {
      l.kept_dims.push_back(a.size);
      l.kept_strides.push_back(a.stride);
      l.blocks *= a.size;
      continue;
    }
    std::vector<int64_t> next;
    next.reserve(l.reduced_offsets.size() * static_cast<std::size_t>(a.size));
    for (int64_t off : l.reduced_offsets)
      for (int64_t i = 0; i < a.size; ++i) next.push_back(off + i * a.stride);
    l.reduced_offsets = std::move(next);
  }
  return l;
}

// Combination of map(x[i]) over [0, n) in independent lanes, which vectorize.
template <class Op>
typename Op::Acc lane_reduce(const typename Op::In* x, int64_t n, double shift) {
  using Acc = typename Op::Acc;
  Acc lanes[kLanes];
  std::fill_n(lanes, kLanes, Op::init());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] = Op::combine(lanes[j], Op::map(x[i + j], shift));
  Acc r = Op::init();
  for (int64_t j = 0; j < kLanes; ++j) r = Op::combine(r, lanes[j]);
  for (; i < n; ++i) r = Op::combine(r, Op::map(x[i], shift));
  return r;
}

// Reduces x (laid out as `l`) into out; `shift` (LogSumExp: one value per output, else
// null) is passed to map and finish.
template <class Op>
void reduce(const Parallel& parallel, const ReduceLayout& l, const typename Op::In* x, typename Op::Out* out,
            const double* shift) {
  using Acc = typename Op::Acc;
  const auto nred = static_cast<int64_t>(l.reduced_offsets.size()) * (l.inner_reduced ? l.inner : 1);
  const int64_t* roff = l.reduced_offsets.data();
  const auto rows = static_cast<int64_t>(l.reduced_offsets.size());
  if (!l.inner_reduced) {
    const int64_t chunks = (l.inner + kColumnBlock - 1) / kColumnBlock;
    const int64_t grain =
        std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(rows * std::min(l.inner, kColumnBlock), 1));
    parallel.for_range(l.blocks * chunks, grain, [&](int64_t begin, int64_t end) {
      Acc acc[kColumnBlock];
      for (int64_t task = begin; task < end; ++task) {
        const int64_t o = task / chunks, c0 = (task % chunks) * kColumnBlock;
        const int64_t width = std::min(kColumnBlock, l.inner - c0);
        const int64_t first = o * l.inner + c0;
        const double* s = shift ? shift + first : nullptr;
        const typename Op::In* base = x + l.base(o) + c0;
        std::fill_n(acc, width, Op::init());
        for (int64_t r = 0; r < rows; ++r) {
          const typename Op::In* p = base + roff[r];
          if (s)
            for (int64_t i = 0; i < width; ++i) acc[i] = Op::combine(acc[i], Op::map(p[i], s[i]));
          else
            for (int64_t i = 0; i < width; ++i) acc[i] = Op::combine(acc[i], Op::map(p[i], 0.0));
        }
        for (int64_t i = 0; i < width; ++i) out[first + i] = Op::finish(acc[i], nred, s ? s[i] : 0.0);
      }
    });
    return;
  }
  // Innermost axis reduced: each output combines `rows` contiguous rows of l.inner elements,
  // split into parts of kPartLength so that few outputs over many inputs still run in parallel.
  const int64_t parts = std::clamp<int64_t>(nred / kPartLength, 1, 64);
  // With one part per output the task finishes it; otherwise parts are combined after.
  std::vector<Acc> partial(parts > 1 ? static_cast<std::size_t>(l.blocks * parts) : 0);
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(nred / parts, 1));
  parallel.for_range(l.blocks * parts, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / parts, part = task % parts;
      const double s = shift ? shift[o] : 0.0;
      const typename Op::In* base = x + l.base(o);
      const int64_t lo = nred * part / parts, hi = nred * (part + 1) / parts;
      Acc acc = Op::init();
      for (int64_t pos = lo; pos < hi;) {
        const int64_t r = pos / l.inner, i = pos % l.inner;
        const int64_t n = std::min(l.inner - i, hi - pos);
        acc = Op::combine(acc, lane_reduce<Op>(base + roff[r] + i, n, s));
        pos += n;
      }
      if (parts == 1) out[o] = Op::finish(acc, nred, s);
      else partial[static_cast<std::size_t>(task)] = acc;
    }
  });
  if (parts == 1) return;
  for (int64_t o = 0; o < l.blocks; ++o) {
    Acc acc = Op::init();
    for (int64_t p = 0; p < parts; ++p) acc = Op::combine(acc, partial[static_cast<std::size_t>(o * parts + p)]);
    out[o] = Op::finish(acc, nred, shift ? shift[o] : 0.0);
  }
}

// Where the axes come from and how an empty list reads.
struct ReduceAttrs {
  bool axes_input = false;            // opset 13+ ReduceSum, 18+ the others
  std::vector<int64_t> axes;          // the attribute form
  bool keepdims = true;
  bool noop_with_empty_axes = false;  // input form only: empty axes return the input
  bool allow_negative = true;         // from opset 11
};

ReduceAttrs reduce_attrs(const NodeContext& ctx, bool axes_input) {
  ReduceAttrs a;
  a.axes_input = axes_input;
  a.axes = ctx.attrs().ints_or("axes", {});
  a.keepdims = ctx.attrs().int_or("keepdims", 1) != 0;
  a.noop_with_empty_axes = axes_input && ctx.attrs().int_or("noop_with_empty_axes", 0) != 0;
  a.allow_negative = ctx.opset() >= 11;
  return a;
}

// ReduceMax-20 and ReduceMin-20 take booleans (any and all), run as uint8 0/1.
bool accepts_bool(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  return ctx.opset() >= 20 && (op == "ReduceMax" || op == "ReduceMin");
}

template <bool kAxesInput>
KernelMatch check_reduce(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_type(0) == nullptr || ctx.input_type(0)->kind == ValueType::Kind::kTensor,
               "{}: input 0 is not a tensor; the cpu EP supports tensors only", op);
  if (!accepts_bool(ctx) || ctx.input_dtype(0) != DType::kBool)
    NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, ReduceTypes{}));
  const ReduceAttrs a = reduce_attrs(ctx, kAxesInput);
  std::optional<std::vector<int64_t>> axes = a.axes;
  if constexpr (kAxesInput) {
    NXRT_REQUIRE(!ctx.attrs().has("axes"),
                 "{}: opset {} takes axes as input 1, but the node has an axes attribute; re-export the model "
                 "for this opset", op, ctx.opset());
    NXRT_REQUIRE(!ctx.has_input(1) || ctx.input_dtype(1) == DType::kInt64,
                 "{}: axes (input 1) has type {}; expected int64", op, dtype_name(ctx.input_dtype(1)));
    axes = ctx.has_input(1) ? ctx.constant_ints(1) : std::vector<int64_t>{};
  }
  const std::optional<int64_t> rank = ctx.input_rank(0);
  if (axes && rank)
    if (auto r = normalize_axes(op, *axes, *rank, a.allow_negative); !r) return declined_by(r.error());
  if (auto n = static_numel(ctx.input_type(0)))
    return KernelMatch::supported(Cost{static_cast<double>(*n),
                                       static_cast<double>(*n * static_cast<int64_t>(dtype_size(ctx.input_dtype(0)))),
                                       std::nullopt});
  return KernelMatch::supported();
}

// Op<T> is the reduction (SumOp, MaxOp...); `name` its ONNX op for error messages.
template <template <class> class Op>
class ReduceKernel final : public Kernel {
 public:
  ReduceKernel(ReduceAttrs attrs, std::string name) : attrs_(std::move(attrs)), name_(std::move(name)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> axes = attrs_.axes;
    if (attrs_.axes_input) axes = ctx.has_input(1) ? ctx.input(1).to_int64_vector() : std::vector<int64_t>{};
    if (axes.empty() && attrs_.noop_with_empty_axes) {
      ctx.set_output(0, x);
      return {};
    }
    const auto rank = static_cast<int64_t>(x.shape().size());
    auto normalized = normalize_axes(name_, axes, rank, attrs_.allow_negative);
    if (!normalized) return std::unexpected(std::move(normalized.error()));
    std::vector<bool> reduced(static_cast<std::size_t>(rank), axes.empty());
    for (int64_t a : *normalized) reduced[static_cast<std::size_t>(a)] = true;
    Shape out_shape;
    for (std::size_t d = 0; d < reduced.size(); ++d) {
      if (!reduced[d]) out_shape.push_back(x.shape()[d]);
      else if (attrs_.keepdims) out_shape.push_back(1);
    }
    auto y = ctx.output(0, x.dtype(), out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    if (y->numel() == 0) return {};
    const ReduceLayout layout = make_layout(x.shape(), reduced);
    const DType as = x.dtype() == DType::kBool ? DType::kUInt8 : x.dtype();
    return dispatch_dtype(ReduceTypes{}, as, [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      std::vector<double> shift;
      if constexpr (std::is_same_v<Op<T>, LogSumExpOp<T>>) {
        shift.resize(static_cast<std::size_t>(y->numel()));
        reduce<ExtremeOp<T, true, double>>(ctx.parallel(), layout, x.data_as<T>(), shift.data(), nullptr);
        for (double& s : shift) s = std::isfinite(s) ? s : 0.0;
      }
      reduce<Op<T>>(ctx.parallel(), layout, x.data_as<T>(), y->template mut_as<T>(),
                    shift.empty() ? nullptr : shift.data());
      return {};
    });
  }
  std::string_view variant() const override { return "merged-axes"; }

 private:
  ReduceAttrs attrs_;
  std::string name_;
};

// The registrations of one reduction: axes as an attribute before `input_since`, as an
// input from it (up to `until`; 0: open-ended).
template <template <class> class Op>
void add_reduce(std::vector<KernelDef>& defs, const char* op, int64_t input_since, int64_t until = 0) {
  const auto create = [](bool axes_input) {
    return [axes_input](const NodeContext& ctx) {
      return make_kernel<ReduceKernel<Op>>(reduce_attrs(ctx, axes_input), ctx.node().op_type);
    };
  };
  defs.push_back(KernelDef{{"", op, 1}, input_since - 1, check_reduce<false>, create(false)});
  defs.push_back(KernelDef{{"", op, input_since}, until, check_reduce<true>, create(true)});
}

}  // namespace

std::vector<KernelDef> reduce_kernels() {
  std::vector<KernelDef> defs;
  add_reduce<SumOp>(defs, "ReduceSum", 13);
  add_reduce<MeanOp>(defs, "ReduceMean", 18);
  add_reduce<MaxOp>(defs, "ReduceMax", 18, 23);  // opset 20 adds booleans
  add_reduce<MinOp>(defs, "ReduceMin", 18, 23);
  add_reduce<ProdOp>(defs, "ReduceProd", 18);
  add_reduce<SumSquareOp>(defs, "ReduceSumSquare", 18);
  add_reduce<L1Op>(defs, "ReduceL1", 18);
  add_reduce<L2Op>(defs, "ReduceL2", 18);
  add_reduce<LogSumOp>(defs, "ReduceLogSum", 18);
  add_reduce<LogSumExpOp>(defs, "ReduceLogSumExp", 18);
  return defs;
}

}  // namespace nxrt::cpu
