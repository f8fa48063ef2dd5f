// Picks the cpu EP's pool (eps/cpu/CMakeLists.txt defines NXRT_CPU_OPENMP).
#include "common/parallel_pool.h"

#if defined(NXRT_CPU_OPENMP)
#include "common/openmp_pool.h"
#else
#include "common/thread_pool.h"
#endif

namespace nxrt::cpu {

std::shared_ptr<const Parallel> make_parallel_pool(int threads) {
#if defined(NXRT_CPU_OPENMP)
  return std::make_shared<OpenMpPool>(threads);
#else
  return std::make_shared<ThreadPool>(threads);
#endif
}

}  // namespace nxrt::cpu
