// One CUDA device as the EP uses it: its primary context, one stream, a memory pool that
// reuses freed blocks by size, and the cuBLASLt and cuDNN handles bound to the stream.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "arch.h"
#include "cuda_stack.h"
#include "nvrtc_compiler.h"
#include "nxrt/ep/tensor.h"

namespace nxrt::cuda {

class MatmulPlans;  // blas.h

// What the driver says about a device, without creating a context (list-eps may call it).
struct DeviceInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  GpuArch arch;
};
Expected<DeviceInfo> probe_device(const Driver& driver, int ordinal);

// A context made current on the calling thread for the scope's lifetime. The driver keeps a
// stack of contexts per thread: the scope pushes, and pops when it ends, so that what was
// current before is current again. A program that embeds nxrt and uses CUDA itself (another
// device, its own context) finds its context as it left it after every call into the EP.
class ContextScope {
 public:
  // Pushes `context`; the error names `where` ("cuda:0 (NVIDIA H100)").
  static Expected<ContextScope> enter(const Driver& driver, CUcontext context, std::string_view where);
  ContextScope(ContextScope&& o) noexcept : driver_(std::exchange(o.driver_, nullptr)) {}
  ContextScope& operator=(ContextScope&&) = delete;
  ~ContextScope();

 private:
  explicit ContextScope(const Driver& driver) : driver_(&driver) {}
  const Driver* driver_;  // null once moved from
};

// Device blocks recycled by rounded size; a block is reused once its tensor is dropped (all
// work runs on one stream, so stream order makes the reuse safe). Every tensor from the pool
// keeps it, and the pool keeps the device's primary context retained: a tensor that outlives
// its session frees its block in a live context.
class DevicePool : public std::enable_shared_from_this<DevicePool> {
 public:
  DevicePool(std::shared_ptr<const Driver> driver, CUdevice cu_device, CUcontext context, DeviceId device);
  ~DevicePool();
  Expected<Tensor> allocate(DType dtype, Shape shape);
  Expected<std::shared_ptr<Storage>> allocate_bytes(std::size_t bytes);

 private:
  void give_back(std::size_t bytes, CUdeviceptr block);
  std::shared_ptr<const Driver> driver_;
  CUdevice cu_device_;
  CUcontext context_;
  bool retained_ = false;  // this pool's own retain of the primary context
  DeviceId device_;
  std::mutex mutex_;
  std::multimap<std::size_t, CUdeviceptr> free_;
};

// A loaded module (cubin, or PTX the driver JIT-compiles) and its functions by name.
class Module {
 public:
  static Expected<std::unique_ptr<Module>> load(const Driver& driver, const ModuleImage& image, GpuArch device_arch,
                                                std::string_view device_name);
  ~Module();
  Expected<CUfunction> function(const std::string& name);
  ArchMatch match() const { return match_; }

 private:
  Module(const Driver& driver, CUmodule module, ArchMatch match) : driver_(driver), module_(module), match_(match) {}
  const Driver& driver_;
  CUmodule module_;
  ArchMatch match_;
  std::map<std::string, CUfunction> functions_;
};

class Gpu {
 public:
  // Opens the device through `driver`, with cuBLASLt (and later cuDNN) from `stack`.
  static Expected<std::unique_ptr<Gpu>> open(std::shared_ptr<const Driver> driver, const DeviceInfo& info,
                                             const CudaStack& stack);
  ~Gpu();
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  const Driver& driver() const { return *driver_; }
  const DeviceInfo& info() const { return info_; }
  DeviceId device() const { return {DeviceType::kCuda, info_.ordinal}; }
  CUstream stream() const { return stream_; }
  cublasLtHandle_t blas() const { return blas_; }
  // cuDNN is loaded and its handle made by the first step that needs it (a model without
  // Conv runs where cuDNN is not installed); dnn() and dnn_api() are valid after that.
  Expected<void> open_dnn();
  cudnnHandle_t dnn() const { return dnn_; }
  const BlasApi& blas_api() const { return *blas_api_; }
  // The cuBLASLt set-up of the products run on this device, by shape.
  MatmulPlans& matmul_plans() { return *matmul_plans_; }
  const DnnApi& dnn_api() const { return *dnn_api_; }
  // The device's context, current on the calling thread while the scope lives. Every call
  // into the driver or the libraries happens inside one.
  Expected<ContextScope> enter() const;

  Expected<Tensor> allocate(DType dtype, Shape shape) { return pool_->allocate(dtype, std::move(shape)); }
  Expected<std::shared_ptr<Storage>> allocate_bytes(std::size_t bytes) { return pool_->allocate_bytes(bytes); }
  // Host <-> device and device <-> device copies of contiguous tensors, ordered on the stream;
  // copy() returns when the copy is done, enqueue_copy() once it is on the stream. After
  // enqueue_copy(), a host source must stay alive and unchanged, and a host destination
  // unread, until synchronize().
  Expected<void> copy(const TensorView& src, const TensorMut& dst);
  Expected<void> enqueue_copy(const TensorView& src, const TensorMut& dst);
  Expected<void> synchronize() const;
  // Held for a whole partition run: the stream, the cuBLASLt handle and the cuDNN handle
  // (which must not be used from two threads at once) serve one run at a time.
  std::mutex& run_mutex() { return run_mutex_; }

 private:
  Gpu() = default;
  std::shared_ptr<const Driver> driver_;
  CudaStack stack_;
  DeviceInfo info_;
  std::string name_;  // "cuda:0 (NVIDIA H100 80GB HBM3)", for errors
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::shared_ptr<const BlasApi> blas_api_;
  std::shared_ptr<const DnnApi> dnn_api_;
  cublasLtHandle_t blas_ = nullptr;
  std::unique_ptr<MatmulPlans> matmul_plans_;
  cudnnHandle_t dnn_ = nullptr;
  std::shared_ptr<DevicePool> pool_;
  std::mutex run_mutex_;
};

}  // namespace nxrt::cuda
