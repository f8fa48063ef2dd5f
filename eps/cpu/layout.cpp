// Finds the values the cpu EP stores channels-last in a partition (see layout.h).
#include "layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "common/byte_quantization.h"
#include "fusion.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

bool is_onnx_node(const Node& node, std::string_view op) { return node.domain.empty() && node.op_type == op; }
bool is_microsoft_node(const Node& node, std::string_view op) {
  return node.domain == "com.microsoft" && node.op_type == op;
}

// Whether the node's first input is a tensor of rank 4 (N x C x H x W).
bool reads_planes(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.inputs[0] == kNoValue || node.outputs.empty() || node.outputs[0] == kNoValue)
    return false;
  const ValueType& x = graph.value(node.inputs[0]).type;
  return x.shape && x.shape->size() == 4;
}

// Whether `node` is a QLinearConv whose kernel can read X and write Y channels-last: over 2-D
// planes, with W's shape known and one group, or one input and one output channel per group.
bool conv_supports_channels_last(const Graph& graph, const Node& node) {
  if (!is_onnx_node(node, "QLinearConv") || node.inputs.size() < 8 || node.outputs.size() != 1 ||
      !reads_planes(graph, node))
    return false;
  const auto w = graph.value(node.inputs[3]).type.static_shape();
  if (!w || w->size() != 4) return false;
  const int64_t group = node.attributes.int_or("group", 1);
  return group == 1 || ((*w)[1] == 1 && (*w)[0] == group);
}

// Whether `node` is a MaxPool of uint8 or int8 over 2-D planes without Indices.
bool max_pool_supports_channels_last(const Graph& graph, const Node& node) {
  if (!is_onnx_node(node, "MaxPool") || !reads_planes(graph, node) ||
      (node.outputs.size() > 1 && node.outputs[1] != kNoValue))
    return false;
  const DType x = graph.value(node.inputs[0]).type.dtype;
  return is_byte_type(x) && node.attributes.ints_or("kernel_shape", {}).size() == 2;
}

// Whether `node` is a DequantizeLinear with one scale (and zero point) of a tensor of rank 4:
// element by element alike in any layout, so the registry's kernel runs it as it is.
bool dequantize_is_layout_free(const Graph& graph, const Node& node) {
  if (!is_onnx_node(node, "DequantizeLinear") || !reads_planes(graph, node) || node.inputs.size() < 2 ||
      node.attributes.int_or("block_size", 0) != 0)
    return false;
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoValue) continue;
    const auto shape = graph.value(node.inputs[i]).type.static_shape();
    if (!shape || shape_numel(*shape) != 1) return false;
  }
  return true;
}

// Whether `node` is one of ONNX Runtime's quantized element-wise ops over tensors of rank 4, which
// the cpu EP's registry kernels run element by element alike in any layout: QLinearAdd or
// QLinearMul of two tensors of one shape, QLinearSigmoid or QLinearLeakyRelu (their claim checks
// took one scale and zero point per tensor).
bool qlinear_elementwise_is_layout_free(const Graph& graph, const Node& node) {
  if (!reads_planes(graph, node)) return false;
  if (is_microsoft_node(node, "QLinearSigmoid") || is_microsoft_node(node, "QLinearLeakyRelu")) return true;
  if (!is_microsoft_node(node, "QLinearAdd") && !is_microsoft_node(node, "QLinearMul")) return false;
  return node.inputs.size() > 3 && node.inputs[3] != kNoValue &&
         always_same_shape(graph.value(node.inputs[0]).type, graph.value(node.inputs[3]).type);
}

// The element-wise inputs of such a node: A and B, or X.
std::vector<ValueId> elementwise_inputs(const Node& node) {
  if (node.op_type == "QLinearAdd" || node.op_type == "QLinearMul") return {node.inputs[0], node.inputs[3]};
  return {node.inputs[0]};
}

// The values a Concat joins (every input), or ONNX Runtime's QLinearConcat (every third from
// input 2 on).
std::vector<ValueId> joined_inputs(const Node& node) {
  if (node.domain.empty()) return node.inputs;
  std::vector<ValueId> joined;
  for (std::size_t i = 2; i < node.inputs.size(); i += 3) joined.push_back(node.inputs[i]);
  return joined;
}

// Whether `node` is a Concat of uint8 or int8 tensors of rank 4 along their channels (axis 1),
// or a QLinearConcat so: channels-last, the channels are the last axis, so it keeps its inputs
// and output in one layout and joins them there.
bool concat_of_channels(const Graph& graph, const Node& node) {
  const bool concat = is_onnx_node(node, "Concat") || is_microsoft_node(node, "QLinearConcat");
  if (!concat || node.outputs.size() != 1 || node.outputs[0] == kNoValue) return false;
  const std::vector<ValueId> joined = joined_inputs(node);
  if (joined.empty()) return false;
  for (ValueId v : joined) {
    if (v == kNoValue) return false;
    const ValueType& t = graph.value(v).type;
    if (!is_byte_type(t.dtype) || !t.shape || t.shape->size() != 4) return false;
  }
  const int64_t axis = node.attributes.int_or("axis", node.domain.empty() && node.opset < 4 ? 1 : 0);
  return axis == 1 || axis == -3;
}

// Whether `node` is a QLinearGlobalAveragePool of X of rank 4 as ONNX lays it out (channels_last
// 0): its output, N x C x 1 x 1, is the same bytes in either layout.
bool qlinear_global_average_pool_reads_channels_last(const Graph& graph, const Node& node) {
  return is_microsoft_node(node, "QLinearGlobalAveragePool") && reads_planes(graph, node) &&
         node.attributes.int_or("channels_last", 0) == 0;
}

// Whether `node` is a GlobalAveragePool of float X of rank 4 (its output, N x C x 1 x 1, is the
// same bytes in either layout).
bool global_average_pool_reads_channels_last(const Graph& graph, const Node& node) {
  return is_onnx_node(node, "GlobalAveragePool") && reads_planes(graph, node) &&
         graph.value(node.inputs[0]).type.dtype == DType::kFloat32;
}

// Values that a step keeps in one layout: its inputs and output (a quantized Add, a MaxPool, a
// DequantizeLinear, a QLinear element-wise op, a Concat along the channels).
struct OneLayout {
  std::vector<ValueId> inputs;
  ValueId output = kNoValue;
};

}  // namespace

Expected<std::vector<FusedStep>> channels_last_steps(const Partition& partition, const std::vector<FusedStep>& fused) {
  const Graph& graph = *partition.graph;
  std::unordered_set<NodeId> fused_members;
  for (const FusedStep& f : fused) fused_members.insert(f.nodes.begin(), f.nodes.end());
  std::vector<const Node*> convs, max_pools, global_pools, qlinear_global_pools, concats;
  std::vector<OneLayout> one_layout;
  for (NodeId id : partition.nodes) {
    const Node& node = graph.node(id);
    if (fused_members.contains(id)) continue;
    if (conv_supports_channels_last(graph, node)) convs.push_back(&node);
    if (global_average_pool_reads_channels_last(graph, node)) global_pools.push_back(&node);
    if (qlinear_global_average_pool_reads_channels_last(graph, node)) qlinear_global_pools.push_back(&node);
    if (qlinear_elementwise_is_layout_free(graph, node))
      one_layout.push_back({elementwise_inputs(node), node.outputs[0]});
    if (concat_of_channels(graph, node)) {
      concats.push_back(&node);
      one_layout.push_back({joined_inputs(node), node.outputs[0]});
    }
    const bool max_pool = max_pool_supports_channels_last(graph, node);
    if (max_pool) max_pools.push_back(&node);
    if (max_pool || dequantize_is_layout_free(graph, node)) one_layout.push_back({{node.inputs[0]}, node.outputs[0]});
  }
  for (const FusedStep& f : fused)
    if (is_quantized_add(graph, f)) one_layout.push_back({{f.inputs[0], f.inputs[3]}, f.outputs[0]});

  // Every read of a value by a step of the partition, and those that can take it channels-last.
  std::unordered_map<ValueId, int> reads, layout_reads;
  for (NodeId id : partition.nodes) {
    if (fused_members.contains(id)) continue;
    const Node& node = graph.node(id);
    for (ValueId v : node.inputs) ++reads[v];
    for (ValueId v : node.implicit_inputs) ++reads[v];
  }
  for (const FusedStep& f : fused)
    for (ValueId v : f.inputs) ++reads[v];
  for (const Node* conv : convs) ++layout_reads[conv->inputs[0]];
  for (const Node* pool : global_pools) ++layout_reads[pool->inputs[0]];
  for (const Node* pool : qlinear_global_pools) ++layout_reads[pool->inputs[0]];
  for (const OneLayout& step : one_layout)
    for (ValueId v : step.inputs) ++layout_reads[v];

  // Values those steps write and only those steps read (convolutions as X).
  const std::unordered_set<ValueId> handed_out(partition.outputs.begin(), partition.outputs.end());
  std::unordered_set<ValueId> channels_last;
  auto consider = [&](ValueId v) {
    if (!handed_out.contains(v) && !graph.value(v).is_graph_output && reads[v] > 0 && reads[v] == layout_reads[v])
      channels_last.insert(v);
  };
  for (const Node* conv : convs) consider(conv->outputs[0]);
  for (const OneLayout& step : one_layout) consider(step.output);
  // A step of one layout where one of its values stays as ONNX has it keeps all of them so,
  // until no step changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (const OneLayout& step : one_layout) {
      std::vector<ValueId> values = step.inputs;
      values.push_back(step.output);
      if (std::ranges::all_of(values, [&](ValueId v) { return channels_last.contains(v); })) continue;
      for (ValueId v : values) changed = channels_last.erase(v) > 0 || changed;
    }
  }

  std::vector<FusedStep> steps;
  auto add_step = [&](const Node& node, Expected<std::unique_ptr<Kernel>> kernel) -> Expected<void> {
    if (!kernel) return forward_error(std::move(kernel), fmt::format("building {} channels-last", node.describe()));
    FusedStep step;
    step.nodes = {node.id};
    step.inputs = node.inputs;
    step.outputs = node.outputs;
    step.kernel = std::move(*kernel);
    steps.push_back(std::move(step));
    return {};
  };
  for (const Node* conv : convs) {
    const ChannelsLast layout{channels_last.contains(conv->inputs[0]), channels_last.contains(conv->outputs[0])};
    if (!layout.any()) continue;
    if (auto r = add_step(*conv, make_qlinear_conv(NodeContext(graph, *conv), layout)); !r)
      return std::unexpected(std::move(r.error()));
  }
  for (const Node* max_pool : max_pools) {
    if (!channels_last.contains(max_pool->outputs[0])) continue;
    if (auto r = add_step(*max_pool, make_max_pool_channels_last(NodeContext(graph, *max_pool))); !r)
      return std::unexpected(std::move(r.error()));
  }
  for (const Node* pool : global_pools) {
    if (!channels_last.contains(pool->inputs[0])) continue;
    if (auto r = add_step(*pool, make_global_average_pool_channels_last()); !r)
      return std::unexpected(std::move(r.error()));
  }
  for (const Node* concat : concats) {
    if (!channels_last.contains(concat->outputs[0])) continue;
    auto kernel = concat->domain.empty() ? make_concat_channels_last() : make_qlinear_concat_channels_last();
    if (auto r = add_step(*concat, std::move(kernel)); !r) return std::unexpected(std::move(r.error()));
  }
  for (const Node* pool : qlinear_global_pools) {
    if (!channels_last.contains(pool->inputs[0])) continue;
    if (auto r = add_step(*pool, make_qlinear_global_average_pool_channels_last(NodeContext(graph, *pool))); !r)
      return std::unexpected(std::move(r.error()));
  }
  return steps;
}

}  // namespace nxrt::cpu
