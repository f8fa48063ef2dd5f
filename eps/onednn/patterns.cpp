// Recognises the written-out LayerNormalization and Gelu subgraphs (see patterns.h).
#include "patterns.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <string_view>

namespace nxrt::onednn {
namespace {

// Gelu's divisor may be written with a few digits less than float32's sqrt(2).
constexpr double kSqrt2Tolerance = 1e-5;
// How far (in edges between pattern ops) a member may be from its pattern's anchor.
constexpr int kMaxDistance = 6;

bool is_op(const Node* n, std::string_view op) {
  return n && n->domain.empty() && n->op_type == op && !n->outputs.empty() && n->outputs[0] != kNoValue &&
         std::all_of(n->outputs.begin() + 1, n->outputs.end(), [](ValueId v) { return v == kNoValue; });
}

// An elementwise binary op with NumPy broadcasting (opset 7 on; older ones broadcast by attribute).
bool is_binary(const Node* n, std::string_view op) {
  return is_op(n, op) && n->opset >= 7 && n->inputs.size() == 2 && n->inputs[0] != kNoValue &&
         n->inputs[1] != kNoValue;
}

ValueId out(const Node& n) { return n.outputs[0]; }

const Node* producer(const Graph& g, ValueId v) {
  const NodeId p = g.value(v).producer;
  return p >= 0 ? &g.node(p) : nullptr;
}

std::vector<NodeId> distinct_consumers(const Graph& g, ValueId v) {
  std::vector<NodeId> c = g.value(v).consumers;
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

// The one node reading `v`, when `v` is an intermediate value nothing else sees.
const Node* sole_reader(const Graph& g, ValueId v) {
  const std::vector<NodeId> c = distinct_consumers(g, v);
  if (g.value(v).is_graph_output || c.size() != 1) return nullptr;
  return &g.node(c.front());
}

// The operand of binary node `n` that is not `v` (kNoValue when `v` is not an operand or both are).
ValueId other_operand(const Node& n, ValueId v) {
  if (n.inputs[0] == v && n.inputs[1] != v) return n.inputs[1];
  if (n.inputs[1] == v && n.inputs[0] != v) return n.inputs[0];
  return kNoValue;
}

std::optional<int64_t> static_rank(const Graph& g, ValueId v) {
  const auto& shape = g.value(v).type.shape;
  if (!shape) return std::nullopt;
  return static_cast<int64_t>(shape->size());
}

// The shape of a constant: its initializer's, or its declared one (prepared weights).
std::optional<Shape> constant_shape(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.initializer) return val.initializer->shape();
  return val.type.static_shape();
}

// A one-element initializer of rank at most `x`'s (so that it does not raise the result's
// rank), read as a number.
std::optional<double> scalar(const Graph& g, ValueId v, ValueId x) {
  if (!is_initializer(g, v)) return std::nullopt;
  const WeightHandle& w = *g.value(v).initializer;
  const auto rank = static_rank(g, x);
  if (shape_numel(w.shape()) != 1 || static_cast<int64_t>(w.shape().size()) > rank.value_or(0)) return std::nullopt;
  auto t = w.materialize();
  if (!t) return std::nullopt;
  switch (w.dtype()) {
    case DType::kFloat32: return *t->data_as<float>();
    case DType::kFloat64: return *t->data_as<double>();
    case DType::kInt32: return *t->data_as<int32_t>();
    case DType::kInt64: return static_cast<double>(*t->data_as<int64_t>());
    default: return std::nullopt;
  }
}

bool scalar_is(const Graph& g, ValueId v, ValueId x, double want) { return scalar(g, v, x) == want; }

// ---- LayerNormalization ----

// The axes a ReduceMean keeping dims reduces, sorted and resolved against `rank`; nullopt
// when they are not readable or it reduces nothing.
std::optional<std::vector<int64_t>> reduced_axes(const Graph& g, const Node& n, int64_t rank) {
  if (n.attributes.int_or("keepdims", 1) != 1) return std::nullopt;
  std::vector<int64_t> axes;
  if (n.opset < 18) {
    axes = n.attributes.ints_or("axes", {});
  } else if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
    if (!is_initializer(g, n.inputs[1])) return std::nullopt;
    auto t = g.value(n.inputs[1]).initializer->materialize();
    if (!t || t->dtype() != DType::kInt64) return std::nullopt;
    axes.assign(t->data_as<int64_t>(), t->data_as<int64_t>() + t->numel());
  }
  if (axes.empty()) {
    if (n.opset >= 18 && n.attributes.int_or("noop_with_empty_axes", 0) != 0) return std::nullopt;
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

// How many trailing dims `axes` are (0 when they are not exactly the last ones).
int64_t trailing_count(const std::vector<int64_t>& axes, int64_t rank) {
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) return 0;
  return static_cast<int64_t>(axes.size());
}

Shape strip_leading_ones(Shape d) {
  while (!d.empty() && d.front() == 1) d.erase(d.begin());
  return d;
}

// Whether constant `w` holds one value per normalized element of `x` (the last `count` dims).
bool per_normalized_element(const Graph& g, ValueId w, ValueId x, int64_t count, const IsConstant& is_constant) {
  if (!is_constant(w)) return false;
  const auto shape = constant_shape(g, w);
  const auto& xs = *g.value(x).type.shape;
  if (!shape || shape->size() > xs.size()) return false;
  Shape normalized;
  for (std::size_t i = xs.size() - static_cast<std::size_t>(count); i < xs.size(); ++i) {
    if (!xs[i].known()) return false;
    normalized.push_back(xs[i].size);
  }
  return strip_leading_ones(*shape) == strip_leading_ones(normalized);
}

// The squaring of d: Pow(d, 2) or Mul(d, d).
bool squares(const Graph& g, const Node& n, ValueId d, ValueId x) {
  if (is_binary(&n, "Pow")) return n.inputs[0] == d && scalar_is(g, n.inputs[1], x, 2.0);
  return is_binary(&n, "Mul") && n.inputs[0] == d && n.inputs[1] == d;
}

std::optional<PatternMatch> layer_norm_from(const Graph& g, const Node& mean_node, const IsConstant& is_constant) {
  if (!is_op(&mean_node, "ReduceMean") || mean_node.inputs.empty()) return std::nullopt;
  PatternMatch m;
  m.kind = PatternMatch::Kind::kLayerNorm;
  m.anchor = mean_node.id;
  const ValueId x = m.input = mean_node.inputs[0];
  const auto rank = static_rank(g, x);
  if (!rank || *rank == 0) return std::nullopt;
  const auto axes = reduced_axes(g, mean_node, *rank);
  if (!axes) return std::nullopt;
  m.normalized_dims = trailing_count(*axes, *rank);
  if (m.normalized_dims == 0) return std::nullopt;

  const Node* sub = sole_reader(g, out(mean_node));
  if (!is_binary(sub, "Sub") || sub->inputs[0] != x || sub->inputs[1] != out(mean_node)) return std::nullopt;
  const ValueId d = out(*sub);
  const std::vector<NodeId> d_readers = distinct_consumers(g, d);
  if (g.value(d).is_graph_output || d_readers.size() != 2) return std::nullopt;
  const Node* square = nullptr;
  const Node* div = nullptr;
  for (NodeId id : d_readers) {
    const Node& n = g.node(id);
    if (squares(g, n, d, x))
      square = &n;
    else if (is_binary(&n, "Div") && n.inputs[0] == d)
      div = &n;
  }
  if (!square || !div) return std::nullopt;
  const Node* var = sole_reader(g, out(*square));
  if (!is_op(var, "ReduceMean") || var->inputs.empty() || var->inputs[0] != out(*square) ||
      reduced_axes(g, *var, *rank) != axes)
    return std::nullopt;
  const Node* add_eps = sole_reader(g, out(*var));
  if (!is_binary(add_eps, "Add")) return std::nullopt;
  const auto epsilon = scalar(g, other_operand(*add_eps, out(*var)), x);
  if (!epsilon) return std::nullopt;
  m.epsilon = static_cast<float>(*epsilon);
  const Node* sqrt = sole_reader(g, out(*add_eps));
  if (!is_op(sqrt, "Sqrt") || sqrt->inputs.size() != 1) return std::nullopt;
  if (sole_reader(g, out(*sqrt)) != div || div->inputs[1] != out(*sqrt)) return std::nullopt;
  m.members = {mean_node.id, sub->id, square->id, var->id, add_eps->id, sqrt->id, div->id};
  m.output = out(*div);

  // Optional scale, then optional shift, by constants of the normalized dims.
  for (const char* op : {"Mul", "Add"}) {
    const Node* next = sole_reader(g, m.output);
    if (!is_binary(next, op)) continue;
    const ValueId w = other_operand(*next, m.output);
    if (w == kNoValue || !per_normalized_element(g, w, x, m.normalized_dims, is_constant)) break;
    (std::string_view(op) == "Mul" ? m.scale : m.shift) = w;
    m.members.push_back(next->id);
    m.output = out(*next);
  }
  std::sort(m.members.begin(), m.members.end());
  return m;
}

// ---- Gelu ----

// x when `n` computes x / sqrt(2) (Div by sqrt(2) or Mul by 1/sqrt(2)), else kNoValue.
ValueId scaled_by_inverse_sqrt2(const Graph& g, const Node* n) {
  if (is_binary(n, "Div")) {
    const auto c = scalar(g, n->inputs[1], n->inputs[0]);
    return c && std::abs(*c - std::sqrt(2.0)) <= kSqrt2Tolerance * std::sqrt(2.0) ? n->inputs[0] : kNoValue;
  }
  if (!is_binary(n, "Mul")) return kNoValue;
  for (int i = 0; i < 2; ++i) {
    const ValueId x = n->inputs[static_cast<std::size_t>(i)], c = n->inputs[static_cast<std::size_t>(1 - i)];
    const auto v = scalar(g, c, x);
    if (v && std::abs(*v * std::sqrt(2.0) - 1.0) <= kSqrt2Tolerance) return x;
  }
  return kNoValue;
}

// Whether binary `n` multiplies `v` by the constant `want`.
bool multiplies_by(const Graph& g, const Node* n, ValueId v, ValueId x, double want) {
  if (!is_binary(n, "Mul")) return false;
  const ValueId c = other_operand(*n, v);
  return c != kNoValue && scalar_is(g, c, x, want);
}

std::optional<PatternMatch> gelu_from(const Graph& g, const Node& erf) {
  if (!is_op(&erf, "Erf") || erf.inputs.size() != 1 || erf.inputs[0] == kNoValue) return std::nullopt;
  const Node* scale = producer(g, erf.inputs[0]);
  const ValueId x = scaled_by_inverse_sqrt2(g, scale);
  if (x == kNoValue || sole_reader(g, erf.inputs[0]) != &erf) return std::nullopt;
  const Node* add_one = sole_reader(g, out(erf));
  if (!is_binary(add_one, "Add") || !scalar_is(g, other_operand(*add_one, out(erf)), x, 1.0)) return std::nullopt;
  const Node* mul = sole_reader(g, out(*add_one));
  if (!is_binary(mul, "Mul")) return std::nullopt;
  const ValueId other = other_operand(*mul, out(*add_one));
  if (other == kNoValue) return std::nullopt;
  PatternMatch m;
  m.kind = PatternMatch::Kind::kGelu;
  m.anchor = erf.id;
  m.input = x;
  m.members = {scale->id, erf.id, add_one->id, mul->id};
  if (other == x || scalar_is(g, other, x, 0.5)) {
    // x * (1 + erf) then * 0.5, or (1 + erf) * 0.5 then * x.
    const Node* last = sole_reader(g, out(*mul));
    const bool halves_last = other == x && multiplies_by(g, last, out(*mul), x, 0.5);
    const bool times_x_last = other != x && is_binary(last, "Mul") && other_operand(*last, out(*mul)) == x;
    if (!halves_last && !times_x_last) return std::nullopt;
    m.members.push_back(last->id);
    m.output = out(*last);
  } else {
    // (x * 0.5) * (1 + erf).
    const Node* half = producer(g, other);
    if (!multiplies_by(g, half, x, x, 0.5) || sole_reader(g, other) != mul) return std::nullopt;
    m.members.push_back(half->id);
    m.output = out(*mul);
  }
  std::sort(m.members.begin(), m.members.end());
  return m;
}

// ---- finding the anchor from any member ----

bool in_vocabulary(const Node& n) {
  static const std::set<std::string, std::less<>> kOps = {"ReduceMean", "Sub", "Pow", "Add", "Sqrt",
                                                          "Div",        "Mul", "Erf"};
  return n.domain.empty() && kOps.contains(n.op_type);
}

// Nodes of op `anchor_op` near `start` along edges between pattern ops, nearest first.
std::vector<NodeId> nearby(const Graph& g, NodeId start, std::string_view anchor_op) {
  std::vector<NodeId> found;
  std::map<NodeId, int> distance{{start, 0}};
  std::deque<NodeId> queue{start};
  while (!queue.empty()) {
    const NodeId id = queue.front();
    queue.pop_front();
    const Node& n = g.node(id);
    if (n.op_type == anchor_op) found.push_back(id);
    if (distance[id] == kMaxDistance) continue;
    std::vector<NodeId> next;
    for (ValueId v : n.inputs)
      if (v != kNoValue && g.value(v).producer >= 0) next.push_back(g.value(v).producer);
    for (ValueId v : n.outputs)
      if (v != kNoValue) next.insert(next.end(), g.value(v).consumers.begin(), g.value(v).consumers.end());
    for (NodeId c : next)
      if (in_vocabulary(g.node(c)) && distance.emplace(c, distance[id] + 1).second) queue.push_back(c);
  }
  return found;
}

template <class FromAnchor>
std::optional<PatternMatch> match_around(const Graph& g, NodeId any_member, std::string_view anchor_op,
                                         const FromAnchor& from_anchor) {
  if (!in_vocabulary(g.node(any_member))) return std::nullopt;
  for (NodeId anchor : nearby(g, any_member, anchor_op)) {
    auto m = from_anchor(g.node(anchor));
    if (m && std::binary_search(m->members.begin(), m->members.end(), any_member)) return m;
  }
  return std::nullopt;
}

}  // namespace

bool is_initializer(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  return val.initializer.has_value() && !val.is_graph_input;
}

std::optional<PatternMatch> match_layer_norm(const Graph& g, NodeId any_member, const IsConstant& is_constant) {
  return match_around(g, any_member, "ReduceMean",
                      [&](const Node& anchor) { return layer_norm_from(g, anchor, is_constant); });
}

std::optional<PatternMatch> match_layer_norm(const Graph& g, NodeId any_member) {
  return match_layer_norm(g, any_member, [&g](ValueId v) { return is_initializer(g, v); });
}

std::optional<PatternMatch> match_gelu(const Graph& g, NodeId any_member) {
  return match_around(g, any_member, "Erf", [&](const Node& anchor) { return gelu_from(g, anchor); });
}

std::optional<PatternMatch> match_pattern(const Graph& g, NodeId any_member, const IsConstant& is_constant) {
  if (auto m = match_layer_norm(g, any_member, is_constant)) return m;
  return match_gelu(g, any_member);
}

}  // namespace nxrt::onednn
