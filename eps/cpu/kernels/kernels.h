// The CPU EP's kernel families; each returns its own registration table.
#pragma once

#include <vector>

#include "nxrt/ep/registry.h"

namespace nxrt::cpu {

std::vector<KernelDef> unary_kernels();           // Relu LeakyRelu Sigmoid Tanh Erf Exp Log Sqrt Neg Abs Clip
std::vector<KernelDef> binary_kernels();          // Add Sub Mul Div Pow (multidirectional broadcasting)
std::vector<KernelDef> compare_kernels();         // Equal Less Greater LessOrEqual GreaterOrEqual Not And Or Xor Where
std::vector<KernelDef> cast_kernels();            // Cast
std::vector<KernelDef> softmax_kernels();         // Softmax LogSoftmax
std::vector<KernelDef> normalization_kernels();   // BatchNormalization LayerNormalization
std::vector<KernelDef> reduce_kernels();          // ReduceMean ReduceSum
std::vector<KernelDef> matmul_kernels();          // MatMul Gemm
std::vector<KernelDef> conv_kernels();            // Conv
std::vector<KernelDef> pool_kernels();            // MaxPool AveragePool GlobalAveragePool GlobalMaxPool
std::vector<KernelDef> shape_ops_kernels();       // Reshape Flatten Squeeze Unsqueeze Identity Shape
std::vector<KernelDef> transpose_kernels();       // Transpose
std::vector<KernelDef> concat_split_kernels();    // Concat Split
std::vector<KernelDef> slice_gather_kernels();    // Slice Gather
std::vector<KernelDef> constant_kernels();        // Constant ConstantOfShape
std::vector<KernelDef> sequence_kernels();          // SequenceEmpty SequenceConstruct SequenceInsert SequenceAt SequenceErase SequenceLength SplitToSequence ConcatFromSequence
std::vector<KernelDef> optional_kernels();          // Optional OptionalHasElement OptionalGetElement
std::vector<KernelDef> control_flow_kernels();      // If Loop Scan

// Every family's table, best implementation first (the only list of CPU kernels).
std::vector<KernelDef> all_kernels();

}  // namespace nxrt::cpu
