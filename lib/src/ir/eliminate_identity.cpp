// EliminateIdentity: readers of an Identity's output read its input instead, or its input's
// producer writes the output directly.
#include <fmt/format.h>

#include <unordered_set>

#include "nxrt/ir/passes.h"

namespace nxrt {
namespace {

bool is_plain_identity(const Node& node) {
  return node.domain.empty() && node.op_type == "Identity" && node.inputs.size() == 1 && node.outputs.size() == 1 &&
         node.inputs[0] != kNoValue && node.outputs[0] != kNoValue && node.implicit_inputs.empty();
}

// Replaces every read of `from` by the graph's nodes with `to`.
void redirect_readers(Graph& graph, ValueId from, ValueId to) {
  for (Node& node : graph.nodes)
    for (ValueId& v : node.inputs)
      if (v == from) v = to;
}

}  // namespace

Expected<std::vector<std::string>> EliminateIdentity::run(Graph& graph) const {
  // Values subgraphs read by name: neither their producer nor their readers may change.
  std::unordered_set<ValueId> read_by_name;
  for (const Node& node : graph.nodes) read_by_name.insert(node.implicit_inputs.begin(), node.implicit_inputs.end());

  std::vector<std::string> changes;
  std::vector<NodeId> removed;
  for (Node& identity : graph.nodes) {
    if (!is_plain_identity(identity)) continue;
    const ValueId x = identity.inputs[0], y = identity.outputs[0];
    if (read_by_name.contains(x) || read_by_name.contains(y)) continue;
    const Value& in = graph.value(x);
    const Value& out = graph.value(y);
    if (!out.is_graph_output) {
      // y is internal: its readers take x as it is.
      redirect_readers(graph, y, x);
      changes.push_back(fmt::format("removed Identity '{}': its readers read '{}' instead of '{}'", identity.name,
                                    in.name, out.name));
    } else if (in.producer >= 0 && !in.is_graph_output) {
      // y is a graph output that keeps its name: x's producer writes y, and x's readers read y.
      Node& producer = graph.nodes[static_cast<std::size_t>(in.producer)];
      for (ValueId& v : producer.outputs)
        if (v == x) v = y;
      if (!out.type.shape && in.type.shape) graph.value(y).type = graph.value(x).type;
      redirect_readers(graph, x, y);
      changes.push_back(fmt::format("removed Identity '{}': '{}' writes the graph output '{}' directly",
                                    identity.name, producer.name, out.name));
    } else {
      continue;  // a graph input or initializer copied to an output: the copy is the node's work
    }
    // Drop the node's links now, so later Identities see the graph as it will be.
    identity.inputs.clear();
    identity.outputs.clear();
    removed.push_back(identity.id);
    graph.rebuild_links();
  }
  if (!removed.empty()) remove_nodes(graph, removed);
  return changes;
}

}  // namespace nxrt
