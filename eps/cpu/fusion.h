// The cpu EP's fusion step: chains of a partition's nodes that one kernel runs in a single
// pass, found when the partition is compiled (or restored from an EPContext blob).
#pragma once

#include <vector>

#include "nxrt/ep/kernel_partition.h"

namespace nxrt::cpu {

// The fused steps of `partition`, chains whose intermediates have no other reader:
//  * MatMulInteger -> Cast to float -> Mul by a scale of one value or one per column of B, as
//    ONNX Runtime's quantize_dynamic writes it (ORT fuses it as MatMulIntegerToFloat): the
//    int32 sums go straight to scaled floats, without two passes over two buffers;
//  * Sigmoid of a float x -> Mul by x (SiLU, as Llama's MLP writes it): the sigmoids are
//    never stored;
//  * DequantizeLinear of two uint8/int8 tensors -> Add (-> Relu) -> QuantizeLinear, each with
//    one scale (a QDQ model's residual connection, ONNX Runtime's QLinearAdd): the same bits as
//    the nodes, without their float tensors.
Expected<std::vector<FusedStep>> find_fusions(const Partition& partition);

// Whether the two shapes are the same whatever the model is run with: equal ranks, and each
// pair of dims the same size or the same symbol.
bool always_same_shape(const ValueType& a, const ValueType& b);

// Whether `step` is a quantized Add of find_fusions: its inputs 0 and 3 (A and B) and its output
// are of one shape, and it works element by element, whatever their layout.
bool is_quantized_add(const Graph& graph, const FusedStep& step);

}  // namespace nxrt::cpu
