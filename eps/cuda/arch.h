// GPU architectures (sm_90): parsing, names, and whether a blob compiled for one runs on another.
#pragma once

#include <string>
#include <string_view>

#include "nxrt/ep/error.h"

namespace nxrt::cuda {

struct GpuArch {
  int major = 0;
  int minor = 0;

  int number() const { return major * 10 + minor; }  // 90 for sm_90
  std::string sm() const;       // "sm_90": the cubin target and EPContext hardware_architecture
  std::string compute() const;  // "compute_90": the PTX target
  auto operator<=>(const GpuArch&) const = default;
};

// "sm_90", "sm_86", "compute_90" or "90" -> the architecture; other text is a usage error.
Expected<GpuArch> parse_arch(std::string_view text);

// How a blob's code runs on a device.
enum class ArchMatch { kCubin, kPtxJit };

// A cubin for sm_XY runs on sm_XZ with Z >= Y; PTX for compute_XY is JIT-compiled for any newer
// architecture. Otherwise the blob is refused with both architectures named.
Expected<ArchMatch> match_arch(GpuArch compiled, bool has_ptx, GpuArch device, std::string_view device_name);

}  // namespace nxrt::cuda
