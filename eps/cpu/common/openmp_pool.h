// OpenMpPool: the cpu EP's Parallel on OpenMP's threads, used when nxrt is built with oneDNN
// (which runs on OpenMP). The EPs of a session then share one set of threads: with a pool of
// its own, the cpu EP's workers would contend for the cores with OpenMP's, which spin for a
// while after each oneDNN partition.
#pragma once

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
  // Chunks as ThreadPool hands them out (the same boundaries, so results do not depend on the
  // pool); the calling thread leads the OpenMP team. While one caller's team runs, other
  // callers run their chunks alone, and so does a call from inside a chunk.
  void for_range(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const override;

 private:
  int threads_;
  mutable std::mutex team_;  // held by the caller whose chunks the team runs
};

}  // namespace nxrt::cpu
