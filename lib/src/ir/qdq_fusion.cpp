// FuseQdqNodeGroups: DequantizeLinear -> Conv / MatMul / Gemm -> QuantizeLinear as one
// QLinearConv / QLinearMatMul / com.microsoft::QGemm, the integer product the quantized model
// stands for; the same around Add, Mul, Sigmoid, LeakyRelu, GlobalAveragePool and AveragePool
// as ONNX Runtime's com.microsoft QLinear ops.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "nxrt/ir/passes.h"

namespace nxrt {
namespace {

bool is_onnx(const Node& node, std::string_view op) { return node.domain.empty() && node.op_type == op; }

bool is_byte_quantized(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

// The node that produces `v`, when it is a node of this graph.
const Node* producer_of(const Graph& graph, ValueId v) {
  if (v == kNoValue) return nullptr;
  const NodeId p = graph.value(v).producer;
  return p < 0 ? nullptr : &graph.node(p);
}

// The values of an initializer of T's dtype (a scale, a zero point), or nullopt.
template <class T>
std::optional<std::vector<T>> constant_values(const Graph& graph, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& value = graph.value(v);
  if (!value.initializer || value.type.dtype != dtype_of<T>()) return std::nullopt;
  auto t = value.initializer->materialize();
  if (!t) return std::nullopt;
  return std::vector<T>(t->data_as<T>(), t->data_as<T>() + t->numel());
}

// The one value of a uint8 or int8 initializer (a zero point), or nullopt.
std::optional<int32_t> zero_point_value(const Graph& graph, ValueId v) {
  const auto one = [](const auto& values) -> std::optional<int32_t> {
    if (!values || values->size() != 1) return std::nullopt;
    return values->front();
  };
  if (graph.value(v).type.dtype == DType::kUInt8) return one(constant_values<uint8_t>(graph, v));
  return one(constant_values<int8_t>(graph, v));
}

// Whether `v` is an initializer of `dtype` whose shape is [] or [1] (or 1-D of `count` when a
// count is given).
bool is_constant_of(const Graph& graph, ValueId v, DType dtype, std::optional<int64_t> count = std::nullopt) {
  if (v == kNoValue) return false;
  const Value& value = graph.value(v);
  const auto shape = value.type.static_shape();
  if (!value.initializer || value.type.dtype != dtype || !shape) return false;
  if (shape_numel(*shape) == 1 && shape->size() <= 1) return true;
  return count && shape->size() == 1 && (*shape)[0] == *count;
}

// A DequantizeLinear of uint8 or int8 with a float scale and a zero point, both initializers,
// and nothing that QLinearConv or QLinearMatMul cannot say (blocks, another output type).
struct Dequantized {
  const Node* node = nullptr;
  ValueId quantized = kNoValue, scale = kNoValue, zero_point = kNoValue;
};

// Input `i` of `node` as a Dequantized whose scale covers one value, or `per_axis` values
// along axis `axis` of a tensor of rank `rank` (per channel, per column).
std::optional<Dequantized> dequantized_input(const Graph& graph, const Node& node, std::size_t i,
                                             std::optional<int64_t> per_axis = std::nullopt, int64_t axis = 0,
                                             int64_t rank = 0) {
  if (i >= node.inputs.size()) return std::nullopt;
  const Node* dq = producer_of(graph, node.inputs[i]);
  if (!dq || !is_onnx(*dq, "DequantizeLinear") || dq->inputs.size() != 3 || dq->outputs.size() != 1)
    return std::nullopt;
  if (dq->attributes.int_or("block_size", 0) != 0) return std::nullopt;
  if (const auto out = dq->attributes.get_int("output_dtype"); out && *out != static_cast<int64_t>(DType::kFloat32))
    return std::nullopt;
  const Dequantized d{dq, dq->inputs[0], dq->inputs[1], dq->inputs[2]};
  if (d.quantized == kNoValue || d.zero_point == kNoValue) return std::nullopt;  // QLinear ops need zero points
  const DType q = graph.value(d.quantized).type.dtype;
  if (!is_byte_quantized(q) || graph.value(d.zero_point).type.dtype != q) return std::nullopt;
  std::optional<int64_t> count;
  if (per_axis) {
    int64_t a = dq->attributes.int_or("axis", 1);
    if (a < 0) a += rank;
    if (a == axis) count = per_axis;
  }
  if (!is_constant_of(graph, d.scale, DType::kFloat32, count) || !is_constant_of(graph, d.zero_point, q, count))
    return std::nullopt;
  return d;
}

// The only reader of `v`, when `v` is not a graph output.
const Node* sole_reader(const Graph& graph, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& value = graph.value(v);
  if (value.is_graph_output || value.consumers.size() != 1) return nullptr;
  return &graph.node(value.consumers.front());
}

// The QuantizeLinear that is the only reader of `v` (not a graph output), to uint8 or int8
// with a scalar scale and zero point, both initializers.
const Node* quantized_output(const Graph& graph, ValueId v) {
  const Node* reader = sole_reader(graph, v);
  if (!reader) return nullptr;
  const Node& q = *reader;
  if (!is_onnx(q, "QuantizeLinear") || q.inputs.size() != 3 || q.inputs[0] != v || q.outputs.size() != 1)
    return nullptr;
  if (q.attributes.int_or("block_size", 0) != 0 || q.inputs[2] == kNoValue) return nullptr;
  const DType t = graph.value(q.inputs[2]).type.dtype;
  if (!is_byte_quantized(t) || !is_constant_of(graph, q.inputs[1], DType::kFloat32) ||
      !is_constant_of(graph, q.inputs[2], t))
    return nullptr;
  if (const auto out = q.attributes.get_int("output_dtype"); out && *out != static_cast<int64_t>(t)) return nullptr;
  return &q;
}

// Conv's bias, when it is a DequantizeLinear of int32 that QLinearConv's bias says the same as:
// scale x_scale * w_scale (per output channel, to a float's rounding) and zero point 0.
std::optional<Dequantized> dequantized_bias(const Graph& graph, const Node& conv, const Dequantized& x,
                                            const Dequantized& w, int64_t channels) {
  const Node* dq = producer_of(graph, conv.inputs[2]);
  if (!dq || !is_onnx(*dq, "DequantizeLinear") || dq->inputs.size() < 2 || dq->outputs.size() != 1 ||
      dq->attributes.int_or("block_size", 0) != 0)
    return std::nullopt;
  const Dequantized bias{dq, dq->inputs[0], dq->inputs[1], dq->inputs.size() > 2 ? dq->inputs[2] : kNoValue};
  if (bias.quantized == kNoValue) return std::nullopt;
  const auto b_shape = graph.value(bias.quantized).type.static_shape();
  if (graph.value(bias.quantized).type.dtype != DType::kInt32 || !b_shape || shape_numel(*b_shape) != channels)
    return std::nullopt;
  const auto b_scale = constant_values<float>(graph, bias.scale), x_scale = constant_values<float>(graph, x.scale);
  const auto w_scale = constant_values<float>(graph, w.scale);
  if (!b_scale || !x_scale || !w_scale) return std::nullopt;
  const auto one_or_all = [&](std::size_t n) { return n == 1 || n == static_cast<std::size_t>(channels); };
  if (!one_or_all(b_scale->size()) || !one_or_all(w_scale->size())) return std::nullopt;
  if (bias.zero_point != kNoValue) {
    const auto zero = constant_values<int32_t>(graph, bias.zero_point);
    if (!zero || std::ranges::any_of(*zero, [](int32_t z) { return z != 0; })) return std::nullopt;
  }
  for (int64_t c = 0; c < channels; ++c) {
    const float want = (*x_scale)[0] * (*w_scale)[w_scale->size() == 1 ? 0 : static_cast<std::size_t>(c)];
    const float have = (*b_scale)[b_scale->size() == 1 ? 0 : static_cast<std::size_t>(c)];
    if (std::fabs(have - want) > 1e-6f * std::fabs(want)) return std::nullopt;
  }
  return bias;
}

// The bounds a Relu or Clip clamps to (-inf or +inf where it has none), or nullopt when they
// are not known at load time.
std::optional<std::pair<float, float>> clamp_bounds(const Graph& graph, const Node& clamp) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (is_onnx(clamp, "Relu")) return std::pair{0.f, kInf};
  if (!is_onnx(clamp, "Clip")) return std::nullopt;
  const AttributeMap& attrs = clamp.attributes;
  if (clamp.opset < 11) return std::pair{attrs.get_float("min").value_or(-kInf), attrs.get_float("max").value_or(kInf)};
  std::pair<float, float> bounds{-kInf, kInf};
  for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    if (i >= clamp.inputs.size() || clamp.inputs[i] == kNoValue) continue;
    const auto v = constant_values<float>(graph, clamp.inputs[i]);
    if (!v || v->size() != 1) return std::nullopt;
    (i == 1 ? bounds.first : bounds.second) = v->front();
  }
  return bounds;
}

// Whether QuantizeLinear `q` saturates wherever the Relu or Clip `clamp` before it clamps: its
// lowest value already at the lower bound and its highest at the upper one (a Relu: the zero
// point is the type's lowest value). The clamp then changes no output and can go.
bool quantization_clamps_like(const Graph& graph, const Node& clamp, const Node& q) {
  const auto bounds = clamp_bounds(graph, clamp);
  const auto scale = constant_values<float>(graph, q.inputs[1]);
  const auto zero = zero_point_value(graph, q.inputs[2]);
  if (!bounds || !scale || !zero) return false;
  const bool is_unsigned = graph.value(q.inputs[2]).type.dtype == DType::kUInt8;
  const float lo = is_unsigned ? 0.f : -128.f, hi = is_unsigned ? 255.f : 127.f;
  // As QuantizeLinear computes it: round(v / scale) + zero, before saturating.
  auto quantized = [&](float v) { return std::nearbyint(v / scale->front()) + static_cast<float>(*zero); };
  return quantized(bounds->first) <= lo && quantized(bounds->second) >= hi;
}

// The QuantizeLinear after `node`'s output `v`: read by it alone, or by a Relu or Clip alone
// that it alone reads when it saturates where that clamps (returned in `clamp`).
const Node* quantized_result(const Graph& graph, ValueId v, const Node*& clamp) {
  clamp = nullptr;
  if (const Node* q = quantized_output(graph, v)) return q;
  const Node* c = sole_reader(graph, v);
  if (!c || (!is_onnx(*c, "Relu") && !is_onnx(*c, "Clip")) || c->outputs.size() != 1 || c->inputs[0] != v)
    return nullptr;
  const Node* q = quantized_output(graph, c->outputs[0]);
  if (!q || !quantization_clamps_like(graph, *c, *q)) return nullptr;
  clamp = c;
  return q;
}

// The QLinear form of `node` (Conv or MatMul) and the nodes it replaces, or nullopt.
struct Fusion {
  std::vector<ValueId> inputs;
  const Node* quantize = nullptr;
  const Node* clamp = nullptr;  // a Relu or Clip between the node and the QuantizeLinear, when there is one
  std::vector<const Node*> dequantizes;  // its inputs' (they stay where other nodes read them)
};

std::optional<Fusion> conv_fusion(const Graph& graph, const Node& conv) {
  if (conv.inputs.size() < 2 || conv.inputs[1] == kNoValue || conv.outputs.size() != 1) return std::nullopt;
  const auto w_shape = graph.value(conv.inputs[1]).type.static_shape();
  if (!w_shape || w_shape->size() < 3) return std::nullopt;
  const int64_t channels = (*w_shape)[0];
  const auto x = dequantized_input(graph, conv, 0);
  const auto w = dequantized_input(graph, conv, 1, channels, 0, static_cast<int64_t>(w_shape->size()));
  const Node* clamp = nullptr;
  const Node* q = quantized_result(graph, conv.outputs[0], clamp);
  if (!x || !w || !q) return std::nullopt;
  Fusion f{{x->quantized, x->scale, x->zero_point, w->quantized, w->scale, w->zero_point, q->inputs[1], q->inputs[2]},
           q,
           clamp,
           {x->node, w->node}};
  if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) {
    const auto bias = dequantized_bias(graph, conv, *x, *w, channels);
    if (!bias) return std::nullopt;
    f.inputs.push_back(bias->quantized);
    f.dequantizes.push_back(bias->node);
  }
  return f;
}

std::optional<Fusion> matmul_fusion(const Graph& graph, const Node& matmul) {
  if (matmul.inputs.size() != 2 || matmul.inputs[1] == kNoValue || matmul.outputs.size() != 1) return std::nullopt;
  const auto b_shape = graph.value(matmul.inputs[1]).type.static_shape();
  if (!b_shape || b_shape->size() != 2) return std::nullopt;
  const auto a = dequantized_input(graph, matmul, 0);
  const auto b = dequantized_input(graph, matmul, 1, (*b_shape)[1], 1, 2);  // per column of B
  const Node* clamp = nullptr;
  const Node* q = quantized_result(graph, matmul.outputs[0], clamp);
  if (!a || !b || !q) return std::nullopt;
  return Fusion{
      {a->quantized, a->scale, a->zero_point, b->quantized, b->scale, b->zero_point, q->inputs[1], q->inputs[2]},
      q,
      clamp,
      {a->node, b->node}};
}

// Gemm's QGemm form (ONNX Runtime's com.microsoft op): A dequantized with one scale, B with one
// or one per column of B' (B or, with transB, its transpose), C (where given, with beta 1) an
// int32 bias dequantized as QLinearConv's is; transA 0. QGemm's inputs are A, B and their
// quantizations, C, then Y's scale and zero point.
std::optional<Fusion> gemm_fusion(const Graph& graph, const Node& gemm) {
  if (gemm.inputs.size() < 2 || gemm.inputs[1] == kNoValue || gemm.outputs.size() != 1 ||
      gemm.attributes.int_or("transA", 0) != 0)
    return std::nullopt;
  const bool trans_b = gemm.attributes.int_or("transB", 0) != 0;
  const auto b_shape = graph.value(gemm.inputs[1]).type.static_shape();
  if (!b_shape || b_shape->size() != 2) return std::nullopt;
  const int64_t columns = (*b_shape)[trans_b ? 0 : 1];
  const auto a = dequantized_input(graph, gemm, 0);
  const auto b = dequantized_input(graph, gemm, 1, columns, trans_b ? 0 : 1, 2);
  const Node* clamp = nullptr;
  const Node* q = quantized_result(graph, gemm.outputs[0], clamp);
  if (!a || !b || !q) return std::nullopt;
  Fusion f{{a->quantized, a->scale, a->zero_point, b->quantized, b->scale, b->zero_point, kNoValue, q->inputs[1],
            q->inputs[2]},
           q,
           clamp,
           {a->node, b->node}};
  if (gemm.inputs.size() > 2 && gemm.inputs[2] != kNoValue) {
    if (gemm.attributes.float_or("beta", 1.f) != 1.f) return std::nullopt;
    const auto bias = dequantized_bias(graph, gemm, *a, *b, columns);
    if (!bias) return std::nullopt;
    f.inputs[6] = bias->quantized;
    f.dequantizes.push_back(bias->node);
  }
  return f;
}

// ONNX Runtime's com.microsoft QLinear op for float op `node` between DequantizeLinear and
// QuantizeLinear nodes, each of one scale and zero point of one 8-bit type (as its QDQ
// transformer makes them), or empty: Add and Mul (QLinearAdd, QLinearMul), Sigmoid,
// LeakyRelu, GlobalAveragePool and AveragePool without dilations.
std::string qlinear_op(const Node& node) {
  if (!node.domain.empty() || node.outputs.size() != 1) return {};
  static const std::set<std::string, std::less<>> kOps = {"Add", "Mul", "Sigmoid", "LeakyRelu", "GlobalAveragePool",
                                                          "AveragePool"};
  if (!kOps.contains(node.op_type)) return {};
  if (node.op_type == "AveragePool")
    for (int64_t d : node.attributes.ints_or("dilations", {}))
      if (d != 1) return {};
  return "QLinear" + node.op_type;
}

// The QLinear form of `node` (see qlinear_op): its inputs (each dequantized input's quantized
// value, scale and zero point, then Y's scale and zero point), or nullopt.
std::optional<Fusion> qlinear_fusion(const Graph& graph, const Node& node) {
  const std::size_t operands = node.op_type == "Add" || node.op_type == "Mul" ? 2 : 1;
  if (node.inputs.size() != operands) return std::nullopt;
  const Node* clamp = nullptr;
  const Node* q = quantized_result(graph, node.outputs[0], clamp);
  if (!q) return std::nullopt;
  const DType type = graph.value(q->inputs[2]).type.dtype;
  Fusion f{{}, q, clamp, {}};
  for (std::size_t i = 0; i < operands; ++i) {
    const auto x = dequantized_input(graph, node, i);
    if (!x || graph.value(x->quantized).type.dtype != type) return std::nullopt;
    f.inputs.insert(f.inputs.end(), {x->quantized, x->scale, x->zero_point});
    f.dequantizes.push_back(x->node);
  }
  f.inputs.insert(f.inputs.end(), {q->inputs[1], q->inputs[2]});
  return f;
}

// Ops that only move or pick the values of their first input (of every input, for Concat;
// MaxPool from opset 12, when it takes 8-bit integers): on the quantized values they give what
// DequantizeLinear -> op -> QuantizeLinear gives, when all use one scale and zero point.
bool moves_values(const Node& node) {
  static const std::set<std::string, std::less<>> kMoving = {
      "Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Gather", "GatherElements",
      "GatherND", "Tile", "Expand", "DepthToSpace", "SpaceToDepth", "Concat"};
  if (!node.domain.empty() || node.outputs.size() != 1 || node.inputs.empty()) return false;
  if (node.op_type == "MaxPool") return node.opset >= 12;
  return kMoving.contains(node.op_type);
}

// How many of `node`'s first inputs hold the values it moves (moves_values).
std::size_t moved_inputs(const Node& node) { return node.op_type == "Concat" ? node.inputs.size() : 1; }

// Whether scales (float) and zero points `a` and `b` hold the same single value.
template <class T>
bool same_value(const Graph& graph, ValueId a, ValueId b) {
  const auto x = constant_values<T>(graph, a), y = constant_values<T>(graph, b);
  return x && y && x->size() == 1 && y->size() == 1 && x->front() == y->front();
}

// DequantizeLinear -> `node` (moves_values) -> QuantizeLinear with the same scale and zero
// point: the QuantizeLinear, and the DequantizeLinear of each moved input, or nullopt.
struct DroppedQdq {
  std::vector<Dequantized> inputs;
  const Node* quantize = nullptr;
};

std::optional<DroppedQdq> dropped_qdq(const Graph& graph, const Node& node) {
  if (!moves_values(node)) return std::nullopt;
  const Node* q = quantized_output(graph, node.outputs[0]);
  if (!q) return std::nullopt;
  DroppedQdq drop{{}, q};
  for (std::size_t i = 0; i < moved_inputs(node); ++i) {
    const auto x = dequantized_input(graph, node, i);
    if (!x || graph.value(q->inputs[2]).type.dtype != graph.value(x->zero_point).type.dtype ||
        !same_value<float>(graph, x->scale, q->inputs[1]))
      return std::nullopt;
    const auto zero = zero_point_value(graph, x->zero_point);
    if (!zero || zero != zero_point_value(graph, q->inputs[2])) return std::nullopt;
    drop.inputs.push_back(*x);
  }
  return drop;
}

}  // namespace

Expected<std::vector<std::string>> FuseQdqNodeGroups::run(Graph& graph) const {
  std::vector<std::string> changes;
  std::set<NodeId> fused;  // the QuantizeLinear (and Relu or Clip) nodes the fused nodes replace
  std::set<ValueId> dequantized;  // outputs of the DequantizeLinear nodes the fused nodes read
  for (Node& node : graph.nodes) {
    if (const auto drop = dropped_qdq(graph, node)) {
      std::vector<std::string> names;
      for (std::size_t i = 0; i < drop->inputs.size(); ++i) {
        const Dequantized& x = drop->inputs[i];
        dequantized.insert(x.node->outputs[0]);
        names.push_back(fmt::format("'{}'", x.node->name));
        node.inputs[i] = x.quantized;
      }
      fused.insert(drop->quantize->id);
      changes.push_back(fmt::format("{} '{}' runs on the quantized values of DequantizeLinear {}: QuantizeLinear "
                                    "'{}' has the same scale and zero point",
                                    node.op_type, node.name, fmt::join(names, ", "), drop->quantize->name));
      node.outputs = drop->quantize->outputs;
      continue;
    }
    const bool conv = is_onnx(node, "Conv"), gemm = is_onnx(node, "Gemm");
    const std::string qlinear = qlinear_op(node);
    if (!conv && !gemm && !is_onnx(node, "MatMul") && qlinear.empty()) continue;
    const auto fusion = conv   ? conv_fusion(graph, node)
                        : gemm ? gemm_fusion(graph, node)
                        : qlinear.empty() ? matmul_fusion(graph, node)
                                          : qlinear_fusion(graph, node);
    if (!fusion) continue;
    const bool microsoft = gemm || !qlinear.empty();  // a com.microsoft op of ONNX Runtime's
    const std::string fused_op = conv ? "QLinearConv" : gemm ? "QGemm" : qlinear.empty() ? "QLinearMatMul" : qlinear;
    std::vector<std::string> names;
    for (const Node* dq : fusion->dequantizes) {
      dequantized.insert(dq->outputs[0]);
      names.push_back(fmt::format("'{}'", dq->name));
    }
    fused.insert(fusion->quantize->id);
    std::string clamp;
    if (const Node* c = fusion->clamp) {
      fused.insert(c->id);
      clamp = fmt::format(", {} '{}' ({})", c->op_type, c->name,
                          c->op_type == "Relu" ? "the zero point clamps as it does"
                                               : "the quantized range lies within its bounds");
    }
    changes.push_back(fmt::format("fused {} '{}' with DequantizeLinear {}{} and QuantizeLinear '{}' into {}{}",
                                  node.op_type, node.name, fmt::join(names, ", "), clamp, fusion->quantize->name,
                                  microsoft ? "com.microsoft::" : "", fused_op));
    // The node becomes the integer op in place: its attributes (Conv's window, Gemm's alpha and
    // transposes) carry over, and it writes the QuantizeLinear's output, which only nodes after
    // that one read.
    node.op_type = fused_op;
    node.inputs = fusion->inputs;
    node.outputs = fusion->quantize->outputs;
    if (microsoft) {
      // QGemm has no beta (C is added as it is); QLinearAveragePool no dilations (all 1 here).
      AttributeMap kept;
      for (const char* name : {"alpha", "transA", "transB", "auto_pad", "ceil_mode", "count_include_pad",
                               "kernel_shape", "pads", "strides"})
        if (const Attribute* a = node.attributes.find(name)) kept.set(name, *a);
      node.attributes = std::move(kept);
      node.domain = "com.microsoft";
      node.opset = 1;
      graph.opset_imports.emplace("com.microsoft", 1);
    }
  }
  if (fused.empty()) return changes;
  remove_nodes(graph, std::vector<NodeId>(fused.begin(), fused.end()));  // renumbers the nodes
  // Those DequantizeLinear nodes that no other node reads go too.
  std::vector<NodeId> unread;
  for (const Node& node : graph.nodes) {
    if (node.outputs.empty() || !dequantized.contains(node.outputs[0])) continue;
    const Value& out = graph.value(node.outputs[0]);
    if (out.consumers.empty() && !out.is_graph_output) unread.push_back(node.id);
  }
  if (!unread.empty()) remove_nodes(graph, unread);
  return changes;
}

}  // namespace nxrt
