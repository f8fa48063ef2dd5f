// MaxPool, AveragePool, LpPool and their Global forms over 1 to 3 spatial dims: one thread per
// output element; the window geometry is lib's (plan_window), as every EP reads it.
// MaxUnpool: a zeroed output, then one thread per input element puts it where its index says.
#include <fmt/format.h>

#include "nxrt/ep/max_unpool.h"
#include "nxrt/ir/window.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

bool is_global(const Node& node) { return node.op_type.starts_with("Global"); }
bool is_max(const Node& node) { return node.op_type.ends_with("MaxPool"); }
bool is_lp(const Node& node) { return node.op_type.ends_with("LpPool"); }
// The pool kernel's mode.
int pool_mode(const Node& node) { return is_max(node) ? 1 : is_lp(node) ? 2 : 0; }
// MaxPool also takes int8 and uint8 (opset 12 on), which compare exactly as float.
bool is_quantized_max_pool(const Node& node, DType t) {
  return node.op_type == "MaxPool" && node.opset >= 12 && !quantized_type(t).empty();
}

KernelMatch check_pool(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  if (!is_quantized_max_pool(ctx.node(), ctx.input_dtype(0))) NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(rank.has_value(), "{}: the rank of input 0 is unknown; the cuda EP needs it (give --shape)", op);
  NXRT_REQUIRE(*rank >= 3 && *rank <= 5, "{}: input 0 has rank {}; the cuda EP pools 1 to 3 spatial dims", op, *rank);
  if (ctx.node().op_type == "MaxPool") {
    const int64_t order = ctx.attrs().int_or("storage_order", 0);
    NXRT_REQUIRE(order == 0 || order == 1, "MaxPool: storage_order {} is not 0 (row major) or 1 (column major)", order);
  }
  if (is_lp(ctx.node())) {
    const double p = lp_pool_exponent(ctx.attrs(), ctx.opset());
    NXRT_REQUIRE(p > 0, "{}: p {} is not positive", op, p);
  }
  if (!is_global(ctx.node())) NXRT_REQUIRE_MATCH(check_window_attrs(ctx, static_cast<std::size_t>(*rank - 2), true));
  return KernelMatch::supported();
}

Expected<void> build_pool(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const auto spatial = static_cast<std::size_t>(*static_rank(b.graph(), node, 0) - 2);
  const bool global = is_global(node);
  const int mode = pool_mode(node);
  const auto p = static_cast<float>(is_lp(node) ? lp_pool_exponent(node.attributes, node.opset) : 0.0);
  const WindowAttrs attrs = read_window_attrs(node.attributes, spatial);
  const bool count_include_pad = node.attributes.int_or("count_include_pad", 0) != 0;
  const bool column_major = node.attributes.int_or("storage_order", 0) == 1;
  const std::string t(is_quantized_max_pool(node, dtype) ? quantized_type(dtype) : float_type(dtype));
  const std::string kernel = b.instantiate(
      "pool", t,
      fmt::format("i64 n, int sr, Dims in_sp, Dims out_sp, Dims kernel, Dims strides, Dims pads, Dims dilations, "
                  "int mode, float p, int count_include_pad, const {0}* x, {0}* y, int column_major, i64* indices",
                  t),
      "n, sr, in_sp, out_sp, kernel, strides, pads, dilations, mode, p, count_include_pad, x, y, column_major, indices");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() != spatial + 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input is {}, planned for rank {}", ctx.where(), shape_to_string(s), spatial + 2));
    const std::span<const int64_t> in_sp(s.begin() + 2, s.end());
    WindowAttrs w = attrs;
    if (global) w = WindowAttrs{"NOTSET", Shape(in_sp.begin(), in_sp.end()), Shape(spatial, 1), Shape(spatial, 1), Shape(2 * spatial, 0), false};
    auto window = plan_window(w, in_sp, w.kernel, ctx.where());
    if (!window) return std::unexpected(window.error());
    auto y = ctx.output(0, dtype, window_output_shape(s[0], s[1], *window, spatial));
    if (!y) return std::unexpected(y.error());
    void* indices = nullptr;  // MaxPool's second output
    if (ctx.wants_output(1)) {
      auto t = ctx.output(1, DType::kInt64, y->shape());
      if (!t) return std::unexpected(t.error());
      indices = dev_mut(*t);
    }
    const int64_t n = y->numel();
    if (n == 0) return {};
    const WindowKernelDims g = window_kernel_dims(*window);
    KernelArgs args;
    args.add(n).add(3).add(g.in).add(g.out).add(g.kernel).add(g.stride).add(g.pad_begin).add(g.dilation);
    args.add(mode).add(p).add(count_include_pad ? 1 : 0).ptr(dev(x)).ptr(dev_mut(*y));
    args.add(column_major ? 1 : 0).ptr(indices);
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

// Inputs X (any fixed-size dtype), I (int64, MaxPool's indices), output_shape (optional).
KernelMatch check_max_unpool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kInt64, "MaxUnpool: I is {}; it must be int64", dtype_name(ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(require_ints(ctx, 2, "output_shape"));
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  NXRT_REQUIRE(kernel.has_value(), "MaxUnpool: the kernel_shape attribute is missing; it is required");
  const std::size_t spatial = kernel->size();
  NXRT_REQUIRE(spatial >= 1 && spatial <= 3, "MaxUnpool: kernel_shape has {} dims; the cuda EP unpools 1 to 3 spatial dims",
               spatial);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == static_cast<int64_t>(spatial) + 2,
               "MaxUnpool: X has rank {} but kernel_shape has {} dims; X must be N x C x {} spatial dims", rank.value_or(0),
               spatial, spatial);
  return check_window_attrs(ctx, spatial, true);
}

Expected<void> build_max_unpool(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const WindowAttrs attrs = read_window_attrs(node.attributes, node.attributes.get_ints("kernel_shape")->size());
  const IntsInput output_shape(b.graph(), node, 2);
  const std::string t(element_type(dtype));
  const std::string kernel =
      b.instantiate("max_unpool", t, fmt::format("i64 n, int rank, Dims from, Dims to, i64 size, const i64* idx, const {0}* x, {0}* y", t),
                    "n, rank, from, to, size, idx, x, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    if (indices.shape() != x.shape())
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: I {} and X {} differ in shape", ctx.where(), shape_to_string(indices.shape()),
                              shape_to_string(x.shape())),
                  "I holds one index per element of X", "feed MaxPool's Indices output for its Y");
    auto requested = output_shape.read(ctx);
    if (!requested) return std::unexpected(requested.error());
    auto shapes = max_unpool_shapes(attrs, x.shape(), *requested);
    if (!shapes) return forward_error(std::move(shapes), ctx.where());
    auto y = ctx.output(0, dtype, shapes->output);
    if (!y) return std::unexpected(y.error());
    if (y->numel() == 0) return {};
    if (auto r = ctx.zero(dev_mut(*y), static_cast<std::size_t>(y->numel()) * dtype_size(dtype)); !r) return r;
    if (x.numel() == 0) return {};
    KernelArgs args;
    args.add(x.numel()).add(static_cast<int>(shapes->pooled.size())).add(to_kernel_dims(shapes->pooled));
    args.add(to_kernel_dims(shapes->output)).add(shape_numel(shapes->pooled)).ptr(dev(indices)).ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, x.numel(), args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> pool_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("MaxPool", 1, check_pool, build_pool));
  for (CudaOpDef& def : make_op_versions("AveragePool", {1, 19}, check_pool, build_pool))  // 19: dilations
    ops.push_back(std::move(def));
  ops.push_back(make_op("GlobalAveragePool", 1, check_pool, build_pool));
  ops.push_back(make_op("GlobalMaxPool", 1, check_pool, build_pool));
  for (CudaOpDef& def : make_op_versions("LpPool", {1, 2, 11, 18}, check_pool, build_pool))  // 2: int p; 18: ceil_mode
    ops.push_back(std::move(def));
  for (CudaOpDef& def : make_op_versions("GlobalLpPool", {1, 2}, check_pool, build_pool)) ops.push_back(std::move(def));
  ops.push_back(make_op("MaxUnpool", 9, check_max_unpool, build_max_unpool));
  return ops;
}

}  // namespace nxrt::cuda
