// The cuda EP's whole stack on the host, so that its device path (device selection, the
// context, the memory pool, module loading, kernel launches, boundary copies, EPContext
// blobs) runs in the unit tests without a GPU:
//   - a CUDA driver whose devices' memory is host memory, checked on every copy and free,
//     and whose modules are CUDA C that the host compiler builds (cuda_host_module.h);
//   - an NVRTC that passes the CUDA C through as the module's "cubin" and "PTX";
//   - cuBLASLt and cuDNN from cuda_host_libraries.h.
// What it cannot check is the GPU itself: the real NVRTC, driver and libraries, and timing.
#pragma once

#ifdef NXRT_HAVE_CUDA
#include <cstddef>
#include <cstdint>

#include "cuda/arch.h"
#include "cuda/cuda_stack.h"

namespace nxrt::test {

cuda::CudaStack host_stack();

// The devices the host driver shows: `count` of them, each of architecture `arch` (the
// default is one sm_90 device).
void set_host_devices(int count, cuda::GpuArch arch);

// What the host driver has seen since the process started.
struct HostDriverCounts {
  std::size_t allocations = 0;       // cuMemAlloc calls
  std::size_t live_allocations = 0;  // allocated and not freed
  std::size_t launches = 0;          // cuLaunchKernel calls
  std::size_t uploads = 0;           // host-to-device copies
  std::size_t downloads = 0;         // device-to-host copies
  std::size_t device_copies = 0;     // device-to-device copies
  std::size_t synchronizations = 0;  // cuStreamSynchronize calls
  std::size_t modules_loaded = 0;    // cuModuleLoadData calls
  int context_retains = 0;           // primary-context retains not released
};
HostDriverCounts host_driver_counts();

// The calling thread's contexts, for checking that the EP restores what was current: a
// program that embeds nxrt may have its own context current (push_foreign_context pushes one
// that is none of the host devices'). current_context() is 0 when none is.
void push_foreign_context();
void pop_context();
uintptr_t current_context();

}  // namespace nxrt::test
#endif  // NXRT_HAVE_CUDA
