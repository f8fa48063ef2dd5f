// Fusion of a partition's nodes into oneDNN steps (see fusion.h for the rules).
#include "fusion.h"

#include <algorithm>
#include <cfloat>
#include <limits>
#include <map>
#include <set>

namespace nxrt::onednn {
namespace {

using dnnl::algorithm;

// The value of a constant scalar input, or nullopt when it is absent or not constant.
std::optional<float> constant_scalar(const NodeContext& ctx, std::size_t i) {
  const WeightHandle* w = ctx.constant_input(i);
  if (!w || w->dtype() != DType::kFloat32 || shape_numel(w->shape()) != 1) return std::nullopt;
  auto t = w->materialize();
  if (!t) return std::nullopt;
  return *t->data_as<float>();
}

float float_attr(const NodeContext& ctx, const char* name, float fallback) {
  return static_cast<float>(ctx.attrs().get_float(name).value_or(fallback));
}

std::optional<std::vector<EltwiseSpec>> clip_specs(const NodeContext& ctx) {
  float lo = -FLT_MAX, hi = FLT_MAX;
  if (ctx.opset() < 11) {
    lo = float_attr(ctx, "min", lo);
    hi = float_attr(ctx, "max", hi);
  } else {
    if (ctx.has_input(1)) {
      auto v = constant_scalar(ctx, 1);
      if (!v) return std::nullopt;
      lo = *v;
    }
    if (ctx.has_input(2)) {
      auto v = constant_scalar(ctx, 2);
      if (!v) return std::nullopt;
      hi = *v;
    }
  }
  return std::vector<EltwiseSpec>{{algorithm::eltwise_clip, lo, hi}};
}

bool is_node(const Node& n, std::string_view op) { return n.domain.empty() && n.op_type == op; }

// Ops whose primitive takes an Add and activations as post-ops.
bool takes_add_post_op(const Node& n) {
  return is_node(n, "Conv") || is_node(n, "ConvTranspose") || is_node(n, "MatMul") || is_node(n, "Gemm");
}

bool takes_eltwise_post_op(const Node& n) {
  static const std::set<std::string> kOps = {"Conv", "ConvTranspose", "MatMul", "Gemm", "Add", "Sub",
                                             "Mul",  "Div",           "Max",    "Min"};
  return n.domain.empty() && kOps.contains(n.op_type);
}

class Fuser {
 public:
  Fuser(const Partition& p, const std::function<bool(ValueId)>& is_constant)
      : p_(p), g_(*p.graph), is_constant_(is_constant) {
    for (std::size_t i = 0; i < p.nodes.size(); ++i) position_[p.nodes[i]] = i;
    boundary_outputs_.insert(p.outputs.begin(), p.outputs.end());
    for (NodeId id : p.nodes) find_pattern(id);
  }

  std::vector<FusedOp> run() {
    std::vector<std::pair<std::size_t, FusedOp>> steps;
    for (NodeId id : p_.nodes) {
      if (absorbed_.contains(id)) continue;
      FusedOp f;
      if (auto it = patterns_.find(id); it != patterns_.end())
        f = pattern_step(it->second);
      else if (in_pattern_.contains(id))
        continue;  // a later member of a pattern that starts earlier
      else
        f = grow(id);
      steps.emplace_back(position_.at(f.members.back()), std::move(f));
    }
    // A fused step runs where its last member was: every input of every member is ready.
    std::stable_sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<FusedOp> out;
    for (auto& s : steps) out.push_back(std::move(s.second));
    return out;
  }

 private:
  // The single member consuming `v`, when `v` may disappear inside a fused step.
  const Node* sole_consumer(ValueId v) const {
    const Value& val = g_.value(v);
    if (val.is_graph_output || boundary_outputs_.contains(v) || val.consumers.size() != 1) return nullptr;
    const NodeId c = val.consumers.front();
    if (!position_.contains(c) || absorbed_.contains(c) || in_pattern_.contains(c)) return nullptr;
    return &g_.node(c);
  }

  // Records the pattern `id` belongs to when all its members are in this partition (the
  // claims take all or none of them; a split pattern fails in its anchor's lowering).
  void find_pattern(NodeId id) {
    if (in_pattern_.contains(id)) return;
    auto m = match_pattern(g_, id, is_constant_);
    if (!m) return;
    if (!std::all_of(m->members.begin(), m->members.end(), [&](NodeId n) { return position_.contains(n); })) return;
    in_pattern_.insert(m->members.begin(), m->members.end());
    const NodeId first = *std::min_element(m->members.begin(), m->members.end(),
                                           [&](NodeId a, NodeId b) { return position_.at(a) < position_.at(b); });
    patterns_.emplace(first, std::move(*m));
  }

  static FusedOp pattern_step(const PatternMatch& m) {
    FusedOp f;
    f.anchor = m.anchor;
    f.members = m.members;
    f.output = m.output;
    f.pattern = m;
    return f;
  }

  // The Gelu pattern that reads `cur` and is its only reader, not yet placed in a step.
  std::optional<NodeId> gelu_reading(ValueId cur) const {
    const Value& val = g_.value(cur);
    if (val.is_graph_output || boundary_outputs_.contains(cur)) return std::nullopt;
    for (const auto& [first, m] : patterns_) {
      if (m.kind != PatternMatch::Kind::kGelu || m.input != cur) continue;
      const bool only_reader = std::all_of(val.consumers.begin(), val.consumers.end(), [&](NodeId c) {
        return std::find(m.members.begin(), m.members.end(), c) != m.members.end();
      });
      if (only_reader) return first;
    }
    return std::nullopt;
  }

  // SiLU (Swish) reading `cur`: Sigmoid(cur) and Mul(cur, that), when they are cur's only
  // readers and the Sigmoid's only reader is the Mul. Returns the two nodes.
  std::optional<std::pair<const Node*, const Node*>> silu_reading(ValueId cur) const {
    const Value& val = g_.value(cur);
    if (val.is_graph_output || boundary_outputs_.contains(cur) || val.consumers.size() != 2) return std::nullopt;
    auto available = [&](NodeId n) {
      return position_.contains(n) && !absorbed_.contains(n) && !in_pattern_.contains(n);
    };
    for (NodeId s : val.consumers) {
      const Node& sig = g_.node(s);
      if (!is_node(sig, "Sigmoid") || sig.outputs.size() != 1 || !available(s)) continue;
      const Node* mul = sole_consumer(sig.outputs[0]);
      if (!mul || !is_node(*mul, "Mul") || mul->outputs.size() != 1 || mul->inputs.size() != 2) continue;
      const bool reads_both = (mul->inputs[0] == cur && mul->inputs[1] == sig.outputs[0]) ||
                              (mul->inputs[1] == cur && mul->inputs[0] == sig.outputs[0]);
      const NodeId other = val.consumers[0] == s ? val.consumers[1] : val.consumers[0];
      if (reads_both && other == mul->id) return std::pair{&sig, mul};
    }
    return std::nullopt;
  }

  bool can_fold_bn(const Node& conv, const Node& bn) const {
    if (!is_node(bn, "BatchNormalization") || bn.outputs.size() > 1 || bn.inputs.size() < 5) return false;
    if (!is_constant_(conv.inputs[1]) || (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue && !is_constant_(conv.inputs[2])))
      return false;
    for (std::size_t i = 1; i < 5; ++i)
      if (!is_constant_(bn.inputs[i])) return false;
    return bn.inputs[0] == conv.outputs[0];
  }

  // Whether Add `add` keeps the shape of `cur`: its other operand broadcasts into it.
  bool adds_into(const Node& add, ValueId cur) const {
    if (add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) return false;
    const ValueId other = add.inputs[0] == cur ? add.inputs[1] : add.inputs[0];
    const auto mine = g_.value(cur).type.static_shape();
    const auto theirs = g_.value(other).type.static_shape();
    if (!mine || !theirs || theirs->size() > mine->size()) return false;
    const std::size_t lead = mine->size() - theirs->size();
    for (std::size_t i = 0; i < theirs->size(); ++i)
      if ((*theirs)[i] != (*mine)[lead + i] && (*theirs)[i] != 1) return false;
    return true;
  }

  FusedOp grow(NodeId id) {
    const Node& anchor = g_.node(id);
    FusedOp f;
    f.anchor = id;
    f.members = {id};
    ValueId cur = anchor.outputs.empty() ? kNoValue : anchor.outputs[0];
    f.output = cur;
    if (cur == kNoValue || anchor.outputs.size() != 1) return f;
    if (is_node(anchor, "Conv")) {
      if (const Node* bn = sole_consumer(cur); bn && can_fold_bn(anchor, *bn)) {
        absorb(f, *bn, cur);
        f.folded_bn = bn->id;
      }
    }
    while (takes_eltwise_post_op(anchor)) {
      if (auto gelu = gelu_reading(cur)) {
        const PatternMatch m = std::move(patterns_.extract(*gelu).mapped());
        f.post_ops.push_back({PostOp::Kind::kEltwise, m.anchor, {{algorithm::eltwise_gelu_erf, 0, 0}}, kNoValue});
        absorbed_.insert(m.members.begin(), m.members.end());
        f.members.insert(f.members.end(), m.members.begin(), m.members.end());
        cur = m.output;
        continue;
      }
      if (auto silu = silu_reading(cur)) {
        const auto [sigmoid, mul] = *silu;
        f.post_ops.push_back({PostOp::Kind::kEltwise, sigmoid->id, {{algorithm::eltwise_swish, 1.0f, 0}}, kNoValue});
        absorb(f, *sigmoid, cur);
        absorb(f, *mul, cur);
        continue;
      }
      const Node* next = sole_consumer(cur);
      if (!next || next->outputs.size() != 1) break;
      const NodeContext ctx(g_, *next);
      if (auto specs = eltwise_specs(ctx)) {
        f.post_ops.push_back({PostOp::Kind::kEltwise, next->id, std::move(*specs), kNoValue});
      } else if (is_node(*next, "Add") && takes_add_post_op(anchor) && adds_into(*next, cur)) {
        const ValueId other = next->inputs[0] == cur ? next->inputs[1] : next->inputs[0];
        f.post_ops.push_back({PostOp::Kind::kAdd, next->id, {}, other});
      } else {
        break;
      }
      absorb(f, *next, cur);
    }
    f.output = cur;
    return f;
  }

  void absorb(FusedOp& f, const Node& n, ValueId& cur) {
    absorbed_.insert(n.id);
    f.members.push_back(n.id);
    cur = n.outputs[0];
  }

  const Partition& p_;
  const Graph& g_;
  const std::function<bool(ValueId)>& is_constant_;
  std::map<NodeId, std::size_t> position_;
  std::set<ValueId> boundary_outputs_;
  std::set<NodeId> absorbed_;
  std::map<NodeId, PatternMatch> patterns_;  // by first member, until placed in a step
  std::set<NodeId> in_pattern_;
};

}  // namespace

std::optional<std::vector<EltwiseSpec>> eltwise_specs(const NodeContext& ctx) {
  const Node& n = ctx.node();
  if (!n.domain.empty()) return std::nullopt;
  const std::string& op = n.op_type;
  auto one = [](algorithm alg, float alpha = 0, float beta = 0) {
    return std::vector<EltwiseSpec>{{alg, alpha, beta}};
  };
  if (op == "Relu") return one(algorithm::eltwise_relu);
  if (op == "LeakyRelu") return one(algorithm::eltwise_relu, float_attr(ctx, "alpha", 0.01f));
  if (op == "Sigmoid") return one(algorithm::eltwise_logistic);
  if (op == "Tanh") return one(algorithm::eltwise_tanh);
  if (op == "Elu") return one(algorithm::eltwise_elu, float_attr(ctx, "alpha", 1.0f));
  if (op == "Exp") return one(algorithm::eltwise_exp);
  if (op == "Log") return one(algorithm::eltwise_log);
  if (op == "Sqrt") return one(algorithm::eltwise_sqrt);
  if (op == "Abs") return one(algorithm::eltwise_abs);
  if (op == "HardSwish") return one(algorithm::eltwise_hardswish);
  if (op == "HardSigmoid")
    return std::vector<EltwiseSpec>{
        {algorithm::eltwise_linear, float_attr(ctx, "alpha", 0.2f), float_attr(ctx, "beta", 0.5f)},
        {algorithm::eltwise_clip, 0.0f, 1.0f}};
  if (op == "Clip") return clip_specs(ctx);
  return std::nullopt;
}

std::vector<FusedOp> fuse_partition(const Partition& partition, const std::function<bool(ValueId)>& is_constant) {
  return Fuser(partition, is_constant).run();
}

}  // namespace nxrt::onednn
