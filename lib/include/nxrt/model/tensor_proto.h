// Conversion between onnx::TensorProto and Tensor / WeightHandle.
#pragma once

#include <filesystem>
#include <map>
#include <memory>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ep/weight.h"

namespace onnx {
class TensorProto;
}

namespace nxrt {

// Converts a TensorProto with inline data (raw_data or typed fields). `context` names the
// tensor in messages ("initializer 'W' of model.onnx").
Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& context);

// Files already mapped while loading one model, so each is mapped once.
using MappedFileCache = std::map<std::filesystem::path, std::shared_ptr<MappedFile>>;

// Like tensor_from_proto, but external data is memory-mapped from `model_dir` (behind the
// path guard) instead of copied.
Expected<WeightHandle> weight_from_proto(const onnx::TensorProto& proto,
                                         const std::filesystem::path& model_dir,
                                         const std::string& context, MappedFileCache& files);

// Writes a host tensor into a TensorProto (raw_data; string_data for strings).
void tensor_to_proto(const Tensor& tensor, onnx::TensorProto& proto);

}  // namespace nxrt
