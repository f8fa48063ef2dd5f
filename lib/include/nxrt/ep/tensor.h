// TensorView / TensorMut (non-owning, strided, validated), Tensor (owning), DLPack conversion.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/device.h"
#include "nxrt/ep/dtype.h"
#include "nxrt/ep/error.h"

struct DLManagedTensor;

namespace nxrt {

using Shape = std::vector<int64_t>;

// Product of dims (1 for a scalar); -1 if a dim is negative or the product overflows int64.
int64_t shape_numel(std::span<const int64_t> shape);
// Row-major strides in elements.
Shape contiguous_strides(std::span<const int64_t> shape);
std::string shape_to_string(std::span<const int64_t> shape);  // "[1,3,224,224]"

// Fields shared by the read-only and the writable view.
struct TensorLayout {
  DType dtype = DType::kUndefined;
  Shape shape;
  Shape strides;            // in elements; same rank as shape
  int64_t byte_offset = 0;  // from the data pointer to element [0,...,0]
  DeviceId device = kHostDevice;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
  bool is_contiguous() const;
  int64_t dim(int64_t axis) const { return shape[static_cast<std::size_t>(axis)]; }
};

class TensorView : public TensorLayout {
 public:
  TensorView() = default;
  // Contiguous view; unchecked (use make() for data from outside the process).
  TensorView(const void* data, DType dtype, Shape shape, DeviceId device = kHostDevice);

  // Validated construction: non-negative dims, numel without overflow, strides of the
  // shape's rank, and every addressed element inside [data, data + capacity_bytes).
  static Expected<TensorView> make(const void* data, std::size_t capacity_bytes, DType dtype,
                                   Shape shape, Shape strides, int64_t byte_offset = 0,
                                   DeviceId device = kHostDevice);

  const void* raw() const { return data_; }  // base pointer, byte_offset not applied
  const void* data() const { return static_cast<const char*>(data_) + byte_offset; }
  template <class T>
  const T* data_as() const { return static_cast<const T*>(data()); }
  std::size_t nbytes() const;  // numel * element size (contiguous extent)

 private:
  const void* data_ = nullptr;
};

class TensorMut : public TensorLayout {
 public:
  TensorMut() = default;
  TensorMut(void* data, DType dtype, Shape shape, DeviceId device = kHostDevice);

  void* data() const { return static_cast<char*>(data_) + byte_offset; }
  template <class T>
  T* data_as() const { return static_cast<T*>(data()); }
  std::size_t nbytes() const;
  TensorView view() const;

 private:
  void* data_ = nullptr;
};

// Owning storage for tensors: host memory (64-byte aligned) or an EP's device buffer.
// For DType::kString the storage holds constructed std::string objects.
class Storage {
 public:
  using Deleter = std::function<void(void*)>;
  Storage(void* data, std::size_t bytes, DeviceId device, Deleter deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Host allocation, zero-filled unless `zeroed` is false (for callers that write every element
  // at once: the fill would be a second pass over fresh memory); strings are default-constructed.
  // The bytes past the last element, up to the next 64, are zero either way.
  static std::shared_ptr<Storage> allocate_host(DType dtype, int64_t numel, bool zeroed = true);

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  DeviceId device() const { return device_; }

 private:
  void* data_;
  std::size_t bytes_;
  DeviceId device_;
  Deleter deleter_;
};

// A tensor that keeps its storage alive. Copies share storage (cheap, like a view).
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, int64_t byte_offset = 0);

  // New zero-filled host tensor.
  static Tensor empty(DType dtype, Shape shape);
  // Host tensor holding a copy of `bytes` (not for strings).
  static Tensor from_bytes(DType dtype, Shape shape, std::span<const std::byte> bytes);
  template <class T>
  static Tensor from_vector(Shape shape, const std::vector<T>& values) {
    auto bytes = std::as_bytes(std::span<const T>(values));
    return from_bytes(dtype_of<T>(), std::move(shape), bytes);
  }
  // Same storage, another contiguous shape of the same numel (Reshape without a copy).
  Tensor reshaped(Shape shape) const;

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return layout_.dtype; }
  const Shape& shape() const { return layout_.shape; }
  int64_t numel() const { return layout_.numel(); }
  std::size_t nbytes() const;
  DeviceId device() const { return layout_.device; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  TensorView view() const;
  TensorMut mut() const;
  // The first element (null without storage), as view().data() and mut().data() give it
  // without building a view: kernels call these in their inner set-up.
  const void* data() const { return mut_data(); }
  void* mut_data() const {
    return storage_ ? static_cast<char*>(storage_->data()) + layout_.byte_offset : nullptr;
  }
  template <class T>
  const T* data_as() const { return static_cast<const T*>(data()); }
  template <class T>
  T* mut_as() const { return static_cast<T*>(mut_data()); }
  // Contiguous host copy of the elements as int64 (for shape-like inputs of any int type).
  std::vector<int64_t> to_int64_vector() const;

 private:
  std::shared_ptr<Storage> storage_;
  TensorLayout layout_;
};

// Deep copy into new contiguous host storage (handles strided views and strings).
Tensor copy_to_contiguous(const TensorView& src);

// DLPack: export a tensor (the DLManagedTensor keeps the storage alive until its deleter
// runs) and import one (the returned Tensor calls the producer's deleter when released).
Expected<DLManagedTensor*> to_dlpack(const Tensor& tensor);
Expected<Tensor> from_dlpack(DLManagedTensor* managed);

}  // namespace nxrt
