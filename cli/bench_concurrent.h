// bench --concurrency: requests issued from several threads to one session at once, each
// result checked bit for bit against a serial run of the same inputs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nxrt/session/session.h"

namespace nxrt::cli {

using Outputs = std::map<std::string, RuntimeValue>;

struct ConcurrentRuns {
  std::vector<double> samples_ms;  // one latency per request, grouped by thread
  double wall_s = 0;               // from the first request's start to the last one's end
};

// Whether to stop issuing requests, given how many have started and when the first did.
using EnoughFn = std::function<bool(int64_t, std::chrono::steady_clock::time_point)>;

// Runs `session` on `threads` threads, each taking the next request as soon as its last one
// is done, until `enough` says stop. A failed run, or a result that is not bitwise equal to
// `reference`, stops every thread and is the error (naming request, thread and output).
Expected<ConcurrentRuns> run_concurrently(Session& session, const Outputs& inputs, const Outputs& reference,
                                          int threads, const EnoughFn& enough);

// Where `actual` and `reference` first differ bit for bit ("output 'y' element 3: ..."),
// or an empty string when every output is identical.
std::string bitwise_difference(const Outputs& actual, const Outputs& reference);

}  // namespace nxrt::cli
