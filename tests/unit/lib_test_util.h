// Helpers for the library's contract tests: temporary folders, hand-built IR graphs and
// in-memory ONNX models.
#pragma once

#include <onnx/onnx_pb.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "nxrt/ep/kernel.h"
#include "nxrt/ir/graph.h"

namespace nxrt::test {

// A fresh folder under the system's temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nxrt-lib-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Builds an IR graph by hand: values are created by name on first mention.
class GraphBuilder {
 public:
  GraphBuilder() { graph.opset_imports[""] = 17; }

  ValueId input(const std::string& name, DType dtype = DType::kFloat32, Shape shape = {4}) {
    ValueId v = typed(name, dtype, shape);
    graph.value(v).is_graph_input = true;
    graph.inputs.push_back(v);
    return v;
  }
  ValueId constant(const std::string& name, Tensor t) {
    ValueId v = typed(name, t.dtype(), t.shape());
    graph.value(v).initializer = WeightHandle::resident(std::move(t));
    return v;
  }
  // Adds a node; its outputs get `dtype` and `shape` (enough for elementwise claims).
  NodeId node(const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
              std::initializer_list<std::string> outputs, DType dtype = DType::kFloat32, Shape shape = {4}) {
    Node n;
    n.id = static_cast<NodeId>(graph.nodes.size());
    n.name = name;
    n.op_type = op;
    n.opset = 17;
    for (const auto& in : inputs) n.inputs.push_back(in.empty() ? kNoValue : graph.intern_value(in));
    for (const auto& out : outputs) n.outputs.push_back(typed(out, dtype, shape));
    graph.nodes.push_back(std::move(n));
    return graph.nodes.back().id;
  }
  void output(const std::string& name) {
    ValueId v = graph.intern_value(name);
    graph.value(v).is_graph_output = true;
    graph.outputs.push_back(v);
  }
  // Links producers and consumers; call once every node is in.
  Graph& finish() {
    graph.rebuild_links();
    return graph;
  }
  ValueId id(const std::string& name) const { return *graph.find_value(name); }

  Graph graph;

 private:
  ValueId typed(const std::string& name, DType dtype, const Shape& shape) {
    ValueId v = graph.intern_value(name);
    Value& val = graph.value(v);
    val.type.dtype = dtype;
    std::vector<Dim> dims;
    for (int64_t d : shape) dims.push_back(Dim{d, {}});
    val.type.shape = std::move(dims);
    return v;
  }
};

// The graph's node names, in order (what a pass kept, and where).
inline std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  return names;
}

// The name of the value that node `node`'s input (output) `i` is.
inline std::string input_name(const Graph& g, const std::string& node, std::size_t i) {
  return g.value(g.node(*g.find_node(node)).inputs[i]).name;
}
inline std::string output_name(const Graph& g, const std::string& node, std::size_t i) {
  return g.value(g.node(*g.find_node(node)).outputs[i]).name;
}

// A graph of one node of `op` at `opset` in `domain` ("" for ai.onnx): x -> op -> y.
struct OneNode {
  OneNode(const std::string& op, int64_t opset, std::string domain = "") {
    b.input("x");
    b.node(op + "_0", op, {"x"}, {"y"});
    b.graph.nodes[0].opset = opset;
    b.graph.nodes[0].domain = std::move(domain);
    b.output("y");
    b.finish();
  }
  NodeContext ctx() const { return NodeContext(b.graph, b.graph.nodes[0]); }
  GraphBuilder b;
};

// In-memory ONNX models. Dims below 0 become the symbol "N".
namespace onnx_build {

inline onnx::ModelProto model(int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("nxrt-test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

inline void set_type(onnx::ValueInfoProto& vi, int32_t elem, const std::vector<int64_t>& dims) {
  auto* t = vi.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
    else dim->set_dim_param("N");
  }
}

inline void input(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims = {4},
                  int32_t elem = onnx::TensorProto::FLOAT) {
  auto* vi = g.add_input();
  vi->set_name(name);
  set_type(*vi, elem, dims);
}

inline void output(onnx::GraphProto& g, const std::string& name) { g.add_output()->set_name(name); }

inline onnx::NodeProto& node(onnx::GraphProto& g, const std::string& name, const std::string& op,
                             std::initializer_list<std::string> inputs, std::initializer_list<std::string> outputs,
                             const std::string& domain = "") {
  auto* n = g.add_node();
  n->set_name(name);
  n->set_op_type(op);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

// A float initializer with raw_data.
inline onnx::TensorProto& initializer(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<float>& values) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return *t;
}

inline void save(const onnx::ModelProto& m, const std::filesystem::path& path) {
  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw std::runtime_error("cannot serialize model");
  write_bytes(path, bytes);
}

}  // namespace onnx_build
}  // namespace nxrt::test
