// The Parallel the cpu EP runs its kernels on: OpenMpPool where nxrt is built with oneDNN
// (so the two EPs share OpenMP's threads), else its own ThreadPool.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

// threads <= 0: one per hardware thread.
std::shared_ptr<const Parallel> make_parallel_pool(int threads);

// The chunk length both pools cut [0, n) into: about four chunks per thread, at least `grain`
// items each. One rule, so that results never depend on which pool (or thread) ran a chunk.
inline int64_t pool_chunk_length(int64_t n, int64_t grain, int threads) {
  const int64_t max_chunks = static_cast<int64_t>(threads) * 4;
  return std::max(std::max<int64_t>(grain, 1), (n + max_chunks - 1) / max_chunks);
}

}  // namespace nxrt::cpu
