// Ops the oneDNN EP runs only inside a recognised subgraph (patterns.h): ReduceMean and Pow in
// the written-out LayerNormalization (one layer_normalization primitive), Erf in Gelu (one
// gelu_erf eltwise). Their claims take a node only when its whole pattern can run here.
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::onednn {
namespace {

using dnnl::normalization_flags;

constexpr const char* kLayerNormText =
    "the LayerNormalization pattern (x - mean(x)) / sqrt(mean((x - mean(x))^2) + epsilon) [* gamma] [+ beta] over "
    "the last axes (ReduceMean keeping dims, Pow by 2 or Mul(d, d), constant scalar epsilon, constant gamma and "
    "beta of the normalized dims, intermediates used only inside it)";
constexpr const char* kGeluText =
    "the Gelu pattern x*0.5*(1+erf(x/sqrt(2))) (intermediates used only inside it, constants 0.5, 1 and sqrt(2))";

// What the claims of the pattern's other members (binary and eltwise ops) need, so that
// claiming one member means every member is claimed: float32 tensors of static shapes, the
// input and results of rank 1 to 6 and not empty.
KernelMatch require_claimable_members(const NodeContext& ctx, const PatternMatch& m, const char* pattern) {
  const Graph& g = ctx.graph();
  const std::string& op = ctx.node().op_type;
  for (NodeId id : m.members) {
    const Node& n = g.node(id);
    std::vector<ValueId> values = n.inputs;
    values.push_back(n.outputs[0]);
    for (ValueId v : values) {
      // The matcher read the scalar constants; Pow's exponent may be an integer.
      if (v == kNoValue || (v != m.input && is_initializer(g, v) && shape_numel(g.value(v).initializer->shape()) == 1))
        continue;
      const ValueType& t = g.value(v).type;
      const auto shape = t.static_shape();
      NXRT_REQUIRE(t.kind == ValueType::Kind::kTensor && t.dtype == DType::kFloat32,
                   "{}: '{}' in {} is {}; the onednn EP computes in float32 only (the cpu EP takes the nodes)", op,
                   g.value(v).name, pattern, t.to_string());
      NXRT_REQUIRE(shape.has_value(),
                   "{}: the shape of '{}' in {} is not known statically; the onednn EP needs it (give --shape)", op,
                   g.value(v).name, pattern);
      NXRT_REQUIRE(!shape->empty() && shape->size() <= 6 && shape_numel(*shape) > 0,
                   "{}: '{}' in {} is {}; the onednn EP takes non-empty tensors of rank 1 to 6", op, g.value(v).name,
                   pattern, t.to_string());
    }
  }
  return KernelMatch::supported();
}

// The bytes a member reads and writes, like the eltwise claims count them.
Cost member_cost(const NodeContext& ctx) {
  Cost cost;
  if (auto shape = ctx.input_static_shape(0)) cost.bytes_moved = 8.0 * static_cast<double>(shape_numel(*shape));
  return cost;
}

KernelMatch check_layer_norm_member(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const auto m = match_layer_norm(ctx.graph(), ctx.node().id);
  NXRT_REQUIRE(m.has_value(), "{}: the onednn EP runs {} only inside {}; the cpu EP runs it alone", op, op,
               kLayerNormText);
  NXRT_REQUIRE_MATCH(require_claimable_members(ctx, *m, "the LayerNormalization pattern"));
  return KernelMatch::supported(member_cost(ctx));
}

KernelMatch check_gelu_member(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const auto m = match_gelu(ctx.graph(), ctx.node().id);
  NXRT_REQUIRE(m.has_value(), "{}: the onednn EP runs {} only inside {}; the cpu EP runs it alone", op, op, kGeluText);
  NXRT_REQUIRE_MATCH(require_claimable_members(ctx, *m, "the Gelu pattern"));
  return KernelMatch::supported(member_cost(ctx));
}

// One layer_normalization over x viewed as {outer, inner}; the output keeps x's dims and
// takes x's buffer when x dies here.
Expected<void> lower_layer_norm_pattern(PlanBuilder& b, const FusedOp& f, const PatternMatch& m) {
  auto xd = b.dims(m.input);
  if (!xd) return std::unexpected(std::move(xd.error()));
  const std::size_t split = xd->size() - static_cast<std::size_t>(m.normalized_dims);
  const int64_t inner = product(*xd, split, xd->size());
  const memory::desc data = plain_md({product(*xd, 0, split), inner});
  auto flags = normalization_flags::none;
  if (m.scale != kNoValue) flags |= normalization_flags::use_scale;
  if (m.shift != kNoValue) flags |= normalization_flags::use_shift;
  auto pd = make_pd<dnnl::layer_normalization_forward::primitive_desc>(
      b, f.anchor,
      dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, data, m.epsilon, flags),
      PlanBuilder::base_attr(), b.engine());
  if (!pd) return std::unexpected(std::move(pd.error()));
  auto src = b.use(m.input, data);
  if (!src) return std::unexpected(std::move(src.error()));
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, *src}};
  for (const auto& [v, arg] : {std::pair{m.scale, DNNL_ARG_SCALE}, std::pair{m.shift, DNNL_ARG_SHIFT}}) {
    if (v == kNoValue) continue;
    auto view = b.use(v, plain_md({inner}));
    if (!view) return std::unexpected(std::move(view.error()));
    args.emplace_back(arg, *view);
  }
  const memory::desc out_md = plain_md(*xd);
  const int out =
      b.can_overwrite(m.input, *src) ? b.define_in_place(f.output, out_md, *src) : b.define(f.output, out_md);
  auto dst = data.dims() == *xd ? Expected<int>(out) : b.use(f.output, data);
  if (!dst) return std::unexpected(std::move(dst.error()));
  args.emplace_back(DNNL_ARG_DST, *dst);
  return emit(b, f.anchor, [&] {
    b.add_step(dnnl::layer_normalization_forward(*pd), *pd, args, f, "LayerNormalization");
  });
}

// One gelu_erf eltwise in x's layout, in place when x dies here.
Expected<void> lower_gelu_pattern(PlanBuilder& b, const FusedOp& f, const PatternMatch& m) {
  const memory::desc md = b.md(m.input);
  auto src = b.use(m.input, md);
  if (!src) return std::unexpected(std::move(src.error()));
  const int dst = b.can_overwrite(m.input, *src) ? b.define_in_place(f.output, md, *src) : b.define(f.output, md);
  return emit(b, f.anchor, [&] {
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_gelu_erf, md),
        PlanBuilder::base_attr(), b.engine());
    b.add_step(dnnl::eltwise_forward(pd), pd, {{DNNL_ARG_SRC, *src}, {DNNL_ARG_DST, dst}}, f, "Gelu");
  });
}

// The lowering of every op registered here: the fuser hands over the whole pattern; a
// member alone means its pattern was split between partitions.
Expected<void> lower_pattern(PlanBuilder& b, const FusedOp& f) {
  const Node& anchor = b.graph().node(f.anchor);
  if (!f.pattern)
    return fail(ErrorCode::kRuntime,
                fmt::format("the onednn EP cannot run {} outside its pattern", anchor.describe()),
                "the other nodes of its LayerNormalization or Gelu pattern are not in this partition",
                "report this as a bug in the onednn EP; run the model with --ep cpu meanwhile");
  if (f.pattern->kind == PatternMatch::Kind::kLayerNorm) return lower_layer_norm_pattern(b, f, *f.pattern);
  return lower_gelu_pattern(b, f, *f.pattern);
}

}  // namespace

std::vector<OnednnOpDef> pattern_ops() {
  // ReduceMean 18 takes its axes as an input; the pattern reads either form. Pow from 7
  // (older versions broadcast by attribute); Erf's versions differ only in types.
  return {
      {{{"", "ReduceMean", 1}, 17, check_layer_norm_member, {}}, lower_pattern},
      {{{"", "ReduceMean", 18}, 0, check_layer_norm_member, {}}, lower_pattern},
      {{{"", "Pow", 7}, 0, check_layer_norm_member, {}}, lower_pattern},
      {{{"", "Erf", 9}, 0, check_gelu_member, {}}, lower_pattern},
  };
}

}  // namespace nxrt::onednn
