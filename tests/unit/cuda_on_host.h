// What the cuda EP's generated CUDA C needs from CUDA, for the host: the unit tests compile a
// plan's module (eps/cuda/kernel_library.cpp and the generated kernels) with the host compiler
// after this file, and run its kernels without a GPU (cuda_host_module.h).
//
// A launch runs its blocks one after another and the threads of a block at once, one
// std::thread each, so __syncthreads and warp shuffles behave as on a GPU. Blocks never run
// at the same time, so a `__shared__` array is a static: one per block, as on a GPU.
#pragma once

#include <barrier>
#include <bit>
#include <cmath>
#include <cstdint>
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

inline thread_local dim3 thread_index, block_index;
inline dim3 block_dim, grid_dim;
inline std::barrier<>* block_barrier = nullptr;
inline std::vector<std::unique_ptr<std::barrier<>>> warp_barriers;
inline double warp_lanes[32][32];  // [warp][lane], for shuffles (of float or double)

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

// The threads of a block run at once, so these are real atomics.
inline unsigned atomicCAS(unsigned* address, unsigned compare, unsigned value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
inline unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare, unsigned long long value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}

inline void __syncthreads() { nxrt_on_host::block_barrier->arrive_and_wait(); }

// Every lane of the warp calls it (the kernels shuffle with a full mask only).
template <class V>
V __shfl_xor_sync(unsigned /*mask*/, V v, int lane_mask) {
  using namespace nxrt_on_host;
  const unsigned lane = thread_index.x & 31, warp = thread_index.x >> 5;
  warp_lanes[warp][lane] = v;
  warp_barriers[warp]->arrive_and_wait();
  const auto other = static_cast<V>(warp_lanes[warp][lane ^ static_cast<unsigned>(lane_mask)]);
  warp_barriers[warp]->arrive_and_wait();
  return other;
}

// Called by the test through dlsym: runs `kernel` (an argument-array entry point the test
// generated for each extern "C" kernel) on a grid of `blocks` blocks of `threads` threads.
extern "C" void nxrt_on_host_launch(void (*kernel)(void**), unsigned blocks, unsigned threads, void** args) {
  using namespace nxrt_on_host;
  grid_dim = {blocks};
  block_dim = {threads};
  for (unsigned b = 0; b < blocks; ++b) {
    std::barrier<> barrier(threads);
    block_barrier = &barrier;
    warp_barriers.clear();
    for (unsigned w = 0; w < (threads + 31) / 32; ++w)
      warp_barriers.push_back(std::make_unique<std::barrier<>>(std::min(32u, threads - 32 * w)));
    std::vector<std::jthread> team;
    for (unsigned t = 0; t < threads; ++t)
      team.emplace_back([=] {
        block_index = {b};
        thread_index = {t};
        kernel(args);
      });
  }
}
