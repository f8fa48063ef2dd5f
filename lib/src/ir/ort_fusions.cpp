// ExpandOrtFusions: ONNX Runtime's com.microsoft FusedConv, FusedGemm and FusedMatMul (what its
// optimizer writes into the models it saves) as the standard ops they stand for.
#include <fmt/format.h>

#include "nxrt/ir/passes.h"

namespace nxrt {
namespace {

// The standard node of an activation FusedConv or FusedGemm names, reading `in` and writing
// `out`; nullopt for an activation this pass does not know. `params` are its parameters in
// order (FusedConv's activation_params; FusedGemm's activation_alpha and activation_beta).
struct ActivationNode {
  std::string op;
  AttributeMap attributes;
  std::vector<float> clip;  // Clip's min and max (inputs since opset 11)
};

std::optional<ActivationNode> activation_node(const std::string& name, const std::vector<float>& params) {
  auto param = [&](std::size_t i, float fallback) { return i < params.size() ? params[i] : fallback; };
  ActivationNode a{name, {}, {}};
  if (name == "Relu" || name == "Tanh" || name == "Sigmoid") return a;
  if (name == "LeakyRelu") {
    a.attributes.set("alpha", Attribute{param(0, 0.01f)});
    return a;
  }
  if (name == "HardSigmoid") {
    a.attributes.set("alpha", Attribute{param(0, 0.2f)});
    a.attributes.set("beta", Attribute{param(1, 0.5f)});
    return a;
  }
  if (name == "Clip" && params.size() == 2) {
    a.clip = params;
    return a;
  }
  return std::nullopt;
}

class Expander {
 public:
  explicit Expander(Graph& graph)
      : g_(graph), opset_(graph.opset_imports.contains("") ? graph.opset_imports.at("") : 0) {}

  // The standard nodes for `node`, or empty when it is not one of the three or cannot be
  // expanded (`change` then says why: an unknown activation, a batch transpose, no ai.onnx
  // import, a scalar (Clip's bounds, alpha) of a type other than float and double). Each form is
  // checked before any value is added to the graph.
  std::vector<Node> expand(const Node& node, std::string& change) {
    if (node.domain != "com.microsoft" || node.outputs.empty() || node.outputs[0] == kNoValue) return {};
    const bool fused = node.op_type == "FusedConv" || node.op_type == "FusedGemm" || node.op_type == "FusedMatMul";
    if (fused && opset_ == 0)
      return keep(node, "the model imports no ai.onnx opset to write its standard ops in", change);
    if (node.op_type == "FusedConv") return conv_or_gemm(node, "Conv", change);
    if (node.op_type == "FusedGemm") return conv_or_gemm(node, "Gemm", change);
    if (node.op_type == "FusedMatMul") return matmul(node, change);
    return {};
  }

 private:
  // A new value of `like`'s type, named after `base`.
  ValueId new_value(const std::string& base, ValueId like) {
    std::string name = base;
    for (int i = 1; g_.find_value(name); ++i) name = fmt::format("{}_{}", base, i);
    const ValueId id = g_.intern_value(name);
    g_.value(id).type = g_.value(like).type;
    return id;
  }

  // Whether scalar() can write a value of `like`'s element type.
  bool takes_scalar(ValueId like) const {
    const DType t = g_.value(like).type.dtype;
    return t == DType::kFloat32 || t == DType::kFloat64;
  }

  // A scalar initializer of `like`'s element type (takes_scalar).
  ValueId scalar(const std::string& base, ValueId like, float v) {
    const DType t = g_.value(like).type.dtype;
    const ValueId id = new_value(base, like);
    Tensor value = t == DType::kFloat32 ? Tensor::from_vector<float>({}, {v}) : Tensor::from_vector<double>({}, {v});
    g_.value(id).type.shape = std::vector<Dim>{};
    g_.value(id).initializer = WeightHandle::resident(std::move(value));
    return id;
  }

  // No nodes for `node`, which stays as it is; `change` says why (no EP runs the fused op itself).
  static std::vector<Node> keep(const Node& node, std::string_view why, std::string& change) {
    change = fmt::format("kept {} as it is: {}; no EP runs it", node.describe(), why);
    return {};
  }

  Node standard(const Node& from, std::string suffix, std::string op, std::vector<ValueId> inputs,
                std::vector<ValueId> outputs, AttributeMap attributes = {}) {
    Node n;
    n.name = from.name + suffix;
    n.op_type = std::move(op);
    n.opset = opset_;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attributes = std::move(attributes);
    return n;
  }

  // FusedConv (X, W, B, Z): act(Conv(X, W, B) + Z); FusedGemm (A, B, C): act(Gemm(A, B, C)).
  std::vector<Node> conv_or_gemm(const Node& node, const char* op, std::string& change) {
    const bool conv = std::string_view(op) == "Conv";
    const std::string activation = node.attributes.string_or("activation", "");
    std::vector<float> params;
    if (conv) {
      params = node.attributes.get_floats("activation_params").value_or(std::vector<float>{});
    } else {  // by name: alpha, then beta (ONNX Runtime refuses a beta without an alpha)
      const auto alpha = node.attributes.get_float("activation_alpha");
      const auto beta = node.attributes.get_float("activation_beta");
      if (beta && !alpha)
        return keep(node, "activation_beta is given without activation_alpha (ONNX Runtime refuses it too)", change);
      for (const auto& v : {alpha, beta})
        if (v) params.push_back(*v);
    }
    std::optional<ActivationNode> act;
    if (!activation.empty()) {
      act = activation_node(activation, params);
      if (!act)
        return keep(node,
                    fmt::format("its activation '{}' is not one expand-ort-fusions writes as a standard op (Relu, "
                                "Tanh, Sigmoid, LeakyRelu, HardSigmoid, Clip with its two bounds)",
                                activation),
                    change);
    }
    const ValueId out = node.outputs[0];
    if (act && !act->clip.empty() && !takes_scalar(out))
      return keep(node, "Clip's bounds are written for float and double outputs only", change);
    std::vector<ValueId> clip_bounds;
    if (act && !act->clip.empty())
      for (int i = 0; i < 2; ++i)
        clip_bounds.push_back(scalar(fmt::format("{}/clip_{}", node.name, i == 0 ? "min" : "max"), out, act->clip[i]));
    AttributeMap attrs;
    for (const auto& [name, a] : node.attributes.all())
      if (!name.starts_with("activation")) attrs.set(name, a);
    const bool sum = conv && node.inputs.size() > 3 && node.inputs[3] != kNoValue;
    const std::vector<ValueId> inputs(node.inputs.begin(),
                                      node.inputs.begin() + std::min<std::size_t>(node.inputs.size(), 3));
    std::vector<Node> nodes;
    ValueId y = act || sum ? new_value(node.name + "/" + op, out) : out;
    nodes.push_back(standard(node, "", op, inputs, {y}, std::move(attrs)));
    if (sum) {
      const ValueId added = act ? new_value(node.name + "/sum", out) : out;
      nodes.push_back(standard(node, "/sum", "Add", {y, node.inputs[3]}, {added}));
      y = added;
    }
    if (act) {
      std::vector<ValueId> act_inputs = {y};
      act_inputs.insert(act_inputs.end(), clip_bounds.begin(), clip_bounds.end());
      nodes.push_back(standard(node, "/" + act->op, act->op, act_inputs, {out}, act->attributes));
    }
    change = fmt::format("expanded {} into {}{}{}", node.describe(), op, sum ? " + Add" : "",
                         act ? " + " + act->op : "");
    return nodes;
  }

  // FusedMatMul (A, B): alpha * op(A) op(B), op swapping the last two dims (transA, transB).
  std::vector<Node> matmul(const Node& node, std::string& change) {
    const AttributeMap& a = node.attributes;
    if (a.int_or("transBatchA", 0) != 0 || a.int_or("transBatchB", 0) != 0)
      return keep(node, "transBatchA and transBatchB (batch transposes) are not expanded", change);
    if (node.inputs.size() != 2) return keep(node, "it does not have two inputs", change);
    const float alpha = a.float_or("alpha", 1.f);
    const ValueId out = node.outputs[0];
    const bool trans[2] = {a.int_or("transA", 0) != 0, a.int_or("transB", 0) != 0};
    for (int i = 0; i < 2; ++i) {
      const auto& shape = g_.value(node.inputs[i]).type.shape;
      if (trans[i] && (!shape || shape->size() < 2))
        return keep(node, fmt::format("input {}'s rank is unknown, which its transpose needs", i), change);
    }
    if (alpha != 1.f && !takes_scalar(out))
      return keep(node, "alpha is written for float and double outputs only", change);
    std::vector<Node> nodes;
    std::vector<ValueId> operands = node.inputs;
    for (int i = 0; i < 2; ++i) {
      if (!trans[i]) continue;
      const std::vector<Dim> dims_in = *g_.value(operands[i]).type.shape;  // (a copy: values grow)
      std::vector<int64_t> perm(dims_in.size());
      for (std::size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int64_t>(d);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      const ValueId t = new_value(fmt::format("{}/transposed_{}", node.name, i == 0 ? "a" : "b"), operands[i]);
      std::vector<Dim> dims = dims_in;
      std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
      g_.value(t).type.shape = dims;
      AttributeMap attrs;
      attrs.set("perm", Attribute{perm});
      nodes.push_back(standard(node, i == 0 ? "/transpose_a" : "/transpose_b", "Transpose", {operands[i]}, {t},
                               std::move(attrs)));
      operands[i] = t;
    }
    const bool scaled = alpha != 1.f;
    const ValueId product = scaled ? new_value(node.name + "/MatMul", out) : out;
    nodes.push_back(standard(node, "", "MatMul", operands, {product}));
    if (scaled)
      nodes.push_back(standard(node, "/alpha", "Mul", {product, scalar(node.name + "/alpha", out, alpha)}, {out}));
    change = fmt::format("expanded {} into {}MatMul{}", node.describe(), trans[0] || trans[1] ? "Transpose + " : "",
                         scaled ? " + Mul" : "");
    return nodes;
  }

  Graph& g_;
  int64_t opset_;
};

}  // namespace

Expected<std::vector<std::string>> ExpandOrtFusions::run(Graph& graph) const {
  std::vector<std::string> changes;
  bool expanded = false;
  Expander expander(graph);
  std::vector<Node> nodes;
  nodes.reserve(graph.nodes.size());
  for (Node& node : graph.nodes) {
    std::string change;
    std::vector<Node> standard = expander.expand(node, change);
    if (!change.empty()) changes.push_back(std::move(change));  // expanded, or kept and why
    if (standard.empty()) {
      nodes.push_back(std::move(node));
      continue;
    }
    expanded = true;
    for (Node& n : standard) nodes.push_back(std::move(n));
  }
  graph.nodes = std::move(nodes);  // (every node moved there, expanded or not)
  if (!expanded) return changes;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) graph.nodes[i].id = static_cast<NodeId>(i);
  graph.rebuild_links();
  return changes;
}

}  // namespace nxrt
