// The CPU EP's kernel families; each returns its own registration table.
#pragma once

#include <vector>

#include "common/channels_last.h"
#include "nxrt/ep/registry.h"

namespace nxrt::cpu {

std::vector<KernelDef> unary_kernels();           // Relu LeakyRelu Sigmoid Tanh Erf Exp Log Sqrt Neg Abs Clip
std::vector<KernelDef> binary_kernels();          // Add Sub Mul Div Pow (multidirectional broadcasting)
std::vector<KernelDef> compare_kernels();         // Equal Less Greater LessOrEqual GreaterOrEqual Not And Or Xor Where
std::vector<KernelDef> cast_kernels();            // Cast
std::vector<KernelDef> softmax_kernels();         // Softmax LogSoftmax
std::vector<KernelDef> normalization_kernels();   // BatchNormalization LayerNormalization RMSNormalization ...
std::vector<KernelDef> reduce_kernels();          // ReduceMean ReduceSum
std::vector<KernelDef> matmul_kernels();          // MatMul Gemm
std::vector<KernelDef> conv_kernels();            // Conv
std::vector<KernelDef> pool_kernels();            // MaxPool AveragePool GlobalAveragePool GlobalMaxPool
std::vector<KernelDef> shape_ops_kernels();       // Reshape Flatten Squeeze Unsqueeze Identity Shape
std::vector<KernelDef> transpose_kernels();       // Transpose
std::vector<KernelDef> concat_split_kernels();    // Concat Split
std::vector<KernelDef> slice_gather_kernels();    // Slice Gather
std::vector<KernelDef> constant_kernels();        // Constant ConstantOfShape
std::vector<KernelDef> activation_kernels();        // Elu Selu Celu HardSigmoid HardSwish Softplus Softsign ThresholdedRelu Shrink PRelu Mish Gelu Swish
std::vector<KernelDef> variadic_kernels();          // Min Max Sum Mean (n-ary, broadcasting)
std::vector<KernelDef> bitwise_kernels();           // BitShift BitwiseAnd BitwiseOr BitwiseXor BitwiseNot
std::vector<KernelDef> arg_reduce_kernels();        // ArgMax ArgMin
std::vector<KernelDef> cumulative_kernels();        // CumSum
std::vector<KernelDef> loss_kernels();              // NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss
std::vector<KernelDef> gradient_kernels();          // ai.onnx.preview.training: Gradient
std::vector<KernelDef> training_kernels();          // ai.onnx.preview.training: Adagrad Momentum Adam
std::vector<KernelDef> random_kernels();            // RandomUniform(Like) RandomNormal(Like) Bernoulli Multinomial Dropout
std::vector<KernelDef> string_ops_kernels();        // StringNormalizer TfIdfVectorizer StringConcat StringSplit RegexFullMatch
std::vector<KernelDef> scatter_gather_kernels();    // GatherElements GatherND ScatterElements Scatter ScatterND
std::vector<KernelDef> pad_kernels();               // Pad
std::vector<KernelDef> expand_tile_kernels();       // Expand Tile
std::vector<KernelDef> depth_space_kernels();       // DepthToSpace SpaceToDepth
std::vector<KernelDef> generators_kernels();        // Range OneHot EyeLike
std::vector<KernelDef> matrix_ops_kernels();        // Trilu Det Einsum
std::vector<KernelDef> selection_kernels();         // Compress NonZero Unique TopK ReverseSequence
std::vector<KernelDef> resize_kernels();            // Resize Upsample
std::vector<KernelDef> grid_sample_kernels();       // GridSample
std::vector<KernelDef> detection_kernels();         // RoiAlign NonMaxSuppression
std::vector<KernelDef> conv_transpose_kernels();    // ConvTranspose
std::vector<KernelDef> rnn_kernels();               // RNN GRU LSTM
std::vector<KernelDef> signal_kernels();            // DFT (17, 20) STFT HannWindow HammingWindow BlackmanWindow MelWeightMatrix
std::vector<KernelDef> quantize_kernels();          // DynamicQuantizeLinear QLinearMatMul QLinearConv
                                                    // MatMulInteger ConvInteger, com.microsoft: QGemm
                                                    // MatMulIntegerToFloat DynamicQuantizeMatMul
std::vector<KernelDef> qlinear_kernels();           // com.microsoft: QLinearAdd QLinearMul QLinearSigmoid
                                                    // QLinearLeakyRelu QLinearConcat
std::vector<KernelDef> qlinear_pool_kernels();      // com.microsoft: QLinearGlobalAveragePool QLinearAveragePool
std::vector<KernelDef> matmul_nbits_kernels();      // com.microsoft: MatMulNBits
std::vector<KernelDef> skip_normalization_kernels();  // com.microsoft: SkipLayerNormalization
                                                      // SkipSimplifiedLayerNormalization
std::vector<KernelDef> microsoft_activation_kernels();  // com.microsoft: Gelu FastGelu BiasGelu QuickGelu
std::vector<KernelDef> group_query_attention_kernels();  // com.microsoft: GroupQueryAttention
std::vector<KernelDef> gather_block_quantized_kernels();  // com.microsoft: GatherBlockQuantized
std::vector<KernelDef> embed_layer_normalization_kernels();  // com.microsoft: EmbedLayerNormalization
std::vector<KernelDef> microsoft_attention_kernels();  // com.microsoft: Attention QAttention
std::vector<KernelDef> multi_head_attention_kernels();  // com.microsoft: MultiHeadAttention
std::vector<KernelDef> quantize_linear_kernels();   // QuantizeLinear DequantizeLinear
std::vector<KernelDef> sequence_kernels();          // SequenceEmpty SequenceConstruct SequenceInsert SequenceAt SequenceErase SequenceLength SplitToSequence ConcatFromSequence
std::vector<KernelDef> optional_kernels();          // Optional OptionalHasElement OptionalGetElement
std::vector<KernelDef> control_flow_kernels();      // If Loop Scan
std::vector<KernelDef> group_normalization_kernels();  // GroupNormalization
std::vector<KernelDef> col2im_kernels();            // Col2Im
std::vector<KernelDef> deform_conv_kernels();       // DeformConv
std::vector<KernelDef> max_roi_pool_kernels();      // MaxRoiPool
std::vector<KernelDef> center_crop_pad_kernels();   // CenterCropPad
std::vector<KernelDef> affine_grid_kernels();       // AffineGrid
std::vector<KernelDef> rotary_embedding_kernels();  // RotaryEmbedding
std::vector<KernelDef> attention_kernels();         // Attention
std::vector<KernelDef> tensor_scatter_kernels();    // TensorScatter

// Every family's table, best implementation first (the only list of CPU kernels).
std::vector<KernelDef> all_kernels();

// Kernels the cpu EP builds itself, not registered: of several nodes, by its fusion step
// (fusion.h), or of a node in another layout, by its layout step (layout.h).
// MatMulInteger -> Cast -> Mul by a scale: `matmul` is the MatMulInteger node (its B is packed
// when constant); the kernel reads MatMulInteger's inputs, then the scale.
Expected<std::unique_ptr<Kernel>> make_matmul_integer_scaled(const NodeContext& matmul);
// Sigmoid -> Mul by the Sigmoid's input (SiLU), float: reads x, writes x * sigmoid(x).
Expected<std::unique_ptr<Kernel>> make_times_sigmoid();
// QLinearConv `conv` with X and Y stored as `layout` says (the cpu EP's layout step, layout.h):
// channels-last ones N x spatial x C. It fails at run time for a convolution of several groups
// that is not depthwise with one output channel per input channel.
Expected<std::unique_ptr<Kernel>> make_qlinear_conv(const NodeContext& conv, ChannelsLast layout);
// MaxPool `max_pool` of uint8 or int8 over 2-D windows, without Indices, X and Y stored
// channels-last (the layout step).
Expected<std::unique_ptr<Kernel>> make_max_pool_channels_last(const NodeContext& max_pool);
// GlobalAveragePool of float X stored channels-last (the layout step) into Y as ONNX has it.
Expected<std::unique_ptr<Kernel>> make_global_average_pool_channels_last();
// Concat (any dtype) and ONNX Runtime's QLinearConcat of values stored channels-last (the layout
// step), joining them along their channels, the last axis.
Expected<std::unique_ptr<Kernel>> make_concat_channels_last();
Expected<std::unique_ptr<Kernel>> make_qlinear_concat_channels_last();
// QLinearGlobalAveragePool `pool` of X stored channels-last (the layout step); Y is written as the
// node's channels_last attribute says (the same bytes either way).
Expected<std::unique_ptr<Kernel>> make_qlinear_global_average_pool_channels_last(const NodeContext& pool);
// DequantizeLinear of A and of B (uint8 or int8, one scale each) -> Add (-> Relu when `relu`)
// -> QuantizeLinear to `y_type`: reads A, its scale and zero point, the same of B, then Y's
// scale and zero point (zero points may be omitted); writes Y, the same bits as the nodes.
Expected<std::unique_ptr<Kernel>> make_qdq_add(DType y_type, bool relu);

}  // namespace nxrt::cpu
