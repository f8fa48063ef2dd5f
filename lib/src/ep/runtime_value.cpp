// RuntimeValue: a tensor, a sequence of tensors, or an empty optional.
#include "nxrt/ep/runtime_value.h"

#include <fmt/format.h>

#include <cassert>

namespace nxrt {

RuntimeValue::RuntimeValue(Tensor tensor) : kind_(Kind::kTensor), tensor_(std::move(tensor)) {}

RuntimeValue RuntimeValue::sequence(DType element, std::vector<Tensor> items) {
  RuntimeValue v;
  v.kind_ = Kind::kSequence;
  v.element_ = element;
  v.items_ = std::move(items);
  return v;
}

const Tensor& RuntimeValue::tensor() const {
  static const Tensor kUndefined;
  assert(kind_ == Kind::kTensor && "a claim let a non-tensor value reach a tensor kernel");
  return kind_ == Kind::kTensor ? tensor_ : kUndefined;
}

const std::vector<Tensor>& RuntimeValue::items() const {
  assert(kind_ == Kind::kSequence && "a claim let a non-sequence value reach a sequence kernel");
  return items_;
}

DType RuntimeValue::dtype() const {
  switch (kind_) {
    case Kind::kTensor: return tensor_.dtype();
    case Kind::kSequence: return element_;
    case Kind::kNone: break;
  }
  return DType::kUndefined;
}

std::string RuntimeValue::describe() const {
  switch (kind_) {
    case Kind::kTensor:
      return fmt::format("tensor {}{}", dtype_name(tensor_.dtype()), shape_to_string(tensor_.shape()));
    case Kind::kSequence:
      return fmt::format("sequence of {} {}", items_.size(), dtype_name(element_));
    case Kind::kNone: break;
  }
  return "none";
}

}  // namespace nxrt
