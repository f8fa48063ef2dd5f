// The OpenMP team behind OpenMpPool: each thread starts on a share of the chunks of its own, then
// takes what is left of the others'.
#include "common/openmp_pool.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>

#include "common/parallel_pool.h"

namespace nxrt::cpu {

OpenMpPool::OpenMpPool(int threads) : threads_(threads > 0 ? threads : std::max(1, omp_get_num_procs())) {}

void OpenMpPool::for_range(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const {
  if (n <= 0) return;
  const int64_t chunk = pool_chunk_length(n, grain, threads());
  if (threads_ == 1 || chunk >= n || omp_in_parallel()) {
    fn(0, n);
    return;
  }
  const int64_t chunks = (n + chunk - 1) / chunk;
  std::unique_lock team(team_, std::try_to_lock);
  if (!team) {
    for (int64_t c = 0; c < chunks; ++c) fn(c * chunk, std::min(n, (c + 1) * chunk));
    return;
  }
  // An exception may not leave an OpenMP region: the first one is carried out of it.
  std::exception_ptr failure;
  const int team_size = static_cast<int>(std::min<int64_t>(threads_, chunks));
  const auto shares = std::make_unique<Share[]>(static_cast<std::size_t>(team_size));
  for (int t = 0; t < team_size; ++t) {
    shares[static_cast<std::size_t>(t)].next = chunks * t / team_size;
    shares[static_cast<std::size_t>(t)].end = chunks * (t + 1) / team_size;
  }
#pragma omp parallel num_threads(team_size)
  {
    // This thread's share first, then what is left of the others'.
    const int me = omp_get_thread_num();
    for (int k = 0; k < team_size; ++k) {
      Share& share = shares[static_cast<std::size_t>((me + k) % team_size)];
      for (int64_t c = share.next.fetch_add(1); c < share.end; c = share.next.fetch_add(1)) {
        try {
          fn(c * chunk, std::min(n, (c + 1) * chunk));
        } catch (...) {
#pragma omp critical(nxrt_openmp_pool_failure)
          if (!failure) failure = std::current_exception();
        }
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace nxrt::cpu
