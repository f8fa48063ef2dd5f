// The CPU EP's EPContext payload: header, the partition as ONNX, packed kernel states.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/kernel_partition.h"

namespace nxrt::cpu {

struct CpuBlob {
  std::string nxrt_version;
  std::string isa;
  std::string partition_name;
  std::string model_bytes;  // partition_to_onnx()
  PackedStates packed;
};

// Layout: "NXRTCPU\0", u32 format, u64+JSON header, u64+model, u32 count + (u64+name,
// u64+bytes)*, then a u64 FNV-1a checksum of everything before it. Little-endian.
std::vector<std::byte> encode_blob(const CpuBlob& blob);
// Validates magic, format, size fields and checksum; `context` names the node in errors.
Expected<CpuBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context);

}  // namespace nxrt::cpu
