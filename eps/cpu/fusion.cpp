// Finds the cpu EP's fused chains in a partition (see fusion.h).
#include "fusion.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "common/byte_quantization.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

bool is_onnx_op(const Node& node, std::string_view op) { return node.domain.empty() && node.op_type == op; }

// The only reader of node output `v` when it is a member of the partition and `v` is not
// needed elsewhere (a graph output or a second reader); nullopt otherwise.
std::optional<NodeId> sole_member_reader(const Graph& graph, ValueId v, const std::unordered_set<NodeId>& members) {
  if (v == kNoValue) return std::nullopt;
  const Value& value = graph.value(v);
  if (value.is_graph_output || value.consumers.size() != 1 || !members.contains(value.consumers.front()))
    return std::nullopt;
  const Node& reader = graph.node(value.consumers.front());
  // A value a subgraph reads is an implicit input, not a plain one: leave such chains alone.
  if (std::find(reader.implicit_inputs.begin(), reader.implicit_inputs.end(), v) != reader.implicit_inputs.end())
    return std::nullopt;
  return value.consumers.front();
}

// Whether `scale` multiplies Y (of rank `rank`, n columns) by one value or one per column
// without adding dims: shape [] or [..., 1] or [1, ..., n] of rank <= rank.
bool scales_columns(const Value& scale, int64_t rank, std::optional<int64_t> n) {
  if (scale.type.dtype != DType::kFloat32) return false;
  const auto shape = scale.type.static_shape();
  if (!shape || static_cast<int64_t>(shape->size()) > rank) return false;
  const int64_t count = shape_numel(*shape);
  if (count == 1) return true;
  return n && shape->back() == *n && count == *n;
}

// MatMulInteger `m` -> Cast (to float) -> Mul by a scale, each link the only reader of the
// last; the fused step, or nullopt when the chain is not there.
Expected<std::optional<FusedStep>> scaled_matmul_integer(const Partition& partition, const Node& m,
                                                         const std::unordered_set<NodeId>& members) {
  const Graph& graph = *partition.graph;
  if (!is_onnx_op(m, "MatMulInteger") || m.outputs.size() != 1) return std::nullopt;
  const auto cast_id = sole_member_reader(graph, m.outputs[0], members);
  if (!cast_id) return std::nullopt;
  const Node& cast = graph.node(*cast_id);
  if (!is_onnx_op(cast, "Cast") || cast.attributes.int_or("to", 0) != 1 || cast.outputs.size() != 1)
    return std::nullopt;
  const auto mul_id = sole_member_reader(graph, cast.outputs[0], members);
  if (!mul_id) return std::nullopt;
  const Node& mul = graph.node(*mul_id);
  if (!is_onnx_op(mul, "Mul") || mul.inputs.size() != 2 || mul.inputs[0] == mul.inputs[1]) return std::nullopt;
  const ValueId scale = mul.inputs[0] == cast.outputs[0] ? mul.inputs[1] : mul.inputs[0];
  const ValueType& sums = graph.value(m.outputs[0]).type;
  if (!sums.shape || sums.shape->empty()) return std::nullopt;
  const ValueType& b = graph.value(m.inputs[1]).type;
  std::optional<int64_t> n;
  if (b.shape && b.shape->size() >= 2 && b.shape->back().known()) n = b.shape->back().size;
  if (!scales_columns(graph.value(scale), static_cast<int64_t>(sums.shape->size()), n)) return std::nullopt;

  auto kernel = make_matmul_integer_scaled(NodeContext(graph, m));
  if (!kernel) return forward_error(std::move(kernel), fmt::format("fusing {} with its Cast and Mul", m.describe()));
  FusedStep step;
  step.nodes = {m.id, cast.id, mul.id};
  step.inputs = m.inputs;
  step.inputs.resize(4, kNoValue);
  step.inputs.push_back(scale);
  step.outputs = {mul.outputs[0]};
  step.kernel = std::move(*kernel);
  return step;
}

// Sigmoid `s` of a float x -> Mul of x by it (either order), the Mul the Sigmoid's only
// reader; the fused step, or nullopt when the chain is not there.
Expected<std::optional<FusedStep>> times_sigmoid(const Partition& partition, const Node& s,
                                                 const std::unordered_set<NodeId>& members) {
  const Graph& graph = *partition.graph;
  if (!is_onnx_op(s, "Sigmoid") || s.inputs.size() != 1 || s.outputs.size() != 1) return std::nullopt;
  const ValueId x = s.inputs[0];
  if (x == kNoValue || graph.value(x).type.dtype != DType::kFloat32) return std::nullopt;
  const auto mul_id = sole_member_reader(graph, s.outputs[0], members);
  if (!mul_id) return std::nullopt;
  const Node& mul = graph.node(*mul_id);
  if (!is_onnx_op(mul, "Mul") || mul.inputs.size() != 2) return std::nullopt;
  const bool reads_x_and_s =
      (mul.inputs[0] == x && mul.inputs[1] == s.outputs[0]) || (mul.inputs[0] == s.outputs[0] && mul.inputs[1] == x);
  if (!reads_x_and_s) return std::nullopt;
  auto kernel = make_times_sigmoid();
  if (!kernel) return forward_error(std::move(kernel), fmt::format("fusing {} with its Mul", s.describe()));
  FusedStep step;
  step.nodes = {s.id, mul.id};
  step.inputs = {x};
  step.outputs = {mul.outputs[0]};
  step.kernel = std::move(*kernel);
  return step;
}

// Whether `v` is a value of `dtype` that holds one element.
bool single_value_of(const Graph& graph, ValueId v, DType dtype) {
  if (v == kNoValue) return false;
  const ValueType& type = graph.value(v).type;
  const auto shape = type.static_shape();
  return type.dtype == dtype && shape && shape_numel(*shape) == 1;
}

// A DequantizeLinear of uint8 or int8 to float with one scale (and one zero point, when it has
// one): its inputs, padded to three.
std::optional<std::vector<ValueId>> per_tensor_dequantize(const Graph& graph, const Node& dq) {
  if (!is_onnx_op(dq, "DequantizeLinear") || dq.inputs.size() < 2 || dq.outputs.size() != 1 ||
      dq.attributes.int_or("block_size", 0) != 0 || dq.attributes.int_or("output_dtype", 1) != 1)
    return std::nullopt;
  std::vector<ValueId> in = dq.inputs;
  in.resize(3, kNoValue);
  const DType q = in[0] == kNoValue ? DType::kUndefined : graph.value(in[0]).type.dtype;
  if (!is_byte_type(q) || !single_value_of(graph, in[1], DType::kFloat32)) return std::nullopt;
  if (in[2] != kNoValue && !single_value_of(graph, in[2], q)) return std::nullopt;
  return in;
}

// Float Add `add` of two DequantizeLinear outputs of one shape (-> Relu) -> QuantizeLinear to
// uint8 or int8, every scale and zero point one value, each link the only reader of the last
// (a DequantizeLinear that others read stays for them); the fused step, or nullopt.
Expected<std::optional<FusedStep>> quantized_add(const Partition& partition, const Node& add,
                                                 const std::unordered_set<NodeId>& members) {
  const Graph& graph = *partition.graph;
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) return std::nullopt;
  FusedStep step;
  step.nodes = {add.id};  // named after the Add (what profiles and messages show)
  for (ValueId v : add.inputs) {
    const NodeId p = v == kNoValue ? -1 : graph.value(v).producer;
    if (p < 0 || !members.contains(p)) return std::nullopt;
    const auto dq = per_tensor_dequantize(graph, graph.node(p));
    if (!dq) return std::nullopt;
    if (sole_member_reader(graph, v, members) == add.id) step.nodes.push_back(p);
    step.inputs.insert(step.inputs.end(), dq->begin(), dq->end());
  }
  if (!always_same_shape(graph.value(step.inputs[0]).type, graph.value(step.inputs[3]).type)) return std::nullopt;
  auto next = sole_member_reader(graph, add.outputs[0], members);
  const bool relu = next && is_onnx_op(graph.node(*next), "Relu");
  if (relu) {
    step.nodes.push_back(*next);
    next = sole_member_reader(graph, graph.node(*next).outputs[0], members);
  }
  if (!next) return std::nullopt;
  const Node& q = graph.node(*next);
  if (!is_onnx_op(q, "QuantizeLinear") || q.inputs.size() < 2 || q.outputs.size() != 1 ||
      q.attributes.int_or("block_size", 0) != 0)
    return std::nullopt;
  const DType y = graph.value(q.outputs[0]).type.dtype;
  const ValueId y_zero = q.inputs.size() > 2 ? q.inputs[2] : kNoValue;
  if (!is_byte_type(y) || !single_value_of(graph, q.inputs[1], DType::kFloat32) ||
      (y_zero != kNoValue && !single_value_of(graph, y_zero, y)))
    return std::nullopt;
  auto kernel = make_qdq_add(y, relu);
  if (!kernel) return forward_error(std::move(kernel), fmt::format("fusing {} with its quantizations", add.describe()));
  step.nodes.push_back(q.id);
  step.inputs.push_back(q.inputs[1]);
  step.inputs.push_back(y_zero);
  step.outputs = {q.outputs[0]};
  step.kernel = std::move(*kernel);
  return step;
}

}  // namespace

bool always_same_shape(const ValueType& a, const ValueType& b) {
  if (!a.shape || !b.shape || a.shape->size() != b.shape->size()) return false;
  for (std::size_t d = 0; d < a.shape->size(); ++d) {
    const Dim& x = (*a.shape)[d];
    const Dim& y = (*b.shape)[d];
    if (x.known() ? x != y : (x.symbol.empty() || x.symbol != y.symbol || y.known())) return false;
  }
  return true;
}

bool is_quantized_add(const Graph& graph, const FusedStep& step) {
  return !step.nodes.empty() && is_onnx_op(graph.node(step.nodes.front()), "Add") &&
         is_onnx_op(graph.node(step.nodes.back()), "QuantizeLinear") && step.inputs.size() == 8 &&
         step.outputs.size() == 1;
}

Expected<std::vector<FusedStep>> find_fusions(const Partition& partition) {
  const std::unordered_set<NodeId> members(partition.nodes.begin(), partition.nodes.end());
  std::unordered_set<NodeId> fused;  // members already in a step
  std::vector<FusedStep> out;
  for (NodeId id : partition.nodes) {
    for (auto* find : {&scaled_matmul_integer, &times_sigmoid, &quantized_add}) {
      auto step = find(partition, partition.graph->node(id), members);
      if (!step) return std::unexpected(std::move(step.error()));
      if (!*step || std::ranges::any_of((*step)->nodes, [&](NodeId n) { return fused.contains(n); })) continue;
      fused.insert((*step)->nodes.begin(), (*step)->nodes.end());
      out.push_back(std::move(**step));
    }
  }
  return out;
}

}  // namespace nxrt::cpu
