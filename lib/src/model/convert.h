// Conversions from ONNX protobuf types to nxrt's IR types (private to lib/src/model).
#pragma once

#include <onnx/onnx_pb.h>

#include "nxrt/ir/graph.h"

namespace nxrt {

ValueType convert_type(const onnx::TypeProto& type);
// The inverse, for writing models and blobs.
void type_to_proto(const ValueType& type, onnx::TypeProto& proto);

}  // namespace nxrt
