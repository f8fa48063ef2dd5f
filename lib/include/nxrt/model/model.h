// Model: a loaded ONNX file, as the protobuf it came from plus nxrt's IR over it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ir/graph.h"

namespace onnx {
class ModelProto;
}

namespace nxrt {

struct LoadOptions {
  // Concrete sizes for graph inputs ("input" -> [1,3,224,224]); applied before inference.
  std::map<std::string, Shape> input_shapes;
  bool infer_shapes = true;
  // Check each node against libonnx's definition of its operator (input and output counts,
  // attribute types, required attributes). The first check builds libonnx's whole schema
  // registry, about 10 ms. Off only where an EP re-claims every node before it builds it
  // (partition_from_onnx); each node must still have its first output.
  bool check_definitions = true;
};

struct Model {
  std::filesystem::path path;
  // As read (with the input shapes applied), less the initializers' data: that lives in
  // `graph` (Value::initializer) only.
  std::shared_ptr<onnx::ModelProto> proto;
  std::unique_ptr<Graph> graph;              // heap-held: subgraphs point at their parent
  int64_t ir_version = 0;
  std::string producer;                      // "pytorch 2.1"
  std::map<std::string, std::string> metadata;
  std::vector<std::string> warnings;         // e.g. shape inference that failed
};

// Reads, validates and converts a model file. External data is memory-mapped; its paths
// must stay inside the model's folder. Errors name the file and the field.
Expected<Model> load_model(const std::filesystem::path& path, const LoadOptions& options = {});

// Converts an in-memory ModelProto (the EPContext reader and tests use this).
Expected<Model> load_model_proto(std::shared_ptr<onnx::ModelProto> proto,
                                 const std::filesystem::path& path, const LoadOptions& options = {});

// Resolves `relative` against `dir` and refuses absolute paths, '..' components and
// symbolic links that lead outside `dir`. `what` names the file kind for messages.
Expected<std::filesystem::path> guard_relative_path(const std::filesystem::path& dir,
                                                    const std::string& relative,
                                                    std::string_view what);

}  // namespace nxrt
