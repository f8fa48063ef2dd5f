// BufferPool: host blocks recycled by size, so that a freed tensor's memory serves the next
// tensor of that size: a partition's outputs and intermediates, allocated in every run, come
// from memory the process already has instead of fresh pages (a page fault each) and calls to
// the system.
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
  std::multimap<std::size_t, void*> free_;  // rounded size -> block
};

}  // namespace nxrt
