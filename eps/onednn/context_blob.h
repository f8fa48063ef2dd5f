// The oneDNN EP's EPContext payload: stamps (nxrt, oneDNN, ISA), the partition as ONNX, the
// input dims it was compiled for, and every prepared weight in its chosen memory format.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "dnnl_util.h"
#include "plan.h"

namespace nxrt::onednn {

struct OnednnBlob {
  std::string nxrt_version;
  std::string onednn_version;
  std::string isa;
  std::string partition_name;
  std::size_t boundary_inputs = 0;  // graph inputs of the model after these stand for weights
  std::vector<Dims> input_dims;     // the shapes the plan was compiled for
  std::string model_bytes;          // partition_to_onnx() with the packed weights as inputs
  PreparedWeights weights;
  Implementations implementations;  // what compile-time tuning chose, per step key
};

// Layout: "NXRTDNNL", u32 format, u64+JSON header (with the implementations chosen), u64+model, u32 count + (u64+key,
// u64+descriptor, u64+data)*, then the u64 FNV-1a checksum. Little-endian.
std::vector<std::byte> encode_blob(const OnednnBlob& blob);
// Validates magic, format, sizes and checksum; `context` names the node in errors.
Expected<OnednnBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context);

}  // namespace nxrt::onednn
