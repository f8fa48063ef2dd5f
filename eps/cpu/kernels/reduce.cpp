// ReduceSum and ReduceMean over any set of axes: axes as an attribute (ReduceSum 1..12,
// ReduceMean 1..17) or as an optional input with noop_with_empty_axes (13+ / 18+).
#include <algorithm>
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using ReduceTypes = TypeList<float, double, int32_t, int64_t>;

// Sums run in double for floating types (long rows stay accurate) and int64 for integers.
template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// Input positions per reduction task when the innermost axis is kept: the running sums of
// one block of columns stay on the stack.
constexpr int64_t kColumnBlock = 1024;
// Reduced elements per partial sum when few outputs reduce many inputs each; fixed, so the
// summation order (and result) does not depend on the thread count.
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

template <class T>
T finish(Accumulator<T> sum, int64_t count, bool mean) {
  if (!mean) return static_cast<T>(sum);
  if constexpr (std::is_integral_v<T>) return count ? static_cast<T>(sum / count) : T{0};
  else return static_cast<T>(sum / static_cast<double>(count));
}

// Reduces x (laid out as `l`) into out: sums, or means when `mean`.
template <class T>
void reduce(const Parallel& parallel, const ReduceLayout& l, const T* x, T* out, bool mean) {
  using Acc = Accumulator<T>;
  const auto nred = static_cast<int64_t>(l.reduced_offsets.size());
  const int64_t* roff = l.reduced_offsets.data();
  if (!l.inner_reduced) {
    const int64_t count = nred;
    const int64_t chunks = (l.inner + kColumnBlock - 1) / kColumnBlock;
    const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(nred * std::min(l.inner, kColumnBlock), 1));
    parallel.for_range(l.blocks * chunks, grain, [&](int64_t begin, int64_t end) {
      Acc acc[kColumnBlock];
      for (int64_t task = begin; task < end; ++task) {
        const int64_t o = task / chunks, c0 = (task % chunks) * kColumnBlock;
        const int64_t width = std::min(kColumnBlock, l.inner - c0);
        const T* base = x + l.base(o) + c0;
        std::fill_n(acc, width, Acc{0});
        for (int64_t r = 0; r < nred; ++r) {
          const T* p = base + roff[r];
          for (int64_t i = 0; i < width; ++i) acc[i] += static_cast<Acc>(p[i]);
        }
        T* y = out + o * l.inner + c0;
        for (int64_t i = 0; i < width; ++i) y[i] = finish<T>(acc[i], count, mean);
      }
    });
    return;
  }
  // Innermost axis reduced: each output sums nred contiguous rows of l.inner elements, split
  // into parts of kPartLength so that few outputs over many inputs still run in parallel.
  const int64_t total = nred * l.inner;
  const int64_t parts = std::clamp<int64_t>(total / kPartLength, 1, 64);
  // With one part per output the task finishes it; otherwise parts are added up after.
  std::vector<Acc> partial(parts > 1 ? static_cast<std::size_t>(l.blocks * parts) : 0);
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(total / parts, 1));
  parallel.for_range(l.blocks * parts, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t o = task / parts, part = task % parts;
      const T* base = x + l.base(o);
      const int64_t lo = total * part / parts, hi = total * (part + 1) / parts;
      Acc sum = 0;
      for (int64_t pos = lo; pos < hi;) {
        const int64_t r = pos / l.inner, i = pos % l.inner;
        const int64_t n = std::min(l.inner - i, hi - pos);
        sum += lane_sum<Acc>(base + roff[r] + i, n);
        pos += n;
      }
      if (parts == 1) out[o] = finish<T>(sum, total, mean);
      else partial[static_cast<std::size_t>(task)] = sum;
    }
  });
  if (parts == 1) return;
  for (int64_t o = 0; o < l.blocks; ++o) {
    Acc sum = 0;
    for (int64_t p = 0; p < parts; ++p) sum += partial[static_cast<std::size_t>(o * parts + p)];
    out[o] = finish<T>(sum, total, mean);
  }
}

// Where the axes come from and how an empty list reads.
struct ReduceAttrs {
  bool mean = false;
  bool axes_input = false;            // opset 13+ ReduceSum, 18+ ReduceMean
  std::vector<int64_t> axes;          // the attribute form
  bool keepdims = true;
  bool noop_with_empty_axes = false;  // input form only: empty axes return the input
  bool allow_negative = true;         // from opset 11
};

ReduceAttrs reduce_attrs(const NodeContext& ctx, bool mean, bool axes_input) {
  ReduceAttrs a;
  a.mean = mean;
  a.axes_input = axes_input;
  a.axes = ctx.attrs().ints_or("axes", {});
  a.keepdims = ctx.attrs().int_or("keepdims", 1) != 0;
  a.noop_with_empty_axes = axes_input && ctx.attrs().int_or("noop_with_empty_axes", 0) != 0;
  a.allow_negative = ctx.opset() >= 11;
  return a;
}

template <bool kMean, bool kAxesInput>
KernelMatch check_reduce(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, ReduceTypes{}));
  const ReduceAttrs a = reduce_attrs(ctx, kMean, kAxesInput);
  std::optional<std::vector<int64_t>> axes = a.axes;
  if constexpr (kAxesInput) {
    NXRT_REQUIRE(!ctx.attrs().has("axes"),
                 "{}: opset {} takes axes as input 1, but the node has an axes attribute; re-export the model "
                 "for this opset", op, ctx.opset());
    NXRT_REQUIRE(!ctx.has_input(1) || ctx.input_dtype(1) == DType::kInt64,
                 "{}: axes (input 1) has type {}; expected int64", op, dtype_name(ctx.input_dtype(1)));
    axes = ctx.has_input(1) ? constant_ints(ctx, 1) : std::vector<int64_t>{};
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

class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(ReduceAttrs attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const char* op = attrs_.mean ? "ReduceMean" : "ReduceSum";
    std::vector<int64_t> axes = attrs_.axes;
    if (attrs_.axes_input) axes = ctx.has_input(1) ? ctx.input(1).to_int64_vector() : std::vector<int64_t>{};
    if (axes.empty() && attrs_.noop_with_empty_axes) {
      ctx.set_output(0, x);
      return {};
    }
    const auto rank = static_cast<int64_t>(x.shape().size());
    auto normalized = normalize_axes(op, axes, rank, attrs_.allow_negative);
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
    return dispatch_dtype(ReduceTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      reduce<T>(ctx.parallel(), layout, x.data_as<T>(), y->template mut_as<T>(), attrs_.mean);
      return {};
    });
  }
  std::string_view variant() const override { return "merged-axes"; }

 private:
  ReduceAttrs attrs_;
};

template <bool kMean, bool kAxesInput>
KernelDef reduce_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_reduce<kMean, kAxesInput>, [](const NodeContext& ctx) {
                     return make_kernel<ReduceKernel>(reduce_attrs(ctx, kMean, kAxesInput));
                   }};
}

}  // namespace

std::vector<KernelDef> reduce_kernels() {
  return {
      reduce_def<false, false>("ReduceSum", 1, 12),
      reduce_def<false, true>("ReduceSum", 13, 0),
      reduce_def<true, false>("ReduceMean", 1, 17),
      reduce_def<true, true>("ReduceMean", 18, 0),
  };
}

}  // namespace nxrt::cpu
