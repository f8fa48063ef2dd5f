// nxrt bench: session creation, first inference, latency percentiles, throughput, memory.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "render/table.h"

namespace nxrt::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchFlags {
  std::string model;
  EpFlags ep;
  std::vector<std::string> inputs;
  int runs = 50;
  int warmup = 5;
  bool profile = false;
  bool json = false;
  bool quiet = false;
};

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Nearest-rank percentile of sorted samples: the smallest value with at least p% at or below it.
double percentile(const std::vector<double>& sorted, double p) {
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// Per-step times summed over the profiled runs, in execution order.
class StepTotals {
 public:
  void add(const Session& s) {
    std::size_t k = 0;
    for (const Partition& p : s.report().partitions) {
      for (const StepProfile& step : s.compiled(static_cast<std::size_t>(p.index)).profile()) {
        if (k == rows_.size()) rows_.push_back({p.name, p.ep, step, 0});
        rows_[k++].total_us += step.us;
      }
    }
  }

  Table step_table(int runs) const {
    Table t({"STEP", "OP", "EP", "PARTITION", "IMPLEMENTATION", "MEAN", "SHARE"});
    const double total = total_us();
    for (const Row& r : rows_)
      t.add({step_name(r.step), r.step.op_type, r.ep, r.partition, r.step.variant,
             fmt::format("{:.3f} ms", r.total_us / runs / 1000), share(r.total_us, total)});
    return t;
  }

  Table op_type_table(int runs) const {
    Table t({"OP", "STEPS", "MEAN", "SHARE"});
    const double total = total_us();
    for (const auto& [op, agg] : by_op_type())
      t.add({op, std::to_string(agg.first),
             fmt::format("{:.3f} ms", agg.second / runs / 1000), share(agg.second, total)});
    return t;
  }

  nlohmann::ordered_json to_json(int runs) const {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const Row& r : rows_)
      out.push_back({{"nodes", r.step.nodes}, {"op", r.step.op_type}, {"ep", r.ep}, {"partition", r.partition},
                     {"variant", r.step.variant}, {"mean_ms", r.total_us / runs / 1000}});
    return out;
  }

  nlohmann::ordered_json op_types_json(int runs) const {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& [op, agg] : by_op_type())
      out.push_back({{"op", op}, {"steps", agg.first}, {"mean_ms", agg.second / runs / 1000}});
    return out;
  }

 private:
  struct Row {
    std::string partition, ep;
    StepProfile step;
    double total_us;
  };

  static std::string step_name(const StepProfile& s) {
    if (s.nodes.size() <= 1) return s.nodes.empty() ? "-" : s.nodes.front();
    return fmt::format("{} (+{})", s.nodes.front(), s.nodes.size() - 1);
  }
  static std::string share(double us, double total) {
    return total > 0 ? fmt::format("{:.1f}%", 100.0 * us / total) : "-";
  }
  double total_us() const {
    double t = 0;
    for (const Row& r : rows_) t += r.total_us;
    return t;
  }
  // op type -> (steps, total us), sorted by time, largest first.
  std::vector<std::pair<std::string, std::pair<int, double>>> by_op_type() const {
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

  std::vector<Row> rows_;
};

int bench(const BenchFlags& f) {
  auto options = f.ep.session_options();
  if (!options) return report(options.error());
  auto session = Session::create(f.model, *options);
  if (!session) return report(session.error());
  Session& s = **session;
  auto inputs = gather_inputs(s, f.inputs, f.quiet || f.json);
  if (!inputs) return report(inputs.error());

  const auto t_first = Clock::now();
  if (auto r = s.run(*inputs); !r) return report(r.error());
  const double first_ms = ms_between(t_first, Clock::now());
  for (int i = 0; i < f.warmup; ++i)
    if (auto r = s.run(*inputs); !r) return report(r.error());

  std::vector<double> samples;
  std::vector<double> partition_us(s.report().partitions.size(), 0);
  StepTotals steps;
  s.set_profiling(f.profile);
  for (int i = 0; i < f.runs; ++i) {
    const auto t0 = Clock::now();
    auto r = s.run(*inputs);
    const auto t1 = Clock::now();
    if (!r) return report(r.error());
    samples.push_back(ms_between(t0, t1));
    for (std::size_t p = 0; p < partition_us.size(); ++p) partition_us[p] += s.last_partition_us()[p];
    if (f.profile) steps.add(s);
  }
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(samples.size());
  const double median = percentile(sorted, 50);

  nlohmann::ordered_json json = {
      {"model", f.model},
      {"eps", options->eps},
      {"threads", options->config.threads},
      {"runs", f.runs},
      {"warmup", f.warmup},
      {"session_create_ms", s.create_ms()},
      {"first_inference_ms", first_ms},
      {"latency_ms",
       {{"median", median}, {"p90", percentile(sorted, 90)}, {"p99", percentile(sorted, 99)}, {"min", sorted.front()},
        {"max", sorted.back()}, {"mean", mean}}},
      {"throughput_per_s", 1000.0 / mean},
      {"peak_rss_mib", peak_rss_mib()},
      {"samples_ms", samples}};
  Table parts({"PARTITION", "EP", "NODES", "MEAN", "SHARE"});
  double total_us = 0;
  for (double us : partition_us) total_us += us;
  nlohmann::ordered_json profile = nlohmann::ordered_json::array();
  for (const Partition& p : s.report().partitions) {
    const double us = partition_us[static_cast<std::size_t>(p.index)] / f.runs;
    const double share = total_us > 0 ? 100.0 * partition_us[static_cast<std::size_t>(p.index)] / total_us : 0;
    parts.add({p.name, p.ep, std::to_string(p.nodes.size()), fmt::format("{:.3f} ms", us / 1000), fmt::format("{:.1f}%", share)});
    profile.push_back({{"partition", p.name}, {"ep", p.ep}, {"nodes", p.nodes.size()}, {"mean_ms", us / 1000}, {"share", share / 100}});
  }
  if (f.profile) {
    json["profile"] = profile;
    json["steps"] = steps.to_json(f.runs);
    json["op_types"] = steps.op_types_json(f.runs);
  }
  if (f.json) {
    fmt::print("{}\n", json.dump(2));
    return 0;
  }
  fmt::print("{} on [{}], {} run{} after {} warm-up\n", f.model, fmt::join(options->eps, ", "), f.runs,
             f.runs == 1 ? "" : "s", f.warmup);
  fmt::print("  session creation  {:10.3f} ms\n", s.create_ms());
  fmt::print("  first inference   {:10.3f} ms\n", first_ms);
  fmt::print("  median            {:10.3f} ms\n", median);
  fmt::print("  p90               {:10.3f} ms\n", percentile(sorted, 90));
  fmt::print("  p99               {:10.3f} ms\n", percentile(sorted, 99));
  fmt::print("  min / max         {:10.3f} / {:.3f} ms\n", sorted.front(), sorted.back());
  fmt::print("  throughput        {:10.1f} inferences/s\n", 1000.0 / mean);
  fmt::print("  peak RSS          {:10.1f} MiB\n", peak_rss_mib());
  if (f.profile) {
    fmt::print("\nper partition (mean of {} runs):\n{}", f.runs, parts.render());
    fmt::print("\nper step (mean of {} runs; a step is a kernel or a fused group of nodes):\n{}", f.runs,
               steps.step_table(f.runs).render());
    fmt::print("\nper op type:\n{}", steps.op_type_table(f.runs).render());
  }
  return 0;
}

}  // namespace

Action add_bench(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  auto* cmd = app.add_subcommand("bench", "measure session creation, first inference, latency percentiles and memory");
  cmd->add_option("MODEL", f->model, "the .onnx model (or EPContext model)")->required();
  f->ep.add_to(*cmd);
  cmd->add_option("--input", f->inputs, "an input from a .npy or .pb file, or random data")->type_name("NAME=FILE|random")->allow_extra_args(false);
  cmd->add_option("-n,--runs", f->runs, "timed runs")->check(CLI::Range(1, 100000000))->capture_default_str();
  cmd->add_option("--warmup", f->warmup, "untimed runs before timing")->check(CLI::Range(0, 100000000))->capture_default_str();
  cmd->add_flag("--profile", f->profile,
                "time per partition, per step (node or fused group, with the implementation that ran) and per op type");
  cmd->add_flag("--json", f->json, "print JSON instead of text");
  cmd->add_flag("-q,--quiet", f->quiet, "no notes on stderr");
  return [f] { return bench(*f); };
}

}  // namespace nxrt::cli
