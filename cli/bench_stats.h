// bench's statistics: latency percentiles (nearest rank), spread, and per-step profile totals.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nxrt/session/session.h"
#include "render/table.h"

namespace nxrt::cli {

// Milliseconds from a to b.
double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b);

// Nearest-rank percentile of sorted samples: the smallest sample with at least p% of the
// samples at or below it, i.e. sorted[ceil(p/100 * n) - 1] (the minimum for p = 0).
double percentile(const std::vector<double>& sorted, double p);

struct LatencyStats {
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0, min = 0, max = 0, mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for one sample
  double cv = 0;      // stddev / mean
};
LatencyStats latency_stats(const std::vector<double>& samples_ms);

// Per-step times summed over the profiled runs, in execution order.
class StepTotals {
 public:
  void add(const Session& s);
  Table step_table(int runs) const;
  Table op_type_table(int runs) const;
  nlohmann::ordered_json to_json(int runs) const;
  nlohmann::ordered_json op_types_json(int runs) const;

 private:
  struct Row {
    std::string partition, ep;
    StepProfile step;
    double total_us;
  };
  double total_us() const;
  // op type -> (steps, total us), sorted by time, largest first.
  std::vector<std::pair<std::string, std::pair<int, double>>> by_op_type() const;

  std::vector<Row> rows_;
};

}  // namespace nxrt::cli
