// The cuda EP's EPContext payload: stamps (nxrt, CUDA, NVRTC, target architecture), the
// partition as ONNX, the hash of the CUDA C generated for it, the cubin and the PTX.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nvrtc_compiler.h"
#include "nxrt/ep/error.h"

namespace nxrt::cuda {

struct CudaBlob {
  std::string nxrt_version;
  std::string cuda_version;   // toolkit nxrt was built with, "13.0"
  std::string partition_name;
  uint64_t source_hash = 0;   // FNV-1a of the module's CUDA C: the plan it was compiled from
  std::vector<std::string> steps;  // each step's implementation, for people reading the header
  std::string model_bytes;    // partition_to_onnx()
  ModuleImage image;          // image.arch: the target architecture; image.nvrtc_version: its compiler
};

// Layout: "NXRTCUDA", u32 format, u64+JSON header, u64+model, u64+cubin, u64+PTX, then the
// u64 checksum (blob_codec.h). Little-endian.
// The blob layout and kernel signatures this nxrt writes and reads. 2: layer_norm and pool
// take the Mean/InvStdDev and Indices outputs, chains compute int32/int64 (format 1's kernels
// would be called with the wrong arguments).
inline constexpr uint32_t kContextBlobFormat = 2;

std::vector<std::byte> encode_blob(const CudaBlob& blob);
// Validates magic, format, sizes and checksum; `context` names the node in errors.
Expected<CudaBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context);

}  // namespace nxrt::cuda
