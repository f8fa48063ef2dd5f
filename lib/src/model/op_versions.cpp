// The ai.onnx operator versions of opsets 18 to 21 (ONNX Changelog.md), for claims and inference.
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
    OpVersionChange{"AffineGrid", 20, kNew, "new op"},
    OpVersionChange{"AveragePool", 19, kChanged, "dilations"},
    OpVersionChange{"BitwiseAnd", 18, kNew, "new op"},
    OpVersionChange{"BitwiseNot", 18, kNew, "new op"},
    OpVersionChange{"BitwiseOr", 18, kNew, "new op"},
    OpVersionChange{"BitwiseXor", 18, kNew, "new op"},
    OpVersionChange{"Cast", 19, kSame, "float8 types and saturate"},
    OpVersionChange{"Cast", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"CastLike", 19, kSame, "float8 types and saturate"},
    OpVersionChange{"CastLike", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"CenterCropPad", 18, kNew, "new op"},
    OpVersionChange{"Col2Im", 18, kNew, "new op"},
    OpVersionChange{"Constant", 19, kSame, "float8 types"},
    OpVersionChange{"Constant", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"ConstantOfShape", 20, kSame, "bfloat16 and float8 values"},
    OpVersionChange{"ConstantOfShape", 21, kSame, "int4 and uint4 values"},
    OpVersionChange{"DFT", 20, kChanged, "dft_length and axis as inputs"},
    OpVersionChange{"DeformConv", 19, kNew, "new op"},
    OpVersionChange{"DequantizeLinear", 19, kChanged, "float8 inputs, output type of the scale"},
    OpVersionChange{"DequantizeLinear", 21, kChanged, "blocked quantization, int4 and 16-bit inputs"},
    OpVersionChange{"Equal", 19, kSame, "string inputs"},
    OpVersionChange{"Flatten", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Gelu", 20, kNew, "new op"},
    OpVersionChange{"GridSample", 20, kChanged, "n-D grids, renamed modes"},
    OpVersionChange{"GroupNormalization", 18, kNew, "new op"},
    OpVersionChange{"GroupNormalization", 21, kChanged, "scale and bias per channel, stash_type"},
    OpVersionChange{"Identity", 19, kSame, "float8 types"},
    OpVersionChange{"Identity", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"If", 19, kSame, "float8 types"},
    OpVersionChange{"If", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"ImageDecoder", 20, kNew, "new op"},
    OpVersionChange{"IsInf", 20, kSame, "float8 types"},
    OpVersionChange{"IsNaN", 20, kSame, "float8 types"},
    OpVersionChange{"Loop", 19, kSame, "float8 types"},
    OpVersionChange{"Loop", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"LpPool", 18, kChanged, "ceil_mode"},
    OpVersionChange{"Mish", 18, kNew, "new op"},
    OpVersionChange{"OptionalGetElement", 18, kChanged, "tensor and sequence inputs"},
    OpVersionChange{"OptionalHasElement", 18, kChanged, "tensor and sequence inputs"},
    OpVersionChange{"Pad", 18, kChanged, "axes as an input"},
    OpVersionChange{"Pad", 19, kChanged, "wrap mode"},
    OpVersionChange{"Pad", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"QLinearMatMul", 21, kSame, "float8 types"},
    OpVersionChange{"QuantizeLinear", 19, kChanged, "float8 outputs, saturate, float16 inputs"},
    OpVersionChange{"QuantizeLinear", 21, kChanged, "blocked quantization, output_dtype, int4 and 16-bit outputs"},
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
    OpVersionChange{"Resize", 18, kChanged, "antialias, axes, keep_aspect_ratio_policy"},
    OpVersionChange{"Resize", 19, kChanged, "half_pixel_symmetric"},
    OpVersionChange{"Scan", 19, kSame, "float8 types"},
    OpVersionChange{"Scan", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"ScatterElements", 18, kChanged, "reduction max and min"},
    OpVersionChange{"ScatterND", 18, kChanged, "reduction max and min"},
    OpVersionChange{"Shape", 19, kSame, "float8 types"},
    OpVersionChange{"Shape", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Size", 19, kSame, "float8 types"},
    OpVersionChange{"Size", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Split", 18, kChanged, "num_outputs"},
    OpVersionChange{"Squeeze", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"StringConcat", 20, kNew, "new op"},
    OpVersionChange{"StringSplit", 20, kNew, "new op"},
    OpVersionChange{"Transpose", 21, kSame, "int4 and uint4 types"},
    OpVersionChange{"Unsqueeze", 21, kSame, "int4 and uint4 types"},
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

}  // namespace nxrt
