// Conv (1-D to 3-D, groups, depthwise, pads, strides, dilations, auto_pad, BatchNormalization
// folded in, fused Add and activations) and ConvTranspose on oneDNN.
#include <cmath>

#include "native/blocked_conv.h"
#include "native/winograd_conv.h"
#include "nxrt/ir/window.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "ops/post_ops.h"

namespace nxrt::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// Spatial geometry in oneDNN's terms (dilation 0 means none).
struct Geometry {
  Dims strides, dilates, pad_l, pad_r, out;
};

// The window of a Conv for input dims `x` and kernel dims `kernel`.
Expected<Geometry> conv_geometry(const NodeContext& ctx, const Dims& x, const Dims& kernel) {
  const std::size_t spatial = x.size() - 2;
  const WindowAttrs attrs = read_window_attrs(ctx.attrs(), spatial);
  auto w = plan_window(attrs, std::span(x).subspan(2), kernel, ctx.node().describe());
  if (!w) return std::unexpected(std::move(w.error()));
  Geometry g;
  for (std::size_t i = 3 - spatial; i < 3; ++i) {
    const WindowDim& d = (*w)[i];
    g.strides.push_back(d.stride);
    g.dilates.push_back(d.dilation - 1);
    g.pad_l.push_back(d.pad_begin);
    g.pad_r.push_back(d.pad_end);
    g.out.push_back(d.out);
  }
  return g;
}

// A Conv's dims in oneDNN's terms.
struct ConvProblem {
  Dims x, w, dst;  // w: G, M/G, C/G, k... when grouped
  Geometry geo;
  int64_t group;
  bool has_bias;
};

// nxrt's own convolutions (native/) replace oneDNN's where oneDNN blocks channels by 8
// (AVX2), for 2-D, ungrouped, undilated convolutions:
// - 3x3 stride 1 with at least kWinogradMinChannels channels in and out: Winograd's F(2x2,
//   3x3), which oneDNN has only on AVX-512. At two threads, weights not in cache: 0.84 against
//   1.30 ms for 256 channels on 14x14, 0.80 against 1.18 for 128 on 28x28, 1.23 against 1.72
//   for 512 on 7x7. With fewer channels its transforms cost more than they save (0.36 against
//   0.30 ms for 64 channels on 28x28).
// - Other shapes with at most kBlockedConvMaxPixels output pixels per image: the blocked
//   convolution, where oneDNN 2.6's kernels wait on weights streaming from memory (ResNet's
//   7x7 stage). On 14x14 outputs oneDNN is as fast or faster.
constexpr int64_t kWinogradMinChannels = 128;
constexpr int64_t kBlockedConvMaxPixels = 64;

// What the blocked convolution runs after its product, or nullopt when the post-ops are not
// one sum and a Relu in that order (ResNet's) or need operands.
std::optional<BlockedConvEpilogue> blocked_epilogue(const FusedOp& f, const PlannedPostOps& post, bool has_bias) {
  BlockedConvEpilogue e{.bias = has_bias};
  if (!post.binary_operands.empty()) return std::nullopt;
  for (const PostOp& op : f.post_ops) {
    if (op.kind == PostOp::Kind::kAdd) {
      if (e.sum || e.relu) return std::nullopt;
      e.sum = true;
      continue;
    }
    for (const EltwiseSpec& spec : op.eltwise) {
      if (spec.alg != algorithm::eltwise_relu || spec.alpha != 0.0f || e.relu) return std::nullopt;
      e.relu = true;
    }
  }
  return e;
}

// The shape nxrt's convolutions see, on a machine where they are fast, for a 2-D, ungrouped,
// undilated convolution of whole channel blocks; else nullopt.
std::optional<BlockedConvShape> native_shape(const ConvProblem& p) {
  const Dims& x = p.x;
  if (!blocked_conv_fast_here() || x.size() != 4 || p.group != 1 ||
      std::ranges::any_of(p.geo.dilates, [](int64_t d) { return d != 0; }))
    return std::nullopt;
  BlockedConvShape s{.batch = x[0], .in_channels = x[1], .out_channels = p.dst[1], .in_h = x[2], .in_w = x[3],
                     .out_h = p.dst[2], .out_w = p.dst[3], .kernel_h = p.w[2], .kernel_w = p.w[3],
                     .stride_h = p.geo.strides[0], .stride_w = p.geo.strides[1],
                     .pad_top = p.geo.pad_l[0], .pad_left = p.geo.pad_l[1]};
  if (!blocked_conv_supports(s)) return std::nullopt;
  return s;
}

// How a Conv runs: oneDNN's primitive, or one of nxrt's kernels on the layouts of `pd`.
struct ConvChoice {
  enum class Kernel { kOnednn, kBlocked, kWinograd };
  dnnl::convolution_forward::primitive_desc pd;
  bool fused = false;  // the post-ops run inside the step
  Kernel kernel = Kernel::kOnednn;
  BlockedConvShape shape;  // nxrt's kernels: the convolution and its epilogue
  BlockedConvEpilogue epilogue;
};

Expected<ConvChoice> choose_conv(PlanBuilder& b, const FusedOp& f, const ConvProblem& p, const PlannedPostOps& post) {
  using Pd = dnnl::convolution_forward::primitive_desc;
  using tag = memory::format_tag;
  const Node& node = b.graph().node(f.anchor);
  auto desc = [&](algorithm alg, tag x_tag, tag w_tag, tag dst_tag) {
    auto md = [](const Dims& d, tag t) { return memory::desc(d, memory::data_type::f32, t); };
    const Geometry& g = p.geo;
    if (p.has_bias)
      return dnnl::convolution_forward::desc(prop_kind::forward_inference, alg, md(p.x, x_tag), md(p.w, w_tag),
                                             md({p.dst[1]}, tag::any), md(p.dst, dst_tag), g.strides, g.dilates,
                                             g.pad_l, g.pad_r);
    return dnnl::convolution_forward::desc(prop_kind::forward_inference, alg, md(p.x, x_tag), md(p.w, w_tag),
                                           md(p.dst, dst_tag), g.strides, g.dilates, g.pad_l, g.pad_r);
  };
  // nxrt's kernels need no timing: oneDNN's descriptor only names their layouts.
  const auto shape = native_shape(p);
  const auto epilogue = shape ? blocked_epilogue(f, post, p.has_bias) : std::nullopt;
  if (epilogue) {
    using Kernel = ConvChoice::Kernel;
    Kernel kernel = Kernel::kOnednn;
    if (winograd_conv_supports(*shape) && std::min(shape->in_channels, shape->out_channels) >= kWinogradMinChannels)
      kernel = Kernel::kWinograd;
    else if (shape->out_h * shape->out_w <= kBlockedConvMaxPixels)
      kernel = Kernel::kBlocked;
    if (kernel != Kernel::kOnednn) {
      const auto blocked_desc = desc(algorithm::convolution_direct, tag::nChw8c, tag::OIhw8i8o, tag::nChw8c);
      auto pd = dnnl_call(fmt::format("the onednn EP cannot describe {}", node.describe()),
                          [&] { return Pd(blocked_desc, PlanBuilder::base_attr(), b.engine()); });
      if (!pd) return std::unexpected(std::move(pd.error()));
      return ConvChoice{std::move(*pd), true, kernel, *shape, *epilogue};
    }
  }
  // oneDNN's implementation iterator points at the op descriptor: it must outlive the search.
  const auto op_desc = desc(algorithm::convolution_direct, tag::any, tag::any, tag::any);
  // Winograd (2-D, one group; oneDNN has it for 3x3 stride-1 kernels on AVX-512) does about
  // half the work of a direct 3x3 convolution. Its blocked layout may need reorders around it
  // and breaks Concat in place (which the timing does not see): only large convolutions try it.
  constexpr double kWinogradMinFlops = 1e8;
  const auto winograd_desc = desc(algorithm::convolution_winograd, tag::any, tag::any, tag::any);
  const double flops = 2.0 * static_cast<double>(shape_numel(p.dst) * shape_numel(p.w) / p.dst[1]);
  const bool try_winograd = p.x.size() == 4 && p.group == 1 && flops >= kWinogradMinFlops;
  auto made = pd_with_post_ops<Pd>(b, f, op_desc, post);
  if (!made) return std::unexpected(std::move(made.error()));
  const bool fused = made->second;
  // Direct, GEMM-based and Winograd convolutions win on different shapes: time them once here.
  std::vector<int> tune_args = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  if (p.has_bias) tune_args.push_back(DNNL_ARG_BIAS);
  for (const auto& operand : post.binary_operands)
    tune_args.push_back(DNNL_ARG_ATTR_MULTIPLE_POST_OP(operand.index) | DNNL_ARG_SRC_1);
  const dnnl::primitive_attr attr = fused ? post.attr : PlanBuilder::base_attr();
  std::vector<std::function<Pd()>> makers = {[&] { return Pd(op_desc, attr, b.engine()); }};
  if (try_winograd) makers.emplace_back([&] { return Pd(winograd_desc, attr, b.engine()); });
  auto tuned = b.tuned<Pd>(node.name, makers, tune_args, b.md(node.inputs[0]));
  if (!tuned) return std::unexpected(std::move(tuned.error()));
  return ConvChoice{std::move(*tuned), fused, ConvChoice::Kernel::kOnednn, {}, {}};
}

// W (and B) with the BatchNormalization that follows the Conv folded in:
// W' = W * s, B' = (B - mean) * s + beta with s = gamma / sqrt(var + eps), per output channel.
struct FoldedBn {
  std::vector<float> factor, shift;  // per output channel: W' = W * factor, B' = B * factor + shift
};

Expected<FoldedBn> fold_factors(const PlanBuilder& b, NodeId bn_id) {
  const Node& bn = b.graph().node(bn_id);
  std::vector<Tensor> p;
  for (std::size_t i = 1; i < 5; ++i) {
    auto t = b.constant(bn.inputs[i]);
    if (!t) return std::unexpected(std::move(t.error()));
    p.push_back(std::move(*t));
  }
  const float eps = bn.attributes.get_float("epsilon").value_or(1e-5f);
  const int64_t c = p[0].numel();
  FoldedBn f;
  for (int64_t i = 0; i < c; ++i) {
    const float s = p[0].data_as<float>()[i] / std::sqrt(p[3].data_as<float>()[i] + eps);
    f.factor.push_back(s);
    f.shift.push_back(p[1].data_as<float>()[i] - p[2].data_as<float>()[i] * s);
  }
  return f;
}

std::vector<ValueId> bn_params(const PlanBuilder& b, const FusedOp& f) {
  if (!f.folded_bn) return {};
  const Node& bn = b.graph().node(*f.folded_bn);
  return {bn.inputs[1], bn.inputs[2], bn.inputs[3], bn.inputs[4]};
}

KernelMatch check_conv(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 3, 5));
  NXRT_REQUIRE_MATCH(require_constant(ctx, 1, "W"));
  if (ctx.has_input(2)) NXRT_REQUIRE_MATCH(require_constant(ctx, 2, "the bias B"));
  const auto rank = *ctx.input_rank(0);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, static_cast<std::size_t>(rank - 2), false));
  const int64_t group = ctx.attrs().int_or("group", 1);
  const Shape& w = ctx.constant_input(1)->shape();
  NXRT_REQUIRE(static_cast<int64_t>(w.size()) == rank, "Conv: W has rank {} and X {}; they must match", w.size(), rank);
  NXRT_REQUIRE(group >= 1 && w[0] % group == 0, "Conv: group {} does not divide the {} output channels", group, w[0]);
  if (auto x = ctx.input_static_shape(0))
    NXRT_REQUIRE((*x)[1] == w[1] * group, "Conv: X has {} channels, W expects {} (W[1] {} x group {})", (*x)[1],
                 w[1] * group, w[1], group);
  if (auto kernel = ctx.attrs().get_ints("kernel_shape"))
    NXRT_REQUIRE(std::equal(kernel->begin(), kernel->end(), w.begin() + 2, w.end()),
                 "Conv: kernel_shape {} differs from W's spatial dims {}", *kernel, shape_to_string(w));
  Cost cost;
  if (auto y = ctx.output_type(0) ? ctx.output_type(0)->static_shape() : std::nullopt)
    cost.flops = 2.0 * static_cast<double>(shape_numel(*y) * shape_numel(w) / w[0]);
  return KernelMatch::supported(cost);
}

Expected<void> lower_conv(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const Node& node = ctx.node();
  auto x = b.dims(node.inputs[0]);
  if (!x) return std::unexpected(std::move(x.error()));
  auto w_shape = b.dims(node.inputs[1]);
  if (!w_shape) return std::unexpected(std::move(w_shape.error()));
  const Dims wd = *w_shape;
  const int64_t group = ctx.attrs().int_or("group", 1);
  auto geo = conv_geometry(ctx, *x, Dims(wd.begin() + 2, wd.end()));
  if (!geo) return std::unexpected(std::move(geo.error()));
  const int64_t m = wd[0];
  Dims dst = {(*x)[0], m};
  dst.insert(dst.end(), geo->out.begin(), geo->out.end());
  Dims w_dims = wd;  // grouped: G, M/G, C/G, k...
  if (group > 1) {
    w_dims[0] = m / group;
    w_dims.insert(w_dims.begin(), group);
  }
  const bool has_bias = ctx.has_input(2) || f.folded_bn;
  auto post = plan_post_ops(b, f, dst);
  if (!post) return std::unexpected(std::move(post.error()));
  auto choice = choose_conv(b, f, ConvProblem{*x, w_dims, dst, *geo, group, has_bias}, *post);
  if (!choice) return std::unexpected(std::move(choice.error()));
  const dnnl::convolution_forward::primitive_desc* pd = &choice->pd;
  const bool fused = choice->fused;

  auto src = b.use(node.inputs[0], pd->src_desc());
  if (!src) return std::unexpected(std::move(src.error()));
  std::vector<ValueId> w_sources = {node.inputs[1]};
  for (ValueId v : bn_params(b, f)) w_sources.push_back(v);
  // Winograd's weights are its 16 transformed matrices, one run of floats.
  const bool winograd = choice->kernel == ConvChoice::Kernel::kWinograd;
  const memory::desc weights_md =
      winograd ? memory::desc({16 * wd[0] * wd[1]}, memory::data_type::f32, memory::format_tag::a) : pd->weights_desc();
  auto weights = b.weight(node.name + ":W", weights_md, w_sources, [&]() -> Expected<PlainWeight> {
    auto t = b.constant(node.inputs[1]);
    if (!t) return std::unexpected(std::move(t.error()));
    Tensor w = copy_to_contiguous(t->view());
    if (f.folded_bn) {
      auto fold = fold_factors(b, *f.folded_bn);
      if (!fold) return std::unexpected(std::move(fold.error()));
      const int64_t per_channel = w.numel() / m;
      float* p = w.mut_as<float>();
      for (int64_t o = 0; o < m; ++o)
        for (int64_t i = 0; i < per_channel; ++i) p[o * per_channel + i] *= fold->factor[static_cast<std::size_t>(o)];
    }
    if (winograd) {
      std::vector<float> transformed = winograd_weights(choice->shape, w.data_as<float>());
      const int64_t count = static_cast<int64_t>(transformed.size());
      return PlainWeight{weights_md, Tensor::from_vector<float>({count}, transformed)};
    }
    return PlainWeight{plain_md(w_dims), std::move(w)};
  });
  if (!weights) return std::unexpected(std::move(weights.error()));
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, *src}, {DNNL_ARG_WEIGHTS, *weights}};
  if (has_bias) {
    std::vector<ValueId> b_sources = bn_params(b, f);
    if (ctx.has_input(2)) b_sources.push_back(node.inputs[2]);
    auto bias = b.weight(node.name + ":B", pd->bias_desc(), b_sources, [&]() -> Expected<PlainWeight> {
      std::vector<float> values(static_cast<std::size_t>(m), 0.0f);
      if (ctx.has_input(2)) {
        auto t = b.constant(node.inputs[2]);
        if (!t) return std::unexpected(std::move(t.error()));
        std::copy_n(t->data_as<float>(), m, values.begin());
      }
      if (f.folded_bn) {
        auto fold = fold_factors(b, *f.folded_bn);
        if (!fold) return std::unexpected(std::move(fold.error()));
        for (std::size_t o = 0; o < values.size(); ++o) values[o] = values[o] * fold->factor[o] + fold->shift[o];
      }
      return PlainWeight{plain_md({m}), Tensor::from_vector<float>({m}, values)};
    });
    if (!bias) return std::unexpected(std::move(bias.error()));
    args.emplace_back(DNNL_ARG_BIAS, *bias);
  }
  auto out = fused ? bind_fused_output(b, f, *post, pd->dst_desc(), args) : b.define(f.output, pd->dst_desc());
  if (!out) return std::unexpected(std::move(out.error()));
  args.emplace_back(DNNL_ARG_DST, *out);
  if (choice->kernel != ConvChoice::Kernel::kOnednn) {
    const int64_t floats = winograd ? winograd_conv_scratch_floats(choice->shape)
                                    : blocked_conv_scratch_floats(choice->shape);
    if (floats > 0) {
      const memory::desc scratch({floats}, memory::data_type::f32, memory::format_tag::a);
      args.emplace_back(DNNL_ARG_SCRATCHPAD, b.scratch(scratch));
    }
    b.add_native_step(winograd ? make_winograd_conv(choice->shape, choice->epilogue)
                               : make_blocked_conv(choice->shape, choice->epilogue),
                      args, f);
  } else if (auto r = emit(b, f.anchor, [&] { b.add_step(dnnl::convolution_forward(*pd), *pd, args, f); }); !r) {
    return r;
  }
  return fused ? Expected<void>{} : emit_unfused_post_ops(b, f, *out);
}

KernelMatch check_conv_transpose(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 3, 5));
  NXRT_REQUIRE_MATCH(require_constant(ctx, 1, "W"));
  if (ctx.has_input(2)) NXRT_REQUIRE_MATCH(require_constant(ctx, 2, "the bias B"));
  const auto rank = *ctx.input_rank(0);
  const std::size_t spatial = static_cast<std::size_t>(rank - 2);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, spatial, false));
  const WindowAttrs wa = read_window_attrs(ctx.attrs(), spatial);
  NXRT_REQUIRE(wa.auto_pad == "NOTSET" || wa.auto_pad == "VALID",
               "ConvTranspose: auto_pad={} is not supported by the onednn EP; it takes NOTSET and VALID (the cpu EP "
               "takes every auto_pad)",
               wa.auto_pad);
  NXRT_REQUIRE(!ctx.attrs().has("output_shape"),
               "ConvTranspose: output_shape is not supported by the onednn EP; give pads instead, or use the cpu EP");
  const auto out_pad = ctx.attrs().ints_or("output_padding", std::vector<int64_t>(spatial, 0));
  NXRT_REQUIRE(out_pad.size() == spatial, "ConvTranspose: output_padding {} has {} values for {} spatial dims",
               out_pad, out_pad.size(), spatial);
  for (std::size_t i = 0; i < spatial; ++i)
    NXRT_REQUIRE(out_pad[i] == 0,
                 "ConvTranspose: output_padding {} is not supported by the onednn EP; the cpu EP supports it", out_pad);
  const int64_t group = ctx.attrs().int_or("group", 1);
  const Shape& w = ctx.constant_input(1)->shape();
  NXRT_REQUIRE(static_cast<int64_t>(w.size()) == rank, "ConvTranspose: W has rank {} and X {}; they must match",
               w.size(), rank);
  NXRT_REQUIRE(group >= 1 && w[0] % group == 0, "ConvTranspose: group {} does not divide W's {} input channels",
               group, w[0]);
  if (auto x = ctx.input_static_shape(0))
    NXRT_REQUIRE((*x)[1] == w[0], "ConvTranspose: X has {} channels, W expects {}", (*x)[1], w[0]);
  return KernelMatch::supported();
}

Expected<void> lower_conv_transpose(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const Node& node = ctx.node();
  auto x = b.dims(node.inputs[0]);
  if (!x) return std::unexpected(std::move(x.error()));
  auto w_shape = b.dims(node.inputs[1]);
  if (!w_shape) return std::unexpected(std::move(w_shape.error()));
  const Dims wd = *w_shape;  // C, M/G, k...
  const std::size_t spatial = x->size() - 2;
  const int64_t group = ctx.attrs().int_or("group", 1);
  const WindowAttrs wa = read_window_attrs(ctx.attrs(), spatial);
  const int64_t ic_g = wd[0] / group, oc_g = wd[1], m = oc_g * group;
  Geometry g;
  Dims dst = {(*x)[0], m};
  for (std::size_t i = 0; i < spatial; ++i) {
    const int64_t pl = wa.auto_pad == "VALID" ? 0 : wa.pads[i], pr = wa.auto_pad == "VALID" ? 0 : wa.pads[i + spatial];
    const int64_t out = wa.strides[i] * ((*x)[i + 2] - 1) + (wd[i + 2] - 1) * wa.dilations[i] + 1 - pl - pr;
    if (out < 1)
      return fail(ErrorCode::kRuntime, fmt::format("{}: spatial dim {} of the output would be {}", node.describe(), i, out),
                  "the pads are larger than the transposed window", "check pads against the input shape");
    g.strides.push_back(wa.strides[i]);
    g.dilates.push_back(wa.dilations[i] - 1);
    g.pad_l.push_back(pl);
    g.pad_r.push_back(pr);
    dst.push_back(out);
  }
  // oneDNN's logical weights are (G,) OC/G, IC/G, k...; ONNX stores them as IC, OC/G, k...
  int64_t k = 1;
  for (std::size_t i = 2; i < wd.size(); ++i) k *= wd[i];
  Dims w_dims = {oc_g, ic_g}, w_strides = {k, oc_g * k};
  if (group > 1) {
    w_dims.insert(w_dims.begin(), group);
    w_strides.insert(w_strides.begin(), ic_g * oc_g * k);
  }
  for (std::size_t i = 2; i < wd.size(); ++i) {
    w_dims.push_back(wd[i]);
    int64_t stride = 1;
    for (std::size_t j = i + 1; j < wd.size(); ++j) stride *= wd[j];
    w_strides.push_back(stride);
  }
  const memory::desc user_w(w_dims, memory::data_type::f32, w_strides);
  auto any = [](const Dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
  const bool has_bias = ctx.has_input(2);
  auto desc = [&] {
    if (has_bias)
      return dnnl::deconvolution_forward::desc(prop_kind::forward_inference, algorithm::deconvolution_direct, any(*x),
                                               any(w_dims), any({m}), any(dst), g.strides, g.dilates, g.pad_l, g.pad_r);
    return dnnl::deconvolution_forward::desc(prop_kind::forward_inference, algorithm::deconvolution_direct, any(*x),
                                             any(w_dims), any(dst), g.strides, g.dilates, g.pad_l, g.pad_r);
  };
  using Pd = dnnl::deconvolution_forward::primitive_desc;
  auto post = plan_post_ops(b, f, dst);
  if (!post) return std::unexpected(std::move(post.error()));
  auto made = pd_with_post_ops<Pd>(b, f, desc(), *post);
  if (!made) return std::unexpected(std::move(made.error()));
  const auto& [pd_value, fused] = *made;
  const Pd* pd = &pd_value;
  auto src = b.use(node.inputs[0], pd->src_desc());
  if (!src) return std::unexpected(std::move(src.error()));
  auto weights = b.weight(node.name + ":W", pd->weights_desc(), {node.inputs[1]}, [&]() -> Expected<PlainWeight> {
    auto t = b.constant(node.inputs[1]);
    if (!t) return std::unexpected(std::move(t.error()));
    return PlainWeight{user_w, copy_to_contiguous(t->view())};
  });
  if (!weights) return std::unexpected(std::move(weights.error()));
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, *src}, {DNNL_ARG_WEIGHTS, *weights}};
  if (has_bias) {
    auto bias = b.use(node.inputs[2], pd->bias_desc());
    if (!bias) return std::unexpected(std::move(bias.error()));
    args.emplace_back(DNNL_ARG_BIAS, *bias);
  }
  auto out = fused ? bind_fused_output(b, f, *post, pd->dst_desc(), args) : b.define(f.output, pd->dst_desc());
  if (!out) return std::unexpected(std::move(out.error()));
  args.emplace_back(DNNL_ARG_DST, *out);
  if (auto r = emit(b, f.anchor, [&] { b.add_step(dnnl::deconvolution_forward(*pd), *pd, args, f); }); !r) return r;
  return fused ? Expected<void>{} : emit_unfused_post_ops(b, f, *out);
}

}  // namespace

std::vector<OnednnOpDef> conv_ops() {
  return {
      {{{"", "Conv", 1}, 0, check_conv, {}}, lower_conv},
      {{{"", "ConvTranspose", 1}, 0, check_conv_transpose, {}}, lower_conv_transpose},
  };
}

}  // namespace nxrt::onednn
