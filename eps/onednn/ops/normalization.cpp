// Inference normalizations on oneDNN: BatchNormalization with given statistics (input layout
// kept, in place when X dies), LRN across channels and LayerNormalization over trailing dims.
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::onednn {
namespace {

using dnnl::normalization_flags;
using dnnl::prop_kind;

// `flops` per element of X, and X read and Y written once, when X's shape is static.
Cost per_element_cost(const NodeContext& ctx, double flops) {
  const auto x = ctx.input_static_shape(0);
  if (!x) return {};
  const auto n = static_cast<double>(shape_numel(*x));
  return Cost{flops * n, 8.0 * n, {}};
}

// The output view a primitive writes through `data` (X's layout or a reshaped plain view of
// X): f.output gets X's dims `x`, in place on X's view `src` when X dies here.
Expected<int> define_output(PlanBuilder& b, const FusedOp& f, ValueId x, int src, const Dims& x_dims,
                            const memory::desc& data, bool in_place) {
  const memory::desc out_md = data.dims() == x_dims ? data : plain_md(x_dims);
  const int out = in_place && b.can_overwrite(x, src) ? b.define_in_place(f.output, out_md, src)
                                                       : b.define(f.output, out_md);
  if (data.dims() == x_dims) return out;
  // Same element count, both plain: a view of the same buffer.
  return b.use(f.output, data);
}

// Runs `pd` from X's view `src` into `dst` with the op's other `args`; a workspace oneDNN asks
// for gets a scratch buffer.
template <class Primitive>
Expected<void> add_norm_step(PlanBuilder& b, const FusedOp& f, const typename Primitive::primitive_desc& pd, int src,
                             Expected<int> dst, std::vector<std::pair<int, int>> args) {
  if (!dst) return std::unexpected(std::move(dst.error()));
  args.emplace_back(DNNL_ARG_SRC, src);
  args.emplace_back(DNNL_ARG_DST, *dst);
  return emit(b, f.anchor, [&] {
    if (pd.workspace_desc().get_size() > 0) args.emplace_back(DNNL_ARG_WORKSPACE, b.scratch(pd.workspace_desc()));
    b.add_step(Primitive(pd), pd, args, f);
  });
}

// ---- BatchNormalization ----

// Whether the node asks for batch statistics by attribute: training_mode from opset 14,
// is_test=0 in opsets 1 and 6 (opsets 7 to 13 do it by requesting the statistics outputs).
bool batch_norm_training(const NodeContext& ctx) {
  if (ctx.opset() >= 14) return ctx.attrs().int_or("training_mode", 0) != 0;
  if (ctx.opset() < 7) return ctx.attrs().int_or("is_test", 0) == 0;
  return false;
}

// Opsets 1 to 8 with spatial=0 keep statistics per (C, D1, ...) position, not per channel.
bool per_position(const NodeContext& ctx) { return ctx.opset() < 9 && ctx.attrs().int_or("spatial", 1) == 0; }

KernelMatch check_batch_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE(ctx.input_count() == 5,
               "BatchNormalization: expected 5 inputs (X, scale, B, input_mean, input_var), got {}",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 2, 6));
  NXRT_REQUIRE(!batch_norm_training(ctx),
               "BatchNormalization: training (opset {}: {}) computes batch statistics; the onednn EP runs inference "
               "with the given mean and variance only (the cpu EP takes training)",
               ctx.opset(), ctx.opset() >= 14 ? "training_mode=1" : "is_test=0");
  for (std::size_t o = 1; o < ctx.output_count(); ++o)
    NXRT_REQUIRE(!ctx.has_output(o),
                 "BatchNormalization: output {} (running or saved statistics) is requested; the onednn EP computes Y "
                 "only (the cpu EP takes the statistics outputs)",
                 o);
  if (auto x = ctx.input_static_shape(0)) {
    const int64_t channels = per_position(ctx) ? shape_numel(*x) / (*x)[0] : (*x)[1];
    for (std::size_t i = 1; i < 5; ++i)
      if (auto s = ctx.input_static_shape(i))
        NXRT_REQUIRE(shape_numel(*s) == channels,
                     "BatchNormalization: input {} has shape {}; X {} needs {} values (one per {})", i,
                     shape_to_string(*s), shape_to_string(*x), channels, per_position(ctx) ? "position" : "channel");
  }
  return KernelMatch::supported(per_element_cost(ctx, 2));
}

Expected<void> lower_batch_norm(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const Node& node = ctx.node();
  const ValueId x = node.inputs[0];
  auto xd = b.dims(x);
  if (!xd) return std::unexpected(std::move(xd.error()));
  const Dims& d = *xd;
  // oneDNN normalizes dim 1 of 2-D to 5-D data (3-D only by its reference code): other ranks
  // and per-position statistics become plain views with the statistics' dims in dim 1.
  memory::desc data = b.md(x);
  if (per_position(ctx))
    data = plain_md({d[0], product(d, 1, d.size())});
  else if (d.size() > 5 || (d.size() == 3 && data == plain_md(d)))
    data = plain_md({d[0], d[1], product(d, 2, d.size()), 1});
  const int64_t channels = data.dims()[1];
  const float epsilon = ctx.attrs().float_or("epsilon", 1e-5f);
  auto pd = make_pd<dnnl::batch_normalization_forward::primitive_desc>(
      b, f.anchor,
      dnnl::batch_normalization_forward::desc(prop_kind::forward_inference, data, epsilon,
                                              normalization_flags::use_global_stats | normalization_flags::use_scale |
                                                  normalization_flags::use_shift),
      PlanBuilder::base_attr(), b.engine());
  if (!pd) return std::unexpected(std::move(pd.error()));
  auto src = b.use(x, data);
  if (!src) return std::unexpected(std::move(src.error()));
  std::vector<std::pair<int, int>> args;
  const int kArgs[] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE};
  for (std::size_t i = 1; i < 5; ++i) {
    auto v = b.use(node.inputs[i], plain_md({channels}));
    if (!v) return std::unexpected(std::move(v.error()));
    args.emplace_back(kArgs[i - 1], *v);
  }
  return add_norm_step<dnnl::batch_normalization_forward>(b, f, *pd, *src, define_output(b, f, x, *src, d, data, true),
                                                         std::move(args));
}

// ---- LRN ----

KernelMatch check_lrn(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 3, 6));
  const auto size = ctx.attrs().get_int("size");
  NXRT_REQUIRE(size.has_value(), "LRN: the size attribute is missing; it is required");
  NXRT_REQUIRE(*size >= 1, "LRN: size {} is below 1", *size);
  // oneDNN's window is c - (size-1)/2 .. c + (size-1)/2, ONNX's reaches one channel further
  // up for even sizes.
  NXRT_REQUIRE(*size % 2 == 1,
               "LRN: size {} is even; oneDNN's channel window is symmetric and differs from ONNX's for even sizes "
               "(the cpu EP takes them)",
               *size);
  return KernelMatch::supported(per_element_cost(ctx, static_cast<double>(*size + 4)));
}

Expected<void> lower_lrn(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const ValueId x = ctx.node().inputs[0];
  auto xd = b.dims(x);
  if (!xd) return std::unexpected(std::move(xd.error()));
  const memory::desc data = b.md(x);
  auto pd = make_pd<dnnl::lrn_forward::primitive_desc>(
      b, f.anchor,
      dnnl::lrn_forward::desc(prop_kind::forward_inference, dnnl::algorithm::lrn_across_channels, data,
                              ctx.attrs().int_or("size", 1), ctx.attrs().float_or("alpha", 1e-4f),
                              ctx.attrs().float_or("beta", 0.75f), ctx.attrs().float_or("bias", 1.0f)),
      PlanBuilder::base_attr(), b.engine());
  if (!pd) return std::unexpected(std::move(pd.error()));
  auto src = b.use(x, data);
  if (!src) return std::unexpected(std::move(src.error()));
  // Each output channel reads its neighbours: never in place.
  return add_norm_step<dnnl::lrn_forward>(b, f, *pd, *src, define_output(b, f, x, *src, *xd, data, false), {});
}

// ---- LayerNormalization ----

// `d` without its leading 1s: the dims that matter when shapes broadcast.
Dims strip_leading_ones(Dims d) {
  while (!d.empty() && d.front() == 1) d.erase(d.begin());
  return d;
}

KernelMatch check_layer_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE(ctx.input_count() >= 2, "LayerNormalization: expected inputs X, Scale and optional B, got {} inputs",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 1, 12));
  NXRT_REQUIRE(!ctx.has_output(1) && !ctx.has_output(2),
               "LayerNormalization: the Mean or InvStdDev output is requested; the onednn EP computes Y only (the "
               "cpu EP takes them)");
  const int64_t stash = ctx.attrs().int_or("stash_type", 1);
  NXRT_REQUIRE(stash == 1, "LayerNormalization: stash_type {} is not supported; the onednn EP computes statistics in "
               "float (stash_type 1)", stash);
  const int64_t rank = *ctx.input_rank(0);
  const int64_t axis = ctx.attrs().int_or("axis", -1);
  NXRT_REQUIRE(axis >= -rank && axis < rank,
               "LayerNormalization: axis {} is out of range for X of rank {}; valid axes are [{}, {}]", axis, rank,
               -rank, rank - 1);
  const auto x = ctx.input_static_shape(0);
  if (!x) return KernelMatch::supported();
  const Dims normalized(x->begin() + (axis < 0 ? axis + rank : axis), x->end());
  for (std::size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    const auto s = ctx.input_static_shape(i);
    NXRT_REQUIRE(!s || strip_leading_ones(to_dims(*s)) == strip_leading_ones(normalized),
                 "LayerNormalization: {} {} broadcasts over the normalized dims {}; the onednn EP takes one value "
                 "per normalized element (the cpu EP broadcasts)",
                 i == 1 ? "Scale" : "B", shape_to_string(*s), shape_to_string(normalized));
  }
  return KernelMatch::supported(per_element_cost(ctx, 8));
}

Expected<void> lower_layer_norm(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const Node& node = ctx.node();
  const ValueId x = node.inputs[0];
  auto xd = b.dims(x);
  if (!xd) return std::unexpected(std::move(xd.error()));
  const auto rank = static_cast<int64_t>(xd->size());
  int64_t axis = ctx.attrs().int_or("axis", -1);
  if (axis < 0) axis += rank;
  const auto split = static_cast<std::size_t>(axis);
  const int64_t inner = product(*xd, split, xd->size());
  const memory::desc data = plain_md({product(*xd, 0, split), inner});
  const bool has_shift = ctx.has_input(2);
  const auto flags = has_shift ? normalization_flags::use_scale | normalization_flags::use_shift
                               : normalization_flags::use_scale;
  auto pd = make_pd<dnnl::layer_normalization_forward::primitive_desc>(
      b, f.anchor,
      dnnl::layer_normalization_forward::desc(prop_kind::forward_inference, data,
                                              ctx.attrs().float_or("epsilon", 1e-5f), flags),
      PlanBuilder::base_attr(), b.engine());
  if (!pd) return std::unexpected(std::move(pd.error()));
  auto src = b.use(x, data);
  if (!src) return std::unexpected(std::move(src.error()));
  std::vector<std::pair<int, int>> args;
  for (std::size_t i = 1; i < (has_shift ? 3u : 2u); ++i) {
    auto v = b.use(node.inputs[i], plain_md({inner}));
    if (!v) return std::unexpected(std::move(v.error()));
    args.emplace_back(i == 1 ? DNNL_ARG_SCALE : DNNL_ARG_SHIFT, *v);
  }
  auto dst = define_output(b, f, x, *src, *xd, data, true);
  return add_norm_step<dnnl::layer_normalization_forward>(b, f, *pd, *src, std::move(dst), std::move(args));
}

}  // namespace

std::vector<OnednnOpDef> normalization_ops() {
  // BatchNormalization 1 and 6 (is_test, spatial), 7 (spatial, statistics outputs), 9, 14
  // (training_mode) and 15 (types) differ in how they ask for training, read per opset.
  return {
      {{{"", "BatchNormalization", 1}, 5, check_batch_norm, {}}, lower_batch_norm},
      {{{"", "BatchNormalization", 6}, 6, check_batch_norm, {}}, lower_batch_norm},
      {{{"", "BatchNormalization", 7}, 8, check_batch_norm, {}}, lower_batch_norm},
      {{{"", "BatchNormalization", 9}, 13, check_batch_norm, {}}, lower_batch_norm},
      {{{"", "BatchNormalization", 14}, 14, check_batch_norm, {}}, lower_batch_norm},
      {{{"", "BatchNormalization", 15}, 0, check_batch_norm, {}}, lower_batch_norm},
      {{{"", "LRN", 1}, 12, check_lrn, {}}, lower_lrn},
      {{{"", "LRN", 13}, 0, check_lrn, {}}, lower_lrn},
      // From opset 1: ONNX Runtime registers LayerNormalization in the ONNX domain from version 1
      // (ONNX defined it in 17, the same op); its optimizer writes it into opset 11 to 16 models.
      {{{"", "LayerNormalization", 1}, 0, check_layer_norm, {}}, lower_layer_norm},
  };
}

}  // namespace nxrt::onednn
