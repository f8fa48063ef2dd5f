// What the cuda EP's generated CUDA C needs from CUDA, for the host: the unit tests compile a
// plan's module (eps/cuda/kernel_library.cpp and the generated kernels) with the host compiler
// after this file, and run its kernels without a GPU (cuda_host_module.h).
//
// A launch runs its blocks one after another, and the threads of a block as fibers on the
// launching thread: the lowest thread that can run runs until it waits at a barrier
// (__syncthreads, or a warp shuffle's exchange) or ends; a barrier opens once every thread it
// waits for has reached it or ended. So __syncthreads and shuffles behave as on a GPU, and a
// missing __syncthreads shows every time rather than by chance: a thread that reads what
// later ones write reads it before they write it, and a warp that overwrites shared memory
// later warps still have to read does so before they read it. Blocks never run at the same
// time, so a `__shared__` array is a static: one per block, as on a GPU. One launch runs at a
// time.
//
// Fibers never interrupt one another, so a read-modify-write that is not atomic never loses an
// update among them. nxrt_on_host_launch_on_threads runs a block's threads on host threads at
// once instead, for the kernels whose threads contend through atomics (and never wait at a
// barrier).
//
// A fiber starts with makecontext/setcontext and then switches with _setjmp/_longjmp, which
// keep the signal mask as it is: swapcontext makes a system call at every switch, and with it
// the switches took nearly all of the host conformance suite's run time (15 times this).
// (cuda_host_module.cpp compiles modules without _FORTIFY_SOURCE, whose longjmp refuses to
// jump to another stack.)
#pragma once

#include <sys/mman.h>
#include <setjmp.h>
#include <ucontext.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#define NXRT_CUDA_ON_HOST 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __align__(n) alignas(n)
#define __shared__ static

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace nxrt_on_host {

inline thread_local dim3 thread_index;  // of the fiber or host thread running now
inline dim3 block_index, block_dim, grid_dim;
inline bool on_threads = false;  // in nxrt_on_host_launch_on_threads
inline double warp_lanes[2][32][32];  // [exchange][warp][lane], for shuffles (of float or double)

// The lowest thread index a barrier's opening lets run again since the scheduler last looked.
inline unsigned lowest_woken = ~0u;

// A barrier for `expected` threads from thread `first` on; `phase` counts its openings.
struct Barrier {
  unsigned expected = 0, first = 0, arrived = 0, phase = 0;
  void arrive() {
    if (++arrived >= expected) open();
  }
  void open() {
    arrived = 0;
    ++phase;
    lowest_woken = std::min(lowest_woken, first);
  }
  void drop() {  // a thread that ended no longer holds the barrier shut
    --expected;
    if (arrived > 0 && arrived >= expected) open();
  }
};

// One fiber per thread of the block; its stack has a guard page below it, so an overflow
// faults instead of writing over the next fiber's stack.
struct Fiber {
  static constexpr std::size_t kGuard = 4096, kStack = 256 * 1024;
  ucontext_t start{};  // where it begins
  jmp_buf waiting{};   // where it waits, once started
  bool started = false, ended = false;
  const Barrier* waiting_at = nullptr;  // and its phase then: the fiber runs again once it moved on
  unsigned waiting_phase = 0;
  char* memory = nullptr;
  Fiber() {
    void* m = ::mmap(nullptr, kGuard + kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (m == MAP_FAILED || ::mprotect(m, kGuard, PROT_NONE) != 0) {
      std::fputs("cuda_on_host: cannot map a fiber stack\n", stderr);
      std::abort();
    }
    memory = static_cast<char*>(m);
  }
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;
  ~Fiber() { ::munmap(memory, kGuard + kStack); }
  bool can_run() const { return !ended && (!waiting_at || waiting_at->phase != waiting_phase); }
};

inline jmp_buf scheduler;  // where run_block waits for the fiber running now
inline std::vector<std::unique_ptr<Fiber>> fibers;  // by thread index; kept from launch to launch
inline Barrier block_barrier;
inline std::vector<Barrier> warp_barriers;
inline void (*running_kernel)(void**) = nullptr;
inline void** running_args = nullptr;

// Hands the launching thread back to the scheduler, which runs the block's next fiber.
inline void yield() {
  if (_setjmp(fibers[thread_index.x]->waiting) == 0) _longjmp(scheduler, 1);
}

inline void wait_at(Barrier& barrier) {
  if (on_threads) {
    std::fputs("cuda_on_host: a kernel launched on host threads waits at a barrier; launch it on fibers\n", stderr);
    std::abort();
  }
  const unsigned phase = barrier.phase;
  barrier.arrive();
  if (barrier.phase != phase) return;  // the last to arrive
  Fiber& self = *fibers[thread_index.x];
  self.waiting_at = &barrier;
  self.waiting_phase = phase;
  yield();
  self.waiting_at = nullptr;
}

inline void fiber_main() {
  running_kernel(running_args);
  const unsigned t = thread_index.x;
  fibers[t]->ended = true;
  block_barrier.drop();
  warp_barriers[t / 32].drop();
  _longjmp(scheduler, 1);
}

// Runs fiber `f` until it waits or ends.
inline void resume(Fiber& f) {
  if (_setjmp(scheduler) != 0) return;  // the fiber yielded or ended
  if (f.started) _longjmp(f.waiting, 1);
  f.started = true;
  ::setcontext(&f.start);
}

// Runs block `b` of the launch, always resuming the lowest thread that can run: a warp runs
// as far ahead of the next ones as its own barriers let it, so a thread that writes shared
// memory others still have to read, without a __syncthreads between, writes it before they
// read it. When no thread can run and some have not ended, they wait at different barriers
// for ever: that aborts, naming the block.
inline void run_block(unsigned b, unsigned threads) {
  block_index = {b};
  block_barrier = {threads, 0};
  warp_barriers.clear();
  for (unsigned w = 0; 32 * w < threads; ++w) warp_barriers.push_back({std::min(32u, threads - 32 * w), 32 * w});
  for (unsigned t = 0; t < threads; ++t) {
    Fiber& f = *fibers[t];
    ::getcontext(&f.start);
    f.start.uc_stack = {f.memory + Fiber::kGuard, 0, Fiber::kStack};
    f.start.uc_link = nullptr;
    ::makecontext(&f.start, fiber_main, 0);
    f.started = f.ended = false;
    f.waiting_at = nullptr;
  }
  for (unsigned t = 0;;) {
    while (t < threads && !fibers[t]->can_run()) ++t;
    if (t == threads) break;
    lowest_woken = ~0u;
    thread_index = {t};
    resume(*fibers[t]);
    t = std::min(t + 1, lowest_woken);
  }
  for (unsigned t = 0; t < threads; ++t)
    if (!fibers[t]->ended) {
      std::fprintf(stderr, "cuda_on_host: block %u's threads wait at different barriers for ever\n", b);
      std::abort();
    }
}

}  // namespace nxrt_on_host

#define threadIdx (nxrt_on_host::thread_index)
#define blockIdx (nxrt_on_host::block_index)
#define blockDim (nxrt_on_host::block_dim)
#define gridDim (nxrt_on_host::grid_dim)

inline float __int_as_float(int i) { return std::bit_cast<float>(i); }
inline int __float_as_int(float f) { return std::bit_cast<int>(f); }
inline long long __double_as_longlong(double d) { return std::bit_cast<long long>(d); }
inline float rsqrtf(float v) { return 1.f / std::sqrt(v); }
inline float half_to_float(unsigned short h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
inline unsigned short float_to_half(float v) { return std::bit_cast<unsigned short>(static_cast<_Float16>(v)); }

// One fiber runs at a time, so a compare-and-swap never races; the builtin says what it does.
inline unsigned atomicCAS(unsigned* address, unsigned compare, unsigned value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
inline unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare, unsigned long long value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}

inline void __syncthreads() { nxrt_on_host::wait_at(nxrt_on_host::block_barrier); }

// Every lane of the warp calls it (the kernels shuffle with a full mask only). Shuffles
// alternate between two exchanges, so one wait each suffices: a lane that writes into an
// exchange again has passed the next shuffle's wait, which every lane reached after reading.
template <class V>
V __shfl_xor_sync(unsigned /*mask*/, V v, int lane_mask) {
  using namespace nxrt_on_host;
  const unsigned lane = thread_index.x & 31, warp = thread_index.x >> 5;
  Barrier& barrier = warp_barriers[warp];
  auto& exchange = warp_lanes[barrier.phase & 1][warp];
  exchange[lane] = v;
  wait_at(barrier);
  return static_cast<V>(exchange[lane ^ static_cast<unsigned>(lane_mask)]);
}

// Called by the test through dlsym: runs `kernel` (an argument-array entry point the test
// generated for each extern "C" kernel) on a grid of `blocks` blocks of `threads` threads.
extern "C" void nxrt_on_host_launch(void (*kernel)(void**), unsigned blocks, unsigned threads, void** args) {
  using namespace nxrt_on_host;
  grid_dim = {blocks};
  block_dim = {threads};
  running_kernel = kernel;
  running_args = args;
  while (fibers.size() < threads) fibers.push_back(std::make_unique<Fiber>());
  for (unsigned b = 0; b < blocks; ++b) run_block(b, threads);
}

// Runs `kernel` as nxrt_on_host_launch does, but each block's threads on host threads of their
// own, all at once, so their atomics contend as on a GPU.
extern "C" void nxrt_on_host_launch_on_threads(void (*kernel)(void**), unsigned blocks, unsigned threads,
                                               void** args) {
  using namespace nxrt_on_host;
  grid_dim = {blocks};
  block_dim = {threads};
  on_threads = true;
  for (unsigned b = 0; b < blocks; ++b) {
    block_index = {b};
    std::vector<std::jthread> team;
    for (unsigned t = 0; t < threads; ++t)
      team.emplace_back([=] {
        thread_index = {t};
        kernel(args);
      });
  }
  on_threads = false;
}
