// The cpu EP's layout step: which values of a partition it stores channels-last (N x H x W x C)
// between the kernels that read and write them, found when the partition is compiled (or
// restored from an EPContext blob), after the fusion step.
#pragma once

#include <vector>

#include "nxrt/ep/kernel_partition.h"

namespace nxrt::cpu {

// Steps of one QLinearConv each, for the convolutions of `partition` that read or write a value
// stored channels-last. A value is stored so when a QLinearConv of one group (or depthwise, one
// output channel per input channel) over 2-D planes writes it, or a quantized Add of the fusion
// step `fused` does, and only such convolutions (as X) and quantized Adds read it; an Add keeps
// A, B and its output in one layout. Values the partition hands out keep ONNX's layout, so a
// quantized network's convolutions do not turn every activation channels-last and back (as
// ONNX Runtime's NHWC transformer keeps its quantized convolutions channels-last).
Expected<std::vector<FusedStep>> channels_last_steps(const Partition& partition, const std::vector<FusedStep>& fused);

}  // namespace nxrt::cpu
