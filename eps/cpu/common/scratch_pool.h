// ScratchPool: workspaces a kernel keeps between runs, one per run in flight, so that
// concurrent runs of one session never share a workspace.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace nxrt::cpu {

template <class T>
class ScratchPool {
 public:
  // A workspace for the holder alone; it goes back to the pool when the lease ends.
  class Lease {
   public:
    Lease(ScratchPool& pool, std::unique_ptr<T> item) : pool_(pool), item_(std::move(item)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.give_back(std::move(item_)); }
    T& operator*() const { return *item_; }
    T* operator->() const { return item_.get(); }

   private:
    ScratchPool& pool_;
    std::unique_ptr<T> item_;
  };

  // A workspace an earlier run left (contents as it left them), or a new T.
  Lease take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return Lease(*this, std::make_unique<T>());
    auto item = std::move(free_.back());
    free_.pop_back();
    return Lease(*this, std::move(item));
  }

 private:
  void give_back(std::unique_ptr<T> item) {
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(item));
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<T>> free_;
};

}  // namespace nxrt::cpu
