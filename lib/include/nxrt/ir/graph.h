// The IR: values, nodes (stable indices), initializers, opset imports and subgraphs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "nxrt/ep/dtype.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ep/weight.h"
#include "nxrt/ir/attribute.h"

namespace nxrt {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input ("")

// One dimension: a known size, a symbol ("batch"), or unknown (neither).
struct Dim {
  int64_t size = -1;
  std::string symbol;

  bool known() const { return size >= 0; }
  std::string to_string() const;  // "3", "batch" or "?"
  bool operator==(const Dim&) const = default;
};

// What is known about a value before running: element type and, maybe, the shape.
struct ValueType {
  enum class Kind { kTensor, kSequence, kOptional, kMap, kUnknown };
  Kind kind = Kind::kTensor;
  // The tensor's element type; for a sequence or optional, that of the tensors inside.
  DType dtype = DType::kUndefined;
  // For kOptional: whether it holds a tensor or a sequence (kTensor or kSequence).
  Kind optional_of = Kind::kTensor;
  std::optional<std::vector<Dim>> shape;  // nullopt: rank unknown; tensors only

  bool has_static_shape() const;
  std::optional<Shape> static_shape() const;
  std::string to_string() const;  // "float[1,3,224,224]", "float[batch,?]", "float[...]"
};

struct Value {
  std::string name;
  ValueType type;
  NodeId producer = -1;            // -1: graph input, initializer or outer-scope value
  std::vector<NodeId> consumers;   // in node order, one entry per use
  std::optional<WeightHandle> initializer;
  bool is_graph_input = false;
  bool is_graph_output = false;
  bool is_outer_scope = false;     // a subgraph's reference to an enclosing graph's value
};

struct Node {
  NodeId id = -1;
  std::string name;     // never empty: the loader names unnamed nodes "<op_type>_<id>"
  std::string op_type;
  std::string domain;   // normalised: "" for ai.onnx
  int64_t opset = 0;    // the model's import for this node's domain
  std::vector<ValueId> inputs;   // kNoValue for omitted optional inputs
  std::vector<ValueId> outputs;  // kNoValue for omitted optional outputs
  // Values of this graph that the node's subgraphs (If, Loop, Scan) read from outer scope,
  // in name order: dependencies like inputs, passed to the kernel after the inputs.
  std::vector<ValueId> implicit_inputs;
  AttributeMap attributes;

  // "'Conv_3' (ai.onnx::Conv, opset 17)": how messages name a node.
  std::string describe() const;
  bool is_ep_context() const { return op_type == "EPContext" && domain == "com.microsoft"; }
};

class Graph {
 public:
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;           // in a topological order (the loader sorts)
  std::vector<ValueId> inputs;       // graph inputs, without initializers
  std::vector<ValueId> outputs;
  std::map<std::string, int64_t> opset_imports;  // normalised domain -> version
  const Graph* parent = nullptr;     // enclosing graph of a subgraph
  std::unordered_map<std::string, ValueId> value_index;  // name -> id, kept by intern_value
  std::filesystem::path model_dir;   // for external data and EPContext side files
  std::filesystem::path model_path;  // the model file (what ORT plugin EPs ask Graph_GetModelPath for)
  int64_t ir_version = 0;            // the model's ONNX IR version

  const Value& value(ValueId id) const { return values[static_cast<std::size_t>(id)]; }
  Value& value(ValueId id) { return values[static_cast<std::size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes[static_cast<std::size_t>(id)]; }
  std::optional<ValueId> find_value(const std::string& name) const;
  std::optional<NodeId> find_node(const std::string& name) const;
  // Adds a value (or returns the existing one of that name).
  ValueId intern_value(const std::string& name);
  // Recomputes producer/consumers from nodes (after a rewrite).
  void rebuild_links();
};

// Makes every node output of `graph` (not of its subgraphs) a graph output, after the
// declared outputs, in node order; returns the values it added (run --check-each-node).
std::vector<ValueId> mark_node_outputs_as_graph_outputs(Graph& graph);

// Normalises a domain: "ai.onnx" -> "".
std::string normalize_domain(std::string_view domain);
// "ai.onnx" for "", else the domain as is (for messages).
std::string display_domain(std::string_view domain);

}  // namespace nxrt
