// Graph helpers: lookups, value interning, link rebuilding, descriptions.
#include "nxrt/ir/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nxrt {

std::string Dim::to_string() const {
  if (known()) return std::to_string(size);
  return symbol.empty() ? "?" : symbol;
}

bool ValueType::has_static_shape() const {
  if (!shape) return false;
  for (const auto& d : *shape)
    if (!d.known()) return false;
  return true;
}

std::optional<Shape> ValueType::static_shape() const {
  if (!has_static_shape()) return std::nullopt;
  Shape s;
  for (const auto& d : *shape) s.push_back(d.size);
  return s;
}

std::string ValueType::to_string() const {
  std::string base(dtype_name(dtype));
  switch (kind) {
    case Kind::kSequence: return fmt::format("seq({})", base);
    case Kind::kOptional:
      return optional_of == Kind::kSequence ? fmt::format("optional(seq({}))", base)
                                            : fmt::format("optional({})", base);
    case Kind::kMap: return "map";
    case Kind::kUnknown: return "?";
    case Kind::kTensor: break;
  }
  if (!shape) return base + "[...]";
  std::vector<std::string> dims;
  for (const auto& d : *shape) dims.push_back(d.to_string());
  return fmt::format("{}[{}]", base, fmt::join(dims, ","));
}

std::string Node::describe() const {
  return fmt::format("'{}' ({}::{}, opset {})", name, display_domain(domain), op_type, opset);
}

std::optional<ValueId> Graph::find_value(const std::string& value_name) const {
  auto it = value_index.find(value_name);
  if (it == value_index.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeId> Graph::find_node(const std::string& node_name) const {
  for (const auto& n : nodes)
    if (n.name == node_name) return n.id;
  return std::nullopt;
}

ValueId Graph::intern_value(const std::string& value_name) {
  auto [it, inserted] = value_index.emplace(value_name, static_cast<ValueId>(values.size()));
  if (inserted) {
    Value v;
    v.name = value_name;
    values.push_back(std::move(v));
  }
  return it->second;
}

void Graph::rebuild_links() {
  for (auto& v : values) {
    v.producer = -1;
    v.consumers.clear();
  }
  for (const auto& n : nodes) {
    for (const auto* reads : {&n.inputs, &n.implicit_inputs})
      for (ValueId in : *reads)
        if (in != kNoValue) value(in).consumers.push_back(n.id);
    for (ValueId out : n.outputs)
      if (out != kNoValue) value(out).producer = n.id;
  }
}

std::vector<ValueId> mark_node_outputs_as_graph_outputs(Graph& graph) {
  std::vector<ValueId> added;
  for (const Node& n : graph.nodes)
    for (ValueId v : n.outputs) {
      if (v == kNoValue || graph.value(v).is_graph_output) continue;
      graph.value(v).is_graph_output = true;
      graph.outputs.push_back(v);
      added.push_back(v);
    }
  return added;
}

std::string normalize_domain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string() : std::string(domain);
}

std::string display_domain(std::string_view domain) {
  return domain.empty() ? std::string("ai.onnx") : std::string(domain);
}

}  // namespace nxrt
