// The Parallel the cpu EP runs its kernels on: OpenMpPool where nxrt is built with oneDNN
// (so the two EPs share OpenMP's threads), else its own ThreadPool.
#pragma once

#include <memory>

#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

// threads <= 0: one per hardware thread.
std::shared_ptr<const Parallel> make_parallel_pool(int threads);

}  // namespace nxrt::cpu
