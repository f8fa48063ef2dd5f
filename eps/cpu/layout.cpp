// Finds the values the cpu EP stores channels-last in a partition (see layout.h).
#include "layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "fusion.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// Whether `node` is a QLinearConv whose kernel can read X and write Y channels-last: over 2-D
// planes, with W's shape known and one group, or one input and one output channel per group.
bool supports_channels_last(const Graph& graph, const Node& node) {
  if (!node.domain.empty() || node.op_type != "QLinearConv" || node.inputs.size() < 8 || node.outputs.size() != 1 ||
      node.inputs[0] == kNoValue || node.outputs[0] == kNoValue)
    return false;
  const ValueType& x = graph.value(node.inputs[0]).type;
  const auto w = graph.value(node.inputs[3]).type.static_shape();
  if (!x.shape || x.shape->size() != 4 || !w || w->size() != 4) return false;
  const int64_t group = node.attributes.int_or("group", 1);
  return group == 1 || ((*w)[1] == 1 && (*w)[0] == group);
}

}  // namespace

Expected<std::vector<FusedStep>> channels_last_steps(const Partition& partition, const std::vector<FusedStep>& fused) {
  const Graph& graph = *partition.graph;
  std::unordered_set<NodeId> fused_members;
  for (const FusedStep& f : fused) fused_members.insert(f.nodes.begin(), f.nodes.end());
  std::vector<const Node*> convs;
  std::vector<const FusedStep*> adds;
  for (NodeId id : partition.nodes)
    if (!fused_members.contains(id) && supports_channels_last(graph, graph.node(id))) convs.push_back(&graph.node(id));
  for (const FusedStep& f : fused)
    if (is_quantized_add(graph, f)) adds.push_back(&f);

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
  for (const FusedStep* add : adds) {
    ++layout_reads[add->inputs[0]];
    ++layout_reads[add->inputs[3]];
  }
  const std::unordered_set<ValueId> handed_out(partition.outputs.begin(), partition.outputs.end());
  std::unordered_set<ValueId> channels_last;
  auto consider = [&](ValueId v) {
    if (!handed_out.contains(v) && !graph.value(v).is_graph_output && reads[v] > 0 && reads[v] == layout_reads[v])
      channels_last.insert(v);
  };
  for (const Node* conv : convs) consider(conv->outputs[0]);
  for (const FusedStep* add : adds) consider(add->outputs[0]);
  // An Add reads A and B and writes its output in one layout: where one of them stays as ONNX
  // has it, all three do, until no Add changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (const FusedStep* add : adds) {
      const ValueId values[] = {add->inputs[0], add->inputs[3], add->outputs[0]};
      if (std::ranges::all_of(values, [&](ValueId v) { return channels_last.contains(v); })) continue;
      for (ValueId v : values) changed = channels_last.erase(v) > 0 || changed;
    }
  }

  std::vector<FusedStep> steps;
  for (const Node* conv : convs) {
    const ChannelsLast layout{channels_last.contains(conv->inputs[0]), channels_last.contains(conv->outputs[0])};
    if (!layout.any()) continue;
    auto kernel = make_qlinear_conv(NodeContext(graph, *conv), layout);
    if (!kernel) return forward_error(std::move(kernel), fmt::format("building {} channels-last", conv->describe()));
    FusedStep step;
    step.nodes = {conv->id};
    step.inputs = conv->inputs;
    step.outputs = conv->outputs;
    step.kernel = std::move(*kernel);
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace nxrt::cpu
