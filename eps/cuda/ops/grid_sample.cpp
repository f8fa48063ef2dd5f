// GridSample (16 on 4-D inputs; 20 and 22 on 1 to 3 spatial dims here): X sampled at the grid's
// normalized locations with linear, nearest or (2-D) cubic interpolation and zeros, border or
// reflection padding; one generated kernel, a thread per output element. AffineGrid (20) makes
// such grids from affine transforms, a thread per grid point.
#include <fmt/format.h>

#include "nxrt/ep/affine_grid.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The spatial dims the kernel takes (its pixel arrays hold 8; 3 covers volumes).
constexpr int64_t kMaxSpatial = 3;

// The kernel's mode: 0 linear, 1 nearest, 2 cubic; opset 16 says bilinear/bicubic, 20 linear/cubic.
std::optional<int> grid_mode(const std::string& s, int64_t opset) {
  if (s == "nearest") return 1;
  if (s == (opset >= 20 ? "linear" : "bilinear")) return 0;
  if (s == (opset >= 20 ? "cubic" : "bicubic")) return 2;
  return std::nullopt;
}

std::optional<int> grid_padding(const std::string& s) {
  if (s == "zeros") return 0;
  if (s == "border") return 1;
  if (s == "reflection") return 2;
  return std::nullopt;
}

std::string default_mode(int64_t opset) { return opset >= 20 ? "linear" : "bilinear"; }

KernelMatch check_grid_sample(const NodeContext& ctx) {
  const std::string mode = ctx.attrs().string_or("mode", default_mode(ctx.opset()));
  const auto m = grid_mode(mode, ctx.opset());
  NXRT_REQUIRE(m.has_value(), "GridSample: mode '{}' is not valid at opset {}", mode, ctx.opset());
  const std::string padding = ctx.attrs().string_or("padding_mode", "zeros");
  NXRT_REQUIRE(grid_padding(padding).has_value(), "GridSample: padding_mode '{}' is not valid; use zeros, border or reflection",
               padding);
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float, kCudaFloats));
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {1}, is_cuda_float, kCudaFloats));
  if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(*rank >= 3 && *rank - 2 <= kMaxSpatial, "GridSample: X has rank {}; the cuda EP samples 1 to {} spatial dims",
                 *rank, kMaxSpatial);
    NXRT_REQUIRE(*m != 2 || *rank == 4, "GridSample: mode '{}' is defined for 2-D spatial inputs (X of rank 4) only", mode);
  }
  return KernelMatch::supported();
}

Expected<void> build_grid_sample(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype, grid_dtype = b.graph().value(node.inputs[1]).type.dtype;
  const int mode = *grid_mode(node.attributes.string_or("mode", default_mode(node.opset)), node.opset);
  const int padding = *grid_padding(node.attributes.string_or("padding_mode", "zeros"));
  const int align = node.attributes.int_or("align_corners", 0) != 0;
  const std::string t(float_type(dtype)), g(float_type(grid_dtype));
  const std::string kernel = b.instantiate(
      "grid_sample", t + ", " + g,
      fmt::format("i64 n, int spatial, Dims size, i64 channels, i64 points, int mode, int padding, int align, const {}* x, "
                  "const {}* grid, {}* y",
                  t, g, t),
      "n, spatial, size, channels, points, mode, padding, align, x, grid, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Shape& xs = ctx.input(0).shape();
    const Shape& gs = ctx.input(1).shape();
    const auto spatial = static_cast<int64_t>(xs.size()) - 2;
    if (spatial < 1 || spatial > kMaxSpatial || gs.size() != xs.size() || gs[0] != xs[0] || gs.back() != spatial ||
        (mode == 2 && spatial != 2))
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: X {} and grid {} do not have shapes [N, C, D1, ..., Dr] and [N, D1_out, ..., Dr_out, r] "
                              "with r from 1 to {} (2 for cubic)",
                              ctx.where(), shape_to_string(xs), shape_to_string(gs), kMaxSpatial));
    Shape out{xs[0], xs[1]};
    out.insert(out.end(), gs.begin() + 1, gs.end() - 1);
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    const Shape size(xs.begin() + 2, xs.end());
    KernelArgs args;
    args.add(n).add(static_cast<int>(spatial)).add(to_kernel_dims(size)).add(xs[1]).add(dims_product(gs, 1, gs.size() - 1));
    args.add(mode).add(padding).add(align).ptr(dev(ctx.input(0))).ptr(dev(ctx.input(1))).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

// AffineGrid: theta [N, 2, 3] with size [N, C, H, W], or [N, 3, 4] with [N, C, D, H, W].
KernelMatch check_affine_grid(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_affine_grid_node(ctx));
  return require_float(ctx, {0});
}

Expected<void> build_affine_grid(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const int align = node.attributes.int_or("align_corners", 0) != 0 ? 1 : 0;
  const IntsInput size_input(b.graph(), node, 1);
  const std::string t(float_type(dtype));
  const std::string kernel =
      b.instantiate("affine_grid", t, fmt::format("i64 n, int dims, Dims sizes, int align_corners, const {0}* theta, {0}* y", t),
                    "n, dims, sizes, align_corners, theta, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& theta = ctx.input(0);
    auto read = size_input.read(ctx);
    if (!read) return std::unexpected(read.error());
    const std::vector<int64_t> size = read->value_or(std::vector<int64_t>{});
    auto out = affine_grid_output_shape(theta.shape(), size);
    if (!out) return std::unexpected(out.error());
    const Shape spatial(size.begin() + 2, size.end());
    const auto dims = static_cast<int>(spatial.size());
    auto y = ctx.output(0, dtype, *out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = size[0] * shape_numel(spatial);
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(dims).add(to_kernel_dims(spatial)).add(align).ptr(dev(theta)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> grid_sample_ops() {
  std::vector<CudaOpDef> ops = make_op_versions("GridSample", {16, 20, 22}, check_grid_sample, build_grid_sample);
  ops.push_back(make_op("AffineGrid", 20, check_affine_grid, build_affine_grid));
  return ops;
}

}  // namespace nxrt::cuda
