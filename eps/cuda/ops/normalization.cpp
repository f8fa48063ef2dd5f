// Softmax, LogSoftmax, Hardmax, LayerNormalization, InstanceNormalization, GroupNormalization,
// MeanVarianceNormalization and LpNormalization: one block per row, group or line, reductions
// in shared memory. LRN: one thread per element, over its channel window.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "index_space.h"
#include "nxrt/ep/group_norm.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_softmax(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  return KernelMatch::supported();
}

// Rows of up to this many elements take a thread each.
constexpr int64_t kShortRow = 64;

}  // namespace

SoftmaxKernels softmax_kernels(PlanBuilder& b, DType dtype) {
  const std::string t(float_type(dtype));
  const std::string params = fmt::format("i64 outer, i64 axis, i64 inner, const {0}* x, {0}* y, int mode", t);
  return {b.instantiate("softmax_short", t, params, "outer, axis, inner, x, y, mode"),
          b.instantiate("softmax", t, params, "outer, axis, inner, x, y, mode")};
}

Expected<void> launch_softmax(StepContext& ctx, const SoftmaxKernels& kernels, int64_t outer, int64_t axis, int64_t inner,
                              const void* x, void* y, int mode) {
  if (outer * axis * inner == 0) return {};
  KernelArgs args;
  args.add(outer).add(axis).add(inner).ptr(x).ptr(y).add(mode);
  if (axis <= kShortRow) return ctx.launch(kernels.per_thread, outer * inner, args);
  return ctx.launch_rows(kernels.per_block, outer * inner, kRowBlockThreads, args);
}

namespace {

Expected<void> build_softmax(PlanBuilder& b, const Node& node) {
  const int mode = node.op_type == "LogSoftmax" ? 1 : node.op_type == "Hardmax" ? 2 : 0;  // the kernel's
  // Opset 13 normalizes one axis (default -1); before, everything from `axis` (default 1) on.
  const bool single_axis = node.opset >= 13;
  const int64_t axis_attr = node.attributes.int_or("axis", single_axis ? -1 : 1);
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const SoftmaxKernels kernels = softmax_kernels(b, dtype);
  b.add_step(make_step(node, "nvrtc:" + kernels.per_block, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(s.size()));
    if (axis < 0 || axis >= static_cast<int64_t>(std::max<std::size_t>(s.size(), 1)))
      return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} out of range for {}", ctx.where(), axis_attr, shape_to_string(s)));
    const auto a = static_cast<std::size_t>(axis);
    const int64_t outer = dims_product(s, 0, a);
    const int64_t length = single_axis ? (s.empty() ? 1 : s[a]) : dims_product(s, a, s.size());
    const int64_t inner = single_axis ? dims_product(s, std::min(a + 1, s.size()), s.size()) : 1;
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    return launch_softmax(ctx, kernels, outer, length, inner, dev(x), dev_mut(*y), mode);
  }));
  return {};
}

// The type LayerNormalization and GroupNormalization-21 compute their statistics in (and
// LayerNormalization writes Mean and InvStdDev in): stash_type float (1, the default) or
// double (11).
std::optional<DType> stash_type(const Node& node) {
  const int64_t stash = node.attributes.int_or("stash_type", 1);
  if (stash == 1) return DType::kFloat32;
  if (stash == 11) return DType::kFloat64;
  return std::nullopt;
}

KernelMatch check_layer_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2}));
  const auto stash = stash_type(ctx.node());
  NXRT_REQUIRE(stash.has_value(),
               "LayerNormalization: stash_type={} is not supported by the cuda EP (it computes in float, stash_type=1, "
               "or double, 11)",
               ctx.attrs().int_or("stash_type", 1));
  for (std::size_t i : {1, 2})
    if (ctx.has_output(i)) {
      const DType t = ctx.output_type(i) ? ctx.output_type(i)->dtype : DType::kUndefined;
      NXRT_REQUIRE(t == *stash || t == DType::kUndefined,
                   "LayerNormalization: output {} ({}) is {}; the cuda EP writes it as {}, the stash_type", i,
                   i == 1 ? "Mean" : "InvStdDev", dtype_name(t), dtype_name(*stash));
    }
  return KernelMatch::supported();
}

Expected<void> build_layer_norm(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = node.attributes.int_or("axis", -1);
  const float eps = node.attributes.float_or("epsilon", 1e-5f);
  const bool has_bias = node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const DType stash = *stash_type(node);
  const std::string t(float_type(dtype)), a(chain_storage_type(stash));
  const std::string kernel = b.instantiate(
      "layer_norm", fmt::format("{0}, {0}, {1}", t, a),
      fmt::format("i64 rows, i64 cols, const {0}* x, const {0}* scale, const {0}* bias, float eps, {0}* y, "
                  "{1}* mean, {1}* inv_std_dev",
                  t, a),
      "rows, cols, x, scale, bias, eps, y, mean, inv_std_dev");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto axis = axis_index(ctx, axis_attr, s);
    if (!axis) return std::unexpected(axis.error());
    const int64_t rows = dims_product(s, 0, *axis);
    const int64_t cols = dims_product(s, *axis, s.size());
    // Scale and bias must cover the normalized dims exactly (no further broadcasting here).
    for (std::size_t i = 1; i < (has_bias ? 3u : 2u); ++i)
      if (ctx.input(i).numel() != cols)
        return fail(ErrorCode::kRuntime, fmt::format("{}: input {} is {}, the normalized dims hold {} elements",
                                                     ctx.where(), i, shape_to_string(ctx.input(i).shape()), cols));
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    // Mean and InvStdDev: the input's shape with the normalized dims set to 1.
    Shape stat_shape = s;
    std::fill(stat_shape.begin() + static_cast<std::ptrdiff_t>(*axis), stat_shape.end(), 1);
    void* stats[2] = {nullptr, nullptr};
    for (std::size_t i : {1, 2})
      if (ctx.wants_output(i)) {
        auto t = ctx.output(i, stash, stat_shape);
        if (!t) return std::unexpected(t.error());
        stats[i - 1] = dev_mut(*t);
      }
    if (x.numel() == 0) return {};
    KernelArgs args;
    args.add(rows).add(cols).ptr(dev(x)).ptr(dev(ctx.input(1))).ptr(has_bias ? dev(ctx.input(2)) : nullptr);
    args.add(eps).ptr(dev_mut(*y)).ptr(stats[0]).ptr(stats[1]);
    return ctx.launch_rows(kernel, rows, kRowBlockThreads, args);
  }));
  return {};
}

KernelMatch check_instance_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2}));
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 3, "InstanceNormalization: input 0 has rank {}; expected N, C, spatial...", rank.value_or(0));
  return KernelMatch::supported();
}

Expected<void> build_instance_norm(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const float eps = node.attributes.float_or("epsilon", 1e-5f);
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "instance_norm", t,
      fmt::format("i64 rows, i64 cols, i64 channels, const {0}* x, const {0}* scale, const {0}* bias, float eps, {0}* y", t),
      "rows, cols, channels, x, scale, bias, eps, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 3 || ctx.input(1).numel() != s[1] || ctx.input(2).numel() != s[1])
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} with scale {} and bias {}: expected N, C, spatial... and [C] "
                                                   "vectors", ctx.where(), shape_to_string(s),
                                                   shape_to_string(ctx.input(1).shape()), shape_to_string(ctx.input(2).shape())));
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    if (x.numel() == 0) return {};
    const int64_t rows = s[0] * s[1], cols = dims_product(s, 2, s.size());
    KernelArgs args;
    args.add(rows).add(cols).add(s[1]).ptr(dev(x)).ptr(dev(ctx.input(1))).ptr(dev(ctx.input(2))).add(eps).ptr(dev_mut(*y));
    return ctx.launch_rows(kernel, rows, kRowBlockThreads, args);
  }));
  return {};
}

// GroupNormalization: lib checks the shapes; the cuda EP computes the statistics in float, or
// from opset 21 in stash_type's float or double.
std::optional<DType> group_norm_stash_type(const Node& node) {
  return node.opset >= 21 ? stash_type(node) : DType::kFloat32;
}

KernelMatch check_group_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_group_norm_node(ctx));
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2}));
  NXRT_REQUIRE(group_norm_stash_type(ctx.node()).has_value(),
               "GroupNormalization: stash_type={} is not supported by the cuda EP (it computes in float, stash_type=1, "
               "or double, 11)",
               ctx.attrs().int_or("stash_type", 1));
  return KernelMatch::supported();
}

Expected<void> build_group_norm(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const int64_t groups = *node.attributes.get_int("num_groups");
  const float eps = node.attributes.float_or("epsilon", 1e-5f);
  const bool per_channel = group_norm_per_channel(node.opset);
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "group_norm", fmt::format("{}, {}", t, chain_storage_type(*group_norm_stash_type(node))),
      fmt::format("i64 rows, i64 cols, i64 groups, i64 plane, int per_channel, const {0}* x, const {0}* scale, "
                  "const {0}* bias, float eps, {0}* y",
                  t),
      "rows, cols, groups, plane, per_channel, x, scale, bias, eps, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (auto fits = check_group_norm_shapes(per_channel, groups, s, ctx.input(1).shape(), ctx.input(2).shape()); !fits)
      return fits;
    const int64_t channels = s[1];
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    if (x.numel() == 0) return {};
    const int64_t plane = dims_product(s, 2, s.size());
    KernelArgs args;
    args.add(s[0] * groups).add(channels / groups * plane).add(groups).add(plane).add(per_channel ? 1 : 0);
    args.ptr(dev(x)).ptr(dev(ctx.input(1))).ptr(dev(ctx.input(2))).add(eps).ptr(dev_mut(*y));
    return ctx.launch_rows(kernel, s[0] * groups, kRowBlockThreads, args);
  }));
  return {};
}

}  // namespace

Expected<void> build_batch_norm_training(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const float eps = node.attributes.float_or("epsilon", 1e-5f);
  const float momentum = node.attributes.float_or("momentum", 0.9f);
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "batch_norm_training", t,
      fmt::format("i64 batch, i64 channels, i64 inner, const {0}* x, const {0}* scale, const {0}* bias, "
                  "const {0}* mean_in, const {0}* var_in, float eps, float momentum, {0}* y, {0}* running_mean, "
                  "{0}* running_var",
                  t),
      "batch, channels, inner, x, scale, bias, mean_in, var_in, eps, momentum, y, running_mean, running_var");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const int64_t channels = s.size() >= 2 ? s[1] : 0;
    for (std::size_t i = 1; i < 5; ++i)
      if (s.size() < 2 || ctx.input(i).numel() != channels)
        return fail(ErrorCode::kRuntime, fmt::format("{}: input {} with input {} of shape {}: expected N, C, ... and [C] "
                                                     "vectors", ctx.where(), shape_to_string(s), i,
                                                     shape_to_string(ctx.input(i).shape())));
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    void* running[2] = {nullptr, nullptr};
    for (std::size_t i : {1, 2})
      if (ctx.wants_output(i)) {
        auto t = ctx.output(i, dtype, {channels});
        if (!t) return std::unexpected(t.error());
        running[i - 1] = dev_mut(*t);
      }
    if (channels == 0) return {};
    KernelArgs args;
    args.add(s[0]).add(channels).add(dims_product(s, 2, s.size())).ptr(dev(x));
    for (std::size_t i = 1; i < 5; ++i) args.ptr(dev(ctx.input(i)));
    args.add(eps).add(momentum).ptr(dev_mut(*y)).ptr(running[0]).ptr(running[1]);
    return ctx.launch_rows(kernel, channels, kRowBlockThreads, args);
  }));
  return {};
}

namespace {

KernelMatch check_lrn(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  NXRT_REQUIRE(ctx.attrs().int_or("size", 0) > 0, "LRN: size must be positive");
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 3, "LRN: input 0 has rank {}; expected N, C, spatial...", rank.value_or(0));
  return KernelMatch::supported();
}

Expected<void> build_lrn(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const int size = static_cast<int>(node.attributes.int_or("size", 1));
  const float alpha = node.attributes.float_or("alpha", 1e-4f), beta = node.attributes.float_or("beta", 0.75f),
              bias = node.attributes.float_or("bias", 1.f);
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "lrn", t, fmt::format("i64 n, i64 channels, i64 plane, int size, float alpha, float beta, float bias, const {0}* x, {0}* y", t),
      "n, channels, plane, size, alpha, beta, bias, x, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 3) return fail(ErrorCode::kRuntime, fmt::format("{}: input {} is not N, C, spatial...", ctx.where(), shape_to_string(s)));
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    const int64_t n = x.numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(s[1]).add(dims_product(s, 2, s.size())).add(size).add(alpha).add(beta).add(bias).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

// MeanVarianceNormalization: axes (default [0, 2, 3]) within the rank, each once.
KernelMatch check_mvn(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  if (const auto rank = ctx.input_rank(0)) {
    std::vector<bool> seen(static_cast<std::size_t>(*rank), false);
    for (int64_t a : ctx.attrs().ints_or("axes", {0, 2, 3})) {
      const int64_t k = normalize_axis(a, *rank);
      NXRT_REQUIRE(k >= 0 && k < *rank && !seen[static_cast<std::size_t>(k)],
                   "MeanVarianceNormalization: axes {} do not name distinct dims of a rank-{} input",
                   ctx.attrs().ints_or("axes", {0, 2, 3}), *rank);
      seen[static_cast<std::size_t>(k)] = true;
    }
  }
  return KernelMatch::supported();
}

Expected<void> build_mvn(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::vector<int64_t> axes = node.attributes.ints_or("axes", {0, 2, 3});
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "mvn", t,
      fmt::format("i64 groups, int kept_rank, Dims kept_shape, Dims kept_strides, int red_rank, Dims red_shape, "
                  "Dims red_strides, i64 count, const {0}* x, {0}* y",
                  t),
      "groups, kept_rank, kept_shape, kept_strides, red_rank, red_shape, red_strides, count, x, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto rank = static_cast<int64_t>(s.size());
    std::vector<bool> normalized(s.size(), false);
    for (int64_t a : axes) {
      const int64_t k = normalize_axis(a, rank);
      if (k < 0 || k >= rank)
        return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} is outside an input of rank {}", ctx.where(), a, rank));
      normalized[static_cast<std::size_t>(k)] = true;
    }
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    if (x.numel() == 0) return {};
    // The kept dims enumerate the groups; the normalized ones each group's elements.
    const Shape strides = contiguous_strides(s);
    Shape kept_shape, kept_strides, red_shape, red_strides;
    for (std::size_t d = 0; d < s.size(); ++d) {
      (normalized[d] ? red_shape : kept_shape).push_back(s[d]);
      (normalized[d] ? red_strides : kept_strides).push_back(strides[d]);
    }
    const int64_t groups = shape_numel(kept_shape);
    coalesce_dims(kept_shape, std::span(&kept_strides, 1));
    coalesce_dims(red_shape, std::span(&red_strides, 1));
    KernelArgs args;
    args.add(groups).add(static_cast<int>(kept_shape.size())).add(to_kernel_dims(kept_shape)).add(to_kernel_dims(kept_strides));
    args.add(static_cast<int>(red_shape.size())).add(to_kernel_dims(red_shape)).add(to_kernel_dims(red_strides));
    args.add(shape_numel(red_shape)).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch_rows(kernel, groups, kRowBlockThreads, args);
  }));
  return {};
}

// LpNormalization: p 1 or 2 along one axis.
KernelMatch check_lp_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  const int64_t p = ctx.attrs().int_or("p", 2);
  NXRT_REQUIRE(p == 1 || p == 2, "LpNormalization: p {} is not supported; the op defines p = 1 or 2", p);
  const int64_t axis = ctx.attrs().int_or("axis", -1);
  if (const auto rank = ctx.input_rank(0)) {
    const int64_t k = normalize_axis(axis, *rank);
    NXRT_REQUIRE(k >= 0 && k < *rank, "LpNormalization: axis {} is out of range for X of rank {}", axis, *rank);
  }
  return KernelMatch::supported();
}

Expected<void> build_lp_norm(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const int64_t axis_attr = node.attributes.int_or("axis", -1);
  const int p = static_cast<int>(node.attributes.int_or("p", 2));
  const std::string t(float_type(dtype));
  const std::string kernel =
      b.instantiate("lp_norm", t, fmt::format("i64 lines, i64 len, i64 inner, int p, const {0}* x, {0}* y", t),
                    "lines, len, inner, p, x, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto axis = axis_index(ctx, axis_attr, s);
    if (!axis) return std::unexpected(axis.error());
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    if (x.numel() == 0) return {};
    const int64_t len = s[*axis], inner = dims_product(s, *axis + 1, s.size());
    const int64_t lines = x.numel() / len;
    KernelArgs args;
    args.add(lines).add(len).add(inner).add(p).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch_rows(kernel, lines, kRowBlockThreads, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> normalization_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Softmax", 1, check_softmax, build_softmax));
  ops.push_back(make_op("LogSoftmax", 1, check_softmax, build_softmax));
  ops.push_back(make_op("Hardmax", 1, check_softmax, build_softmax));
  // From opset 1: ONNX Runtime registers LayerNormalization in the ONNX domain from version 1
  // (ONNX defined it in 17, the same op); its optimizer writes it into opset 11 to 16 models.
  ops.push_back(make_op("LayerNormalization", 1, check_layer_norm, build_layer_norm));
  ops.push_back(make_op("InstanceNormalization", 6, check_instance_norm, build_instance_norm));
  for (CudaOpDef& op : make_op_versions("GroupNormalization", {18, 21}, check_group_norm, build_group_norm))
    ops.push_back(std::move(op));
  ops.push_back(make_op("LpNormalization", 1, check_lp_norm, build_lp_norm));
  ops.push_back(make_op("LRN", 1, check_lrn, build_lrn));
  for (CudaOpDef& op : make_op_versions("MeanVarianceNormalization", {9, 13}, check_mvn, build_mvn)) ops.push_back(std::move(op));
  return ops;
}

}  // namespace nxrt::cuda
