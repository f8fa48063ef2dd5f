// A small fork-join pool: workers sleep until a job arrives, then pull chunks.
#include "common/thread_pool.h"

#include <algorithm>
#include <exception>
#include <utility>

#include "common/parallel_pool.h"

namespace nxrt::cpu {
namespace {
// Set while a thread runs a chunk: a nested for_range then runs inline instead of deadlocking.
thread_local bool tls_in_chunk = false;

struct InChunk {
  bool saved = tls_in_chunk;
  InChunk() { tls_in_chunk = true; }
  ~InChunk() { tls_in_chunk = saved; }
};
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::drain(std::unique_lock<std::mutex>& lock) const {
  while (job_.fn && job_.next < job_.n) {
    const int64_t begin = job_.next;
    const int64_t end = std::min(job_.n, begin + job_.chunk);
    job_.next = end;
    const auto* fn = job_.fn;
    lock.unlock();
    std::exception_ptr failure;
    try {
      InChunk guard;
      (*fn)(begin, end);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure && !job_.failure) job_.failure = failure;
    if (--job_.remaining == 0) done_.notify_all();
  }
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || job_.generation != seen; });
    if (stop_) return;
    seen = job_.generation;
    drain(lock);
  }
}

void ThreadPool::for_range(int64_t n, int64_t grain,
                           const std::function<void(int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  const int64_t chunk = pool_chunk_length(n, grain, threads());
  if (workers_.empty() || chunk >= n || tls_in_chunk) {
    fn(0, n);
    return;
  }
  // Another session thread has the workers: run the same chunks here rather than wait
  // (same boundaries, so results do not depend on who ran them).
  std::unique_lock submit(submit_, std::try_to_lock);
  if (!submit) {
    InChunk guard;
    for (int64_t begin = 0; begin < n; begin += chunk) fn(begin, std::min(n, begin + chunk));
    return;
  }
  std::unique_lock lock(mutex_);
  job_.fn = &fn;
  job_.n = n;
  job_.chunk = chunk;
  job_.next = 0;
  job_.remaining = (n + chunk - 1) / chunk;
  job_.failure = nullptr;
  ++job_.generation;
  wake_.notify_all();
  drain(lock);
  done_.wait(lock, [&] { return job_.remaining == 0; });
  job_.fn = nullptr;
  if (job_.failure) std::rethrow_exception(std::exchange(job_.failure, nullptr));
}

}  // namespace nxrt::cpu
