// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool over 1 to 3 spatial dims: one
// thread per output element; the window geometry is lib's (plan_window), as every EP reads it.
#include <fmt/format.h>

#include "nxrt/ir/window.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

bool is_global(const Node& node) { return node.op_type.starts_with("Global"); }
bool is_max(const Node& node) { return node.op_type.ends_with("MaxPool"); }

KernelMatch check_pool(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_float(ctx, {0}));
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(rank.has_value(), "{}: the rank of input 0 is unknown; the cuda EP needs it (give --shape)", op);
  NXRT_REQUIRE(*rank >= 3 && *rank <= 5, "{}: input 0 has rank {}; the cuda EP pools 1 to 3 spatial dims", op, *rank);
  if (ctx.node().op_type == "MaxPool") {
    const int64_t order = ctx.attrs().int_or("storage_order", 0);
    NXRT_REQUIRE(order == 0 || order == 1, "MaxPool: storage_order {} is not 0 (row major) or 1 (column major)", order);
  }
  if (!is_global(ctx.node())) NXRT_REQUIRE_MATCH(check_window_attrs(ctx, static_cast<std::size_t>(*rank - 2), true));
  return KernelMatch::supported();
}

Expected<void> build_pool(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const auto spatial = static_cast<std::size_t>(*static_rank(b.graph(), node, 0) - 2);
  const bool global = is_global(node), max = is_max(node);
  const WindowAttrs attrs = read_window_attrs(node.attributes, spatial);
  const bool count_include_pad = node.attributes.int_or("count_include_pad", 0) != 0;
  const bool column_major = node.attributes.int_or("storage_order", 0) == 1;
  const std::string t(float_type(dtype));
  const std::string kernel = b.instantiate(
      "pool", t,
      fmt::format("i64 n, int sr, Dims in_sp, Dims out_sp, Dims kernel, Dims strides, Dims pads, Dims dilations, "
                  "int is_max, int count_include_pad, const {0}* x, {0}* y, int column_major, i64* indices",
                  t),
      "n, sr, in_sp, out_sp, kernel, strides, pads, dilations, is_max, count_include_pad, x, y, column_major, indices");
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
    KernelDims in_d, out_d, k_d, st_d, pad_d, dil_d;
    for (std::size_t d = 0; d < 3; ++d) {
      const WindowDim& wd = (*window)[d];
      in_d.d[d] = wd.in, out_d.d[d] = wd.out, k_d.d[d] = wd.kernel, st_d.d[d] = wd.stride;
      pad_d.d[d] = wd.pad_begin, dil_d.d[d] = wd.dilation;
    }
    const int64_t n = y->numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(3).add(in_d).add(out_d).add(k_d).add(st_d).add(pad_d).add(dil_d);
    args.add(max ? 1 : 0).add(count_include_pad ? 1 : 0).ptr(dev(x)).ptr(dev_mut(*y));
    args.add(column_major ? 1 : 0).ptr(indices);
    return ctx.launch(kernel, n, args);
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
  return ops;
}

}  // namespace nxrt::cuda
