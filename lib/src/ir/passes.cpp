// ConstantToInitializer and the default pass list.
#include "nxrt/ir/passes.h"

#include <fmt/format.h>

#include <set>

namespace nxrt {
namespace {

// The tensor a Constant node produces, from whichever value attribute it carries.
std::optional<Tensor> constant_value(const Node& node) {
  const AttributeMap& a = node.attributes;
  if (const Tensor* t = a.get_tensor("value")) return *t;
  if (auto f = a.get_float("value_float")) return Tensor::from_vector<float>({}, {*f});
  if (auto fs = a.get_floats("value_floats")) return Tensor::from_vector<float>({static_cast<int64_t>(fs->size())}, *fs);
  if (auto i = a.get_int("value_int")) return Tensor::from_vector<int64_t>({}, {*i});
  if (auto is = a.get_ints("value_ints")) return Tensor::from_vector<int64_t>({static_cast<int64_t>(is->size())}, *is);
  return std::nullopt;  // strings and sparse values stay as nodes: the EP decides
}

bool is_identity_of_initializer(const Graph& graph, const Node& node) {
  if (node.op_type != "Identity" || !node.domain.empty() || node.inputs.size() != 1 || node.outputs.size() != 1 ||
      node.inputs[0] == kNoValue || node.outputs[0] == kNoValue)
    return false;
  const Value& in = graph.value(node.inputs[0]);
  const Value& out = graph.value(node.outputs[0]);
  return in.initializer && !in.is_graph_input && !in.is_outer_scope && !out.is_graph_output;
}

}  // namespace

void remove_nodes(Graph& graph, const std::vector<NodeId>& doomed) {
  const std::set<NodeId> gone(doomed.begin(), doomed.end());
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size() - gone.size());
  for (Node& n : graph.nodes)
    if (!gone.contains(n.id)) kept.push_back(std::move(n));
  for (std::size_t i = 0; i < kept.size(); ++i) kept[i].id = static_cast<NodeId>(i);
  graph.nodes = std::move(kept);
  graph.rebuild_links();
}

Expected<std::vector<std::string>> ConstantToInitializer::run(Graph& graph) const {
  std::vector<std::string> changes;
  std::vector<NodeId> folded;
  for (const Node& node : graph.nodes) {
    if (is_identity_of_initializer(graph, node)) {
      // Exporters share one weight between layers through Identity nodes: read it directly.
      Value& out = graph.value(node.outputs[0]);
      const Value& in = graph.value(node.inputs[0]);
      out.type = in.type;
      out.initializer = in.initializer;
      folded.push_back(node.id);
      changes.push_back(fmt::format("folded Identity '{}' of initializer '{}' into initializer '{}'", node.name,
                                    in.name, out.name));
      continue;
    }
    if (node.op_type != "Constant" || !node.domain.empty() || node.outputs.size() != 1 || node.outputs[0] == kNoValue)
      continue;
    auto tensor = constant_value(node);
    if (!tensor) continue;
    Value& out = graph.value(node.outputs[0]);
    out.type.dtype = tensor->dtype();
    std::vector<Dim> dims;
    for (int64_t d : tensor->shape()) dims.push_back(Dim{d, {}});
    out.type.shape = std::move(dims);
    out.initializer = WeightHandle::resident(std::move(*tensor));
    folded.push_back(node.id);
    changes.push_back(fmt::format("folded Constant '{}' into initializer '{}'", node.name, out.name));
  }
  if (!folded.empty()) remove_nodes(graph, folded);
  return changes;
}

std::vector<std::unique_ptr<OptimizerPass>> default_passes() {
  std::vector<std::unique_ptr<OptimizerPass>> passes;
  passes.push_back(std::make_unique<ConstantToInitializer>());
  passes.push_back(std::make_unique<EliminateIdentity>());
  passes.push_back(std::make_unique<ExpandOrtFusions>());
  passes.push_back(std::make_unique<FoldShapeComputations>());
  passes.push_back(std::make_unique<MergeDuplicateNodes>());
  passes.push_back(std::make_unique<FuseQdqNodeGroups>());
  passes.push_back(std::make_unique<DequantizeConstants>());
  return passes;
}

}  // namespace nxrt
