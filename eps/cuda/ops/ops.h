// The cuda EP's op families: each registers claim checks (KernelDef without a per-node
// kernel) and either a builder of plan steps or, for elementwise ops, a CUDA C expression
// that the chain fuser (chain.cpp) inlines into one generated kernel per chain.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/registry.h"
#include "plan.h"

namespace nxrt::cuda {

// Adds the steps of one node (its check claimed it).
using BuildFn = std::function<Expected<void>(PlanBuilder&, const Node&)>;

// How an elementwise input is broadcast to the node's output.
enum class Broadcast { kNumpy, kChannel };  // kChannel: a [C] vector along axis 1 (BatchNormalization)

// The float expression of an elementwise node from its inputs' expressions ("" for an omitted
// input); attributes are baked in as exact float literals.
using ExprFn = std::function<std::string(const Node&, std::span<const std::string> args)>;

struct ElementwiseDef {
  ExprFn expr;
  Broadcast broadcast = Broadcast::kNumpy;
  std::size_t channel_inputs_from = 1;  // kChannel: inputs from this index are [C] vectors
  std::size_t read_inputs = SIZE_MAX;   // inputs from this index only give a type (CastLike's target)
  // The nodes that are elementwise, when not all of the op's are; the others are planned by
  // CudaOpDef::build (BatchNormalization in training mode).
  std::function<bool(const Node&)> applies = nullptr;
  // The rule of one node, where the op's depends on its inputs' static shapes (PRelu-6); when
  // set, it replaces `broadcast`.
  std::function<Broadcast(const Graph&, const Node&)> broadcast_of = nullptr;
};

struct CudaOpDef {
  KernelDef def;  // key, version range and the claim check; `create` stays empty
  BuildFn build;  // non-elementwise ops, and the nodes of an elementwise op its `applies` rejects
  std::optional<ElementwiseDef> elementwise;
};

// A non-elementwise op from opset `since` on.
inline CudaOpDef make_op(std::string name, int64_t since, KernelCheck check, BuildFn build) {
  return {{{"", std::move(name), since}, 0, std::move(check), {}}, std::move(build), std::nullopt};
}

// The same op registered at each of `versions` (opsets where ONNX changed it, each handled by
// `check` and `build` from node.opset), up to `until` (0: the next change nxrt knows of).
inline std::vector<CudaOpDef> make_op_versions(const std::string& name, std::initializer_list<int64_t> versions,
                                               KernelCheck check, BuildFn build, int64_t until = 0) {
  std::vector<CudaOpDef> ops;
  for (auto it = versions.begin(); it != versions.end(); ++it) {
    ops.push_back(make_op(name, *it, check, build));
    ops.back().def.until_version = std::next(it) == versions.end() ? until : *std::next(it) - 1;
  }
  return ops;
}

// An op of ONNX Runtime's com.microsoft domain (opset 1): its contrib ops have one version.
inline CudaOpDef make_microsoft_op(std::string name, KernelCheck check, BuildFn build) {
  return {{{"com.microsoft", std::move(name), 1}, 0, std::move(check), {}}, std::move(build), std::nullopt};
}

// GELU of the float expression `a`: exact (x·Φ(x), with erf) or, with `tanh_approximation`,
// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (elementwise.cpp).
std::string gelu_expr(bool tanh_approximation, const std::string& a);

// op key -> how to plan it, shared by the EP's partitions.
struct OpTable {
  OpRegistry registry;
  std::map<OpKey, BuildFn> builders;
  std::map<OpKey, ElementwiseDef> elementwise;

  // The elementwise definition of a (claimed) node, or nullptr where a builder plans it.
  const ElementwiseDef* elementwise_def(const Node& node) const;

  // The registration of a (claimed) node; nullptr for a node no entry fits.
  const KernelDef* find(const Node& node) const { return registry.find(node.domain, node.op_type, node.opset); }
};

std::vector<CudaOpDef> elementwise_ops();   // unary, binary, variadic, Mod, Clip, Cast, Where, bitwise, BatchNormalization
std::vector<CudaOpDef> matmul_ops();        // MatMul, Gemm (cuBLASLt)
std::vector<CudaOpDef> conv_ops();          // Conv (cuDNN)
std::vector<CudaOpDef> conv_transpose_ops(); // ConvTranspose (cuDNN's backward data)
std::vector<CudaOpDef> normalization_ops(); // Softmax, LogSoftmax, Hardmax, Layer/Instance/GroupNormalization, LRN, MVN, LpNormalization
std::vector<CudaOpDef> reduce_ops();        // ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSumExp/LogSum, ArgMax/Min
std::vector<CudaOpDef> layout_ops();        // Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose, Expand
std::vector<CudaOpDef> gather_ops();        // Concat, Split, Slice, Gather, GatherElements
std::vector<CudaOpDef> pool_ops();          // MaxPool, AveragePool, LpPool, their Global forms, MaxUnpool
std::vector<CudaOpDef> shape_ops();         // Shape, Size, ConstantOfShape, Range
std::vector<CudaOpDef> pad_tile_ops();      // Pad, CenterCropPad, Tile
std::vector<CudaOpDef> cumsum_ops();        // CumSum
std::vector<CudaOpDef> trilu_ops();         // Trilu
std::vector<CudaOpDef> training_ops();      // ai.onnx.preview.training: Adagrad, Momentum, Adam
std::vector<CudaOpDef> resize_ops();        // Resize, Upsample (nearest, linear, cubic)
std::vector<CudaOpDef> depth_space_ops();   // DepthToSpace, SpaceToDepth
std::vector<CudaOpDef> col2im_ops();        // Col2Im
std::vector<CudaOpDef> scatter_ops();       // GatherND, ScatterND, ScatterElements, Scatter
std::vector<CudaOpDef> generator_ops();     // EyeLike, OneHot
std::vector<CudaOpDef> signal_ops();        // DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix
std::vector<CudaOpDef> topk_ops();          // TopK
std::vector<CudaOpDef> einsum_ops();        // Einsum (one or two inputs)
std::vector<CudaOpDef> quantize_ops();      // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
std::vector<CudaOpDef> integer_matmul_ops(); // MatMulInteger, QLinearMatMul, com.microsoft MatMulIntegerToFloat and
                                            // DynamicQuantizeMatMul
std::vector<CudaOpDef> integer_conv_ops();  // ConvInteger, QLinearConv
std::vector<CudaOpDef> det_ops();           // Det
std::vector<CudaOpDef> roi_align_ops();     // RoiAlign
std::vector<CudaOpDef> max_roi_pool_ops();  // MaxRoiPool
std::vector<CudaOpDef> deform_conv_ops();   // DeformConv (2-D)
std::vector<CudaOpDef> random_ops();        // RandomUniform/Normal(Like), Bernoulli, Multinomial, Dropout
std::vector<CudaOpDef> reverse_sequence_ops(); // ReverseSequence
std::vector<CudaOpDef> grid_sample_ops();   // GridSample, AffineGrid
std::vector<CudaOpDef> select_ops();        // Compress, NonZero, NonMaxSuppression, Unique
std::vector<CudaOpDef> recurrent_ops();     // RNN, GRU, LSTM (cuBLASLt products, generated gate kernels)
std::vector<CudaOpDef> loss_ops();          // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
std::vector<CudaOpDef> transformer_ops();   // RMSNormalization (and SimplifiedLayerNormalization), RotaryEmbedding
                                            // (and com.microsoft's), Attention, TensorScatter
// ONNX Runtime's contrib ops (com.microsoft), as its transformer optimizer writes them:
std::vector<CudaOpDef> microsoft_activation_ops();    // Gelu, FastGelu, BiasGelu, QuickGelu
std::vector<CudaOpDef> microsoft_normalization_ops(); // SkipLayerNormalization, SkipSimplifiedLayerNormalization
std::vector<CudaOpDef> embed_layer_normalization_ops(); // EmbedLayerNormalization
std::vector<CudaOpDef> microsoft_attention_ops();     // Attention, QAttention, MultiHeadAttention
std::vector<CudaOpDef> group_query_attention_ops();   // GroupQueryAttention
std::vector<CudaOpDef> matmul_nbits_ops();            // MatMulNBits
std::vector<CudaOpDef> gather_block_quantized_ops();  // GatherBlockQuantized

// Every family's table, registered into one OpTable.
Expected<std::shared_ptr<const OpTable>> make_op_table();

}  // namespace nxrt::cuda
