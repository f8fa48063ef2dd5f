// BufferPool: host blocks recycled by size, so that a freed tensor's memory serves the next
// tensor that fits it: a session's outputs and intermediates, allocated in every run, come from
// memory the process already has instead of fresh pages (a page fault each) and calls to the
// system. A tensor gets the smallest free block of its size or larger, up to twice its size
// (so that the first run, whose tensors find no block of their exact size, reuses what it can).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "nxrt/ep/tensor.h"

namespace nxrt {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  ~BufferPool();
  // A tensor whose storage returns to the pool when its last user drops it.
  // Contents are undefined (not zeroed). Not for strings.
  Tensor allocate(DType dtype, Shape shape);

 private:
  void give_back(std::size_t bytes, void* block);
  std::mutex mutex_;
  std::multimap<std::size_t, void*> free_;  // capacity (a multiple of 64) -> block
};

}  // namespace nxrt
