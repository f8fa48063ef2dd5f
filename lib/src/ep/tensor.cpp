// Tensor views, owning tensors and host storage.
#include "nxrt/ep/tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace nxrt {

int64_t shape_numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

Shape contiguous_strides(std::span<const int64_t> shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    // Only a tensor with a zero dimension can overflow here (shape_numel bounds the others);
    // it has no elements to address, so a saturated stride is as good as any.
    if (__builtin_mul_overflow(s, std::max<int64_t>(shape[i], 1), &s)) s = std::numeric_limits<int64_t>::max();
  }
  return strides;
}

std::string shape_to_string(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

bool TensorLayout::is_contiguous() const {
  int64_t expected = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    // Overflow needs a zero dimension elsewhere: an empty tensor, contiguous as any.
    if (__builtin_mul_overflow(expected, shape[i], &expected)) return true;
  }
  return true;
}

TensorView::TensorView(const void* data, DType dtype_, Shape shape_, DeviceId device_) : data_(data) {
  dtype = dtype_;
  strides = contiguous_strides(shape_);
  shape = std::move(shape_);
  device = device_;
}

Expected<TensorView> TensorView::make(const void* data, std::size_t capacity_bytes, DType dtype,
                                      Shape shape, Shape strides, int64_t byte_offset,
                                      DeviceId device) {
  const std::size_t esize = dtype_size(dtype);
  if (esize == 0)
    return fail(ErrorCode::kInvalidInput, fmt::format("unknown element type {}", static_cast<int>(dtype)));
  if (strides.size() != shape.size())
    return fail(ErrorCode::kInvalidInput,
                fmt::format("strides of rank {} for a shape of rank {}", strides.size(), shape.size()));
  const int64_t numel = shape_numel(shape);
  if (numel < 0)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("shape {} has a negative dimension or overflows int64", shape_to_string(shape)));
  if (byte_offset < 0)
    return fail(ErrorCode::kInvalidInput, fmt::format("negative byte offset {}", byte_offset));
  if (numel > 0) {
    // Lowest and highest addressed element, with overflow checks on every step.
    __int128 lo = 0, hi = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const __int128 span = static_cast<__int128>(shape[i] - 1) * strides[i];
      (span < 0 ? lo : hi) += span;
    }
    // lo and hi stay within 2^126 in magnitude, but times the element size they could wrap:
    // compare element counts against the room before and after element 0 instead.
    const auto size = static_cast<__int128>(esize);
    const __int128 room_before = byte_offset / size;
    const __int128 room_after = (static_cast<__int128>(capacity_bytes) - byte_offset) / size;
    if (-lo > room_before || hi + 1 > room_after)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("tensor of shape {} and strides {} reaches past its {} bytes of data",
                              shape_to_string(shape), shape_to_string(strides), capacity_bytes));
  }
  TensorView v;
  v.data_ = data;
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  v.byte_offset = byte_offset;
  v.device = device;
  return v;
}

std::size_t TensorView::nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }

TensorMut::TensorMut(void* data, DType dtype_, Shape shape_, DeviceId device_) : data_(data) {
  dtype = dtype_;
  strides = contiguous_strides(shape_);
  shape = std::move(shape_);
  device = device_;
}

std::size_t TensorMut::nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }

TensorView TensorMut::view() const {
  TensorView v(data_, dtype, shape, device);
  v.strides = strides;
  v.byte_offset = byte_offset;
  return v;
}

Storage::Storage(void* data, std::size_t bytes, DeviceId device, Deleter deleter)
    : data_(data), bytes_(bytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

std::shared_ptr<Storage> Storage::allocate_host(DType dtype, int64_t numel, bool zeroed) {
  const std::size_t esize = dtype_size(dtype);
  const std::size_t count = static_cast<std::size_t>(std::max<int64_t>(numel, 0));
  if (esize != 0 && count > (std::numeric_limits<std::size_t>::max() - 64) / esize) throw std::bad_alloc();
  const std::size_t bytes = count * esize;
  const std::size_t alloc = std::max<std::size_t>((bytes + 63) / 64 * 64, 64);
  void* p = std::aligned_alloc(64, alloc);
  if (!p) throw std::bad_alloc();
  if (dtype == DType::kString) {
    auto* strings = static_cast<std::string*>(p);
    for (int64_t i = 0; i < numel; ++i) new (strings + i) std::string();
    return std::make_shared<Storage>(p, bytes, kHostDevice, [numel](void* q) {
      auto* s = static_cast<std::string*>(q);
      for (int64_t i = 0; i < numel; ++i) s[i].~basic_string();
      std::free(q);
    });
  }
  if (zeroed)
    std::memset(p, 0, alloc);
  else
    std::memset(static_cast<char*>(p) + bytes, 0, alloc - bytes);
  return std::make_shared<Storage>(p, bytes, kHostDevice, [](void* q) { std::free(q); });
}

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape, int64_t byte_offset)
    : storage_(std::move(storage)) {
  layout_.dtype = dtype;
  layout_.strides = contiguous_strides(shape);
  layout_.shape = std::move(shape);
  layout_.byte_offset = byte_offset;
  layout_.device = storage_ ? storage_->device() : kHostDevice;
}

Tensor Tensor::empty(DType dtype, Shape shape) {
  const int64_t n = shape_numel(shape);
  return Tensor(Storage::allocate_host(dtype, n), dtype, std::move(shape));
}

Tensor Tensor::from_bytes(DType dtype, Shape shape, std::span<const std::byte> bytes) {
  const int64_t numel = shape_numel(shape);
  Tensor t(Storage::allocate_host(dtype, numel, false), dtype, std::move(shape));
  const std::size_t n = std::min(bytes.size(), t.nbytes());
  auto* data = static_cast<std::byte*>(t.storage_->data());
  if (n > 0) std::memcpy(data, bytes.data(), n);
  std::memset(data + n, 0, t.nbytes() - n);  // what `bytes` leaves out
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor t = *this;
  t.layout_.strides = contiguous_strides(shape);
  t.layout_.shape = std::move(shape);
  return t;
}

std::size_t Tensor::nbytes() const {
  return static_cast<std::size_t>(std::max<int64_t>(numel(), 0)) * dtype_size(dtype());
}

TensorView Tensor::view() const {
  TensorView v(storage_ ? storage_->data() : nullptr, layout_.dtype, layout_.shape, layout_.device);
  v.strides = layout_.strides;
  v.byte_offset = layout_.byte_offset;
  return v;
}

TensorMut Tensor::mut() const {
  TensorMut m(storage_ ? storage_->data() : nullptr, layout_.dtype, layout_.shape, layout_.device);
  m.strides = layout_.strides;
  m.byte_offset = layout_.byte_offset;
  return m;
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> out(static_cast<std::size_t>(std::max<int64_t>(numel(), 0)));
  const TensorView v = view();
  for (std::size_t i = 0; i < out.size(); ++i) {
    switch (dtype()) {
      case DType::kInt64: out[i] = v.data_as<int64_t>()[i]; break;
      case DType::kInt32: out[i] = v.data_as<int32_t>()[i]; break;
      case DType::kInt16: out[i] = v.data_as<int16_t>()[i]; break;
      case DType::kInt2:
      case DType::kInt4:
      case DType::kInt8: out[i] = v.data_as<int8_t>()[i]; break;
      case DType::kUInt2:
      case DType::kUInt4:
      case DType::kUInt8: out[i] = v.data_as<uint8_t>()[i]; break;
      case DType::kUInt16: out[i] = v.data_as<uint16_t>()[i]; break;
      case DType::kUInt32: out[i] = v.data_as<uint32_t>()[i]; break;
      case DType::kUInt64: out[i] = static_cast<int64_t>(v.data_as<uint64_t>()[i]); break;
      case DType::kBool: out[i] = v.data_as<bool>()[i]; break;
      default: out[i] = 0; break;
    }
  }
  return out;
}

Tensor copy_to_contiguous(const TensorView& src) {
  // Every element is written below (strings are constructed by the allocation).
  Tensor dst(Storage::allocate_host(src.dtype, src.numel(), false), src.dtype, src.shape);
  const int64_t n = src.numel();
  if (n <= 0) return dst;
  const std::size_t esize = dtype_size(src.dtype);
  const auto* in = static_cast<const char*>(src.data());
  auto* out = static_cast<char*>(dst.mut().data());
  const bool strings = src.dtype == DType::kString;
  if (src.is_contiguous() && !strings) {
    std::memcpy(out, in, static_cast<std::size_t>(n) * esize);
    return dst;
  }
  std::vector<int64_t> index(src.shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (std::size_t d = 0; d < index.size(); ++d) offset += index[d] * src.strides[d];
    if (strings)
      reinterpret_cast<std::string*>(out)[i] = reinterpret_cast<const std::string*>(in)[offset];
    else
      std::memcpy(out + i * static_cast<int64_t>(esize), in + offset * static_cast<int64_t>(esize), esize);
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < src.shape[d]) break;
      index[d] = 0;
    }
  }
  return dst;
}

}  // namespace nxrt
