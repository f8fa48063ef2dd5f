// The OpenMP teams behind OpenMpPool, started per for_range call or held through hold_threads:
// each thread starts on a run of chunks of its own, then takes what is left of the others'.
#include "common/openmp_pool.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <thread>

#include "common/parallel_pool.h"

namespace nxrt::cpu {
// Not in an anonymous namespace: OpenMpPool::Team (declared in the header) has members of these
// types, which g++ warns about in unity builds where their namespace is anonymous.
namespace omp_chunks {

// How long a held thread spins for the next loop before it sleeps: longer than the gap between
// most steps, short enough not to keep a core busy through a long single-threaded step.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(50);

// A run of consecutive chunks: the next one to take, and the end.
struct alignas(64) ChunkRun {
  std::atomic<int64_t> next{0};
  int64_t end = 0;
};

// The first exception a loop's chunks throw (none may leave an OpenMP thread).
class FirstFailure {
 public:
  void keep(std::exception_ptr e) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::move(e);
  }
  void rethrow() const {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr failure_;
};

// One for_range call: `chunks` chunks of `chunk` items over [0, n), cut into `team` runs.
struct ChunkLoop {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, chunk = 0, chunks = 0;
  int team = 0;
  ChunkRun* runs = nullptr;  // [team]
  FirstFailure* failure = nullptr;

  void cut() const {
    for (int t = 0; t < team; ++t) {
      runs[t].next.store(chunks * t / team, std::memory_order_relaxed);
      runs[t].end = chunks * (t + 1) / team;
    }
  }
  // Thread `me`'s part: its own run first, then what is left of the others'.
  void work(int me) const {
    for (int k = 0; k < team; ++k) {
      ChunkRun& run = runs[(me + k) % team];
      if (k > 0 && run.next.load(std::memory_order_relaxed) >= run.end) continue;  // read before taking
      for (int64_t c = run.next.fetch_add(1); c < run.end; c = run.next.fetch_add(1)) {
        try {
          (*fn)(c * chunk, std::min(n, (c + 1) * chunk));
        } catch (...) {
          failure->keep(std::current_exception());
        }
      }
    }
  }
};

}  // namespace omp_chunks

// The threads of a held OpenMP team past the first: each waits for the next loop (a new epoch),
// does its part and reports it finished; the holder posts the loops and does its part too.
class OpenMpPool::Team {
 public:
  explicit Team(int threads) : runs_(std::make_unique<omp_chunks::ChunkRun[]>(static_cast<std::size_t>(threads))) {}

  // On the holding thread: `chunks` chunks of `chunk` items over [0, n), with the team's other
  // threads (OpenMP may have given fewer than asked for).
  void run(int64_t n, int64_t chunk, int64_t chunks, const std::function<void(int64_t, int64_t)>& fn) {
    omp_chunks::FirstFailure failure;
    const int helpers = omp_get_num_threads() - 1;
    loop_ = {&fn, n, chunk, chunks, static_cast<int>(std::min<int64_t>(helpers + 1, chunks)), runs_.get(), &failure};
    loop_.cut();
    finished_.store(0, std::memory_order_relaxed);
    post();
    in_loop_ = true;
    loop_.work(0);
    in_loop_ = false;
    // Every helper reads the loop, which points into this frame: it returns once all have finished.
    for (int spins = 0; finished_.load(std::memory_order_acquire) < helpers; ++spins)
      if (spins < 4096) {
        _mm_pause();
      } else {
        std::this_thread::yield();
      }
    failure.rethrow();
  }

  void stop() {
    stopping_.store(true, std::memory_order_relaxed);
    post();
  }

  // On helper `me` (1 to helpers) until stop().
  void serve(int me) {
    for (uint32_t seen = 0;;) {
      seen = next_epoch(seen);
      if (stopping_.load(std::memory_order_relaxed)) return;
      loop_.work(me);
      finished_.fetch_add(1, std::memory_order_release);
    }
  }

  bool in_loop() const { return in_loop_; }

 private:
  void post() {
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) epoch_.notify_all();
  }

  // Spins until the epoch passes `seen`, then sleeps (a sleeper counts itself first, so that
  // post() knows to wake it; wait() returns at once where the epoch moved on in between).
  uint32_t next_epoch(uint32_t seen) {
    const auto sleep_at = std::chrono::steady_clock::now() + omp_chunks::kSpinBeforeSleep;
    for (int spins = 1;; ++spins) {
      const uint32_t e = epoch_.load(std::memory_order_acquire);
      if (e != seen) return e;
      if (spins % 64 != 0 || std::chrono::steady_clock::now() < sleep_at) {
        _mm_pause();
        continue;
      }
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      epoch_.wait(seen, std::memory_order_seq_cst);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  std::unique_ptr<omp_chunks::ChunkRun[]> runs_;
  bool in_loop_ = false;  // the holder is running a chunk (its loops then run inline)
  // The loop, written before the epoch that announces it; one cache line for the helpers to fetch.
  alignas(64) std::atomic<uint32_t> epoch_{0};
  omp_chunks::ChunkLoop loop_{};
  alignas(64) std::atomic<int> finished_{0};
  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<bool> stopping_{false};
};

thread_local OpenMpPool::Held OpenMpPool::held_;
thread_local int64_t OpenMpPool::loops_ = 0;

OpenMpPool::OpenMpPool(int threads) : threads_(threads > 0 ? threads : std::max(1, omp_get_num_procs())) {}

void OpenMpPool::hold_threads(const std::function<void()>& body) const {
  if (threads_ == 1 || held_.pool == this || omp_in_parallel()) return body();
  std::unique_lock lock(team_, std::try_to_lock);
  if (!lock) return body();
  Team team(threads_);
  std::exception_ptr failure;
#pragma omp parallel num_threads(threads_)
  {
    if (omp_get_thread_num() == 0) {
      held_ = {this, &team};
      try {
        body();
      } catch (...) {
        failure = std::current_exception();
      }
      held_ = {};
      team.stop();
    } else {
      team.serve(omp_get_thread_num());
    }
  }
  if (failure) std::rethrow_exception(failure);
}

void OpenMpPool::for_range(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  const int64_t chunk = pool_chunk_length(n, grain, threads());
  if (threads_ == 1 || chunk >= n) return fn(0, n);
  const int64_t chunks = (n + chunk - 1) / chunk;
  // The same chunks on this thread alone (where OpenMP gave no other thread, or another caller has them).
  const auto alone = [&] {
    for (int64_t c = 0; c < chunks; ++c) fn(c * chunk, std::min(n, (c + 1) * chunk));
  };
  if (held_.pool == this) {  // this thread holds the team: it takes the loop unless inside one
    if (held_.team->in_loop()) return fn(0, n);
    if (omp_get_num_threads() == 1) return alone();  // OpenMP gave the team no other thread
    ++loops_;
    return held_.team->run(n, chunk, chunks, fn);
  }
  if (omp_in_parallel()) return fn(0, n);
  std::unique_lock lock(team_, std::try_to_lock);
  if (!lock) return alone();
  const int team = static_cast<int>(std::min<int64_t>(threads_, chunks));
  const auto runs = std::make_unique<omp_chunks::ChunkRun[]>(static_cast<std::size_t>(team));
  omp_chunks::FirstFailure failure;
  const omp_chunks::ChunkLoop loop{&fn, n, chunk, chunks, team, runs.get(), &failure};
  loop.cut();
  ++loops_;
#pragma omp parallel num_threads(team)
  loop.work(omp_get_thread_num());
  failure.rethrow();
}

}  // namespace nxrt::cpu
