// Tensor files for run/bench: .npy and ONNX TensorProto .pb, plus random inputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "nxrt/ep/error.h"
#include "nxrt/ep/runtime_value.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ir/graph.h"

namespace nxrt {

// Reads a .npy or .pb file (by extension); `name` receives a .pb tensor's own name.
Expected<Tensor> read_tensor_file(const std::filesystem::path& path, std::string* name = nullptr);
// Writes .npy or .pb (by extension), atomically; `name` is stored in .pb files.
Expected<void> write_tensor_file(const std::filesystem::path& path, const Tensor& tensor,
                                 const std::string& name = {});

// Reads a value for an input or output of type `type`: a tensor from .npy or TensorProto
// .pb, a sequence from SequenceProto .pb, an optional from OptionalProto .pb. A uint16
// tensor where `type` says bfloat16 is taken as bfloat16 bit patterns (NumPy, hence ONNX's
// backend test data, has no bfloat16).
Expected<RuntimeValue> read_value_file(const std::filesystem::path& path, const ValueType& type,
                                       std::string* name = nullptr);
// Writes a tensor like write_tensor_file; a sequence or empty optional as a .pb file
// (SequenceProto or OptionalProto).
Expected<void> write_value_file(const std::filesystem::path& path, const RuntimeValue& value,
                                const std::string& name = {});

// Deterministic random data of the given type and shape: floats in [-1, 1), integers in
// [0, 10), bools, strings "s<i>".
Expected<Tensor> random_tensor(DType dtype, const Shape& shape, uint64_t seed);

// The concrete shape to feed a declared input: symbolic or unknown dims become 1 (and
// `defaulted` is set so callers can say so on stderr).
Shape concrete_shape(const ValueType& type, bool* defaulted = nullptr);

}  // namespace nxrt
