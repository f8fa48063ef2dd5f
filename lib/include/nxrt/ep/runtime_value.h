// RuntimeValue: what flows along a graph edge at run time: a tensor, a sequence of
// tensors, or an optional that holds nothing (ONNX's tensor, sequence and optional types).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nxrt/ep/tensor.h"

namespace nxrt {

class RuntimeValue {
 public:
  enum class Kind { kTensor, kSequence, kNone };

  // An empty optional (kNone); also what an omitted input reads as.
  RuntimeValue() = default;
  // A tensor; implicit so that tensor-only code reads naturally.
  RuntimeValue(Tensor tensor);  // NOLINT(google-explicit-constructor)
  // A sequence; `element` is the element type, known even when the sequence is empty.
  static RuntimeValue sequence(DType element, std::vector<Tensor> items);
  static RuntimeValue none() { return {}; }

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kNone; }

  // The tensor; only for is_tensor() values.
  const Tensor& tensor() const;
  // The sequence's tensors; only for is_sequence() values.
  const std::vector<Tensor>& items() const;
  // The tensor's dtype, or the sequence's element type; kUndefined for kNone.
  DType dtype() const;
  // "tensor float[2,3]", "sequence of 3 float", "none": for messages.
  std::string describe() const;

 private:
  Kind kind_ = Kind::kNone;
  Tensor tensor_;
  DType element_ = DType::kUndefined;
  std::vector<Tensor> items_;
};

}  // namespace nxrt
