// Growable storage aligned to cache lines (64 bytes): what the vector and AMX kernels read, so
// that a 64-byte row of a tile or a vector load never straddles two lines.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace nxrt::cpu {

inline constexpr std::size_t kCacheLine = 64;

// Contents are undefined after a resize that grows the allocation (it is not copied).
template <class T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t count) { resize(count); }
  // Keeps the allocation when it is large enough already.
  void resize(std::size_t count) {
    size_ = count;
    if (count <= capacity_) return;
    const std::size_t bytes = (count * sizeof(T) + kCacheLine - 1) / kCacheLine * kCacheLine;
    data_.reset(static_cast<T*>(std::aligned_alloc(kCacheLine, bytes)));
    if (!data_) throw std::bad_alloc();
    capacity_ = bytes / sizeof(T);
  }
  T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  T* begin() const { return data(); }
  T* end() const { return data() + size_; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace nxrt::cpu
