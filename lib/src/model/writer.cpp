// IR -> ONNX protobuf, deterministic (attributes in name order).
#include "writer.h"

#include <fmt/format.h>

#include "convert.h"
#include "nxrt/model/tensor_proto.h"

namespace nxrt {
namespace {

Expected<void> attribute_to_proto(const std::string& name, const Attribute& a, onnx::AttributeProto& p) {
  using A = onnx::AttributeProto;
  p.set_name(name);
  return std::visit(
      [&](const auto& v) -> Expected<void> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          p.set_type(A::INT);
          p.set_i(v);
        } else if constexpr (std::is_same_v<T, float>) {
          p.set_type(A::FLOAT);
          p.set_f(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          p.set_type(A::STRING);
          p.set_s(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          p.set_type(A::INTS);
          for (auto x : v) p.add_ints(x);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          p.set_type(A::FLOATS);
          for (auto x : v) p.add_floats(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          p.set_type(A::STRINGS);
          for (const auto& x : v) p.add_strings(x);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          p.set_type(A::TENSOR);
          tensor_to_proto(v, *p.mutable_t());
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) {
          p.set_type(A::GRAPH);
          return graph_to_proto(*v, *p.mutable_g());
        } else {
          static_assert(std::is_same_v<T, OpaqueAttribute>);
          if (!p.ParseFromString(v.proto))
            return fail(ErrorCode::kRuntime, fmt::format("attribute '{}' could not be written back", name),
                        "its serialized form, kept from the model it was read from, does not parse");
          p.set_name(name);
        }
        return {};
      },
      a.value);
}

}  // namespace

void value_info_to_proto(const Value& value, onnx::ValueInfoProto& proto) {
  proto.set_name(value.name);
  if (value.type.kind == ValueType::Kind::kTensor && value.type.dtype != DType::kUndefined)
    type_to_proto(value.type, *proto.mutable_type());
}

Expected<void> node_to_proto(const Graph& graph, const Node& node, onnx::NodeProto& proto) {
  proto.set_name(node.name);
  proto.set_op_type(node.op_type);
  if (!node.domain.empty()) proto.set_domain(node.domain);
  for (ValueId v : node.inputs) proto.add_input(v == kNoValue ? std::string() : graph.value(v).name);
  for (ValueId v : node.outputs) proto.add_output(v == kNoValue ? std::string() : graph.value(v).name);
  for (const auto& [name, attr] : node.attributes.all())
    if (auto r = attribute_to_proto(name, attr, *proto.add_attribute()); !r)
      return forward_error(std::move(r), fmt::format("writing node {}", node.describe()));
  return {};
}

Expected<void> graph_to_proto(const Graph& graph, onnx::GraphProto& proto) {
  proto.set_name(graph.name);
  for (const Node& n : graph.nodes)
    if (auto r = node_to_proto(graph, n, *proto.add_node()); !r) return r;
  for (const Value& v : graph.values) {
    if (!v.initializer) continue;
    auto t = v.initializer->materialize();
    if (!t) return forward_error(std::move(t), fmt::format("writing initializer '{}'", v.name));
    auto* init = proto.add_initializer();
    tensor_to_proto(*t, *init);
    init->set_name(v.name);
  }
  for (ValueId v : graph.inputs) value_info_to_proto(graph.value(v), *proto.add_input());
  for (ValueId v : graph.outputs) value_info_to_proto(graph.value(v), *proto.add_output());
  for (const Value& v : graph.values)
    if (v.producer >= 0 && !v.is_graph_output && v.type.dtype != DType::kUndefined)
      value_info_to_proto(v, *proto.add_value_info());
  return {};
}

}  // namespace nxrt
