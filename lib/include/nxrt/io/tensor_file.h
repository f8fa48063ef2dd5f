// Tensor files for run/bench: .npy and ONNX TensorProto .pb, plus random inputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ir/graph.h"

namespace nxrt {

// Reads a .npy or .pb file (by extension); `name` receives a .pb tensor's own name.
Expected<Tensor> read_tensor_file(const std::filesystem::path& path, std::string* name = nullptr);
// Writes .npy or .pb (by extension), atomically; `name` is stored in .pb files.
Expected<void> write_tensor_file(const std::filesystem::path& path, const Tensor& tensor,
                                 const std::string& name = {});

// Deterministic random data of the given type and shape: floats in [-1, 1), integers in
// [0, 10), bools, strings "s<i>".
Expected<Tensor> random_tensor(DType dtype, const Shape& shape, uint64_t seed);

// The concrete shape to feed a declared input: symbolic or unknown dims become 1 (and
// `defaulted` is set so callers can say so on stderr).
Shape concrete_shape(const ValueType& type, bool* defaulted = nullptr);

}  // namespace nxrt
