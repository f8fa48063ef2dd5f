// FoldShapeComputations: the shape arithmetic exporters emit (Shape -> Gather -> Mul ->
// Concat -> Reshape) computed once, when the model loads, wherever the shapes are static.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "nxrt/ir/passes.h"

namespace nxrt {
namespace {

// Larger integer tensors are data, not shapes: they stay as the model computes them.
constexpr int64_t kMaxElements = 64;

// A small integer tensor known before running.
struct Ints {
  DType dtype = DType::kInt64;
  Shape shape;
  std::vector<int64_t> values;
};
using KnownInputs = std::span<const std::optional<Ints>>;

bool is_int(DType t) { return t == DType::kInt64 || t == DType::kInt32; }

std::optional<Ints> initializer_ints(const Graph& graph, ValueId id) {
  if (id == kNoValue) return std::nullopt;
  const Value& v = graph.value(id);
  if (!v.initializer || v.is_graph_input || v.is_outer_scope || !is_int(v.type.dtype)) return std::nullopt;
  auto t = v.initializer->materialize();
  if (!t || !is_int(t->dtype()) || t->numel() > kMaxElements) return std::nullopt;
  return Ints{t->dtype(), t->shape(), t->to_int64_vector()};
}

Tensor to_tensor(const Ints& x) {
  if (x.dtype == DType::kInt64) return Tensor::from_vector<int64_t>(x.shape, x.values);
  return Tensor::from_vector<int32_t>(x.shape, std::vector<int32_t>(x.values.begin(), x.values.end()));
}

bool fits(DType t, int64_t v) {
  return t == DType::kInt64 || (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max());
}

// Each fold computes the node's output from its inputs, or returns nullopt to leave the node
// to the EPs (a form it does not handle, or a value it would reject at run time).

std::optional<Ints> fold_shape(const Graph& graph, const Node& node, KnownInputs) {
  const auto shape = graph.value(node.inputs[0]).type.static_shape();
  if (!shape) return std::nullopt;
  const auto rank = static_cast<int64_t>(shape->size());
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(node.attributes.int_or("start", 0));
  const int64_t end = std::max(start, clamp(node.attributes.int_or("end", rank)));
  return Ints{DType::kInt64, {end - start}, std::vector<int64_t>(shape->begin() + start, shape->begin() + end)};
}

std::optional<Ints> fold_size(const Graph& graph, const Node& node, KnownInputs) {
  const auto shape = graph.value(node.inputs[0]).type.static_shape();
  if (!shape) return std::nullopt;
  return Ints{DType::kInt64, {}, {shape_numel(*shape)}};
}

std::optional<Ints> fold_identity(const Graph&, const Node&, KnownInputs in) { return in[0]; }

std::optional<Ints> fold_gather(const Graph&, const Node& node, KnownInputs in) {
  if (!in[0] || !in[1] || in[0]->shape.size() != 1) return std::nullopt;
  const int64_t axis = node.attributes.int_or("axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  const auto n = static_cast<int64_t>(in[0]->values.size());
  Ints out{in[0]->dtype, in[1]->shape, {}};
  for (int64_t i : in[1]->values) {
    if (i < -n || i >= n) return std::nullopt;  // out of range: the EP reports it
    out.values.push_back(in[0]->values[static_cast<std::size_t>(i < 0 ? i + n : i)]);
  }
  return out;
}

// Squeeze and Unsqueeze: axes from the attribute before opset 13, from input 1 after.
std::optional<std::vector<int64_t>> axes_of(const Node& node, KnownInputs in) {
  if (node.opset < 13) return node.attributes.get_ints("axes");
  if (in.size() < 2 || !in[1]) return std::nullopt;
  return in[1]->values;
}

std::optional<Ints> fold_unsqueeze(const Graph&, const Node& node, KnownInputs in) {
  const auto axes = axes_of(node, in);
  if (!in[0] || !axes) return std::nullopt;
  const auto rank = static_cast<int64_t>(in[0]->shape.size() + axes->size());
  std::vector<bool> inserted(static_cast<std::size_t>(rank), false);
  for (int64_t a : *axes) {
    const int64_t k = a < 0 ? a + rank : a;
    if (k < 0 || k >= rank || inserted[static_cast<std::size_t>(k)]) return std::nullopt;
    inserted[static_cast<std::size_t>(k)] = true;
  }
  Ints out{in[0]->dtype, {}, in[0]->values};
  auto next = in[0]->shape.begin();
  for (bool one : inserted) out.shape.push_back(one ? 1 : *next++);
  return out;
}

std::optional<Ints> fold_squeeze(const Graph&, const Node& node, KnownInputs in) {
  if (!in[0]) return std::nullopt;
  const Shape& shape = in[0]->shape;
  const auto rank = static_cast<int64_t>(shape.size());
  std::vector<bool> dropped(shape.size(), false);
  const auto axes = axes_of(node, in);
  if (!axes && (node.opset < 13 ? node.attributes.has("axes") : node.inputs.size() > 1 && node.inputs[1] != kNoValue))
    return std::nullopt;  // axes given but not known
  for (std::size_t i = 0; i < shape.size(); ++i) dropped[i] = !axes && shape[i] == 1;
  for (int64_t a : axes.value_or(std::vector<int64_t>{})) {
    const int64_t k = a < 0 ? a + rank : a;
    if (k < 0 || k >= rank || shape[static_cast<std::size_t>(k)] != 1) return std::nullopt;
    dropped[static_cast<std::size_t>(k)] = true;
  }
  Ints out{in[0]->dtype, {}, in[0]->values};
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (!dropped[i]) out.shape.push_back(shape[i]);
  return out;
}

std::optional<Ints> fold_concat(const Graph&, const Node& node, KnownInputs in) {
  const int64_t axis = node.attributes.int_or("axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  Ints out{DType::kUndefined, {0}, {}};
  for (const auto& x : in) {
    if (!x || x->shape.size() != 1 || (out.dtype != DType::kUndefined && x->dtype != out.dtype)) return std::nullopt;
    out.dtype = x->dtype;
    out.values.insert(out.values.end(), x->values.begin(), x->values.end());
  }
  if (out.dtype == DType::kUndefined || static_cast<int64_t>(out.values.size()) > kMaxElements) return std::nullopt;
  out.shape[0] = static_cast<int64_t>(out.values.size());
  return out;
}

std::optional<Ints> fold_cast(const Graph&, const Node& node, KnownInputs in) {
  const auto to = static_cast<DType>(node.attributes.int_or("to", 0));
  if (!in[0] || !is_int(to)) return std::nullopt;
  for (int64_t v : in[0]->values)
    if (!fits(to, v)) return std::nullopt;  // wraps: left to the EP
  return Ints{to, in[0]->shape, in[0]->values};
}

// Add, Sub, Mul and Div of integers (Div truncates, as C++ does). Broadcasting is limited to
// equal shapes and a single-element side, the forms shape arithmetic takes.
std::optional<Ints> fold_arithmetic(const Graph&, const Node& node, KnownInputs in) {
  if (!in[0] || !in[1] || in[0]->dtype != in[1]->dtype) return std::nullopt;
  const Ints& a = *in[0];
  const Ints& b = *in[1];
  Shape shape;
  if (a.shape == b.shape || b.values.size() == 1) shape = a.shape.size() >= b.shape.size() ? a.shape : b.shape;
  else if (a.values.size() == 1) shape = b.shape.size() >= a.shape.size() ? b.shape : a.shape;
  else return std::nullopt;
  if (shape_numel(shape) != static_cast<int64_t>(std::max(a.values.size(), b.values.size()))) return std::nullopt;
  Ints out{a.dtype, shape, {}};
  for (std::size_t i = 0; i < std::max(a.values.size(), b.values.size()); ++i) {
    const int64_t x = a.values[a.values.size() == 1 ? 0 : i], y = b.values[b.values.size() == 1 ? 0 : i];
    int64_t r = 0;
    if (node.op_type == "Add") {
      if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
    } else if (node.op_type == "Sub") {
      if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
    } else if (node.op_type == "Mul") {
      if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
    } else {
      if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
      r = x / y;
    }
    if (!fits(a.dtype, r)) return std::nullopt;
    out.values.push_back(r);
  }
  return out;
}

// Slice of a 1-D tensor: starts and ends (axes and steps optional) from inputs from opset 10,
// from attributes before.
std::optional<Ints> fold_slice(const Graph&, const Node& node, KnownInputs in) {
  if (!in[0] || in[0]->shape.size() != 1) return std::nullopt;
  auto input_or_attr = [&](std::size_t i, const char* attr) -> std::optional<std::vector<int64_t>> {
    if (node.opset < 10) return node.attributes.get_ints(attr);
    if (i >= in.size() || !in[i]) return std::nullopt;
    return in[i]->values;
  };
  const auto starts = input_or_attr(1, "starts"), ends = input_or_attr(2, "ends");
  const bool has_axes = node.opset < 10 ? node.attributes.has("axes") : node.inputs.size() > 3 && node.inputs[3] != kNoValue;
  const bool has_steps = node.opset >= 10 && node.inputs.size() > 4 && node.inputs[4] != kNoValue;
  const auto axes = has_axes ? input_or_attr(3, "axes") : std::vector<int64_t>{0};
  const auto steps = has_steps ? input_or_attr(4, "steps") : std::vector<int64_t>{1};
  if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1) || (*steps)[0] == 0)
    return std::nullopt;
  const auto n = static_cast<int64_t>(in[0]->values.size());
  const int64_t step = (*steps)[0];
  auto bound = [&](int64_t v, int64_t low, int64_t high) { return std::clamp<int64_t>(v < 0 ? v + n : v, low, high); };
  const int64_t start = step > 0 ? bound((*starts)[0], 0, n) : bound((*starts)[0], -1, n - 1);
  const int64_t end = step > 0 ? bound((*ends)[0], 0, n) : bound((*ends)[0], -1, n - 1);
  Ints out{in[0]->dtype, {0}, {}};
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.values.push_back(in[0]->values[static_cast<std::size_t>(i)]);
  out.shape[0] = static_cast<int64_t>(out.values.size());
  return out;
}

using FoldFn = std::optional<Ints> (*)(const Graph&, const Node&, KnownInputs);

FoldFn fold_for(const Node& node) {
  if (!node.domain.empty()) return nullptr;
  static const std::map<std::string, FoldFn, std::less<>> folds = {
      {"Shape", fold_shape},     {"Size", fold_size},       {"Identity", fold_identity}, {"Gather", fold_gather},
      {"Unsqueeze", fold_unsqueeze}, {"Squeeze", fold_squeeze}, {"Concat", fold_concat},   {"Cast", fold_cast},
      {"Add", fold_arithmetic},  {"Sub", fold_arithmetic},  {"Mul", fold_arithmetic},    {"Div", fold_arithmetic},
      {"Slice", fold_slice}};
  auto it = folds.find(node.op_type);
  return it == folds.end() ? nullptr : it->second;
}

std::string values_to_string(const Ints& x) {
  return x.shape.empty() ? fmt::format("{}", x.values.front()) : fmt::format("[{}]", fmt::join(x.values, ","));
}

}  // namespace

Expected<std::vector<std::string>> FoldShapeComputations::run(Graph& graph) const {
  // Values a subgraph reads from this graph stay computed: the subgraph looks them up by name.
  std::set<ValueId> read_by_subgraphs;
  for (const Node& node : graph.nodes) read_by_subgraphs.insert(node.implicit_inputs.begin(), node.implicit_inputs.end());
  std::vector<std::string> changes;
  std::vector<NodeId> folded;
  for (const Node& node : graph.nodes) {  // in topological order: a folded output feeds the next fold
    const FoldFn fold = fold_for(node);
    if (!fold || node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.size() != 1 ||
        node.outputs[0] == kNoValue)
      continue;
    Value& out = graph.value(node.outputs[0]);
    if (out.is_graph_output || read_by_subgraphs.contains(node.outputs[0])) continue;
    std::vector<std::optional<Ints>> inputs;
    for (ValueId v : node.inputs) inputs.push_back(initializer_ints(graph, v));
    auto result = fold(graph, node, inputs);
    if (!result || static_cast<int64_t>(result->values.size()) > kMaxElements) continue;
    out.type.kind = ValueType::Kind::kTensor;
    out.type.dtype = result->dtype;
    std::vector<Dim> dims;
    for (int64_t d : result->shape) dims.push_back(Dim{d, {}});
    out.type.shape = std::move(dims);
    out.initializer = WeightHandle::resident(to_tensor(*result));
    folded.push_back(node.id);
    changes.push_back(fmt::format("computed {} '{}' at load time: '{}' = {}", node.op_type, node.name, out.name,
                                  values_to_string(*result)));
  }
  if (!folded.empty()) remove_nodes(graph, folded);
  return changes;
}

}  // namespace nxrt
