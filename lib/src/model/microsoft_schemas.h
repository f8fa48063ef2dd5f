// Type and shape inference for ONNX Runtime's com.microsoft ops that nxrt's EPs run (the QLinear*
// ops of its QOperator models, QGemm, MatMulIntegerToFloat and DynamicQuantizeMatMul): libonnx
// has no schemas for them, so without these rules every value after the first such node would
// stay "unknown until run".
#pragma once

#include <onnx/defs/schema.h>

#include <string>

namespace nxrt {

// The inference-only schema of com.microsoft `op` at `version`; nullptr for ops without one.
const onnx::OpSchema* microsoft_schema(const std::string& op, int version);

// ONNX Runtime registers a few ops of its own in the ONNX domain (SimplifiedLayerNormalization,
// since version 1; LayerNormalization at versions 1 to 16, before ONNX defined it): their
// inference-only schema at `version`, nullptr for other ops and versions.
const onnx::OpSchema* onnx_runtime_onnx_domain_schema(const std::string& op, int version);

}  // namespace nxrt
