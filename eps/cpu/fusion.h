// The cpu EP's fusion step: chains of a partition's nodes that one kernel runs in a single
// pass, found when the partition is compiled (or restored from an EPContext blob).
#pragma once

#include <vector>

#include "nxrt/ep/kernel_partition.h"

namespace nxrt::cpu {

// The fused steps of `partition`. Today one chain, as ONNX Runtime's quantize_dynamic writes
// it (ORT fuses it as MatMulIntegerToFloat): MatMulInteger -> Cast to float -> Mul by a scale
// of one value or one per column of B, where each intermediate has no other reader. The
// int32 sums then go straight to scaled floats, without two passes over two buffers.
Expected<std::vector<FusedStep>> find_fusions(const Partition& partition);

}  // namespace nxrt::cpu
