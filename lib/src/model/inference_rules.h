// Building blocks of ONNX type and shape inference rules (schema_bridge.cpp, microsoft_schemas.cpp):
// running libonnx's rule of a version, reading an input's dims and writing an output's.
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace nxrt::inference {

using onnx::InferenceContext;

inline const onnx::OpSchema* libonnx_schema(const std::string& op, int version) {
  return onnx::OpSchemaRegistry::Instance()->GetSchema(op, version, onnx::ONNX_DOMAIN);
}

// Runs the inference of libonnx's version `version` of `op` (one whose signature still fits).
inline void infer_as(InferenceContext& ctx, const char* op, int version) {
  const onnx::OpSchema* s = libonnx_schema(op, version);
  if (s && s->has_type_and_shape_inference_function()) s->GetTypeAndShapeInferenceFunction()(ctx);
}

inline bool has_input(InferenceContext& ctx, std::size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr;
}

// Output 0 gets input 0's element type and, when known, its rank (sizes unknown until run).
inline void type_and_rank(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  auto* shape = onnx::getOutputShape(ctx, 0);
  shape->clear_dim();
  for (int i = 0; i < ctx.getInputType(0)->tensor_type().shape().dim_size(); ++i) shape->add_dim();
}

inline void same_as_input(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// The dim of input `i` at `d`, when the input's shape is known; nullptr otherwise.
inline const onnx::TensorShapeProto_Dimension* input_dim(InferenceContext& ctx, std::size_t i, int d) {
  if (!has_input(ctx, i) || !onnx::hasInputShape(ctx, i)) return nullptr;
  const onnx::TensorShapeProto& s = ctx.getInputType(i)->tensor_type().shape();
  return d < s.dim_size() ? &s.dim(d) : nullptr;
}

// Appends `dim` (a copy, or an unknown dim when nullptr) to `shape`.
inline void add_dim(onnx::TensorShapeProto* shape, const onnx::TensorShapeProto_Dimension* dim) {
  if (dim) *shape->add_dim() = *dim;
  else shape->add_dim();
}

// Appends a dim of known value, or an unknown dim when `value` is not positive.
inline void add_value(onnx::TensorShapeProto* shape, int64_t value) {
  auto* d = shape->add_dim();
  if (value > 0) d->set_dim_value(value);
}

inline int64_t value_of(const onnx::TensorShapeProto_Dimension* dim) {
  return dim && dim->has_dim_value() ? dim->dim_value() : -1;
}

// Output 0: input a's element type, and the shape numpy broadcasting gives inputs a and b.
inline void broadcast_inputs(InferenceContext& ctx, std::size_t a, std::size_t b) {
  if (!has_input(ctx, a) || !has_input(ctx, b)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, a, 0);
  if (onnx::hasInputShape(ctx, a) && onnx::hasInputShape(ctx, b))
    onnx::bidirectionalBroadcastShapeInference(ctx.getInputType(a)->tensor_type().shape(),
                                               ctx.getInputType(b)->tensor_type().shape(),
                                               *onnx::getOutputShape(ctx, 0));
}

}  // namespace nxrt::inference
