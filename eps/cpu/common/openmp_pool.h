// OpenMpPool: the cpu EP's Parallel on OpenMP's threads, used when nxrt is built with oneDNN
// (which runs on OpenMP). The EPs of a session then share one set of threads: with a pool of
// its own, the cpu EP's workers would contend for the cores with OpenMP's, which spin for a
// while after each oneDNN partition.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>

#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

class OpenMpPool final : public Parallel {
 public:
  // threads <= 0: one per hardware thread.
  explicit OpenMpPool(int threads);

  int threads() const override { return threads_; }
  // Chunks as ThreadPool cuts them (the same boundaries, so results do not depend on the pool);
  // the calling thread leads the OpenMP team. Thread t of T starts on the t-th of T runs of
  // consecutive chunks, then helps with the others' runs where chunks are left: kernels that
  // split a tensor alike step after step so find most of their values in their own core's
  // cache (where threads took chunks as they came, MobileNetV2's layers moved most of their
  // values between the cores). While one caller's team runs, other callers run their chunks
  // alone, and so does a call from inside a chunk.
  void for_range(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const override;

 private:
  // A run of chunks: the next one to take, and the end.
  struct alignas(64) Share {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };

  int threads_;
  mutable std::mutex team_;  // held by the caller whose chunks the team runs
};

}  // namespace nxrt::cpu
