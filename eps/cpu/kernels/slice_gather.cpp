// Slice and Gather of any dtype: strided row copies in parallel; a Slice that selects a
// contiguous run of the input returns a view of it.
#include <algorithm>
#include <numeric>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// Slice's arguments, from attributes (opset 1-9) or inputs (opset 10 on).
struct SliceArgs {
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
};

// What one input axis contributes: first index, step and number of elements taken.
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// The ONNX rule for one axis: negative start/end count from the back, then both are
// clamped to [0, dim] for positive steps and to [0, dim-1] / [-1, dim-1] for negative ones.
SliceAxis slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0) return {0, step, 0};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  const int64_t low = step > 0 ? 0 : -1, high = step > 0 ? dim : dim - 1;
  start = std::clamp<int64_t>(start, 0, high);
  end = std::clamp<int64_t>(end, low, high);
  // Unsigned arithmetic: steps and the clamped span may each be near the int64 limits.
  const uint64_t span = step > 0 ? static_cast<uint64_t>(end - start) : static_cast<uint64_t>(start - end);
  const uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
  const bool empty = step > 0 ? end <= start : start <= end;
  return {start, step, empty ? 0 : static_cast<int64_t>((span - 1) / stride + 1)};
}

Expected<std::vector<SliceAxis>> plan_slice(const Shape& in, const SliceArgs& args) {
  const std::size_t n = args.starts.size();
  if (args.ends.size() != n || (args.axes && args.axes->size() != n) || (args.steps && args.steps->size() != n))
    return fail(ErrorCode::kRuntime,
                fmt::format("Slice: starts has {} entries, ends {}, axes {}, steps {}", n, args.ends.size(),
                            args.axes ? args.axes->size() : n, args.steps ? args.steps->size() : n),
                "starts, ends and the axes and steps given must have one length",
                "fix the slice arguments of the node");
  std::vector<int64_t> default_axes(n);
  std::iota(default_axes.begin(), default_axes.end(), int64_t{0});
  auto axes = normalize_axes("Slice", args.axes ? *args.axes : default_axes, static_cast<int64_t>(in.size()), true);
  if (!axes) return std::unexpected(std::move(axes.error()));
  std::vector<SliceAxis> plan(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) plan[d] = {0, 1, in[d]};
  for (std::size_t k = 0; k < n; ++k) {
    const int64_t step = args.steps ? (*args.steps)[k] : 1;
    const auto d = static_cast<std::size_t>((*axes)[k]);
    if (step == 0)
      return fail(ErrorCode::kRuntime, fmt::format("Slice: step 0 at index {} (axis {})", k, d),
                  "steps must be non-zero", "fix the steps input");
    plan[d] = slice_axis(in[d], args.starts[k], args.ends[k], step);
  }
  return plan;
}

// Copies the planned region of x into a new output, or returns it as a view when it is a
// contiguous run of x.
Expected<void> run_slice(KernelContext& ctx, const Tensor& x, std::vector<SliceAxis> plan) {
  Shape out_shape;
  for (const SliceAxis& p : plan) out_shape.push_back(p.count);
  Shape in = x.shape();
  if (shape_numel(out_shape) == 0) {
    auto y = ctx.output(0, x.dtype(), std::move(out_shape));
    return y ? Expected<void>{} : std::unexpected(std::move(y.error()));
  }
  // Merge an axis taken whole into the one before it, when that one walks forward by 1 (or
  // takes one index): the rows to copy get longer and contiguity becomes visible.
  for (std::size_t d = plan.size(); d-- > 1;) {
    const SliceAxis& p = plan[d];
    SliceAxis& prev = plan[d - 1];
    if (p.start != 0 || p.step != 1 || p.count != in[d] || (prev.step != 1 && prev.count != 1)) continue;
    prev = {prev.start * in[d], 1, prev.count * in[d]};
    in[d - 1] *= in[d];
    plan.erase(plan.begin() + static_cast<std::ptrdiff_t>(d));
    in.erase(in.begin() + static_cast<std::ptrdiff_t>(d));
  }
  const Shape strides = contiguous_strides(in);
  int64_t base = 0;
  for (std::size_t d = 0; d < plan.size(); ++d) base += plan[d].start * strides[d];
  const SliceAxis last = plan.empty() ? SliceAxis{0, 1, 1} : plan.back();
  const bool contiguous = std::all_of(plan.begin(), plan.empty() ? plan.end() : plan.end() - 1,
                                      [](const SliceAxis& p) { return p.count == 1; }) &&
                          (last.step == 1 || last.count == 1);
  if (contiguous) {
    ctx.set_output(0, contiguous_view(x, base, std::move(out_shape)));
    return {};
  }
  auto y = ctx.output(0, x.dtype(), std::move(out_shape));
  if (!y) return std::unexpected(std::move(y.error()));
  OuterAxes rows;
  for (std::size_t d = 0; d + 1 < plan.size(); ++d) {
    rows.sizes.push_back(plan[d].count);
    rows.in_strides.push_back(plan[d].step * strides[d]);
  }
  rows.out_strides = contiguous_strides(rows.sizes);
  for (int64_t& s : rows.out_strides) s *= last.count;
  visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
    const T* src = x.data_as<T>() + base;
    T* dst = y->mut_as<T>();
    const int64_t n = last.count, step = last.step;
    ctx.parallel().for_range(rows.count(), std::max<int64_t>(1, kGrainElements / n), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const auto [from, to] = rows.offsets(r);
        if (step == 1) {
          std::copy_n(src + from, n, dst + to);
          continue;
        }
        for (int64_t i = 0; i < n; ++i) dst[to + i] = src[from + i * step];
      }
    });
  });
  return {};
}

class SliceKernel final : public Kernel {
 public:
  // attr_args: the arguments of Slice-1..9; nullopt reads them from inputs 1-4.
  explicit SliceKernel(std::optional<SliceArgs> attr_args) : attr_args_(std::move(attr_args)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const SliceArgs args = attr_args_ ? *attr_args_ : input_args(ctx);
    auto plan = plan_slice(x.shape(), args);
    if (!plan) return std::unexpected(std::move(plan.error()));
    return run_slice(ctx, x, std::move(*plan));
  }
  std::string_view variant() const override { return "strided-rows"; }

 private:
  static SliceArgs input_args(const KernelContext& ctx) {
    auto optional_input = [&](std::size_t i) {
      return ctx.has_input(i) ? std::optional(ctx.input(i).to_int64_vector()) : std::nullopt;
    };
    return {ctx.input(1).to_int64_vector(), ctx.input(2).to_int64_vector(), optional_input(3), optional_input(4)};
  }
  std::optional<SliceArgs> attr_args_;
};

// Slice-1..9 arguments from the attributes; nullopt when starts or ends is missing.
std::optional<SliceArgs> attribute_args(const NodeContext& ctx) {
  auto starts = ctx.attrs().get_ints("starts"), ends = ctx.attrs().get_ints("ends");
  if (!starts || !ends) return std::nullopt;
  return SliceArgs{std::move(*starts), std::move(*ends), ctx.attrs().get_ints("axes"), std::nullopt};
}

// Slice-10+ arguments when every given argument input is a constant initializer.
std::optional<SliceArgs> constant_args(const NodeContext& ctx) {
  SliceArgs args;
  auto starts = ctx.constant_ints(1), ends = ctx.constant_ints(2);
  if (!starts || !ends) return std::nullopt;
  args.starts = std::move(*starts);
  args.ends = std::move(*ends);
  if (ctx.has_input(3) && !(args.axes = ctx.constant_ints(3))) return std::nullopt;
  if (ctx.has_input(4) && !(args.steps = ctx.constant_ints(4))) return std::nullopt;
  return args;
}

KernelMatch check_slice(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "Slice: input 0 (data) is missing; it is required");
  std::optional<SliceArgs> args;
  if (ctx.opset() < 10) {
    args = attribute_args(ctx);
    NXRT_REQUIRE(args.has_value(), "Slice: the starts and ends attributes (ints) are required by Slice-{}",
                 ctx.opset());
  } else {
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
    NXRT_REQUIRE(ctx.has_input(2), "Slice: input 2 (ends) is missing; it is required");
    const DType index_type = ctx.input_dtype(1);
    for (std::size_t i = 2; i <= 4; ++i) {
      if (!ctx.has_input(i)) continue;
      NXRT_REQUIRE(ctx.input_dtype(i) == index_type,
                   "Slice: input {} has type {} but starts has type {}; starts, ends, axes and steps share "
                   "one type (int32 or int64)", i, dtype_name(ctx.input_dtype(i)), dtype_name(index_type));
    }
    args = constant_args(ctx);
  }
  auto shape = ctx.input_static_shape(0);
  if (args && shape)
    if (auto plan = plan_slice(*shape, *args); !plan) return declined_by(plan.error());
  return KernelMatch::supported(copy_cost(ctx));
}

KernelDef slice_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Slice", since}, until, check_slice, [](const NodeContext& ctx) {
                     return make_kernel<SliceKernel>(ctx.opset() < 10 ? attribute_args(ctx) : std::nullopt);
                   }};
}

KernelMatch check_gather(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "Gather: input 0 (data) is missing; it is required");
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  if (auto rank = ctx.input_rank(0))
    NXRT_REQUIRE(*rank >= 1, "Gather: input 0 is a scalar; Gather needs data of rank 1 or more");
  NXRT_REQUIRE_MATCH(check_axis_in_range(ctx, ctx.attrs().int_or("axis", 0)));
  return KernelMatch::supported(copy_cost(ctx));
}

class GatherKernel final : public Kernel {
 public:
  GatherKernel(int64_t axis, bool negative_indices) : axis_(axis), negative_indices_(negative_indices) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& index_tensor = ctx.input(1);
    const Shape& in = x.shape();
    auto axis = normalize_axes("Gather", std::span(&axis_, 1), static_cast<int64_t>(in.size()), true);
    if (!axis) return std::unexpected(std::move(axis.error()));
    const auto a = static_cast<std::size_t>(axis->front());
    const int64_t dim = in[a];
    std::vector<int64_t> indices = index_tensor.to_int64_vector();
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const int64_t given = indices[k];
      int64_t& i = indices[k];
      if (i < 0 && negative_indices_) i += dim;
      if (i >= 0 && i < dim) continue;
      return fail(ErrorCode::kRuntime,
                  fmt::format("Gather: index {} at position {} of the indices is out of range for axis {} of "
                              "size {}", given, k, a, dim),
                  negative_indices_ ? fmt::format("Gather accepts indices in [{}, {}]", -dim, dim - 1)
                                    : fmt::format("Gather before opset 11 accepts indices in [0, {}]", dim - 1),
                  "fix the indices input so that every index addresses an element of the gathered axis");
    }
    Shape out_shape(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(a));
    out_shape.insert(out_shape.end(), index_tensor.shape().begin(), index_tensor.shape().end());
    out_shape.insert(out_shape.end(), in.begin() + static_cast<std::ptrdiff_t>(a) + 1, in.end());
    auto y = ctx.output(0, x.dtype(), std::move(out_shape));
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t outer = dims_product(in, 0, a);
    const int64_t inner = dims_product(in, a + 1, in.size());
    const auto count = static_cast<int64_t>(indices.size());
    visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
      const T* src = x.data_as<T>();
      T* dst = y->mut_as<T>();
      const int64_t grain = std::max<int64_t>(1, kGrainElements / std::max<int64_t>(inner, 1));
      ctx.parallel().for_range(outer * count, grain, [&](int64_t b, int64_t e) {
        for (int64_t item = b; item < e; ++item) {
          const int64_t o = item / count, k = item % count;
          std::copy_n(src + (o * dim + indices[static_cast<std::size_t>(k)]) * inner, inner, dst + item * inner);
        }
      });
    });
    return {};
  }
  std::string_view variant() const override { return "rows"; }

 private:
  int64_t axis_;
  bool negative_indices_;
};

KernelDef gather_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Gather", since}, until, check_gather, [](const NodeContext& ctx) {
                     return make_kernel<GatherKernel>(ctx.attrs().int_or("axis", 0), ctx.opset() >= 11);
                   }};
}

}  // namespace

std::vector<KernelDef> slice_gather_kernels() {
  return {
      slice_def(1, 9),
      slice_def(10, 0),
      gather_def(1, 10),
      gather_def(11, 0),
  };
}

}  // namespace nxrt::cpu
