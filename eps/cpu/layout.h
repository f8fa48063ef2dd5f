// The cpu EP's layout step: which values of a partition it stores channels-last (N x H x W x C)
// between the kernels that read and write them, found when the partition is compiled (or
// restored from an EPContext blob), after the fusion step.
#pragma once

#include <vector>

#include "nxrt/ep/kernel_partition.h"

namespace nxrt::cpu {

// Steps of one node each, for the QLinearConvs of `partition` that read or write a value stored
// channels-last, and the MaxPools and (QLinear)GlobalAveragePools that do. A value is stored so when one
// of these steps writes it and only such steps read it:
//  * a QLinearConv of one group (or depthwise, one output channel per input channel) over 2-D
//    planes, reading it as X; it reads X and writes Y in either layout;
//  * a quantized Add of the fusion step `fused`, a MaxPool of uint8 or int8 over 2-D planes
//    without Indices, a DequantizeLinear with one scale, or ONNX Runtime's QLinearAdd or
//    QLinearMul of two tensors of one shape, QLinearSigmoid or QLinearLeakyRelu (these run by
//    their registry kernels, which work element by element), or a Concat or QLinearConcat of
//    8-bit tensors along their channels (joined along the last axis when channels-last); these
//    keep their inputs and output in one layout;
//  * a GlobalAveragePool of float X, or a QLinearGlobalAveragePool of X as ONNX lays it out,
//    over 2-D planes, reading it; its output is the same bytes in either layout.
// Values the partition hands out keep ONNX's layout, so a quantized network's convolutions do
// not turn every activation channels-last and back (as ONNX Runtime's NHWC transformer keeps its
// quantized convolutions channels-last).
Expected<std::vector<FusedStep>> channels_last_steps(const Partition& partition, const std::vector<FusedStep>& fused);

}  // namespace nxrt::cpu
