// bench --concurrency: the request threads and the bitwise check of their results.
#include "bench_concurrent.h"

#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "bench_stats.h"
#include "cli_common.h"
#include "nxrt/io/compare.h"

namespace nxrt::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Element i of a contiguous tensor, for messages.
std::string element_text(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kString) return fmt::format("\"{}\"", t.data_as<std::string>()[i]);
  return fmt::format("{}", element_as_double(t.view(), i));
}

bool same_element(const Tensor& a, const Tensor& b, int64_t i) {
  if (a.dtype() == DType::kString) return a.data_as<std::string>()[i] == b.data_as<std::string>()[i];
  const std::size_t size = dtype_size(a.dtype());
  const auto offset = static_cast<std::size_t>(i) * size;
  return std::memcmp(static_cast<const char*>(a.view().data()) + offset,
                     static_cast<const char*>(b.view().data()) + offset, size) == 0;
}

std::string tensor_difference(const Tensor& actual, const Tensor& reference) {
  if (actual.dtype() != reference.dtype() || actual.shape() != reference.shape())
    return fmt::format("is {} {}, the serial run gave {} {}", dtype_name(actual.dtype()),
                       shape_to_string(actual.shape()), dtype_name(reference.dtype()),
                       shape_to_string(reference.shape()));
  const Tensor a = copy_to_contiguous(actual.view());
  const Tensor r = copy_to_contiguous(reference.view());
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!same_element(a, r, i))
      return fmt::format("element {} is {}, the serial run gave {}", i, element_text(a, i), element_text(r, i));
  return {};
}

std::string value_difference(const RuntimeValue& actual, const RuntimeValue& reference) {
  if (actual.kind() != reference.kind())
    return fmt::format("is a {}, the serial run gave a {}", actual.describe(), reference.describe());
  if (actual.is_tensor()) return tensor_difference(actual.tensor(), reference.tensor());
  if (!actual.is_sequence()) return {};
  if (actual.items().size() != reference.items().size())
    return fmt::format("has {} items, the serial run gave {}", actual.items().size(), reference.items().size());
  for (std::size_t k = 0; k < actual.items().size(); ++k)
    if (auto d = tensor_difference(actual.items()[k], reference.items()[k]); !d.empty())
      return fmt::format("item {}: {}", k, d);
  return {};
}

// What the request threads share: the next request number and the first failure.
class Requests {
 public:
  Requests(Session& session, const Outputs& inputs, const Outputs& reference, const EnoughFn& enough)
      : session_(session), inputs_(inputs), reference_(reference), enough_(enough) {}

  // One thread's loop; returns its latencies.
  std::vector<double> serve(int thread) {
    std::vector<double> samples;
    while (!failed_.load()) {
      const int64_t request = next_.fetch_add(1);
      if (enough_(request, start_)) break;
      const auto t0 = Clock::now();
      Expected<Outputs> outputs;
      try {
        outputs = session_.run(inputs_);
      } catch (const std::exception& e) {  // an exception leaving a thread would end the process
        outputs = std::unexpected(error_from_exception(e));
      }
      samples.push_back(ms_between(t0, Clock::now()));
      if (!outputs) {
        fail(std::move(outputs.error().add_context(fmt::format("request {} on thread {}", request + 1, thread + 1))));
        break;
      }
      if (auto d = bitwise_difference(*outputs, reference_); !d.empty()) {
        fail(Error{ErrorCode::kRuntime,
                   fmt::format("request {} on thread {} gave a result that differs from the serial run", request + 1,
                               thread + 1),
                   d, "report this as a bug: runs of one session on several threads must not affect each other",
                   {}});
        break;
      }
    }
    return samples;
  }

  Clock::time_point start() const { return start_; }
  const std::optional<Error>& failure() const { return failure_; }

 private:
  void fail(Error e) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::move(e);
    failed_.store(true);
  }

  Session& session_;
  const Outputs& inputs_;
  const Outputs& reference_;
  const EnoughFn& enough_;
  const Clock::time_point start_ = Clock::now();
  std::atomic<int64_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::optional<Error> failure_;
};

}  // namespace

std::string bitwise_difference(const Outputs& actual, const Outputs& reference) {
  for (const auto& [name, expected] : reference) {
    auto it = actual.find(name);
    if (it == actual.end()) return fmt::format("output '{}' is missing", name);
    if (auto d = value_difference(it->second, expected); !d.empty()) return fmt::format("output '{}' {}", name, d);
  }
  return {};
}

Expected<ConcurrentRuns> run_concurrently(Session& session, const Outputs& inputs, const Outputs& reference,
                                          int threads, const EnoughFn& enough) {
  Requests requests(session, inputs, reference, enough);
  std::vector<std::vector<double>> samples(static_cast<std::size_t>(threads));
  {
    std::vector<std::jthread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { samples[static_cast<std::size_t>(t)] = requests.serve(t); });
  }
  const double wall_s = std::chrono::duration<double>(Clock::now() - requests.start()).count();
  if (requests.failure()) return fail(*requests.failure());
  ConcurrentRuns runs{{}, wall_s};
  for (const auto& s : samples) runs.samples_ms.insert(runs.samples_ms.end(), s.begin(), s.end());
  return runs;
}

}  // namespace nxrt::cli
