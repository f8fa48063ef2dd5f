// The oneDNN EP's op families: each registers claim checks (KernelDef without a per-node
// kernel) and a lowering that turns a fused step into primitives.
#pragma once

#include <functional>
#include <vector>

#include "fusion.h"
#include "nxrt/ep/registry.h"
#include "plan_builder.h"

namespace nxrt::onednn {

// Emits the primitives of one fused step (the anchor's check already claimed it).
using LowerFn = std::function<Expected<void>(PlanBuilder&, const FusedOp&)>;

struct OnednnOpDef {
  KernelDef def;  // key, version range and the claim check; `create` stays empty
  LowerFn lower;
};

std::vector<OnednnOpDef> conv_ops();           // Conv, ConvTranspose
std::vector<OnednnOpDef> matmul_ops();         // MatMul, Gemm
std::vector<OnednnOpDef> pool_ops();           // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
std::vector<OnednnOpDef> normalization_ops();  // BatchNormalization, LRN, LayerNormalization
std::vector<OnednnOpDef> softmax_ops();        // Softmax, LogSoftmax
std::vector<OnednnOpDef> eltwise_ops();        // Relu, Sigmoid, Clip, ... (fusion.h's eltwise_specs)
std::vector<OnednnOpDef> binary_ops();         // Add, Sub, Mul, Div, Max, Min, Sum
std::vector<OnednnOpDef> concat_ops();         // Concat
std::vector<OnednnOpDef> layout_ops();         // Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose
std::vector<OnednnOpDef> pattern_ops();        // ReduceMean, Pow, Erf inside LayerNormalization and Gelu patterns

// Every family's table, in one list.
std::vector<OnednnOpDef> all_ops();

}  // namespace nxrt::onednn
