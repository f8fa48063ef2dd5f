// Size-keyed recycling of 64-byte aligned host blocks.
#include "nxrt/ep/buffer_pool.h"

#include <cstdlib>
#include <new>

namespace nxrt {

BufferPool::~BufferPool() {
  for (auto& [bytes, block] : free_) std::free(block);
}

Tensor BufferPool::allocate(DType dtype, Shape shape) {
  const std::size_t bytes = static_cast<std::size_t>(std::max<int64_t>(shape_numel(shape), 0)) * dtype_size(dtype);
  const std::size_t rounded = std::max<std::size_t>((bytes + 63) / 64 * 64, 64);
  void* block = nullptr;
  std::size_t capacity = rounded;
  {
    std::lock_guard lock(mutex_);
    // The smallest free block that fits, unless it is more than twice as large.
    if (auto it = free_.lower_bound(rounded); it != free_.end() && it->first <= 2 * rounded) {
      capacity = it->first;
      block = it->second;
      free_.erase(it);
    }
  }
  if (!block) block = std::aligned_alloc(64, rounded);
  if (!block) throw std::bad_alloc();
  std::weak_ptr<BufferPool> weak = weak_from_this();
  auto storage = std::make_shared<Storage>(block, bytes, kHostDevice, [weak, capacity](void* p) {
    if (auto pool = weak.lock())
      pool->give_back(capacity, p);
    else
      std::free(p);
  });
  return Tensor(std::move(storage), dtype, std::move(shape));
}

void BufferPool::give_back(std::size_t bytes, void* block) {
  std::lock_guard lock(mutex_);
  free_.emplace(bytes, block);
}

}  // namespace nxrt
