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
  // Chunks as ThreadPool cuts them (the same boundaries, so results do not depend on the pool);
  // the calling thread takes part. Thread t of T starts on the t-th of T runs of consecutive
  // chunks, then helps with the others' runs where chunks are left: kernels that split a tensor
  // alike step after step so find most of their values in their own core's cache (where threads
  // took chunks as they came, MobileNetV2's layers moved most of their values between the
  // cores). Inside hold_threads the waiting team takes the call; elsewhere it starts an OpenMP
  // team of its own. While one caller holds or runs the team, other callers run their chunks
  // alone, and so does a call from inside a chunk.
  void for_range(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const override;
  // Starts an OpenMP team once for the whole body; its threads wait for the body's for_range
  // calls, spinning for a while and then sleeping. Starting a team per call costs more than
  // many a small step takes (3.5 us on a 2-core VM, where a waiting thread takes a loop in 0.8).
  void hold_threads(const std::function<void()>& body) const override;
  int64_t parallel_loops() const override { return loops_; }

 private:
  class Team;
  // The team this thread holds, and for which pool.
  struct Held {
    const OpenMpPool* pool = nullptr;
    Team* team = nullptr;
  };
  static thread_local Held held_;
  static thread_local int64_t loops_;  // this thread's for_range calls that ran on a team

  int threads_;
  mutable std::mutex team_;  // held by the caller whose chunks the team runs
};

}  // namespace nxrt::cpu
