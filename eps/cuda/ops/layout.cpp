// Reshape, Flatten, Squeeze, Unsqueeze and Identity as views of their input
// (no copy), and Transpose and Expand as one strided copy.
#include <fmt/format.h>

#include <numeric>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// Output shape of a view op from the input shape (and integer inputs the step reads); fails
// on shapes the model gets wrong, with errors that name the step (ctx.where()).
using ShapeFn = std::function<Expected<Shape>(StepContext&, const Shape&)>;

Expected<void> add_view(PlanBuilder& b, const Node& node, ShapeFn shape_of) {
  b.add_step(make_step(node, "view", [shape_of = std::move(shape_of)](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    auto shape = shape_of(ctx, x.shape());
    if (!shape) return std::unexpected(shape.error());  // names the step already
    if (shape_numel(*shape) != x.numel())
      return fail(ErrorCode::kRuntime, fmt::format("{}: cannot view {} as {}", ctx.where(), shape_to_string(x.shape()),
                                                   shape_to_string(*shape)));
    ctx.set_output(0, x.reshaped(*shape));
    return {};
  }));
  return {};
}

KernelMatch check_view(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  return KernelMatch::supported();
}

KernelMatch check_reshape(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_view(ctx));
  NXRT_REQUIRE(ctx.has_input(1), "Reshape: the shape input is missing");
  NXRT_REQUIRE_MATCH(require_ints(ctx, 1, "shape"));
  return KernelMatch::supported();
}

Expected<void> build_reshape(PlanBuilder& b, const Node& node) {
  const IntsInput shape_input(b.graph(), node, 1);
  const bool allowzero = node.attributes.int_or("allowzero", 0) != 0;
  return add_view(b, node, [shape_input, allowzero](StepContext& ctx, const Shape& in) -> Expected<Shape> {
    auto read = shape_input.read(ctx);
    if (!read) return std::unexpected(read.error());
    const Shape target = read->value_or(Shape{});
    Shape out = target;
    int64_t known = 1, infer = -1;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allowzero) {
        if (i >= in.size()) return fail(ErrorCode::kRuntime, fmt::format("{}: shape {} copies dim {} of a rank-{} input", ctx.where(), shape_to_string(target), i, in.size()));
        out[i] = in[i];
      }
      if (out[i] == -1) {
        if (infer >= 0) return fail(ErrorCode::kRuntime, fmt::format("{}: shape {} has two -1", ctx.where(), shape_to_string(target)));
        infer = static_cast<int64_t>(i);
        continue;
      }
      known *= out[i];
    }
    if (infer >= 0) out[static_cast<std::size_t>(infer)] = known == 0 ? 0 : shape_numel(in) / known;
    return out;
  });
}

Expected<void> build_flatten(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = node.attributes.int_or("axis", 1);
  return add_view(b, node, [axis_attr](StepContext& ctx, const Shape& in) -> Expected<Shape> {
    const int64_t r = static_cast<int64_t>(in.size());
    const int64_t axis = normalize_axis(axis_attr, r);
    if (axis < 0 || axis > r) return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} out of range for rank {}", ctx.where(), axis_attr, r));
    const auto mid = in.begin() + axis;
    return Shape{std::accumulate(in.begin(), mid, int64_t{1}, std::multiplies<>()),
                 std::accumulate(mid, in.end(), int64_t{1}, std::multiplies<>())};
  });
}

// Squeeze and Unsqueeze take axes from an attribute before opset 13 and an input after.
using AxesFn = std::function<Expected<std::optional<std::vector<int64_t>>>(StepContext&)>;
AxesFn axes_of(const Graph& g, const Node& node) {
  if (node.opset < 13)
    return [axes = node.attributes.get_ints("axes")](StepContext&) -> Expected<std::optional<std::vector<int64_t>>> {
      return axes;
    };
  return [input = IntsInput(g, node, 1)](StepContext& ctx) { return input.read(ctx); };
}

KernelMatch check_axes_view(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_view(ctx));
  if (ctx.opset() >= 13) NXRT_REQUIRE_MATCH(require_ints(ctx, 1, "axes"));
  if (ctx.node().op_type == "Unsqueeze")
    NXRT_REQUIRE(ctx.opset() >= 13 ? ctx.has_input(1) : ctx.attrs().has("axes"), "Unsqueeze: axes are missing");
  return KernelMatch::supported();
}

Expected<void> build_squeeze(PlanBuilder& b, const Node& node) {
  return add_view(b, node, [axes_fn = axes_of(b.graph(), node)](StepContext& ctx, const Shape& in) -> Expected<Shape> {
    auto axes = axes_fn(ctx);
    if (!axes) return std::unexpected(axes.error());
    const int64_t r = static_cast<int64_t>(in.size());
    std::vector<bool> drop(in.size(), false);
    for (std::size_t i = 0; i < in.size(); ++i) drop[i] = !*axes && in[i] == 1;
    for (int64_t a : axes->value_or(std::vector<int64_t>{})) {
      const int64_t k = normalize_axis(a, r);
      if (k < 0 || k >= r || in[static_cast<std::size_t>(k)] != 1)
        return fail(ErrorCode::kRuntime, fmt::format("{}: cannot squeeze axis {} of {}", ctx.where(), a, shape_to_string(in)));
      drop[static_cast<std::size_t>(k)] = true;
    }
    Shape out;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (!drop[i]) out.push_back(in[i]);
    return out;
  });
}

Expected<void> build_unsqueeze(PlanBuilder& b, const Node& node) {
  return add_view(b, node, [axes_fn = axes_of(b.graph(), node)](StepContext& ctx, const Shape& in) -> Expected<Shape> {
    auto read = axes_fn(ctx);
    if (!read) return std::unexpected(read.error());
    const std::vector<int64_t> axes = read->value_or(std::vector<int64_t>{});
    const int64_t r = static_cast<int64_t>(in.size() + axes.size());
    std::vector<bool> inserted(static_cast<std::size_t>(r), false);
    for (int64_t a : axes) {
      const int64_t k = normalize_axis(a, r);
      if (k < 0 || k >= r || inserted[static_cast<std::size_t>(k)])
        return fail(ErrorCode::kRuntime, fmt::format("{}: bad Unsqueeze axis {} for output rank {}", ctx.where(), a, r));
      inserted[static_cast<std::size_t>(k)] = true;
    }
    Shape out;
    std::size_t next = 0;
    for (int64_t i = 0; i < r; ++i) out.push_back(inserted[static_cast<std::size_t>(i)] ? 1 : in[next++]);
    return out;
  });
}

// Identity: the input itself.
Expected<void> build_same_view(PlanBuilder& b, const Node& node) {
  return add_view(b, node, [](StepContext&, const Shape& in) -> Expected<Shape> { return in; });
}

KernelMatch check_transpose(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  return KernelMatch::supported();
}

Expected<void> build_transpose(PlanBuilder& b, const Node& node) {
  const auto perm_attr = node.attributes.get_ints("perm");
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string kernel = strided_copy_kernel(b, dtype);
  b.add_step(make_step(node, "nvrtc:" + kernel, [perm_attr, dtype, kernel](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const std::size_t r = x.shape().size();
    std::vector<int64_t> perm = perm_attr.value_or(std::vector<int64_t>{});
    if (!perm_attr)
      for (std::size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
    if (perm.size() != r)
      return fail(ErrorCode::kRuntime, fmt::format("{}: perm has {} entries for rank {}", ctx.where(), perm.size(), r));
    const Shape in_strides = contiguous_strides(x.shape());
    Shape out_shape(r), read(r);
    for (std::size_t i = 0; i < r; ++i) {
      const auto p = static_cast<std::size_t>(perm[i]);
      if (p >= r) return fail(ErrorCode::kRuntime, fmt::format("{}: perm {} is out of range", ctx.where(), perm[i]));
      out_shape[i] = x.shape()[p];
      read[i] = in_strides[p];
    }
    auto y = ctx.output(0, dtype, out_shape);
    if (!y) return std::unexpected(y.error());
    return strided_copy(ctx, kernel, out_shape, read, 0, dev(x), contiguous_strides(out_shape), 0, dev_mut(*y));
  }));
  return {};
}

KernelMatch check_expand(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kInt64, "Expand: input 1 (shape) is {}; expected int64",
               dtype_name(ctx.input_dtype(1)));
  return require_ints(ctx, 1, "shape");
}

// Expand: the input broadcast to the shape (numpy rules), one strided copy whose broadcast
// dims read with stride 0.
Expected<void> build_expand(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string kernel = strided_copy_kernel(b, dtype);
  const IntsInput shape_input(b.graph(), node, 1);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    auto read = shape_input.read(ctx);
    if (!read) return std::unexpected(read.error());
    const Shape target = read->value_or(Shape{});
    const Shape& in = x.shape();
    const std::size_t rank = std::max(in.size(), target.size());
    Shape out(rank), strides(rank, 0);
    const Shape in_strides = contiguous_strides(in);
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t from_end = rank - 1 - i;
      const int64_t a = from_end < in.size() ? in[in.size() - 1 - from_end] : 1;
      const int64_t t = from_end < target.size() ? target[target.size() - 1 - from_end] : 1;
      if (a != t && a != 1 && t != 1)
        return fail(ErrorCode::kRuntime, fmt::format("{}: {} does not broadcast to {}", ctx.where(), shape_to_string(in),
                                                     shape_to_string(target)));
      out[i] = a == 1 ? t : a;
      if (from_end < in.size() && a != 1) strides[i] = in_strides[in.size() - 1 - from_end];
    }
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    return strided_copy(ctx, kernel, out, strides, 0, dev(x), contiguous_strides(out), 0, dev_mut(*y));
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> layout_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Reshape", 5, check_reshape, build_reshape));
  ops.push_back(make_op("Flatten", 1, check_view, build_flatten));
  ops.push_back(make_op("Squeeze", 1, check_axes_view, build_squeeze));
  ops.push_back(make_op("Unsqueeze", 1, check_axes_view, build_unsqueeze));
  ops.push_back(make_op("Identity", 1, check_view, build_same_view));
  ops.push_back(make_op("Transpose", 1, check_transpose, build_transpose));
  ops.push_back(make_op("Expand", 8, check_expand, build_expand));
  return ops;
}

}  // namespace nxrt::cuda
