// ThreadPool: the CPU EP's implementation of Parallel (honours --threads).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

class ThreadPool final : public Parallel {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const override { return static_cast<int>(workers_.size()) + 1; }
  // The calling thread takes part; chunks are handed out dynamically. Callers on several
  // threads at once are safe: while the workers serve one, the others run their chunks alone.
  // A chunk's exception (the first) reaches the caller once every chunk has run.
  void for_range(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn) const override;

 private:
  struct Job {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t chunk = 0;
    int64_t next = 0;       // next chunk start, guarded by mutex_
    int64_t remaining = 0;  // chunks not yet finished
    uint64_t generation = 0;
    std::exception_ptr failure;  // the first a chunk threw, guarded by mutex_
  };
  void worker_loop();
  // Takes chunks of the current job until none are left; returns with mutex_ held.
  void drain(std::unique_lock<std::mutex>& lock) const;

  std::vector<std::thread> workers_;
  mutable std::mutex mutex_;
  mutable std::mutex submit_;  // held by the caller whose job the workers serve
  mutable std::condition_variable wake_;
  mutable std::condition_variable done_;
  mutable Job job_;
  bool stop_ = false;
};

}  // namespace nxrt::cpu
