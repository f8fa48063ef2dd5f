// TypeProto <-> ValueType.
#include "convert.h"

#include <string>
#include <string_view>

namespace nxrt {
namespace {

// ONNX shape inference names the dims it cannot size "unk__N"; they mean nothing to a user,
// so nxrt treats them as unknown dims (printed "?"), wherever a model carries them.
bool is_inference_symbol(const std::string& symbol) {
  constexpr std::string_view kPrefix = "unk__";
  return symbol.size() > kPrefix.size() && symbol.starts_with(kPrefix) &&
         symbol.find_first_not_of("0123456789", kPrefix.size()) == std::string::npos;
}

ValueType tensor_type(const onnx::TypeProto::Tensor& t) {
  ValueType vt;
  vt.dtype = dtype_from_onnx(t.elem_type()).value_or(DType::kUndefined);
  if (!t.has_shape()) return vt;
  std::vector<Dim> dims;
  for (const auto& d : t.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) dims.push_back(Dim{d.dim_value(), {}});
    else if (d.has_dim_param() && !is_inference_symbol(d.dim_param())) dims.push_back(Dim{-1, d.dim_param()});
    else dims.push_back(Dim{-1, {}});
  }
  vt.shape = std::move(dims);
  return vt;
}

}  // namespace

ValueType convert_type(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return tensor_type(type.tensor_type());
  ValueType vt;
  if (type.has_sequence_type()) {
    vt.kind = ValueType::Kind::kSequence;
    const auto& elem = type.sequence_type().elem_type();
    if (elem.has_tensor_type()) vt.dtype = tensor_type(elem.tensor_type()).dtype;
    else vt.kind = ValueType::Kind::kUnknown;  // sequences of maps or sequences
    return vt;
  }
  if (type.has_optional_type()) {
    const ValueType inner = convert_type(type.optional_type().elem_type());
    if (inner.kind != ValueType::Kind::kTensor && inner.kind != ValueType::Kind::kSequence) return inner;
    vt.kind = ValueType::Kind::kOptional;
    vt.optional_of = inner.kind;
    vt.dtype = inner.dtype;
    return vt;
  }
  vt.kind = type.has_map_type() ? ValueType::Kind::kMap : ValueType::Kind::kUnknown;
  return vt;
}

namespace {

void tensor_type_to_proto(const ValueType& type, onnx::TypeProto::Tensor& t) {
  t.set_elem_type(static_cast<int32_t>(type.dtype));
  if (!type.shape) return;
  auto* shape = t.mutable_shape();
  for (const Dim& d : *type.shape) {
    auto* dim = shape->add_dim();
    if (d.known()) dim->set_dim_value(d.size);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

void kind_to_proto(ValueType::Kind kind, const ValueType& type, onnx::TypeProto& proto) {
  if (kind == ValueType::Kind::kSequence)
    tensor_type_to_proto(type, *proto.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type());
  else
    tensor_type_to_proto(type, *proto.mutable_tensor_type());
}

}  // namespace

void type_to_proto(const ValueType& type, onnx::TypeProto& proto) {
  if (type.kind == ValueType::Kind::kOptional)
    kind_to_proto(type.optional_of, type, *proto.mutable_optional_type()->mutable_elem_type());
  else
    kind_to_proto(type.kind, type, proto);
}

}  // namespace nxrt
