// libcuda loaded with dlopen: nxrt runs where no NVIDIA driver is installed, and the driver's
// own error text says why the cuda EP is unavailable.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <string_view>

#include "nxrt/ep/error.h"

namespace nxrt::cuda {

// The driver entry points nxrt uses, resolved by their versioned symbol names.
struct DriverApi {
  decltype(&::cuInit) init;
  decltype(&::cuGetErrorName) get_error_name;
  decltype(&::cuGetErrorString) get_error_string;
  decltype(&::cuDriverGetVersion) driver_get_version;
  decltype(&::cuDeviceGetCount) device_get_count;
  decltype(&::cuDeviceGet) device_get;
  decltype(&::cuDeviceGetName) device_get_name;
  decltype(&::cuDeviceGetAttribute) device_get_attribute;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release;
  decltype(&::cuCtxPushCurrent) ctx_push_current;
  decltype(&::cuCtxPopCurrent) ctx_pop_current;
  decltype(&::cuStreamCreate) stream_create;
  decltype(&::cuStreamDestroy) stream_destroy;
  decltype(&::cuStreamSynchronize) stream_synchronize;
  decltype(&::cuMemAlloc) mem_alloc;
  decltype(&::cuMemFree) mem_free;
  decltype(&::cuMemcpyHtoDAsync) memcpy_htod_async;
  decltype(&::cuMemcpyDtoHAsync) memcpy_dtoh_async;
  decltype(&::cuMemcpyDtoDAsync) memcpy_dtod_async;
  decltype(&::cuMemsetD8Async) memset_d8_async;
  decltype(&::cuModuleLoadData) module_load_data;
  decltype(&::cuModuleUnload) module_unload;
  decltype(&::cuModuleGetFunction) module_get_function;
  decltype(&::cuLaunchKernel) launch_kernel;
};

// The loaded driver after a successful cuInit. Shared by the EP and everything it made; the
// library is never unloaded while code from it may run (it stays loaded until exit).
class Driver {
 public:
  // dlopen("libcuda.so.1"), resolve the entry points, cuInit(0). The error's `what` is the
  // one-line reason list-eps shows ("no CUDA driver: ..." or "cuInit returned 100 ...").
  static Expected<std::shared_ptr<const Driver>> load();
  // cuInit(0) and the version check on entry points resolved elsewhere: load()'s, or a host
  // stand-in's (the unit tests run the EP's device path on one).
  static Expected<std::shared_ptr<const Driver>> start(const DriverApi& api);

  const DriverApi& api() const { return api_; }
  // "100 CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)", or the number alone when
  // the driver cannot describe it (the toolkit's stub libcuda).
  std::string describe(CUresult r) const;
  // Ok, or a runtime error "<what>: <call> returned <describe(r)>".
  Expected<void> check(CUresult r, std::string_view call, std::string_view what) const;
  int version() const { return version_; }  // 13000 for CUDA 13.0

 private:
  Driver() = default;
  DriverApi api_{};
  int version_ = 0;
};

}  // namespace nxrt::cuda
