// Device probing, the device pool, modules and the Gpu's handles.
#include "gpu.h"

#include "blas.h"

#include <fmt/format.h>

namespace nxrt::cuda {

Expected<DeviceInfo> probe_device(const Driver& driver, int ordinal) {
  const DriverApi& cu = driver.api();
  int count = 0;
  if (auto r = driver.check(cu.device_get_count(&count), "cuDeviceGetCount", "cannot count CUDA devices"); !r)
    return std::unexpected(r.error());
  if (ordinal < 0 || ordinal >= count)
    return fail(ErrorCode::kUsage, fmt::format("no CUDA device {}: {} device{} visible", ordinal, count, count == 1 ? " is" : "s are"),
                {}, fmt::format("pick --device 0..{} (CUDA_VISIBLE_DEVICES changes what is visible)", count - 1));
  CUdevice dev = 0;
  if (auto r = driver.check(cu.device_get(&dev, ordinal), "cuDeviceGet", fmt::format("cannot open CUDA device {}", ordinal)); !r)
    return std::unexpected(r.error());
  char name[256] = {};
  DeviceInfo info{ordinal, {}, {}};
  if (auto r = driver.check(cu.device_get_name(name, sizeof(name), dev), "cuDeviceGetName", "cannot name the CUDA device"); !r)
    return std::unexpected(r.error());
  info.name = name;
  if (auto r = driver.check(cu.device_get_attribute(&info.arch.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                            "cuDeviceGetAttribute", "cannot read the compute capability");
      !r)
    return std::unexpected(r.error());
  if (auto r = driver.check(cu.device_get_attribute(&info.arch.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                            "cuDeviceGetAttribute", "cannot read the compute capability");
      !r)
    return std::unexpected(r.error());
  return info;
}

Expected<ContextScope> ContextScope::enter(const Driver& driver, CUcontext context, std::string_view where) {
  // Every run, copy and sync enters: the message is formatted only when the push fails.
  if (const CUresult r = driver.api().ctx_push_current(context); r != CUDA_SUCCESS)
    return std::unexpected(driver.check(r, "cuCtxPushCurrent", fmt::format("cannot use the context of {}", where)).error());
  return ContextScope(driver);
}

ContextScope::~ContextScope() {
  CUcontext popped = nullptr;
  if (driver_) driver_->api().ctx_pop_current(&popped);
}

namespace {

// Blocks are rounded so that tensors of nearby sizes share them: 256 bytes, then powers of two
// split in four steps (at most 25% slack).
std::size_t round_block(std::size_t bytes) {
  if (bytes <= 256) return 256;
  std::size_t p = 256;
  while (p < bytes) p <<= 1;
  const std::size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

}  // namespace

DevicePool::DevicePool(std::shared_ptr<const Driver> driver, CUdevice cu_device, CUcontext context, DeviceId device)
    : driver_(std::move(driver)), cu_device_(cu_device), context_(context), device_(device) {
  CUcontext same = nullptr;  // the Gpu holds it already: this only counts one more user
  retained_ = driver_->api().primary_ctx_retain(&same, cu_device_) == CUDA_SUCCESS;
}

DevicePool::~DevicePool() {
  if (!free_.empty()) {
    auto scope = ContextScope::enter(*driver_, context_, device_.to_string());
    if (scope)
      for (const auto& [bytes, block] : free_) driver_->api().mem_free(block);
  }
  if (retained_) driver_->api().primary_ctx_release(cu_device_);
}

Expected<std::shared_ptr<Storage>> DevicePool::allocate_bytes(std::size_t bytes) {
  const std::size_t size = round_block(bytes);
  CUdeviceptr block = 0;
  {
    std::lock_guard lock(mutex_);
    if (auto it = free_.find(size); it != free_.end()) {
      block = it->second;
      free_.erase(it);
    }
  }
  if (!block) {
    CUresult r = driver_->api().mem_alloc(&block, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {  // give the cached blocks back and try once more
      std::lock_guard lock(mutex_);
      for (const auto& [b, p] : free_) driver_->api().mem_free(p);
      free_.clear();
      r = driver_->api().mem_alloc(&block, size);
    }
    if (auto c = driver_->check(r, "cuMemAlloc", fmt::format("cannot allocate {} bytes on {}", size, device_.to_string())); !c)
      return std::unexpected(std::move(c.error()));
  }
  return std::make_shared<Storage>(reinterpret_cast<void*>(block), bytes, device_,
                                   [pool = shared_from_this(), size](void* p) {
                                     pool->give_back(size, reinterpret_cast<CUdeviceptr>(p));
                                   });
}

Expected<Tensor> DevicePool::allocate(DType dtype, Shape shape) {
  const int64_t n = shape_numel(shape);
  if (n < 0) return fail(ErrorCode::kRuntime, fmt::format("cannot allocate a tensor of shape {}", shape_to_string(shape)));
  auto storage = allocate_bytes(std::max<std::size_t>(1, static_cast<std::size_t>(n) * dtype_size(dtype)));
  if (!storage) return std::unexpected(storage.error());
  return Tensor(std::move(*storage), dtype, std::move(shape));
}

void DevicePool::give_back(std::size_t bytes, CUdeviceptr block) {
  std::lock_guard lock(mutex_);
  free_.emplace(bytes, block);
}

Expected<std::unique_ptr<Module>> Module::load(const Driver& driver, const ModuleImage& image, GpuArch device_arch,
                                               std::string_view device_name) {
  auto match = match_arch(image.arch, !image.ptx.empty(), device_arch, device_name);
  if (!match) return std::unexpected(match.error());
  // The driver reads a cubin from its ELF header, PTX as NUL-terminated text.
  std::string ptx;
  const void* data = image.cubin.data();
  if (*match == ArchMatch::kPtxJit) {
    ptx = image.ptx;
    data = ptx.c_str();
  }
  CUmodule module = nullptr;
  if (auto r = driver.check(driver.api().module_load_data(&module, data), "cuModuleLoadData",
                            fmt::format("cannot load the kernels compiled for {} on {} ({})", image.arch.sm(),
                                        device_arch.sm(), device_name));
      !r)
    return std::unexpected(r.error());
  return std::unique_ptr<Module>(new Module(driver, module, *match));
}

Module::~Module() { driver_.api().module_unload(module_); }

Expected<CUfunction> Module::function(const std::string& name) {
  if (auto it = functions_.find(name); it != functions_.end()) return it->second;
  CUfunction f = nullptr;
  if (auto r = driver_.check(driver_.api().module_get_function(&f, module_, name.c_str()), "cuModuleGetFunction",
                             fmt::format("the kernel '{}' is missing from the module", name));
      !r)
    return std::unexpected(r.error());
  functions_.emplace(name, f);
  return f;
}

Expected<std::unique_ptr<Gpu>> Gpu::open(std::shared_ptr<const Driver> driver, const DeviceInfo& info,
                                         const CudaStack& stack) {
  std::unique_ptr<Gpu> g(new Gpu());
  g->stack_ = stack;
  g->driver_ = std::move(driver);
  g->info_ = info;
  const DriverApi& cu = g->driver_->api();
  g->name_ = fmt::format("cuda:{} ({})", info.ordinal, info.name);
  const std::string& where = g->name_;
  if (auto r = g->driver_->check(cu.device_get(&g->device_, info.ordinal), "cuDeviceGet", "cannot open " + where); !r)
    return std::unexpected(r.error());
  if (auto r = g->driver_->check(cu.primary_ctx_retain(&g->context_, g->device_), "cuDevicePrimaryCtxRetain",
                                 "cannot create a context on " + where);
      !r)
    return std::unexpected(r.error());
  auto scope = g->enter();
  if (!scope) return std::unexpected(scope.error());
  if (auto r = g->driver_->check(cu.stream_create(&g->stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
                                 "cannot create a stream on " + where);
      !r)
    return std::unexpected(r.error());
  auto blas = stack.blas();
  if (!blas) return std::unexpected(blas.error());
  g->blas_api_ = std::move(*blas);
  const BlasApi& lt = *g->blas_api_;
  if (cublasStatus_t s = lt.create(&g->blas_); s != CUBLAS_STATUS_SUCCESS)
    return fail(ErrorCode::kRuntime, "cannot create a cuBLASLt handle on " + where,
                fmt::format("cublasLtCreate returned {} ({})", static_cast<int>(s), lt.get_status_string(s)));
  g->matmul_plans_ = std::make_unique<MatmulPlans>();
  g->pool_ = std::make_shared<DevicePool>(g->driver_, g->device_, g->context_, g->device());
  return g;
}

Expected<void> Gpu::open_dnn() {
  if (dnn_) return {};
  const std::string& where = name_;
  auto api = stack_.dnn();
  if (!api) return forward_error(std::move(api), "loading cuDNN for " + where);
  cudnnHandle_t handle = nullptr;
  if (cudnnStatus_t s = (*api)->create(&handle); s != CUDNN_STATUS_SUCCESS)
    return fail(ErrorCode::kRuntime, "cannot create a cuDNN handle on " + where,
                fmt::format("cudnnCreate returned {} ({})", static_cast<int>(s), (*api)->get_error_string(s)));
  if (cudnnStatus_t s = (*api)->set_stream(handle, stream_); s != CUDNN_STATUS_SUCCESS) {
    (*api)->destroy(handle);
    return fail(ErrorCode::kRuntime, "cannot bind cuDNN to the stream on " + where,
                fmt::format("cudnnSetStream returned {} ({})", static_cast<int>(s), (*api)->get_error_string(s)));
  }
  dnn_api_ = std::move(*api);
  dnn_ = handle;
  return {};
}

Gpu::~Gpu() {
  if (!context_) return;
  {
    // Without the context, there is nothing left to release but the retain.
    auto scope = enter();
    if (scope) {
      if (stream_) driver_->api().stream_synchronize(stream_);
      pool_.reset();
      if (dnn_) dnn_api_->destroy(dnn_);
      matmul_plans_.reset();
      if (blas_) blas_api_->destroy(blas_);
      if (stream_) driver_->api().stream_destroy(stream_);
    }
  }
  driver_->api().primary_ctx_release(device_);
}

Expected<ContextScope> Gpu::enter() const {
  return ContextScope::enter(*driver_, context_, name_);
}

Expected<void> Gpu::synchronize() const {
  auto scope = enter();
  if (!scope) return std::unexpected(scope.error());
  return driver_->check(driver_->api().stream_synchronize(stream_), "cuStreamSynchronize",
                        fmt::format("work on cuda:{} failed", info_.ordinal));
}

Expected<void> Gpu::copy(const TensorView& src, const TensorMut& dst) {
  if (auto r = enqueue_copy(src, dst); !r) return r;
  return synchronize();
}

Expected<void> Gpu::enqueue_copy(const TensorView& src, const TensorMut& dst) {
  if (src.shape == dst.shape && src.dtype == dst.dtype && src.numel() == 0) return {};  // nothing to move
  if (src.shape != dst.shape || src.dtype != dst.dtype || !src.is_contiguous() || !dst.is_contiguous())
    return fail(ErrorCode::kRuntime, fmt::format("cannot copy {} {} to {} {}", dtype_name(src.dtype), shape_to_string(src.shape),
                                                 dtype_name(dst.dtype), shape_to_string(dst.shape)),
                "the cuda EP copies contiguous tensors of one dtype and shape");
  auto scope = enter();
  if (!scope) return std::unexpected(scope.error());
  const std::size_t bytes = src.nbytes();
  const DriverApi& cu = driver_->api();
  const auto d_src = reinterpret_cast<CUdeviceptr>(src.data());
  const auto d_dst = reinterpret_cast<CUdeviceptr>(dst.data());
  CUresult r = CUDA_SUCCESS;
  if (src.device.is_host() && !dst.device.is_host())
    r = cu.memcpy_htod_async(d_dst, src.data(), bytes, stream_);
  else if (!src.device.is_host() && dst.device.is_host())
    r = cu.memcpy_dtoh_async(dst.data(), d_src, bytes, stream_);
  else if (!src.device.is_host() && !dst.device.is_host())
    r = cu.memcpy_dtod_async(d_dst, d_src, bytes, stream_);
  else
    return fail(ErrorCode::kRuntime, "the cuda EP was asked to copy host memory to host memory");
  return driver_->check(r, "cuMemcpyAsync", fmt::format("cannot copy {} bytes to {}", bytes, dst.device.to_string()));
}

}  // namespace nxrt::cuda
