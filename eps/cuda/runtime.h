// What a step sees while it runs: its tensors on the device, output allocation from the
// partition's pool, kernel launches from the partition's module, and the library handles.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <type_traits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_library.h"
#include "libraries.h"
#include "nxrt/ep/tensor.h"

namespace nxrt::cuda {

// Dims as the generated kernels take them (struct Dims in kernel_library.cpp).
struct KernelDims {
  int64_t d[kMaxRank] = {};
};
// The first values.size() slots (kernels also take the rank); values.size() <= kMaxRank.
KernelDims to_kernel_dims(std::span<const int64_t> values);

// Kernel arguments with stable addresses, as cuLaunchKernel takes them.
class KernelArgs {
 public:
  template <class T>
  KernelArgs& add(const T& v) {
    static_assert(sizeof(T) <= sizeof(Slot) && std::is_trivially_copyable_v<T>);
    Slot& s = slots_.emplace_back();
    std::memcpy(s.bytes, &v, sizeof(T));
    pointers_.push_back(s.bytes);
    return *this;
  }
  KernelArgs& ptr(const void* p) { return add(p); }
  void** pointers() { return pointers_.data(); }

 private:
  struct alignas(8) Slot {
    unsigned char bytes[sizeof(KernelDims)];
  };
  std::deque<Slot> slots_;  // a deque never moves its elements
  std::vector<void*> pointers_;
};

class MatmulPlans;  // blas.h

// cuBLASLt as a step calls it: the entry points, the handle, the stream to order work on, and
// the set-up of the products already run on this device.
struct BlasLibrary {
  const BlasApi& api;
  cublasLtHandle_t handle;
  cudaStream_t stream;
  MatmulPlans& plans;
};
// cuDNN likewise; its handle is already bound to the partition's stream.
struct DnnLibrary {
  const DnnApi& api;
  cudnnHandle_t handle;
};

// The block of the row kernels that reduce a row (sums, norms, ranges): 8 warps.
inline constexpr int kRowBlockThreads = 256;

class StepContext {
 public:
  virtual ~StepContext() = default;
  virtual bool has_input(std::size_t i) const = 0;
  virtual const Tensor& input(std::size_t i) const = 0;
  // Small input i (a shape, axes, Slice's bounds, Resize's scales) on the host. Free when the
  // host knows the value (a small initializer, a step's output computed on the host, or a view
  // of one); otherwise it is read back once, which waits for the stream.
  virtual Expected<Tensor> input_on_host(std::size_t i) = 0;
  virtual bool wants_output(std::size_t i) const = 0;
  // A device tensor from the partition's pool (contents undefined).
  virtual Expected<Tensor> output(std::size_t i, DType dtype, Shape shape) = 0;
  // Output i is `t` itself (a view of an input: Reshape and friends).
  virtual void set_output(std::size_t i, Tensor t) = 0;
  // Output i is a device copy of `host`, a value the step computed on the host (Shape's
  // output); later steps reading it on the host get `host` itself.
  virtual Expected<void> set_output_from_host(std::size_t i, const Tensor& host) = 0;
  // A device copy of a host tensor (Resize's coordinate tables), ordered on the stream; the
  // host tensor is kept until the run's work is done.
  virtual Expected<Tensor> upload(const Tensor& host) = 0;
  // Scratch device memory for this step (cuDNN and cuBLASLt workspaces).
  virtual Expected<Tensor> scratch(std::size_t bytes) = 0;
  // Launches `kernel` with grid-stride loops covering `work` items.
  virtual Expected<void> launch(std::string_view kernel, int64_t work, KernelArgs& args) = 0;
  // Launches `kernel` with one block of `threads` per row, `rows` rows (capped; kernels loop).
  // Row kernels that reduce a row take kRowBlockThreads.
  virtual Expected<void> launch_rows(std::string_view kernel, int64_t rows, int threads, KernelArgs& args) = 0;
  // Sets `bytes` bytes of device memory at `data` to 0, ordered with the step's other work.
  virtual Expected<void> zero(void* data, std::size_t bytes) = 0;
  // Copies `bytes` bytes of device memory from `from` to `to`, ordered likewise.
  virtual Expected<void> copy_on_device(void* to, const void* from, std::size_t bytes) = 0;
  virtual Expected<BlasLibrary> blas() = 0;
  // cuDNN is loaded by the first step that asks (a model without Conv runs where cuDNN is not
  // installed).
  virtual Expected<DnnLibrary> dnn() = 0;
  // "'Conv_3' (ai.onnx::Conv, opset 17)": for errors.
  virtual std::string where() const = 0;
};

// The device pointer of a tensor (base plus byte offset).
inline const void* dev(const Tensor& t) { return t.view().data(); }
inline void* dev_mut(const Tensor& t) { return t.mut().data(); }

}  // namespace nxrt::cuda
