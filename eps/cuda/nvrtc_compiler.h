// NVRTC: CUDA C source -> cubin for one architecture and PTX for newer ones, without a GPU.
#pragma once

#include <string>
#include <vector>

#include "arch.h"
#include "nxrt/ep/error.h"

namespace nxrt::cuda {

// A compiled module: what an EPContext blob stores and what the driver loads.
struct ModuleImage {
  GpuArch arch;
  std::vector<std::byte> cubin;  // SASS for arch
  std::string ptx;               // compute_XY, JIT-compiled by the driver on newer GPUs
};

// "13.0".
std::string nvrtc_version();
// The architectures this NVRTC compiles for, ascending.
std::vector<GpuArch> nvrtc_architectures();
// Refuses an architecture this NVRTC cannot target, listing the ones it can.
Expected<void> check_nvrtc_supports(GpuArch arch);

// Compiles `source` twice: -arch=sm_XY (cubin) and -arch=compute_XY (PTX). `name` appears
// in errors; the compiler log is the error's `why`.
Expected<ModuleImage> compile_module(const std::string& source, const std::string& name, GpuArch arch);

}  // namespace nxrt::cuda
