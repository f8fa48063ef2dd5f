// Concat and Split of any dtype along one axis: contiguous blocks copied per outer index,
// in parallel; a Split whose pieces are contiguous in the input returns views of it.
#include <algorithm>
#include <numeric>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// The output shape of Concat: inputs agree on every axis but `axis`, whose sizes add up.
Expected<Shape> concat_shape(std::span<const Shape> shapes, int64_t axis) {
  const Shape& first = shapes.front();
  auto resolved = normalize_axes("Concat", std::span(&axis, 1), static_cast<int64_t>(first.size()), true);
  if (!resolved) return std::unexpected(std::move(resolved.error()));
  const auto a = static_cast<std::size_t>(resolved->front());
  Shape out = first;
  out[a] = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    bool match = s.size() == first.size();
    for (std::size_t d = 0; match && d < s.size(); ++d) match = d == a || s[d] == first[d];
    if (!match)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Concat: input {} has shape {}, which does not match input 0's shape {} "
                              "outside axis {}", i, shape_to_string(s), shape_to_string(first), a),
                  "inputs must have one rank and equal sizes on every axis but the concatenation axis",
                  "check the shapes of the inputs");
    out[a] += s[a];
  }
  return out;
}

// Concat-1's axis defaults to 1; from Concat-4 on the attribute is required.
std::optional<int64_t> concat_axis(const NodeContext& ctx) {
  if (ctx.opset() < 4) return ctx.attrs().int_or("axis", 1);
  return ctx.attrs().get_int("axis");
}

KernelMatch check_concat(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() > 0, "Concat: the node has no inputs; it needs at least one");
  const DType type = ctx.input_dtype(0);
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    NXRT_REQUIRE(ctx.has_input(i), "Concat: input {} is omitted; every input of Concat is required", i);
    const DType t = ctx.input_dtype(i);
    NXRT_REQUIRE(t == type || t == DType::kUndefined || type == DType::kUndefined,
                 "Concat: input {} has type {} but input 0 has type {}; all inputs must share one type", i,
                 dtype_name(t), dtype_name(type));
    if (auto s = ctx.input_static_shape(i)) shapes.push_back(std::move(*s));
  }
  const auto axis = concat_axis(ctx);
  NXRT_REQUIRE(axis.has_value(), "Concat: the axis attribute (int) is missing; Concat-{} requires it",
               ctx.opset());
  NXRT_REQUIRE_MATCH(check_axis_in_range(ctx, *axis));
  if (shapes.size() == ctx.input_count())
    if (auto s = concat_shape(shapes, *axis); !s) return declined_by(s.error());
  return KernelMatch::supported(copy_cost(ctx));
}

// `variant` is "blocks", or "blocks nhwc" where the layout step joins channels-last values.
class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(int64_t axis, std::string_view variant = "blocks") : axis_(axis), variant_(variant) {}

  Expected<void> compute(KernelContext& ctx) override {
    const std::size_t n = ctx.input_count();
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < n; ++i) shapes.push_back(ctx.input(i).shape());
    auto out_shape = concat_shape(shapes, axis_);
    if (!out_shape) return std::unexpected(std::move(out_shape.error()));
    // With every other input empty, the output is the one non-empty input.
    const auto non_empty = std::count_if(shapes.begin(), shapes.end(), [](const Shape& s) { return shape_numel(s) > 0; });
    if (non_empty == 1) {
      for (std::size_t i = 0; i < n; ++i)
        if (ctx.input(i).numel() > 0) ctx.set_output(0, ctx.input(i));
      return {};
    }
    const Tensor& first = ctx.input(0);
    auto y = ctx.output(0, first.dtype(), *out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const auto a = static_cast<std::size_t>(axis_ < 0 ? axis_ + static_cast<int64_t>(out_shape->size()) : axis_);
    const int64_t outer = dims_product(*out_shape, 0, a);
    const int64_t inner = dims_product(*out_shape, a + 1, out_shape->size());
    std::vector<int64_t> block(n), offset(n);
    for (std::size_t i = 0; i < n; ++i) block[i] = shapes[i][a] * inner;
    std::exclusive_scan(block.begin(), block.end(), offset.begin(), int64_t{0});
    const int64_t out_block = (*out_shape)[a] * inner;
    const DType type = first.dtype();
    const auto esize = static_cast<int64_t>(dtype_size(type));
    auto* out = static_cast<char*>(y->mut().data());
    const auto items = static_cast<int64_t>(n);
    const int64_t grain = std::max<int64_t>(1, kGrainElements * items / std::max<int64_t>(out_block, 1));
    std::vector<const char*> sources(n);
    for (std::size_t i = 0; i < n; ++i) sources[i] = static_cast<const char*>(ctx.input(i).data());
    ctx.parallel().for_range(outer * items, grain, [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t o = item / items;
        const auto i = static_cast<std::size_t>(item % items);
        copy_elements(type, out + (o * out_block + offset[i]) * esize, sources[i] + o * block[i] * esize, block[i]);
      }
    });
    return {};
  }
  std::string_view variant() const override { return variant_; }

 private:
  int64_t axis_;
  std::string_view variant_;
};

KernelDef concat_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Concat", since}, until, check_concat, [](const NodeContext& ctx) {
                     return make_kernel<ConcatKernel>(concat_axis(ctx).value_or(0));
                   }};
}

// The sizes of Split's outputs along an axis of size `dim`: given explicitly, as
// num_outputs chunks of ceil(dim / num_outputs) with a smaller last one (Split-18), or
// as equal parts, one per output.
Expected<std::vector<int64_t>> split_sizes(int64_t dim, const std::optional<std::vector<int64_t>>& split,
                                           std::size_t outputs, std::optional<int64_t> num_outputs) {
  const auto n = static_cast<int64_t>(outputs);
  if (split) {
    const std::string text = shape_to_string(*split);
    if (split->size() != outputs)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Split: split {} has {} entries but the node has {} outputs", text, split->size(), n),
                  "split gives one size per output", "fix the split sizes or the node's outputs");
    const int64_t sum = std::accumulate(split->begin(), split->end(), int64_t{0});
    if (std::any_of(split->begin(), split->end(), [](int64_t s) { return s < 0; }) || sum != dim)
      return fail(ErrorCode::kRuntime, fmt::format("Split: split {} does not divide an axis of size {}", text, dim),
                  fmt::format("the sizes must be >= 0 and add up to {} (they add up to {})", dim, sum),
                  "fix the split sizes");
    return *split;
  }
  if (num_outputs) {
    const int64_t chunk = (dim + *num_outputs - 1) / *num_outputs;
    const int64_t last = dim - chunk * (*num_outputs - 1);
    if (last < 0)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Split: an axis of size {} cannot be split into {} outputs of {} elements and "
                              "a smaller last one", dim, *num_outputs, chunk),
                  "num_outputs splits into chunks of ceil(size / num_outputs), leaving too little for the last",
                  "give the split sizes explicitly as input 1");
    std::vector<int64_t> sizes(outputs, chunk);
    sizes.back() = last;
    return sizes;
  }
  if (dim % n != 0)
    return fail(ErrorCode::kRuntime,
                fmt::format("Split: an axis of size {} cannot be split evenly into {} outputs", dim, n),
                "without split sizes, Split makes equal parts",
                "give the split sizes (or num_outputs from opset 18 on)");
  return std::vector<int64_t>(outputs, dim / n);
}

// The split sizes when known before running: a constant input 1 (Split-1 and 13+), else the
// attribute before opset 13; `known` is false when input 1 is computed at run time.
struct StaticSplit {
  bool known = true;
  std::optional<std::vector<int64_t>> sizes;
};

StaticSplit static_split(const NodeContext& ctx) {
  if (ctx.has_input(1)) {
    auto sizes = ctx.constant_ints(1);
    return {sizes.has_value(), sizes};
  }
  if (ctx.opset() < 13) return {true, ctx.attrs().get_ints("split")};
  return {true, std::nullopt};
}

std::optional<int64_t> num_outputs_of(const NodeContext& ctx) {
  return ctx.opset() >= 18 ? ctx.attrs().get_int("num_outputs") : std::nullopt;
}

KernelMatch check_split(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "Split: input 0 (data) is missing; it is required");
  NXRT_REQUIRE(ctx.output_count() > 0, "Split: the node has no outputs; it needs at least one");
  NXRT_REQUIRE(!ctx.has_input(1) || ctx.opset() < 2 || ctx.opset() >= 13,
               "Split: input 1 (split) is not defined for Split-{}; it gives the sizes as an attribute", ctx.opset());
  if (ctx.has_input(1) && ctx.opset() >= 13) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  if (ctx.has_input(1) && ctx.opset() < 2)
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  const auto num_outputs = num_outputs_of(ctx);
  NXRT_REQUIRE(!num_outputs || !ctx.has_input(1),
               "Split: both num_outputs and the split input are given; Split-{} accepts one of them",
               ctx.opset());
  NXRT_REQUIRE(!num_outputs || *num_outputs == static_cast<int64_t>(ctx.output_count()),
               "Split: num_outputs={} but the node has {} outputs; they must agree", num_outputs.value_or(0),
               ctx.output_count());
  const int64_t axis = ctx.attrs().int_or("axis", 0);
  NXRT_REQUIRE_MATCH(check_axis_in_range(ctx, axis));
  const StaticSplit split = static_split(ctx);
  auto shape = ctx.input_static_shape(0);
  if (shape && split.known) {
    const auto a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<int64_t>(shape->size()) : axis);
    if (auto s = split_sizes((*shape)[a], split.sizes, ctx.output_count(), num_outputs); !s)
      return declined_by(s.error());
  }
  return KernelMatch::supported(copy_cost(ctx));
}

class SplitKernel final : public Kernel {
 public:
  SplitKernel(int64_t axis, std::optional<std::vector<int64_t>> split_attr, std::optional<int64_t> num_outputs)
      : axis_(axis), split_attr_(std::move(split_attr)), num_outputs_(num_outputs) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto axis = normalize_axes("Split", std::span(&axis_, 1), static_cast<int64_t>(in.size()), true);
    if (!axis) return std::unexpected(std::move(axis.error()));
    const auto a = static_cast<std::size_t>(axis->front());
    const auto split = ctx.has_input(1) ? std::optional(ctx.input(1).to_int64_vector()) : split_attr_;
    const std::size_t n = ctx.output_count();
    auto sizes = split_sizes(in[a], split, n, num_outputs_);
    if (!sizes) return std::unexpected(std::move(sizes.error()));
    std::vector<int64_t> offset(n);
    std::exclusive_scan(sizes->begin(), sizes->end(), offset.begin(), int64_t{0});
    const int64_t outer = dims_product(in, 0, a);
    const int64_t inner = dims_product(in, a + 1, in.size());
    // With one outer block, every piece is a contiguous run of the input.
    const bool views = outer == 1;
    std::vector<char*> outs(n, nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      if (!ctx.wants_output(i)) continue;
      Shape shape = in;
      shape[a] = (*sizes)[i];
      if (views) {
        ctx.set_output(i, contiguous_view(x, offset[i] * inner, std::move(shape)));
        continue;
      }
      auto y = ctx.output(i, x.dtype(), std::move(shape));
      if (!y) return std::unexpected(std::move(y.error()));
      outs[i] = static_cast<char*>(y->mut().data());
    }
    if (views) return {};
    const DType type = x.dtype();
    const auto esize = static_cast<int64_t>(dtype_size(type));
    const auto* src = static_cast<const char*>(x.data());
    const int64_t in_block = in[a] * inner;
    const auto items = static_cast<int64_t>(n);
    const int64_t grain = std::max<int64_t>(1, kGrainElements * items / std::max<int64_t>(in_block, 1));
    ctx.parallel().for_range(outer * items, grain, [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t o = item / items;
        const auto i = static_cast<std::size_t>(item % items);
        if (!outs[i]) continue;
        const int64_t block = (*sizes)[i] * inner;
        copy_elements(type, outs[i] + o * block * esize, src + (o * in_block + offset[i] * inner) * esize, block);
      }
    });
    return {};
  }
  std::string_view variant() const override { return "blocks"; }

 private:
  int64_t axis_;
  std::optional<std::vector<int64_t>> split_attr_;
  std::optional<int64_t> num_outputs_;
};

KernelDef split_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Split", since}, until, check_split, [](const NodeContext& ctx) {
                     auto attr = ctx.opset() < 13 ? ctx.attrs().get_ints("split") : std::nullopt;
                     return make_kernel<SplitKernel>(ctx.attrs().int_or("axis", 0), std::move(attr),
                                                     num_outputs_of(ctx));
                   }};
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_concat_channels_last() { return make_kernel<ConcatKernel>(-1, "blocks nhwc"); }

std::vector<KernelDef> concat_split_kernels() {
  return {
      concat_def(1, 3),  concat_def(4, 10),  concat_def(11, 0),   split_def(1, 1),   split_def(2, 10),
      split_def(11, 12), split_def(13, 17),   split_def(18, 0),
  };
}

}  // namespace nxrt::cpu
