// Latency statistics and per-step profile totals for bench.
#include "bench_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace nxrt::cli {
namespace {

std::string step_name(const StepProfile& s) {
  if (s.nodes.size() <= 1) return s.nodes.empty() ? "-" : s.nodes.front();
  return fmt::format("{} (+{})", s.nodes.front(), s.nodes.size() - 1);
}

std::string share(double us, double total) { return total > 0 ? fmt::format("{:.1f}%", 100.0 * us / total) : "-"; }

}  // namespace

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double percentile(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

LatencyStats latency_stats(const std::vector<double>& samples_ms) {
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  LatencyStats s;
  s.p50 = percentile(sorted, 50);
  s.p90 = percentile(sorted, 90);
  s.p95 = percentile(sorted, 95);
  s.p99 = percentile(sorted, 99);
  s.min = sorted.front();
  s.max = sorted.back();
  for (double x : sorted) s.mean += x;
  const auto n = static_cast<double>(sorted.size());
  s.mean /= n;
  if (sorted.size() > 1) {
    double squares = 0;
    for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / (n - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  return s;
}

void StepTotals::add(const Session& s) {
  std::size_t k = 0;
  for (const Partition& p : s.report().partitions) {
    for (const StepProfile& step : s.compiled(static_cast<std::size_t>(p.index)).profile()) {
      if (k == rows_.size()) rows_.push_back({p.name, p.ep, step, 0});
      rows_[k++].total_us += step.us;
    }
  }
}

Table StepTotals::step_table(int runs) const {
  Table t({"STEP", "OP", "EP", "PARTITION", "IMPLEMENTATION", "MEAN", "SHARE"});
  const double total = total_us();
  for (const Row& r : rows_)
    t.add({step_name(r.step), r.step.op_type, r.ep, r.partition, r.step.variant,
           fmt::format("{:.3f} ms", r.total_us / runs / 1000), share(r.total_us, total)});
  return t;
}

Table StepTotals::op_type_table(int runs) const {
  Table t({"OP", "STEPS", "MEAN", "SHARE"});
  const double total = total_us();
  for (const auto& [op, agg] : by_op_type())
    t.add({op, std::to_string(agg.first), fmt::format("{:.3f} ms", agg.second / runs / 1000), share(agg.second, total)});
  return t;
}

nlohmann::ordered_json StepTotals::to_json(int runs) const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Row& r : rows_)
    out.push_back({{"nodes", r.step.nodes}, {"op", r.step.op_type}, {"ep", r.ep}, {"partition", r.partition},
                   {"variant", r.step.variant}, {"mean_ms", r.total_us / runs / 1000}});
  return out;
}

nlohmann::ordered_json StepTotals::op_types_json(int runs) const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [op, agg] : by_op_type())
    out.push_back({{"op", op}, {"steps", agg.first}, {"mean_ms", agg.second / runs / 1000}});
  return out;
}

double StepTotals::total_us() const {
  double t = 0;
  for (const Row& r : rows_) t += r.total_us;
  return t;
}

std::vector<std::pair<std::string, std::pair<int, double>>> StepTotals::by_op_type() const {
  std::map<std::string, std::pair<int, double>> agg;
  for (const Row& r : rows_) {
    auto& [count, us] = agg[r.step.op_type];
    ++count;
    us += r.total_us;
  }
  std::vector<std::pair<std::string, std::pair<int, double>>> out(agg.begin(), agg.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  return out;
}

}  // namespace nxrt::cli
