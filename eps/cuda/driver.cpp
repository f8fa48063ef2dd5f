// Loading libcuda and describing its errors.
#include "driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace nxrt::cuda {
namespace {

// Symbol names after cuda.h's versioning macros (cuMemAlloc -> cuMemAlloc_v2).
#define NXRT_CU_NAME2(fn) #fn
#define NXRT_CU_NAME(fn) NXRT_CU_NAME2(fn)

template <class Fn>
bool resolve(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  return out != nullptr;
}

}  // namespace

Expected<std::shared_ptr<const Driver>> Driver::load() {
  constexpr const char* kLibrary = "libcuda.so.1";
  // RTLD_NODELETE: code from the driver (its threads, callbacks) may outlive every handle.
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib)
    return fail(ErrorCode::kRuntime, fmt::format("no CUDA driver: {}", dlerror()),
                fmt::format("{} (the NVIDIA driver) is not installed or not on the library path", kLibrary),
                "install the NVIDIA driver, or use another EP (--ep cpu)");
  DriverApi a{};
  const char* missing = nullptr;
#define NXRT_CU_RESOLVE(field, fn) \
  if (!missing && !resolve(lib, NXRT_CU_NAME(fn), a.field)) missing = NXRT_CU_NAME(fn);
  NXRT_CU_RESOLVE(init, cuInit)
  NXRT_CU_RESOLVE(get_error_name, cuGetErrorName)
  NXRT_CU_RESOLVE(get_error_string, cuGetErrorString)
  NXRT_CU_RESOLVE(driver_get_version, cuDriverGetVersion)
  NXRT_CU_RESOLVE(device_get_count, cuDeviceGetCount)
  NXRT_CU_RESOLVE(device_get, cuDeviceGet)
  NXRT_CU_RESOLVE(device_get_name, cuDeviceGetName)
  NXRT_CU_RESOLVE(device_get_attribute, cuDeviceGetAttribute)
  NXRT_CU_RESOLVE(primary_ctx_retain, cuDevicePrimaryCtxRetain)
  NXRT_CU_RESOLVE(primary_ctx_release, cuDevicePrimaryCtxRelease)
  NXRT_CU_RESOLVE(ctx_push_current, cuCtxPushCurrent)
  NXRT_CU_RESOLVE(ctx_pop_current, cuCtxPopCurrent)
  NXRT_CU_RESOLVE(stream_create, cuStreamCreate)
  NXRT_CU_RESOLVE(stream_destroy, cuStreamDestroy)
  NXRT_CU_RESOLVE(stream_synchronize, cuStreamSynchronize)
  NXRT_CU_RESOLVE(mem_alloc, cuMemAlloc)
  NXRT_CU_RESOLVE(mem_free, cuMemFree)
  NXRT_CU_RESOLVE(memcpy_htod_async, cuMemcpyHtoDAsync)
  NXRT_CU_RESOLVE(memcpy_dtoh_async, cuMemcpyDtoHAsync)
  NXRT_CU_RESOLVE(memcpy_dtod_async, cuMemcpyDtoDAsync)
  NXRT_CU_RESOLVE(memset_d8_async, cuMemsetD8Async)
  NXRT_CU_RESOLVE(module_load_data, cuModuleLoadData)
  NXRT_CU_RESOLVE(module_unload, cuModuleUnload)
  NXRT_CU_RESOLVE(module_get_function, cuModuleGetFunction)
  NXRT_CU_RESOLVE(launch_kernel, cuLaunchKernel)
#undef NXRT_CU_RESOLVE
  if (missing)
    return fail(ErrorCode::kRuntime, fmt::format("the CUDA driver {} lacks {}", kLibrary, missing),
                "the installed driver is older than CUDA 12", "update the NVIDIA driver");
  return start(a);
}

Expected<std::shared_ptr<const Driver>> Driver::start(const DriverApi& api) {
  std::shared_ptr<Driver> d(new Driver());
  d->api_ = api;
  const DriverApi& a = d->api_;
  if (CUresult r = a.init(0); r != CUDA_SUCCESS)
    return fail(ErrorCode::kRuntime, fmt::format("no usable CUDA device: cuInit returned {}", d->describe(r)), {},
                "check that a GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES), or use another EP (--ep cpu)");
  if (CUresult r = a.driver_get_version(&d->version_); r != CUDA_SUCCESS)
    return fail(ErrorCode::kRuntime, fmt::format("cuDriverGetVersion returned {}", d->describe(r)));
  // Code built with CUDA 13.x runs on any CUDA 13 driver, not on an older major version.
  if (d->version_ / 1000 < CUDA_VERSION / 1000)
    return fail(ErrorCode::kRuntime,
                fmt::format("the NVIDIA driver supports CUDA {}.{}, older than the CUDA {}.{} nxrt was built with",
                            d->version_ / 1000, d->version_ % 1000 / 10, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10),
                {}, fmt::format("update the NVIDIA driver to one for CUDA {}", CUDA_VERSION / 1000));
  return std::shared_ptr<const Driver>(std::move(d));
}

std::string Driver::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  // A stub or broken driver may not describe its own errors: the number is all there is.
  if (api_.get_error_name(r, &name) != CUDA_SUCCESS || api_.get_error_string(r, &text) != CUDA_SUCCESS)
    return fmt::format("{} (the driver does not describe this error)", static_cast<int>(r));
  return fmt::format("{} {} ({})", static_cast<int>(r), name, text);
}

Expected<void> Driver::check(CUresult r, std::string_view call, std::string_view what) const {
  if (r == CUDA_SUCCESS) return {};
  return fail(ErrorCode::kRuntime, std::string(what), fmt::format("{} returned {}", call, describe(r)));
}

}  // namespace nxrt::cuda
