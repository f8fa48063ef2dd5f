// MergeDuplicateNodes: one node for each computation the graph repeats.
#include <fmt/format.h>

#include <bit>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "nxrt/ir/passes.h"

namespace nxrt {
namespace {

// Ops whose every run draws new values: two of them with the same inputs still differ.
bool draws_random_values(const Node& node) {
  static const std::set<std::string, std::less<>> kRandom = {
      "Bernoulli", "Dropout", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"};
  return kRandom.contains(node.op_type);
}

// The attributes as text that is equal exactly when they are: numbers and strings only (floats
// by their bits, so a NaN matches itself); nullopt for tensors, graphs and the rest, which
// this pass leaves alone.
std::optional<std::string> attribute_key(const AttributeMap& attrs) {
  std::string key;
  for (const auto& [name, a] : attrs.all()) {
    key += name;
    key += '=';
    if (const auto* i = std::get_if<int64_t>(&a.value)) {
      key += fmt::format("i{}", *i);
    } else if (const auto* f = std::get_if<float>(&a.value)) {
      key += fmt::format("f{:x}", std::bit_cast<uint32_t>(*f));
    } else if (const auto* s = std::get_if<std::string>(&a.value)) {
      key += fmt::format("s{}:{}", s->size(), *s);
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&a.value)) {
      key += fmt::format("I{}", fmt::join(*is, ","));
    } else if (const auto* fs = std::get_if<std::vector<float>>(&a.value)) {
      key += 'F';
      for (float v : *fs) key += fmt::format("{:x},", std::bit_cast<uint32_t>(v));
    } else if (const auto* ss = std::get_if<std::vector<std::string>>(&a.value)) {
      key += 'S';
      for (const auto& v : *ss) key += fmt::format("{}:{},", v.size(), v);
    } else {
      return std::nullopt;
    }
    key += ';';
  }
  return key;
}

// What makes two nodes the same computation: op, opset, inputs and attributes; nullopt for
// nodes that may not merge.
std::optional<std::string> computation_key(const Node& node) {
  if (!node.domain.empty() || draws_random_values(node) || !node.implicit_inputs.empty()) return std::nullopt;
  auto attrs = attribute_key(node.attributes);
  if (!attrs) return std::nullopt;
  return fmt::format("{}/{}/{}/{}/{}", node.op_type, node.opset, fmt::join(node.inputs, ","), node.outputs.size(),
                     *attrs);
}

}  // namespace

Expected<std::vector<std::string>> MergeDuplicateNodes::run(Graph& graph) const {
  // Values subgraphs read by name: renaming their producer's output would break the reference.
  std::unordered_set<ValueId> read_by_name;
  for (const Node& node : graph.nodes) read_by_name.insert(node.implicit_inputs.begin(), node.implicit_inputs.end());
  auto replaceable = [&](ValueId v) {
    if (v == kNoValue) return true;
    const Value& value = graph.value(v);
    return !value.is_graph_output && !read_by_name.contains(v);
  };

  std::vector<std::string> changes;
  std::vector<NodeId> merged;
  std::unordered_map<std::string, NodeId> first_of;
  std::unordered_map<ValueId, ValueId> same_as;  // a merged node's output -> the kept node's
  for (Node& node : graph.nodes) {
    for (ValueId& v : node.inputs)
      if (auto s = same_as.find(v); s != same_as.end()) v = s->second;
    const auto key = computation_key(node);
    if (!key) continue;
    const auto [first, inserted] = first_of.emplace(*key, node.id);
    if (inserted) continue;
    const Node& kept = graph.node(first->second);
    bool mergeable = true;
    for (std::size_t o = 0; o < node.outputs.size() && mergeable; ++o)
      mergeable = replaceable(node.outputs[o]) && (node.outputs[o] == kNoValue || kept.outputs[o] != kNoValue);
    if (!mergeable) continue;
    for (std::size_t o = 0; o < node.outputs.size(); ++o)
      if (node.outputs[o] != kNoValue) same_as.emplace(node.outputs[o], kept.outputs[o]);
    merged.push_back(node.id);
    changes.push_back(
        fmt::format("merged {} '{}' into '{}': the same inputs and attributes", node.op_type, node.name, kept.name));
  }
  if (!merged.empty()) remove_nodes(graph, merged);
  return changes;
}

}  // namespace nxrt
