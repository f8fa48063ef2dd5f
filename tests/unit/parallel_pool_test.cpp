// The cpu EP's pools (make_parallel_pool's, and ThreadPool): every index once, chunks of at
// least the grain, nested and concurrent callers, chunks left by a busy thread taken by the
// others, and a chunk's exception reaching the caller; all of it also inside hold_threads.
#include "common/parallel_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/thread_pool.h"

using nxrt::Parallel;
using nxrt::SerialParallel;
using nxrt::cpu::make_parallel_pool;
using nxrt::cpu::ThreadPool;

namespace {

// Runs for_range over n items and checks each index was visited exactly once, in chunks of
// at least `grain` (but the last).
void check_covers(const Parallel& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> visits(static_cast<std::size_t>(n));
  std::atomic<int> short_chunks = 0;
  pool.for_range(n, grain, [&](int64_t b, int64_t e) {
    if (e - b < grain && e != n) ++short_chunks;
    for (int64_t i = b; i < e; ++i) ++visits[static_cast<std::size_t>(i)];
  });
  CHECK(short_chunks == 0);
  for (int64_t i = 0; i < n; ++i) REQUIRE(visits[static_cast<std::size_t>(i)] == 1);
}

// A chunk that waits until every other chunk has run does not stop them: the other threads
// take what is left of the waiting thread's chunks as well as their own.
void check_chunks_shared(const Parallel& pool) {
  std::atomic<int> done = 0;
  std::atomic<bool> waited_out = false;
  pool.for_range(8, 1, [&](int64_t b, int64_t) {
    if (b != 0) {
      ++done;
      return;
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (done < 7 && !waited_out) waited_out = std::chrono::steady_clock::now() > give_up;
  });
  CHECK_FALSE(waited_out);
  CHECK(done == 7);
}

void check_pool(const Parallel& pool) {
  for (int64_t n : {0, 1, 7, 100, 10007}) check_covers(pool, n, 1);
  check_covers(pool, 10007, 1000);

  // A loop inside a chunk runs inline and still covers its range.
  std::atomic<int64_t> inner = 0;
  pool.for_range(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) pool.for_range(100, 1, [&](int64_t ib, int64_t ie) { inner += ie - ib; });
  });
  CHECK(inner == 800);

  // Callers on several threads at once each get all their indices.
  std::vector<std::thread> callers;
  std::atomic<int64_t> total = 0;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int r = 0; r < 20; ++r) pool.for_range(1000, 1, [&](int64_t b, int64_t e) { total += e - b; });
    });
  for (auto& c : callers) c.join();
  CHECK(total == 4 * 20 * 1000);

  check_chunks_shared(pool);
}

// Inside hold_threads (where OpenMpPool's team waits for the loops) loops behave as outside it:
// they cover their range, share their chunks with the waiting threads (also after a pause long
// enough for those to sleep), run inline when nested, and pass exceptions on; a loop on another
// thread meanwhile runs alone; the body's own exception reaches the caller.
void check_held_pool(const Parallel& pool) {
  bool ran = false;
  pool.hold_threads([&] {
    for (int64_t n : {0, 1, 7, 100, 10007}) check_covers(pool, n, 1);
    check_chunks_shared(pool);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    check_chunks_shared(pool);
    std::atomic<int64_t> inner = 0;
    pool.for_range(8, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) pool.for_range(100, 1, [&](int64_t ib, int64_t ie) { inner += ie - ib; });
    });
    CHECK(inner == 800);
    pool.hold_threads([&] { check_covers(pool, 1000, 1); });
    std::thread other([&] { check_covers(pool, 1000, 1); });
    check_covers(pool, 1000, 1);
    other.join();
    CHECK_THROWS_WITH(pool.for_range(64, 1,
                                     [](int64_t b, int64_t) {
                                       if (b >= 32) throw std::runtime_error("chunk failed");
                                     }),
                      "chunk failed");
    check_covers(pool, 1000, 1);
    ran = true;
  });
  CHECK(ran);
  CHECK_THROWS_WITH(pool.hold_threads([] { throw std::runtime_error("body failed"); }), "body failed");
  pool.hold_threads([&] { check_chunks_shared(pool); });
}

}  // namespace

TEST_CASE("the cpu EP's pool covers every index once, nested and from several threads", "[cpu][parallel]") {
  const auto pool = make_parallel_pool(3);
  CHECK(pool->threads() == 3);
  check_pool(*pool);
  check_held_pool(*pool);
  CHECK(make_parallel_pool(0)->threads() >= 1);
}

TEST_CASE("ThreadPool covers every index once, nested and from several threads", "[cpu][parallel]") {
  const ThreadPool pool(3);
  check_pool(pool);
  check_held_pool(pool);
}

TEST_CASE("an exception in a chunk of the cpu EP's pools reaches the caller", "[cpu][parallel]") {
  const auto pool = make_parallel_pool(2);
  const ThreadPool thread_pool(2);
  for (const Parallel* p : {static_cast<const Parallel*>(pool.get()), static_cast<const Parallel*>(&thread_pool)}) {
    CHECK_THROWS_WITH(p->for_range(64, 1,
                                   [](int64_t b, int64_t) {
                                     if (b >= 32) throw std::runtime_error("chunk failed");
                                   }),
                      "chunk failed");
    // The pool still works afterwards.
    check_covers(*p, 1000, 1);
  }
}

TEST_CASE("the cpu EP's pool counts the calling thread's loops that ran on several threads, or none",
          "[cpu][parallel]") {
  const auto pool = make_parallel_pool(3);
  const auto count = [](std::atomic<int64_t>& sum) { return [&sum](int64_t b, int64_t e) { sum += e - b; }; };
  std::atomic<int64_t> sum = 0;
  const int64_t start = pool->parallel_loops();
  pool->for_range(1000, 1, count(sum));
  if (pool->parallel_loops() == start) {  // a pool that does not count (ThreadPool)
    CHECK(ThreadPool(3).parallel_loops() == 0);
    return;
  }
  CHECK(pool->parallel_loops() == start + 1);
  pool->for_range(10, 100, count(sum));  // one chunk: on the calling thread alone
  CHECK(pool->parallel_loops() == start + 1);
  pool->hold_threads([&] {
    pool->for_range(1000, 1, count(sum));
    pool->for_range(4, 1, [&](int64_t b, int64_t e) {  // the loops inside its chunks run inline
      for (int64_t i = b; i < e; ++i) pool->for_range(100, 1, count(sum));
    });
  });
  CHECK(pool->parallel_loops() == start + 3);
  std::thread other([&] { pool->for_range(1000, 1, [](int64_t, int64_t) {}); });  // another thread's
  other.join();
  CHECK(pool->parallel_loops() == start + 3);
  CHECK(sum == 1000 + 10 + 1000 + 4 * 100);
}
