// The ai.onnx operator versions of opsets 18 to 25 (ONNX Changelog.md and release notes, ONNX
// 1.13 to 1.20), for claims and inference.
#include "nxrt/model/op_versions.h"

#include <algorithm>
#include <array>

namespace nxrt {
namespace {

using K = OpVersionChange::Kind;
constexpr auto kNew = K::kNewOp;
constexpr auto kSame = K::kSameSignature;
constexpr auto kChanged = K::kChanged;

// Sorted by op, then version (checked by a unit test).
constexpr std::array kChanges{
    OpVersionChange{"Acos", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Acosh", 22, kSame, "bfloat16 types"},
    OpVersionChange{"AffineGrid", 20, kNew, "new op"},
    OpVersionChange{"Asin", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Asinh", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Atan", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Atanh", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Attention", 23, kNew, "new op"},
    OpVersionChange{"Attention", 24, kChanged, "nonpad_kv_seqlen input"},
    OpVersionChange{"AveragePool", 19, kChanged, "dilations"},
    OpVersionChange{"AveragePool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Bernoulli", 22, kSame, "bfloat16 types"},
    OpVersionChange{"BitwiseAnd", 18, kNew, "new op"},
    OpVersionChange{"BitwiseNot", 18, kNew, "new op"},
    OpVersionChange{"BitwiseOr", 18, kNew, "new op"},
    OpVersionChange{"BitwiseXor", 18, kNew, "new op"},
    OpVersionChange{"Cast", 19, kSame, "float8 types and saturate"},
    OpVersionChange{"Cast", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Cast", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Cast", 24, kSame, "float8e8m0 types and round_mode"},
    OpVersionChange{"Cast", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"CastLike", 19, kSame, "float8 types and saturate"},
    OpVersionChange{"CastLike", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"CastLike", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"CastLike", 24, kSame, "float8e8m0 types and round_mode"},
    OpVersionChange{"CastLike", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"CenterCropPad", 18, kNew, "new op"},
    OpVersionChange{"Col2Im", 18, kNew, "new op"},
    OpVersionChange{"Constant", 19, kSame, "float8 types"},
    OpVersionChange{"Constant", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Constant", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Constant", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Constant", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"ConstantOfShape", 20, kSame, "bfloat16 and float8 values"},
    OpVersionChange{"ConstantOfShape", 21, kSame, "int4 and uint4 values"},
    OpVersionChange{"ConstantOfShape", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"ConstantOfShape", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"ConstantOfShape", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"Conv", 22, kSame, "bfloat16 types"},
    OpVersionChange{"ConvTranspose", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Cos", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Cosh", 22, kSame, "bfloat16 types"},
    OpVersionChange{"DFT", 20, kChanged, "dft_length and axis as inputs"},
    OpVersionChange{"DeformConv", 19, kNew, "new op"},
    OpVersionChange{"DeformConv", 22, kSame, "bfloat16 types"},
    OpVersionChange{"DequantizeLinear", 19, kChanged, "float8 inputs, output type of the scale"},
    OpVersionChange{"DequantizeLinear", 21, kChanged, "blocked quantization, int4 and 16-bit inputs"},
    OpVersionChange{"DequantizeLinear", 23, kChanged, "output_dtype, float4e2m1 inputs"},
    OpVersionChange{"DequantizeLinear", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"DequantizeLinear", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"Det", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Dropout", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Elu", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Equal", 19, kSame, "string inputs"},
    OpVersionChange{"EyeLike", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Flatten", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Flatten", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Flatten", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Flatten", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"GRU", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Gelu", 20, kNew, "new op"},
    OpVersionChange{"GlobalAveragePool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"GlobalLpPool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"GlobalMaxPool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"GridSample", 20, kChanged, "n-D grids, renamed modes"},
    OpVersionChange{"GridSample", 22, kSame, "bfloat16 types"},
    OpVersionChange{"GroupNormalization", 18, kNew, "new op"},
    OpVersionChange{"GroupNormalization", 21, kChanged, "scale and bias per channel, stash_type"},
    OpVersionChange{"HardSigmoid", 22, kSame, "bfloat16 types"},
    OpVersionChange{"HardSwish", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Identity", 19, kSame, "float8 types"},
    OpVersionChange{"Identity", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Identity", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Identity", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Identity", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"If", 19, kSame, "float8 types"},
    OpVersionChange{"If", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"If", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"If", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"If", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"ImageDecoder", 20, kNew, "new op"},
    OpVersionChange{"InstanceNormalization", 22, kSame, "bfloat16 types"},
    OpVersionChange{"IsInf", 20, kSame, "float8 types"},
    OpVersionChange{"IsNaN", 20, kSame, "float8 types"},
    OpVersionChange{"LSTM", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Loop", 19, kSame, "float8 types"},
    OpVersionChange{"Loop", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Loop", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Loop", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Loop", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"LpNormalization", 22, kSame, "bfloat16 types"},
    OpVersionChange{"LpPool", 18, kChanged, "ceil_mode"},
    OpVersionChange{"LpPool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"MaxPool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"MaxRoiPool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"MaxUnpool", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Mish", 18, kNew, "new op"},
    OpVersionChange{"Mish", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Multinomial", 22, kSame, "bfloat16 types"},
    OpVersionChange{"NegativeLogLikelihoodLoss", 22, kSame, "bfloat16 types"},
    OpVersionChange{"OptionalGetElement", 18, kChanged, "tensor and sequence inputs"},
    OpVersionChange{"OptionalHasElement", 18, kChanged, "tensor and sequence inputs"},
    OpVersionChange{"Pad", 18, kChanged, "axes as an input"},
    OpVersionChange{"Pad", 19, kChanged, "wrap mode"},
    OpVersionChange{"Pad", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Pad", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Pad", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Pad", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"QLinearMatMul", 21, kSame, "float8 types"},
    OpVersionChange{"QuantizeLinear", 19, kChanged, "float8 outputs, saturate, float16 inputs"},
    OpVersionChange{"QuantizeLinear", 21, kChanged, "blocked quantization, output_dtype, int4 and 16-bit outputs"},
    OpVersionChange{"QuantizeLinear", 23, kChanged, "precision, float4e2m1 outputs"},
    OpVersionChange{"QuantizeLinear", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"QuantizeLinear", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"RMSNormalization", 23, kNew, "new op"},
    OpVersionChange{"RNN", 22, kSame, "bfloat16 types"},
    OpVersionChange{"RandomNormal", 22, kSame, "bfloat16 types"},
    OpVersionChange{"RandomNormalLike", 22, kSame, "bfloat16 types"},
    OpVersionChange{"RandomUniform", 22, kSame, "bfloat16 types"},
    OpVersionChange{"RandomUniformLike", 22, kSame, "bfloat16 types"},
    OpVersionChange{"ReduceL1", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceL2", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceLogSum", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceLogSumExp", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceMax", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceMax", 20, kChanged, "boolean inputs"},
    OpVersionChange{"ReduceMean", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceMin", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceMin", 20, kChanged, "boolean inputs"},
    OpVersionChange{"ReduceProd", 18, kChanged, "axes as an input"},
    OpVersionChange{"ReduceSumSquare", 18, kChanged, "axes as an input"},
    OpVersionChange{"RegexFullMatch", 20, kNew, "new op"},
    OpVersionChange{"Reshape", 19, kSame, "float8 types"},
    OpVersionChange{"Reshape", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Reshape", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Reshape", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Reshape", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"Resize", 18, kChanged, "antialias, axes, keep_aspect_ratio_policy"},
    OpVersionChange{"Resize", 19, kChanged, "half_pixel_symmetric"},
    OpVersionChange{"RoiAlign", 22, kSame, "bfloat16 types"},
    OpVersionChange{"RotaryEmbedding", 23, kNew, "new op"},
    OpVersionChange{"Round", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Scan", 19, kSame, "float8 types"},
    OpVersionChange{"Scan", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Scan", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Scan", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Scan", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"ScatterElements", 18, kChanged, "reduction max and min"},
    OpVersionChange{"ScatterND", 18, kChanged, "reduction max and min"},
    OpVersionChange{"Selu", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Shape", 19, kSame, "float8 types"},
    OpVersionChange{"Shape", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Shape", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Shape", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Shape", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"Sin", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Sinh", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Size", 19, kSame, "float8 types"},
    OpVersionChange{"Size", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Size", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Size", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Size", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"Softplus", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Softsign", 22, kSame, "bfloat16 types"},
    OpVersionChange{"Split", 18, kChanged, "num_outputs"},
    OpVersionChange{"SplitToSequence", 24, kSame, "bfloat16 types"},
    OpVersionChange{"Squeeze", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Squeeze", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Squeeze", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Squeeze", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"StringConcat", 20, kNew, "new op"},
    OpVersionChange{"StringSplit", 20, kNew, "new op"},
    OpVersionChange{"Swish", 24, kNew, "new op"},
    OpVersionChange{"Tan", 22, kSame, "bfloat16 types"},
    OpVersionChange{"TensorScatter", 24, kNew, "new op"},
    OpVersionChange{"ThresholdedRelu", 22, kSame, "bfloat16 types"},
    OpVersionChange{"TopK", 24, kSame, "bfloat16 types"},
    OpVersionChange{"Transpose", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Transpose", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Transpose", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Transpose", 25, kSame, "int2 and uint2 types"},
    OpVersionChange{"Unsqueeze", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Unsqueeze", 23, kSame, "float4e2m1 types"},
    OpVersionChange{"Unsqueeze", 24, kSame, "float8e8m0 types"},
    OpVersionChange{"Unsqueeze", 25, kSame, "int2 and uint2 types"},
};

auto versions_of(std::string_view op) {
  return std::equal_range(kChanges.begin(), kChanges.end(), OpVersionChange{op, 0, kNew, {}},
                          [](const OpVersionChange& a, const OpVersionChange& b) { return a.op < b.op; });
}

}  // namespace

std::span<const OpVersionChange> op_version_changes() { return kChanges; }

const OpVersionChange* op_version_at(std::string_view op, int64_t opset) {
  const OpVersionChange* found = nullptr;
  auto [first, last] = versions_of(op);
  for (auto it = first; it != last; ++it)
    if (it->since_version <= opset) found = &*it;
  return found;
}

const OpVersionChange* op_version_after(std::string_view op, int64_t since, int64_t opset) {
  auto [first, last] = versions_of(op);
  for (auto it = first; it != last; ++it)
    if (it->since_version > since && it->since_version <= opset) return &*it;
  return nullptr;
}

const OpVersionChange* op_signature_change_after(std::string_view op, int64_t since, int64_t opset) {
  auto [first, last] = versions_of(op);
  for (auto it = first; it != last; ++it)
    if (it->since_version > since && it->since_version <= opset && it->kind != kSame) return &*it;
  return nullptr;
}

}  // namespace nxrt
