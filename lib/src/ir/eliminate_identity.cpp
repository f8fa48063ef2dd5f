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

// `from`'s readers read `to` instead; the consumer lists follow. (A reader that reads `from`
// twice is listed twice: replacing its inputs again finds nothing left to replace.)
void move_readers(Graph& graph, ValueId from, ValueId to) {
  std::vector<NodeId> readers = std::move(graph.value(from).consumers);
  graph.value(from).consumers.clear();
  for (NodeId reader : readers)
    for (ValueId& v : graph.nodes[static_cast<std::size_t>(reader)].inputs)
      if (v == from) v = to;
  auto& consumers = graph.value(to).consumers;
  consumers.insert(consumers.end(), readers.begin(), readers.end());
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
      move_readers(graph, y, x);
      changes.push_back(fmt::format("removed Identity '{}': its readers read '{}' instead of '{}'", identity.name,
                                    in.name, out.name));
    } else if (in.producer >= 0 && !in.is_graph_output) {
      // y is a graph output that keeps its name: x's producer writes y, and x's readers read y.
      Node& producer = graph.nodes[static_cast<std::size_t>(in.producer)];
      for (ValueId& v : producer.outputs)
        if (v == x) v = y;
      if (!out.type.shape && in.type.shape) graph.value(y).type = graph.value(x).type;
      move_readers(graph, x, y);
      changes.push_back(fmt::format("removed Identity '{}': '{}' writes the graph output '{}' directly",
                                    identity.name, producer.name, out.name));
    } else {
      continue;  // a graph input or initializer copied to an output: the copy is the node's work
    }
    // The consumer lists move with the readers (a later Identity's move_readers needs them);
    // producers and the removed nodes' entries are set right by remove_nodes, which rebuilds
    // the links. (No later Identity reads a producer this changed: x has no readers left, and
    // y is an output of the graph.)
    identity.inputs.clear();
    identity.outputs.clear();
    removed.push_back(identity.id);
  }
  if (!removed.empty()) remove_nodes(graph, removed);
  return changes;
}

}  // namespace nxrt
