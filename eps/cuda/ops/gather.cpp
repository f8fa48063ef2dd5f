// Concat, Split, Slice, Gather and GatherElements: data movement by element size, for any
// fixed-size dtype.
#include <fmt/format.h>

#include <algorithm>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_concat(const NodeContext& ctx) {
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    NXRT_REQUIRE_MATCH(require_fixed_size(ctx, i));
    NXRT_REQUIRE_MATCH(require_max_rank(ctx, i));
  }
  NXRT_REQUIRE(ctx.attrs().has("axis"), "Concat: the axis attribute is missing");
  return KernelMatch::supported();
}

Expected<void> build_concat(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = *node.attributes.get_int("axis");
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string kernel = strided_copy_kernel(b, dtype);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    Shape out = ctx.input(0).shape();
    const auto axis = axis_index(ctx, axis_attr, out);
    if (!axis) return std::unexpected(axis.error());
    const std::size_t a = *axis;
    out[a] = 0;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const Shape& s = ctx.input(i).shape();
      for (std::size_t k = 0; k < s.size(); ++k)
        if (s.size() != out.size() || (k != a && s[k] != out[k]))
          return fail(ErrorCode::kRuntime, fmt::format("{}: input {} is {}, which does not concatenate along axis {}",
                                                       ctx.where(), i, shape_to_string(s), a));
      out[a] += s[a];
    }
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const Shape out_strides = contiguous_strides(out);
    int64_t at = 0;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const Tensor& x = ctx.input(i);
      if (auto r = strided_copy(ctx, kernel, x.shape(), contiguous_strides(x.shape()), 0, dev(x), out_strides,
                                at * out_strides[a], dev_mut(*y));
          !r)
        return r;
      at += x.shape()[a];
    }
    return {};
  }));
  return {};
}

KernelMatch check_split(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  if (ctx.opset() >= 13) NXRT_REQUIRE_MATCH(require_ints(ctx, 1, "split"));
  return KernelMatch::supported();
}

// The sizes of Split's outputs along an axis of `dim`: given (attribute before opset 13, input
// after), chunks of ceil(dim / num_outputs) (opset 18), or equal parts.
Expected<std::vector<int64_t>> split_sizes(std::optional<std::vector<int64_t>> given, std::optional<int64_t> num_outputs,
                                           std::size_t outputs, int64_t dim) {
  if (given) {
    int64_t total = 0;
    for (int64_t s : *given) total += s;
    if (given->size() != outputs || total != dim)
      return fail(ErrorCode::kRuntime, fmt::format("split sizes {} do not cut {} into {} outputs",
                                                   shape_to_string(*given), dim, outputs));
    return *given;
  }
  if (num_outputs) {
    const int64_t chunk = (dim + *num_outputs - 1) / std::max<int64_t>(*num_outputs, 1);
    std::vector<int64_t> sizes;
    for (int64_t left = dim; sizes.size() < outputs; left -= sizes.back()) sizes.push_back(std::min(chunk, left));
    return sizes;
  }
  if (dim % static_cast<int64_t>(outputs) != 0)
    return fail(ErrorCode::kRuntime, fmt::format("{} does not split into {} equal parts", dim, outputs));
  return std::vector<int64_t>(outputs, dim / static_cast<int64_t>(outputs));
}

Expected<void> build_split(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = node.attributes.int_or("axis", 0);
  const std::optional<std::vector<int64_t>> split_attr =
      node.opset < 13 ? node.attributes.get_ints("split") : std::nullopt;
  const std::optional<int64_t> num_outputs = node.attributes.get_int("num_outputs");
  const std::optional<IntsInput> split_input =
      node.opset >= 13 ? std::optional<IntsInput>(IntsInput(b.graph(), node, 1)) : std::nullopt;
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string kernel = strided_copy_kernel(b, dtype);
  const std::size_t outputs = node.outputs.size();
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    const auto axis = axis_index(ctx, axis_attr, in);
    if (!axis) return std::unexpected(axis.error());
    const std::size_t a = *axis;
    std::optional<std::vector<int64_t>> given = split_attr;
    if (split_input) {
      auto read = split_input->read(ctx);
      if (!read) return std::unexpected(read.error());
      given = *read;
    }
    auto sizes = split_sizes(given, num_outputs, outputs, in[a]);
    if (!sizes) return forward_error(std::move(sizes), ctx.where());
    const Shape in_strides = contiguous_strides(in);
    int64_t at = 0;
    for (std::size_t i = 0; i < outputs; ++i) {
      Shape out = in;
      out[a] = (*sizes)[i];
      if (ctx.wants_output(i)) {
        auto y = ctx.output(i, dtype, out);
        if (!y) return std::unexpected(y.error());
        if (auto r = strided_copy(ctx, kernel, out, in_strides, at * in_strides[a], dev(x), contiguous_strides(out), 0,
                                  dev_mut(*y));
            !r)
          return r;
      }
      at += (*sizes)[i];
    }
    return {};
  }));
  return {};
}

// Slice's starts/ends/axes/steps: attributes before opset 10, inputs 1-4 after.
struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};

// Fills the default axes and steps, and checks the lengths and steps.
Expected<SliceSpec> complete(SliceSpec s) {
  if (s.axes.empty())
    for (std::size_t i = 0; i < s.starts.size(); ++i) s.axes.push_back(static_cast<int64_t>(i));
  if (s.steps.empty()) s.steps.assign(s.starts.size(), 1);
  if (s.ends.size() != s.starts.size() || s.axes.size() != s.starts.size() || s.steps.size() != s.starts.size())
    return fail(ErrorCode::kRuntime, "Slice: starts, ends, axes and steps must have one length");
  for (int64_t step : s.steps)
    if (step == 0) return fail(ErrorCode::kRuntime, "Slice: a step is 0");
  return s;
}

// The spec when it is known before running: from attributes, or from constant inputs.
std::optional<SliceSpec> known_slice_spec(const Graph& g, const Node& node) {
  SliceSpec s;
  if (node.opset < 10) {
    s.starts = node.attributes.ints_or("starts", {});
    s.ends = node.attributes.ints_or("ends", {});
    s.axes = node.attributes.ints_or("axes", {});
    return s;
  }
  std::vector<int64_t>* fields[] = {&s.starts, &s.ends, &s.axes, &s.steps};
  for (std::size_t i = 0; i < 4; ++i) {
    const bool present = i + 1 < node.inputs.size() && node.inputs[i + 1] != kNoValue;
    auto values = constant_ints(g, node, i + 1);
    if (present && !values) return std::nullopt;  // computed at run time
    if (values) *fields[i] = std::move(*values);
  }
  return s;
}

KernelMatch check_slice(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  if (ctx.opset() >= 10) {
    NXRT_REQUIRE(ctx.has_input(1) && ctx.has_input(2), "Slice: starts and ends are required");
    NXRT_REQUIRE_MATCH(require_ints(ctx, 1, "starts"));
    NXRT_REQUIRE_MATCH(require_ints(ctx, 2, "ends"));
    NXRT_REQUIRE_MATCH(require_ints(ctx, 3, "axes"));
    NXRT_REQUIRE_MATCH(require_ints(ctx, 4, "steps"));
  }
  if (auto known = known_slice_spec(ctx.graph(), ctx.node())) {
    auto spec = complete(std::move(*known));
    NXRT_REQUIRE(spec.has_value(), "{}", spec ? std::string() : spec.error().what);
  }
  return KernelMatch::supported();
}

Expected<void> build_slice(PlanBuilder& b, const Node& node) {
  const std::optional<SliceSpec> known = known_slice_spec(b.graph(), node);
  std::vector<IntsInput> bounds;  // starts, ends, axes, steps when read at run time
  if (!known)
    for (std::size_t i = 1; i <= 4; ++i) bounds.emplace_back(b.graph(), node, i);
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string kernel = strided_copy_kernel(b, dtype);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    SliceSpec given = known.value_or(SliceSpec{});
    std::vector<int64_t>* fields[] = {&given.starts, &given.ends, &given.axes, &given.steps};
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      auto values = bounds[i].read(ctx);
      if (!values) return std::unexpected(values.error());
      if (*values) *fields[i] = std::move(**values);
    }
    auto completed = complete(std::move(given));
    if (!completed) return forward_error(std::move(completed), ctx.where());
    const SliceSpec& spec = *completed;
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    const Shape in_strides = contiguous_strides(in);
    Shape out = in, read = in_strides;
    int64_t offset = 0;
    for (std::size_t i = 0; i < spec.starts.size(); ++i) {
      const auto axis = axis_index(ctx, spec.axes[i], in);
      if (!axis) return std::unexpected(axis.error());
      const std::size_t k = *axis;
      const int64_t dim = in[k], step = spec.steps[i];
      // ONNX's clamping: negative indices count from the end; the range depends on the direction.
      auto clamp = [&](int64_t v, bool is_start) {
        if (v < 0) v += dim;
        if (step > 0) return std::clamp<int64_t>(v, 0, dim);
        return std::clamp<int64_t>(v, is_start ? 0 : -1, std::max<int64_t>(dim - 1, 0));
      };
      const int64_t start = clamp(spec.starts[i], true), end = clamp(spec.ends[i], false);
      const int64_t count = dim == 0 ? 0 : step > 0 ? std::max<int64_t>(0, (end - start + step - 1) / step)
                                     : std::max<int64_t>(0, (start - end + (-step) - 1) / (-step));
      out[k] = count;
      read[k] = in_strides[k] * step;
      offset += start * in_strides[k];
    }
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    return strided_copy(ctx, kernel, out, read, offset, dev(x), contiguous_strides(out), 0, dev_mut(*y));
  }));
  return {};
}

KernelMatch check_gather(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  const DType idx = ctx.input_dtype(1);
  NXRT_REQUIRE(idx == DType::kInt32 || idx == DType::kInt64, "Gather: indices are {}; expected int32 or int64",
               dtype_name(idx));
  return KernelMatch::supported();
}

Expected<void> build_gather(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = node.attributes.int_or("axis", 0);
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const DType idx_dtype = b.graph().value(node.inputs[1]).type.dtype;
  const std::string t(element_type(dtype)), i(idx_dtype == DType::kInt32 ? "int" : "long long");
  const std::string kernel = b.instantiate(
      "gather", t + ", " + i,
      fmt::format("i64 n, i64 inner, i64 axis_dim, i64 idx_count, const {}* data, const {}* idx, {}* out", t, i, t),
      "n, inner, axis_dim, idx_count, data, idx, out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& data = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const Shape& in = data.shape();
    const auto axis = axis_index(ctx, axis_attr, in);
    if (!axis) return std::unexpected(axis.error());
    const std::size_t a = *axis;
    Shape out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(a));
    out.insert(out.end(), idx.shape().begin(), idx.shape().end());
    out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(a) + 1, in.end());
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    int64_t inner = 1;
    for (std::size_t k = a + 1; k < in.size(); ++k) inner *= in[k];
    KernelArgs args;
    args.add(n).add(inner).add(in[a]).add(idx.numel()).ptr(dev(data)).ptr(dev(idx)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

KernelMatch check_gather_elements(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  const DType idx = ctx.input_dtype(1);
  NXRT_REQUIRE(idx == DType::kInt32 || idx == DType::kInt64, "GatherElements: indices are {}; expected int32 or int64",
               dtype_name(idx));
  return KernelMatch::supported();
}

// GatherElements: the output has the indices' shape; each element reads data at its own
// coordinate with the axis coordinate taken from the index.
Expected<void> build_gather_elements(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = node.attributes.int_or("axis", 0);
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const DType idx_dtype = b.graph().value(node.inputs[1]).type.dtype;
  const std::string t(element_type(dtype)), i(idx_dtype == DType::kInt32 ? "int" : "long long");
  const std::string kernel = b.instantiate(
      "gather_elements", t + ", " + i,
      fmt::format("i64 n, int rank, Dims idx_shape, Dims data_strides, int axis, i64 axis_dim, const {}* data, "
                  "const {}* idx, {}* out",
                  t, i, t),
      "n, rank, idx_shape, data_strides, axis, axis_dim, data, idx, out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& data = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const Shape& in = data.shape();
    const Shape& out = idx.shape();
    const auto axis = axis_index(ctx, axis_attr, in);
    if (!axis) return std::unexpected(axis.error());
    if (out.size() != in.size())
      return fail(ErrorCode::kRuntime, fmt::format("{}: indices {} and data {} differ in rank", ctx.where(),
                                                   shape_to_string(out), shape_to_string(in)));
    for (std::size_t d = 0; d < in.size(); ++d)
      if (d != *axis && out[d] > in[d])
        return fail(ErrorCode::kRuntime, fmt::format("{}: indices {} exceed data {} in dim {}", ctx.where(),
                                                     shape_to_string(out), shape_to_string(in), d));
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(static_cast<int>(in.size())).add(to_kernel_dims(out)).add(to_kernel_dims(contiguous_strides(in)));
    args.add(static_cast<int>(*axis)).add(in[*axis]).ptr(dev(data)).ptr(dev(idx)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> gather_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Concat", 4, check_concat, build_concat));
  for (CudaOpDef& def : make_op_versions("Split", {2, 13, 18}, check_split, build_split))  // 13: split input; 18: num_outputs
    ops.push_back(std::move(def));
  ops.push_back(make_op("Slice", 1, check_slice, build_slice));
  ops.push_back(make_op("Gather", 1, check_gather, build_gather));
  ops.push_back(make_op("GatherElements", 11, check_gather_elements, build_gather_elements));
  return ops;
}

}  // namespace nxrt::cuda
