// The operator schemas ONNX shape inference runs with: libonnx's own, plus the ai.onnx versions
// of opsets 18 to 25 that an older libonnx lacks (nxrt's type and shape rules for them), and
// ONNX Runtime's com.microsoft ops that nxrt's EPs run (microsoft_schemas.h).
#pragma once

#include <onnx/defs/schema.h>

namespace nxrt {

// A schema registry that never hands shape inference a schema for a version it does not
// describe: versions past kNewestKnownOpset have none, so their outputs stay unknown until run.
const onnx::ISchemaRegistry& inference_schemas();

}  // namespace nxrt
