// NVRTC: CUDA C source -> cubin for one architecture and PTX for newer ones, without a GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "arch.h"
#include "libraries.h"
#include "nxrt/ep/error.h"

namespace nxrt::cuda {

// A compiled module: what an EPContext blob stores and what the driver loads.
struct ModuleImage {
  GpuArch arch;
  std::vector<std::byte> cubin;  // SASS for arch
  std::string ptx;               // compute_XY, JIT-compiled by the driver on newer GPUs
  std::string nvrtc_version;     // of the NVRTC that compiled it, "13.0"
};

class NvrtcCompiler {
 public:
  // NVRTC's entry points from `load_api` (load_nvrtc, or a stand-in's).
  static Expected<std::shared_ptr<const NvrtcCompiler>> load(Expected<std::shared_ptr<const NvrtcApi>> (*load_api)());

  std::string version() const;  // "13.0"
  // The architectures this NVRTC compiles for, ascending.
  std::vector<GpuArch> architectures() const;
  // Refuses an architecture this NVRTC cannot target, listing the ones it can.
  Expected<void> check_supports(GpuArch arch) const;
  // Compiles `source` for -arch=sm_XY (cubin) and -arch=compute_XY (PTX), concurrently.
  // `name` appears in errors; the compiler log is the error's `why`.
  Expected<ModuleImage> compile(const std::string& source, const std::string& name, GpuArch arch) const;

 private:
  explicit NvrtcCompiler(std::shared_ptr<const NvrtcApi> api) : api_(std::move(api)) {}
  std::shared_ptr<const NvrtcApi> api_;
};

}  // namespace nxrt::cuda
