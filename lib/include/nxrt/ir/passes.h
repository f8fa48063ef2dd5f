// The graph rewrites nxrt applies before claiming, and the list that runs them.
#pragma once

#include <memory>
#include <vector>

#include "nxrt/ep/pass.h"

namespace nxrt {

// Turns Constant nodes of the main graph, and Identity nodes of initializers (how exporters
// share a weight), into initializers, so EPs see constant weights and shapes (and can
// pre-pack them) instead of values computed at run time.
class ConstantToInitializer final : public OptimizerPass {
 public:
  std::string_view name() const override { return "constant-to-initializer"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// Removes Identity nodes, which exporters leave where a value is renamed or returned: readers
// of an internal output read the input instead, and an output of the graph is written by the
// input's producer directly (the name stays). Identities of graph inputs or initializers that
// are outputs of the graph, and values subgraphs read by name, are left as they are.
class EliminateIdentity final : public OptimizerPass {
 public:
  std::string_view name() const override { return "eliminate-identity"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// Computes, once at load time, the small integer tensors exporters build shapes from: Shape
// and Size of values whose shape is static, then Gather, Unsqueeze, Squeeze, Concat, Cast,
// Slice and integer Add/Sub/Mul/Div over such values and initializers (at most 64 elements).
// Their outputs become initializers, so EPs see constant shapes instead of a run-time chain
// (on a GPU, each would be read back with a wait for the stream). Outputs of the graph and
// values its subgraphs read are left as they are.
class FoldShapeComputations final : public OptimizerPass {
 public:
  std::string_view name() const override { return "fold-shape-computations"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// Merges nodes that compute the same thing: same op, opset, inputs and attributes (numbers
// and strings; nodes with tensor or graph attributes, random ops and other domains' ops are
// left alone). Readers of a merged node's outputs read the kept node's instead; outputs of the
// graph and values subgraphs read are never merged away. Quantizing exporters repeat a
// DynamicQuantizeLinear for every MatMul that reads one activation.
class MergeDuplicateNodes final : public OptimizerPass {
 public:
  std::string_view name() const override { return "merge-duplicate-nodes"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// Runs the integer product a quantized model's QDQ form stands for, as ONNX Runtime does:
// DequantizeLinear (uint8/int8, per tensor) -> Conv -> QuantizeLinear becomes QLinearConv (W
// per tensor or per output channel, a bias dequantized from int32 at x_scale * w_scale), and
// DequantizeLinear -> MatMul (2-D B, per tensor or per column) -> QuantizeLinear becomes
// QLinearMatMul, and DequantizeLinear -> Gemm (transA 0; B per tensor or per column of the
// product; C, with beta 1, an int32 bias as Conv's) -> QuantizeLinear ONNX Runtime's
// com.microsoft::QGemm. Around Add, Mul, Sigmoid, LeakyRelu, GlobalAveragePool and AveragePool
// (without dilations), every input and the output quantized per tensor to one 8-bit type, the
// group becomes ONNX Runtime's com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearGlobalAveragePool or QLinearAveragePool, as its QDQ transformer
// makes them. Scales and zero points must be initializers; the op's output must be read by the
// QuantizeLinear alone, or by a Relu or Clip alone when the QuantizeLinear saturates wherever
// that clamps (a Relu: its zero point is its type's lowest value). Outputs can differ from the
// float ops' by one quantization step, where a value rounds the other way.
// Ops that only move the values of their first input (Reshape, Transpose, Flatten, Squeeze,
// Unsqueeze, Slice, the Gathers, Tile, Expand, DepthToSpace, SpaceToDepth, MaxPool from opset
// 12) between a DequantizeLinear and a QuantizeLinear of one scale and zero point run on the
// quantized values instead, with the same outputs; so does a Concat of inputs all dequantized
// that way.
class FuseQdqNodeGroups final : public OptimizerPass {
 public:
  std::string_view name() const override { return "fuse-qdq"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// Computes, once at load time, each DequantizeLinear whose inputs are all initializers (x of
// an integer type of up to 32 bits, float scales per tensor or per axis, no blocks) and that
// fuse-qdq left for a float op: its output becomes a float initializer, which EPs can pack
// once, instead of weights dequantized on every run. Outputs over 64 MiB, outputs of the graph
// and values subgraphs read stay nodes.
class DequantizeConstants final : public OptimizerPass {
 public:
  std::string_view name() const override { return "dequantize-constants"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// Rewrites ONNX Runtime's com.microsoft FusedConv, FusedGemm and FusedMatMul, which its optimizer
// writes into the models it saves, as the standard ops they stand for, so that every EP takes
// them (and fuses them again its own way): FusedConv as Conv (+ Add of its Z input) + the
// activation, FusedGemm as Gemm + the activation (Relu, Tanh, Sigmoid, LeakyRelu, HardSigmoid,
// Clip of float or double), FusedMatMul as Transposes of the last two dims where transA /
// transB say, MatMul and a Mul by alpha. Nodes with other activations or batch transposes
// (transBatchA / transBatchB) stay as they are, and EPs decline them.
class ExpandOrtFusions final : public OptimizerPass {
 public:
  std::string_view name() const override { return "expand-ort-fusions"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// The passes analyze() runs, in order.
std::vector<std::unique_ptr<OptimizerPass>> default_passes();

// Removes the given nodes, renumbers the rest (keeping their order) and rebuilds links.
void remove_nodes(Graph& graph, const std::vector<NodeId>& doomed);

}  // namespace nxrt
