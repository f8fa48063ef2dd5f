// Graph views for plugins and the OrtApi graph-reading functions (Graph_*, Node_*,
// ValueInfo_*, OpAttr_*), op attributes, and OrtModelEditorApi::CreateNode.
#include <fmt/format.h>

#include <cstring>
#include <set>

#include "host_api_decls.h"
#include "host_checks.h"
#include "nxrt/model/op_signature.h"
#include "nxrt/session/claims.h"

namespace nxrt::ort_plugin {
namespace {

// An OrtOpAttr from an nxrt attribute; graphs are attributes of type GRAPH without a value.
std::unique_ptr<OrtOpAttr> make_attr(const std::string& name, const Attribute& a) {
  auto out = std::make_unique<OrtOpAttr>();
  out->name = name;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) out->type = ORT_OP_ATTR_INT, out->i = v;
        else if constexpr (std::is_same_v<T, float>) out->type = ORT_OP_ATTR_FLOAT, out->f = v;
        else if constexpr (std::is_same_v<T, std::string>) out->type = ORT_OP_ATTR_STRING, out->s = v;
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) out->type = ORT_OP_ATTR_INTS, out->ints = v;
        else if constexpr (std::is_same_v<T, std::vector<float>>) out->type = ORT_OP_ATTR_FLOATS, out->floats = v;
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) out->type = ORT_OP_ATTR_STRINGS, out->strings = v;
        else if constexpr (std::is_same_v<T, Tensor>) out->type = ORT_OP_ATTR_TENSOR, out->tensor = v;
        else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) out->type = ORT_OP_ATTR_GRAPH;
        else out->type = ORT_OP_ATTR_UNDEFINED;
      },
      a.value);
  return out;
}

struct ViewBuilder {
  OrtGraph& view;
  const Graph& graph;

  OrtValueInfo* value(ValueId id) {
    if (id == kNoValue) return nullptr;
    auto& slot = view.values[id];
    if (!slot) {
      slot = std::make_unique<OrtValueInfo>();
      slot->graph = &view;
      slot->id = id;
      slot->name = graph.value(id).name;
      slot->type = type_info_of(graph.value(id).type);
    }
    return slot.get();
  }

  void add_node(const Node& n, const std::string& model_path) {
    auto node = std::make_unique<OrtNode>();
    node->graph = &view;
    node->node = &n;
    node->id = static_cast<std::size_t>(n.id);
    node->name = n.name;
    node->op_type = n.op_type;
    node->domain = n.domain;
    // ORT's since version: the operator version in force at the model's opset (Neg at opset 17
    // is Neg-13), which kernel registries match; the opset itself for operators ONNX lacks.
    const auto signature = op_signature(n.op_type, n.domain, n.opset);
    node->since_version = static_cast<int>(signature ? signature->since_version : n.opset);
    for (ValueId v : n.inputs) node->inputs.push_back(value(v));
    for (ValueId v : n.outputs) node->outputs.push_back(value(v));
    for (ValueId v : n.implicit_inputs) node->implicit_inputs.push_back(value(v));
    for (const auto& [name, attr] : n.attributes.all()) {
      node->attributes.push_back(make_attr(name, attr));
      if (auto* sub = std::get_if<std::shared_ptr<const Graph>>(&attr.value)) {
        auto nested = make_graph_view(**sub, model_path, view.ir_version);
        nested->parent = node.get();
        node->subgraphs.push_back(std::move(nested));
        node->subgraph_attributes.push_back(name);
      }
    }
    view.by_node[n.id] = node.get();
    view.nodes.push_back(std::move(node));
  }

  void set_opsets() {
    for (const auto& [domain, version] : graph.opset_imports) {
      view.opset_domains.push_back(domain);
      view.opset_versions.push_back(version);
    }
  }
};

}  // namespace

std::unique_ptr<OrtGraph> make_graph_view(const Graph& graph, const std::string& model_path, int64_t ir_version) {
  auto view = std::make_unique<OrtGraph>();
  view->graph = &graph;
  view->name = graph.name;
  view->model_path = model_path;
  view->ir_version = ir_version;
  ViewBuilder b{*view, graph};
  b.set_opsets();
  for (const Node& n : graph.nodes) b.add_node(n, model_path);
  for (ValueId v : graph.inputs) view->inputs.push_back(b.value(v));
  for (ValueId v : graph.outputs) view->outputs.push_back(b.value(v));
  for (std::size_t i = 0; i < graph.values.size(); ++i)
    if (graph.values[i].initializer) view->initializers.push_back(b.value(static_cast<ValueId>(i)));
  return view;
}

std::unique_ptr<OrtGraph> make_subgraph_view(const Graph& graph, std::span<const NodeId> nodes, const std::string& name,
                                             const std::string& model_path) {
  auto view = std::make_unique<OrtGraph>();
  view->graph = &graph;
  view->name = name;
  view->model_path = model_path;
  view->ir_version = graph.ir_version;
  ViewBuilder b{*view, graph};
  b.set_opsets();
  for (NodeId id : nodes) b.add_node(graph.node(id), model_path);
  Partition p;
  p.graph = &graph;
  p.nodes.assign(nodes.begin(), nodes.end());
  compute_boundary(graph, p);
  for (ValueId v : p.inputs) view->inputs.push_back(b.value(v));
  for (ValueId v : p.outputs) view->outputs.push_back(b.value(v));
  std::set<ValueId> seen;
  for (NodeId id : nodes)
    for (ValueId v : graph.node(id).inputs)
      if (v != kNoValue && is_constant_initializer(graph.value(v)) && seen.insert(v).second) view->initializers.push_back(b.value(v));
  return view;
}

std::unique_ptr<OrtNode> make_fused_node(const OrtGraph& view, const std::string& name, std::span<const ValueId> inputs,
                                         std::span<const ValueId> outputs) {
  auto node = std::make_unique<OrtNode>();
  node->name = name;
  node->op_type = name;
  node->domain = "com.nxrt.fused";
  auto add = [&](ValueId v, std::vector<OrtValueInfo*>& into) {
    auto info = std::make_unique<OrtValueInfo>();
    info->name = view.graph->value(v).name;
    info->type = type_info_of(view.graph->value(v).type);
    into.push_back(info.get());
    node->own_values.push_back(std::move(info));
  };
  for (ValueId v : inputs) add(v, node->inputs);
  for (ValueId v : outputs) add(v, node->outputs);
  return node;
}

namespace api {
namespace {

// Copies a vector of pointers into a caller's array of `n` entries, checking the array and its size.
template <class From, class T>
OrtStatus* copy_array(const std::vector<From*>& from, const T** to, size_t n, const char* what) {
  if (n < from.size())
    return invalid_argument(fmt::format("OrtApi::{}: array of {} entries is too small; {} needed", what, n, from.size()));
  if (!from.empty() && !to) return invalid_argument(fmt::format("OrtApi::{}: the array is NULL", what));
  for (size_t i = 0; i < from.size(); ++i) to[i] = from[i];
  return nullptr;
}

const Value* value_of(const OrtValueInfo* info) {
  return info->graph && info->id != kNoValue ? &info->graph->graph->value(info->id) : nullptr;
}

// The consumers of a value inside the view, with the input index each reads it at.
std::vector<std::pair<const OrtNode*, int64_t>> consumers_of(const OrtValueInfo* info) {
  std::vector<std::pair<const OrtNode*, int64_t>> out;
  const Value* v = value_of(info);
  if (!v) return out;
  std::set<NodeId> seen;
  for (NodeId c : v->consumers) {
    if (!seen.insert(c).second) continue;
    auto it = info->graph->by_node.find(c);
    if (it == info->graph->by_node.end()) continue;
    const Node& n = info->graph->graph->node(c);
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      if (n.inputs[i] == info->id) out.emplace_back(it->second, static_cast<int64_t>(i));
    for (ValueId imp : n.implicit_inputs)
      if (imp == info->id) out.emplace_back(it->second, -1);
  }
  return out;
}

}  // namespace

// Value infos
OrtStatus* GetValueInfoName(const OrtValueInfo* value_info, const char** name) {
  NXRT_CHECK_ARGS(value_info, name);
  *name = value_info->name.c_str();
  return nullptr;
}

OrtStatus* GetValueInfoTypeInfo(const OrtValueInfo* value_info, const OrtTypeInfo** type_info) {
  NXRT_CHECK_ARGS(value_info, type_info);
  *type_info = &value_info->type;
  return nullptr;
}

OrtStatus* ValueInfo_GetValueProducer(const OrtValueInfo* value_info, const OrtNode** producer_node,
                                      size_t* producer_output_index) {
  NXRT_CHECK_ARGS(value_info, producer_node);
  *producer_node = nullptr;
  const Value* v = value_of(value_info);
  if (!v || v->producer < 0) return nullptr;
  auto it = value_info->graph->by_node.find(v->producer);
  if (it == value_info->graph->by_node.end()) return nullptr;
  *producer_node = it->second;
  if (producer_output_index) {
    const auto& outs = value_info->graph->graph->node(v->producer).outputs;
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i] == value_info->id) *producer_output_index = i;
  }
  return nullptr;
}

OrtStatus* ValueInfo_GetValueNumConsumers(const OrtValueInfo* value_info, size_t* num_consumers) {
  NXRT_CHECK_ARGS(value_info, num_consumers);
  *num_consumers = consumers_of(value_info).size();
  return nullptr;
}

OrtStatus* ValueInfo_GetValueConsumers(const OrtValueInfo* value_info, const OrtNode** nodes, int64_t* input_indices,
                                       size_t num_consumers) {
  NXRT_CHECK_ARGS(value_info);
  const auto consumers = consumers_of(value_info);
  if (num_consumers < consumers.size())
    return invalid_argument(fmt::format("OrtApi::ValueInfo_GetValueConsumers: array of {} entries is too small; {} needed",
                                        num_consumers, consumers.size()));
  if (!consumers.empty()) NXRT_CHECK_ARGS(nodes, input_indices);
  for (size_t i = 0; i < consumers.size(); ++i) {
    nodes[i] = consumers[i].first;
    input_indices[i] = consumers[i].second;
  }
  return nullptr;
}

OrtStatus* ValueInfo_GetInitializerValue(const OrtValueInfo* value_info, const OrtValue** initializer_value) {
  NXRT_CHECK_ARGS(value_info, initializer_value);
  *initializer_value = nullptr;
  const Value* v = value_of(value_info);
  if (!v || !v->initializer)
    return invalid_argument(fmt::format("OrtApi::ValueInfo_GetInitializerValue: '{}' is not an initializer", value_info->name));
  if (!value_info->initializer) {
    auto tensor = v->initializer->materialize();
    if (!tensor) return make_status(ORT_FAIL, fmt::format("OrtApi::ValueInfo_GetInitializerValue: {}", tensor.error().what));
    const_cast<OrtValueInfo*>(value_info)->initializer = std::make_unique<OrtValue>(OrtValue{{}, *tensor, tensor->dtype()});
  }
  *initializer_value = value_info->initializer.get();
  return nullptr;
}

OrtStatus* ValueInfo_GetExternalInitializerInfo(const OrtValueInfo* value_info, OrtExternalInitializerInfo** info) {
  NXRT_CHECK_ARGS(value_info, info);
  // nxrt hands initializers over as values (mapped, not copied), never as file regions.
  *info = nullptr;
  return nullptr;
}

OrtStatus* ValueInfo_IsRequiredGraphInput(const OrtValueInfo* value_info, bool* out) {
  NXRT_CHECK_ARGS(value_info, out);
  const Value* v = value_of(value_info);
  *out = v && v->is_graph_input && !v->initializer;
  return nullptr;
}

OrtStatus* ValueInfo_IsOptionalGraphInput(const OrtValueInfo* value_info, bool* out) {
  NXRT_CHECK_ARGS(value_info, out);
  const Value* v = value_of(value_info);
  *out = v && v->is_graph_input && v->initializer;
  return nullptr;
}

OrtStatus* ValueInfo_IsGraphOutput(const OrtValueInfo* value_info, bool* out) {
  NXRT_CHECK_ARGS(value_info, out);
  const Value* v = value_of(value_info);
  *out = v && v->is_graph_output;
  return nullptr;
}

OrtStatus* ValueInfo_IsConstantInitializer(const OrtValueInfo* value_info, bool* out) {
  NXRT_CHECK_ARGS(value_info, out);
  const Value* v = value_of(value_info);
  *out = v && is_constant_initializer(*v);
  return nullptr;
}

OrtStatus* ValueInfo_IsFromOuterScope(const OrtValueInfo* value_info, bool* out) {
  NXRT_CHECK_ARGS(value_info, out);
  const Value* v = value_of(value_info);
  *out = v && v->is_outer_scope;
  return nullptr;
}

void ReleaseValueInfo(OrtValueInfo* input) {
  // Value infos belong to their graph view or node; a plugin never owns one.
  (void)input;
}

// Graphs
OrtStatus* Graph_GetName(const OrtGraph* graph, const char** graph_name) {
  NXRT_CHECK_ARGS(graph, graph_name);
  *graph_name = graph->name.c_str();
  return nullptr;
}

OrtStatus* Graph_GetModelPath(const OrtGraph* graph, const char** model_path) {
  NXRT_CHECK_ARGS(graph, model_path);
  *model_path = graph->model_path.c_str();
  return nullptr;
}

OrtStatus* Graph_GetOnnxIRVersion(const OrtGraph* graph, int64_t* onnx_ir_version) {
  NXRT_CHECK_ARGS(graph, onnx_ir_version);
  *onnx_ir_version = graph->ir_version;
  return nullptr;
}

OrtStatus* Graph_GetNumOperatorSets(const OrtGraph* graph, size_t* num_operator_sets) {
  NXRT_CHECK_ARGS(graph, num_operator_sets);
  *num_operator_sets = graph->opset_domains.size();
  return nullptr;
}

OrtStatus* Graph_GetOperatorSets(const OrtGraph* graph, const char** domains, int64_t* opset_versions,
                                 size_t num_operator_sets) {
  NXRT_CHECK_ARGS(graph);
  if (num_operator_sets < graph->opset_domains.size())
    return invalid_argument(fmt::format("OrtApi::Graph_GetOperatorSets: arrays of {} entries are too small; {} needed",
                                        num_operator_sets, graph->opset_domains.size()));
  if (!graph->opset_domains.empty()) NXRT_CHECK_ARGS(domains, opset_versions);
  for (size_t i = 0; i < graph->opset_domains.size(); ++i) {
    domains[i] = graph->opset_domains[i].c_str();
    opset_versions[i] = graph->opset_versions[i];
  }
  return nullptr;
}

OrtStatus* Graph_GetNumInputs(const OrtGraph* graph, size_t* n) {
  NXRT_CHECK_ARGS(graph, n);
  *n = graph->inputs.size();
  return nullptr;
}

OrtStatus* Graph_GetInputs(const OrtGraph* graph, const OrtValueInfo** inputs, size_t n) {
  NXRT_CHECK_ARGS(graph);
  return copy_array(graph->inputs, inputs, n, "Graph_GetInputs");
}

OrtStatus* Graph_GetNumOutputs(const OrtGraph* graph, size_t* n) {
  NXRT_CHECK_ARGS(graph, n);
  *n = graph->outputs.size();
  return nullptr;
}

OrtStatus* Graph_GetOutputs(const OrtGraph* graph, const OrtValueInfo** outputs, size_t n) {
  NXRT_CHECK_ARGS(graph);
  return copy_array(graph->outputs, outputs, n, "Graph_GetOutputs");
}

OrtStatus* Graph_GetNumInitializers(const OrtGraph* graph, size_t* n) {
  NXRT_CHECK_ARGS(graph, n);
  *n = graph->initializers.size();
  return nullptr;
}

OrtStatus* Graph_GetInitializers(const OrtGraph* graph, const OrtValueInfo** initializers, size_t n) {
  NXRT_CHECK_ARGS(graph);
  return copy_array(graph->initializers, initializers, n, "Graph_GetInitializers");
}

OrtStatus* Graph_GetNumNodes(const OrtGraph* graph, size_t* n) {
  NXRT_CHECK_ARGS(graph, n);
  *n = graph->nodes.size();
  return nullptr;
}

OrtStatus* Graph_GetNodes(const OrtGraph* graph, const OrtNode** nodes, size_t n) {
  NXRT_CHECK_ARGS(graph);
  std::vector<const OrtNode*> all;
  for (const auto& node : graph->nodes) all.push_back(node.get());
  return copy_array(all, nodes, n, "Graph_GetNodes");
}

OrtStatus* Graph_GetParentNode(const OrtGraph* graph, const OrtNode** node) {
  NXRT_CHECK_ARGS(graph, node);
  *node = graph->parent;
  return nullptr;
}

OrtStatus* Graph_GetGraphView(const OrtGraph* graph, const OrtNode** nodes, size_t num_nodes, OrtGraph** subgraph) {
  NXRT_CHECK_ARGS(graph, subgraph);
  if (num_nodes > 0) NXRT_CHECK_ARGS(nodes);
  std::vector<NodeId> ids;
  std::set<NodeId> seen;
  for (size_t i = 0; i < num_nodes; ++i) {
    if (!usable(nodes[i]) || !nodes[i]->node || nodes[i]->graph != graph)
      return invalid_argument(
          fmt::format("OrtApi::Graph_GetGraphView: node {} of the array is not a node of graph '{}'", i, graph->name));
    if (!seen.insert(static_cast<NodeId>(nodes[i]->id)).second)
      return invalid_argument(fmt::format("OrtApi::Graph_GetGraphView: node '{}' is in the array twice", nodes[i]->name));
    ids.push_back(static_cast<NodeId>(nodes[i]->id));
  }
  *subgraph = make_subgraph_view(*graph->graph, ids, graph->name, graph->model_path).release();
  (*subgraph)->plugin_owned = true;
  return nullptr;
}

void ReleaseGraph(OrtGraph* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

// Nodes
OrtStatus* Node_GetId(const OrtNode* node, size_t* node_id) {
  NXRT_CHECK_ARGS(node, node_id);
  *node_id = node->id;
  return nullptr;
}

OrtStatus* Node_GetName(const OrtNode* node, const char** node_name) {
  NXRT_CHECK_ARGS(node, node_name);
  *node_name = node->name.c_str();
  return nullptr;
}

OrtStatus* Node_GetOperatorType(const OrtNode* node, const char** operator_type) {
  NXRT_CHECK_ARGS(node, operator_type);
  *operator_type = node->op_type.c_str();
  return nullptr;
}

OrtStatus* Node_GetDomain(const OrtNode* node, const char** domain_name) {
  NXRT_CHECK_ARGS(node, domain_name);
  *domain_name = node->domain.c_str();
  return nullptr;
}

OrtStatus* Node_GetSinceVersion(const OrtNode* node, int* since_version) {
  NXRT_CHECK_ARGS(node, since_version);
  *since_version = node->since_version;
  return nullptr;
}

OrtStatus* Node_GetNumInputs(const OrtNode* node, size_t* n) {
  NXRT_CHECK_ARGS(node, n);
  *n = node->inputs.size();
  return nullptr;
}

OrtStatus* Node_GetInputs(const OrtNode* node, const OrtValueInfo** inputs, size_t n) {
  NXRT_CHECK_ARGS(node);
  return copy_array(node->inputs, inputs, n, "Node_GetInputs");
}

OrtStatus* Node_GetNumOutputs(const OrtNode* node, size_t* n) {
  NXRT_CHECK_ARGS(node, n);
  *n = node->outputs.size();
  return nullptr;
}

OrtStatus* Node_GetOutputs(const OrtNode* node, const OrtValueInfo** outputs, size_t n) {
  NXRT_CHECK_ARGS(node);
  return copy_array(node->outputs, outputs, n, "Node_GetOutputs");
}

OrtStatus* Node_GetNumImplicitInputs(const OrtNode* node, size_t* n) {
  NXRT_CHECK_ARGS(node, n);
  *n = node->implicit_inputs.size();
  return nullptr;
}

OrtStatus* Node_GetImplicitInputs(const OrtNode* node, const OrtValueInfo** implicit_inputs, size_t n) {
  NXRT_CHECK_ARGS(node);
  return copy_array(node->implicit_inputs, implicit_inputs, n, "Node_GetImplicitInputs");
}

OrtStatus* Node_GetNumAttributes(const OrtNode* node, size_t* n) {
  NXRT_CHECK_ARGS(node, n);
  *n = node->attributes.size();
  return nullptr;
}

OrtStatus* Node_GetAttributes(const OrtNode* node, const OrtOpAttr** attributes, size_t n) {
  NXRT_CHECK_ARGS(node);
  std::vector<const OrtOpAttr*> all;
  for (const auto& a : node->attributes) all.push_back(a.get());
  return copy_array(all, attributes, n, "Node_GetAttributes");
}

OrtStatus* Node_GetAttributeByName(const OrtNode* node, const char* attribute_name, const OrtOpAttr** attribute) {
  NXRT_CHECK_ARGS(node, attribute_name, attribute);
  *attribute = nullptr;
  for (const auto& a : node->attributes)
    if (a->name == attribute_name) {
      *attribute = a.get();
      return nullptr;
    }
  return make_status(ORT_NOT_FOUND,
                     fmt::format("OrtApi::Node_GetAttributeByName: node '{}' has no attribute '{}'", node->name, attribute_name));
}

OrtStatus* Node_GetNumSubgraphs(const OrtNode* node, size_t* n) {
  NXRT_CHECK_ARGS(node, n);
  *n = node->subgraphs.size();
  return nullptr;
}

OrtStatus* Node_GetSubgraphs(const OrtNode* node, const OrtGraph** subgraphs, size_t n, const char** attribute_names) {
  NXRT_CHECK_ARGS(node);
  std::vector<const OrtGraph*> all;
  for (const auto& g : node->subgraphs) all.push_back(g.get());
  if (OrtStatus* s = copy_array(all, subgraphs, n, "Node_GetSubgraphs")) return s;
  for (size_t i = 0; i < node->subgraphs.size(); ++i) {
    if (attribute_names) attribute_names[i] = node->subgraph_attributes[i].c_str();
  }
  return nullptr;
}

OrtStatus* Node_GetGraph(const OrtNode* node, const OrtGraph** graph) {
  NXRT_CHECK_ARGS(node, graph);
  *graph = node->graph;
  return nullptr;
}

OrtStatus* Node_GetEpName(const OrtNode* node, const char** out) {
  NXRT_CHECK_ARGS(node, out);
  *out = node->ep_name.empty() ? nullptr : node->ep_name.c_str();
  return nullptr;
}

void ReleaseNode(OrtNode* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

// Attributes
OrtStatus* OpAttr_GetType(const OrtOpAttr* attribute, OrtOpAttrType* type) {
  NXRT_CHECK_ARGS(attribute, type);
  *type = attribute->type;
  return nullptr;
}

OrtStatus* OpAttr_GetName(const OrtOpAttr* attribute, const char** name) {
  NXRT_CHECK_ARGS(attribute, name);
  *name = attribute->name.c_str();
  return nullptr;
}

OrtStatus* OpAttr_GetTensorAttributeAsOrtValue(const OrtOpAttr* attribute, OrtValue** attr_tensor) {
  NXRT_CHECK_ARGS(attribute, attr_tensor);
  if (attribute->type != ORT_OP_ATTR_TENSOR)
    return invalid_argument(
        fmt::format("OrtApi::OpAttr_GetTensorAttributeAsOrtValue: attribute '{}' is not a tensor", attribute->name));
  *attr_tensor = new OrtValue{{}, attribute->tensor, attribute->tensor.dtype()};
  (*attr_tensor)->plugin_owned = true;
  return nullptr;
}

OrtStatus* CreateOpAttr(const char* name, const void* data, int len, OrtOpAttrType type, OrtOpAttr** op_attr) {
  NXRT_CHECK_ARGS(name, op_attr);
  if (len < 0) return invalid_argument(fmt::format("OrtApi::CreateOpAttr: len is {} for attribute '{}'", len, name));
  const auto n = static_cast<size_t>(len);
  const bool reads_data = type == ORT_OP_ATTR_INT || type == ORT_OP_ATTR_FLOAT || n > 0;
  if (reads_data) NXRT_CHECK_ARGS(data);
  auto a = std::make_unique<OrtOpAttr>();
  a->plugin_owned = true;
  a->name = name;
  a->type = type;
  switch (type) {
    case ORT_OP_ATTR_INT: a->i = *static_cast<const int64_t*>(data); break;
    case ORT_OP_ATTR_FLOAT: a->f = *static_cast<const float*>(data); break;
    case ORT_OP_ATTR_INTS: a->ints.assign(static_cast<const int64_t*>(data), static_cast<const int64_t*>(data) + n); break;
    case ORT_OP_ATTR_FLOATS: a->floats.assign(static_cast<const float*>(data), static_cast<const float*>(data) + n); break;
    case ORT_OP_ATTR_STRING: a->s.assign(static_cast<const char*>(data), n); break;
    case ORT_OP_ATTR_STRINGS:
      for (size_t i = 0; i < n; ++i) {
        const char* text = static_cast<const char* const*>(data)[i];
        if (!text) return invalid_argument(fmt::format("OrtApi::CreateOpAttr: string {} of attribute '{}' is NULL", i, name));
        a->strings.emplace_back(text);
      }
      break;
    default:
      return invalid_argument(fmt::format("OrtApi::CreateOpAttr: attribute type {} is not supported", static_cast<int>(type)));
  }
  *op_attr = a.release();
  return nullptr;
}

void ReleaseOpAttr(OrtOpAttr* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

OrtStatus* ReadOpAttr(const OrtOpAttr* op_attr, OrtOpAttrType type, void* data, size_t len, size_t* out) {
  NXRT_CHECK_ARGS(op_attr, out);
  if (op_attr->type != type)
    return invalid_argument(fmt::format("OrtApi::ReadOpAttr: attribute '{}' has type {}, not {}", op_attr->name,
                                        static_cast<int>(op_attr->type), static_cast<int>(type)));
  auto give = [&](const void* from, size_t bytes) -> OrtStatus* {
    *out = bytes;
    if (data == nullptr || len < bytes)
      return invalid_argument(
          fmt::format("OrtApi::ReadOpAttr: attribute '{}' needs {} bytes, the buffer has {}", op_attr->name, bytes, len));
    if (bytes) std::memcpy(data, from, bytes);
    return nullptr;
  };
  switch (type) {
    case ORT_OP_ATTR_INT: return give(&op_attr->i, sizeof(int64_t));
    case ORT_OP_ATTR_FLOAT: return give(&op_attr->f, sizeof(float));
    case ORT_OP_ATTR_INTS: return give(op_attr->ints.data(), op_attr->ints.size() * sizeof(int64_t));
    case ORT_OP_ATTR_FLOATS: return give(op_attr->floats.data(), op_attr->floats.size() * sizeof(float));
    case ORT_OP_ATTR_STRING: return give(op_attr->s.data(), op_attr->s.size());
    case ORT_OP_ATTR_STRINGS: {
      std::string joined;
      for (const auto& s : op_attr->strings) joined.append(s).push_back('\0');
      return give(joined.data(), joined.size());
    }
    default: return invalid_argument(fmt::format("OrtApi::ReadOpAttr: attribute '{}' cannot be read with it", op_attr->name));
  }
}

}  // namespace api

namespace editor_api {
namespace {

OrtStatus* null_entry(const char* array, size_t index) {
  return invalid_argument(fmt::format("OrtModelEditorApi::CreateNode: {}[{}] is NULL", array, index));
}

}  // namespace

OrtStatus* CreateNode(const char* operator_name, const char* domain_name, const char* node_name,
                      const char* const* input_names, size_t input_names_len, const char* const* output_names,
                      size_t output_names_len, OrtOpAttr** attributes, size_t attribs_len, OrtNode** node) {
  NXRT_CHECK_ARGS(operator_name, node);
  if (input_names_len > 0) NXRT_CHECK_ARGS(input_names);
  if (output_names_len > 0) NXRT_CHECK_ARGS(output_names);
  if (attribs_len > 0) NXRT_CHECK_ARGS(attributes);
  auto n = std::make_unique<OrtNode>();
  n->plugin_owned = true;
  n->op_type = operator_name;
  n->domain = domain_name ? domain_name : "";
  n->name = node_name ? node_name : "";
  auto add = [&](const char* name, std::vector<OrtValueInfo*>& into) {
    auto info = std::make_unique<OrtValueInfo>();
    info->name = name;
    into.push_back(info.get());
    n->own_values.push_back(std::move(info));
  };
  for (size_t i = 0; i < input_names_len; ++i) {
    if (!input_names[i]) return null_entry("input_names", i);
    add(input_names[i], n->inputs);
  }
  for (size_t i = 0; i < output_names_len; ++i) {
    if (!output_names[i]) return null_entry("output_names", i);
    add(output_names[i], n->outputs);
  }
  // The node copies the attributes; the plugin still releases its own, as with ORT.
  for (size_t i = 0; i < attribs_len; ++i) {
    if (!usable(attributes[i]))
      return invalid_argument(fmt::format("OrtModelEditorApi::CreateNode: attributes[{}] is not an OrtOpAttr", i));
    n->attributes.push_back(std::make_unique<OrtOpAttr>(*attributes[i]));
  }
  *node = n.release();
  return nullptr;
}

}  // namespace editor_api
}  // namespace nxrt::ort_plugin
