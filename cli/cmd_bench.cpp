// nxrt bench: session creation, first inference, latency percentiles, throughput, memory;
// several EP lists compared run by run; per-step profiles and Chrome traces; requests
// from several threads at once (--concurrency).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "bench_concurrent.h"
#include "bench_stats.h"
#include "chrome_trace.h"
#include "cli_common.h"
#include "commands.h"
#include "render/table.h"
#include "terminal.h"

namespace nxrt::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Above this coefficient of variation the numbers are noisy (trtexec warns at 10% too).
constexpr double kNoisyCv = 0.10;

struct BenchFlags {
  std::string model;
  EpFlags ep;
  std::vector<std::string> inputs;
  int runs = 50;
  int warmup = 5;
  int concurrency = 1;
  double warmup_s = 0;
  double duration_s = 0;
  bool runs_given = false;
  bool profile = false;
  std::string trace;
  bool json = false;
  bool quiet = false;
};

double steady_us(Clock::time_point t) { return std::chrono::duration<double, std::micro>(t.time_since_epoch()).count(); }

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// The process's page faults so far, minor and major: a run that faults maps memory afresh
// (allocations returned to the system between runs), which on some machines costs more than the work.
int64_t page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt + usage.ru_majflt;
}

// One EP list under test: its session and what its runs measured.
struct Candidate {
  std::string label;  // "onednn,cpu"
  SessionOptions options;
  std::unique_ptr<Session> session;
  double first_ms = 0;
  std::vector<double> samples;
  double wall_s = 0;  // --concurrency: time of the measured requests, all threads together
  int64_t page_faults = 0;  // during the timed runs
  Outputs reference;  // --concurrency: the first (serial) run's outputs
  std::vector<double> partition_us;
  StepTotals steps;
};

std::string elapsed_text(double seconds) { return fmt::format("{:.1f} s", seconds); }

class Bench {
 public:
  explicit Bench(const BenchFlags& f) : f_(f), progress_(!f.quiet, fmt::format("bench {}: starting", f.model)) {}
  int run();

 private:
  Expected<void> create_sessions();
  Expected<void> run_once(Candidate& c);
  Expected<void> warm_up();
  Expected<void> measure();
  Expected<void> check_concurrency_flags() const;
  Expected<void> run_concurrent(Candidate& c, const EnoughFn& enough);
  double throughput(const Candidate& c) const;
  double faults_per_run(const Candidate& c) const;
  bool timed_enough(int rounds, Clock::time_point start) const;
  nlohmann::ordered_json candidate_json(const Candidate& c) const;
  void print_one(const Candidate& c) const;
  void print_comparison() const;
  void warn_if_noisy(const Candidate& c) const;

  const BenchFlags& f_;
  Progress progress_;
  std::vector<Candidate> candidates_;
  std::map<std::string, RuntimeValue> inputs_;
  std::unique_ptr<ChromeTrace> trace_;
  int warmup_runs_ = 0;
  int rounds_ = 0;
};

Expected<void> Bench::create_sessions() {
  auto per_flag = f_.ep.session_options_per_flag();
  if (!per_flag) return std::unexpected(per_flag.error());
  for (SessionOptions& options : *per_flag) {
    Candidate c;
    c.label = fmt::format("{}", fmt::join(options.eps, ","));
    for (const Candidate& other : candidates_)
      if (other.label == c.label)
        return fail(ErrorCode::kUsage, fmt::format("--ep {} is given twice", c.label), {},
                    "give each EP list to compare once");
    progress_.set(fmt::format("bench {}: creating the session on [{}]", f_.model, c.label));
    auto session = Session::create(f_.model, options);
    if (!session) return std::unexpected(session.error());
    c.session = std::move(*session);
    c.options = std::move(options);
    c.partition_us.assign(c.session->report().partitions.size(), 0);
    candidates_.push_back(std::move(c));
  }
  if (f_.concurrency > 1 && candidates_.size() > 1)
    return fail(ErrorCode::kUsage, fmt::format("--concurrency takes one EP list, got {}", candidates_.size()),
                "EP lists are compared run by run, which requests on several threads cannot be",
                "run bench --concurrency once per EP list");
  auto inputs = gather_inputs(*candidates_.front().session, f_.inputs, f_.quiet || f_.json);
  if (!inputs) return std::unexpected(inputs.error());
  inputs_ = std::move(*inputs);
  return {};
}

Expected<void> Bench::run_once(Candidate& c) {
  auto r = c.session->run(inputs_);
  if (!r) return std::unexpected(r.error());
  return {};
}

// --concurrency: requests on f_.concurrency threads until `enough`, checked against c.reference.
Expected<void> Bench::run_concurrent(Candidate& c, const EnoughFn& enough) {
  auto runs = run_concurrently(*c.session, inputs_, c.reference, f_.concurrency, enough);
  if (!runs) return forward_error(std::move(runs), fmt::format("running [{}] on {} threads", c.label, f_.concurrency));
  c.samples = std::move(runs->samples_ms);
  c.wall_s = runs->wall_s;
  return {};
}

Expected<void> Bench::warm_up() {
  for (Candidate& c : candidates_) {
    const auto t0 = Clock::now();
    auto first = c.session->run(inputs_);
    if (!first) return std::unexpected(first.error());
    c.first_ms = ms_between(t0, Clock::now());
    if (f_.concurrency > 1) c.reference = std::move(*first);
  }
  if (f_.concurrency > 1) {
    progress_.set(fmt::format("bench {}: warm-up on {} threads", f_.model, f_.concurrency));
    Candidate& c = candidates_.front();
    auto r = run_concurrent(c, [this](int64_t started, Clock::time_point start) {
      if (f_.warmup_s > 0) return std::chrono::duration<double>(Clock::now() - start).count() >= f_.warmup_s;
      return started >= f_.warmup;
    });
    warmup_runs_ = static_cast<int>(c.samples.size());
    c.samples.clear();
    return r;
  }
  const auto start = Clock::now();
  for (;;) {
    const double spent = std::chrono::duration<double>(Clock::now() - start).count();
    const bool done = f_.warmup_s > 0 ? spent >= f_.warmup_s : warmup_runs_ >= f_.warmup;
    if (done) return {};
    progress_.set(fmt::format("bench {}: warm-up run {}, {}", f_.model, warmup_runs_ + 1, elapsed_text(spent)));
    for (Candidate& c : candidates_)
      if (auto r = run_once(c); !r) return r;
    ++warmup_runs_;
  }
}

// At least --runs rounds and at least --duration seconds; --duration alone means at least one round.
bool Bench::timed_enough(int rounds, Clock::time_point start) const {
  const int min_rounds = f_.duration_s > 0 && !f_.runs_given ? 1 : f_.runs;
  return rounds >= min_rounds && std::chrono::duration<double>(Clock::now() - start).count() >= f_.duration_s;
}

Expected<void> Bench::measure() {
  if (f_.concurrency > 1) {
    progress_.set(fmt::format("bench {}: timing on {} threads", f_.model, f_.concurrency));
    Candidate& c = candidates_.front();
    const int64_t faults_before = page_faults();
    auto r = run_concurrent(c, [this](int64_t started, Clock::time_point start) {
      return timed_enough(static_cast<int>(std::min<int64_t>(started, INT32_MAX)), start);
    });
    c.page_faults = page_faults() - faults_before;
    rounds_ = static_cast<int>(c.samples.size());
    return r;
  }
  for (Candidate& c : candidates_) c.session->set_profiling(f_.profile || trace_ != nullptr);
  const auto start = Clock::now();
  while (!timed_enough(rounds_, start)) {
    // Alternating run by run spreads drift (heat, other load) over every EP list alike.
    for (std::size_t k = 0; k < candidates_.size(); ++k) {
      Candidate& c = candidates_[k];
      RunStats stats;
      const int64_t faults_before = page_faults();
      const auto t0 = Clock::now();
      auto r = c.session->run(inputs_, &stats);
      const auto t1 = Clock::now();
      c.page_faults += page_faults() - faults_before;
      if (!r) return std::unexpected(r.error());
      c.samples.push_back(ms_between(t0, t1));
      for (std::size_t p = 0; p < c.partition_us.size(); ++p) c.partition_us[p] += stats.partition_us[p];
      if (f_.profile) c.steps.add(*c.session);
      if (trace_) trace_->add_run(static_cast<int>(k) + 1, rounds_, steady_us(t0), ms_between(t0, t1) * 1000, *c.session);
    }
    ++rounds_;
    progress_.set(fmt::format("bench {}: run {}, {}", f_.model, rounds_,
                              elapsed_text(std::chrono::duration<double>(Clock::now() - start).count())));
  }
  return {};
}

// Requests per second: over the wall time with --concurrency, else one over the mean latency.
double Bench::throughput(const Candidate& c) const {
  if (f_.concurrency > 1) return c.wall_s > 0 ? static_cast<double>(c.samples.size()) / c.wall_s : 0;
  return 1000.0 / latency_stats(c.samples).mean;
}

double Bench::faults_per_run(const Candidate& c) const {
  return c.samples.empty() ? 0 : static_cast<double>(c.page_faults) / static_cast<double>(c.samples.size());
}

nlohmann::ordered_json Bench::candidate_json(const Candidate& c) const {
  const LatencyStats s = latency_stats(c.samples);
  nlohmann::ordered_json json = {
      {"model", f_.model},
      {"eps", c.options.eps},
      {"threads", c.options.config.threads},
      {"concurrency", f_.concurrency},
      {"runs", c.samples.size()},
      {"warmup", warmup_runs_},
      {"session_create_ms", c.session->create_ms()},
      {"first_inference_ms", c.first_ms},
      {"latency_ms",
       {{"median", s.p50}, {"p50", s.p50}, {"p90", s.p90}, {"p95", s.p95}, {"p99", s.p99}, {"min", s.min},
        {"max", s.max}, {"mean", s.mean}, {"stddev", s.stddev}}},
      {"cv", s.cv},
      {"throughput_per_s", throughput(c)},
      {"peak_rss_mib", peak_rss_mib()},
      {"page_faults_per_run", faults_per_run(c)},
      {"samples_ms", c.samples}};
  if (f_.concurrency > 1) {
    json["wall_s"] = c.wall_s;
    json["identical_to_serial"] = true;  // a difference stops bench with an error
  }
  if (!f_.profile) return json;
  const int runs = static_cast<int>(c.samples.size());
  double total_us = 0;
  for (double us : c.partition_us) total_us += us;
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (const Partition& p : c.session->report().partitions) {
    const double us = c.partition_us[static_cast<std::size_t>(p.index)];
    parts.push_back({{"partition", p.name}, {"ep", p.ep}, {"nodes", p.nodes.size()}, {"mean_ms", us / runs / 1000},
                     {"share", total_us > 0 ? us / total_us : 0}});
  }
  json["profile"] = parts;
  json["steps"] = c.steps.to_json(runs);
  json["op_types"] = c.steps.op_types_json(runs);
  return json;
}

void Bench::print_one(const Candidate& c) const {
  const LatencyStats s = latency_stats(c.samples);
  const int runs = static_cast<int>(c.samples.size());
  fmt::print("{} on [{}], {} run{} after {} warm-up\n", f_.model, fmt::join(c.options.eps, ", "), runs,
             runs == 1 ? "" : "s", warmup_runs_);
  if (f_.concurrency > 1)
    fmt::print("  concurrency       {:10} threads, one session, {:.3f} s in all\n", f_.concurrency, c.wall_s);
  fmt::print("  session creation  {:10.3f} ms\n", c.session->create_ms());
  fmt::print("  first inference   {:10.3f} ms\n", c.first_ms);
  fmt::print("  median            {:10.3f} ms\n", s.p50);
  fmt::print("  p90               {:10.3f} ms\n", s.p90);
  fmt::print("  p95               {:10.3f} ms\n", s.p95);
  fmt::print("  p99               {:10.3f} ms\n", s.p99);
  fmt::print("  min / max         {:10.3f} / {:.3f} ms\n", s.min, s.max);
  fmt::print("  mean / stddev     {:10.3f} / {:.3f} ms\n", s.mean, s.stddev);
  fmt::print("  variation (CV)    {:10.1f} %\n", 100 * s.cv);
  fmt::print("  throughput        {:10.1f} inferences/s\n", throughput(c));
  if (f_.concurrency > 1)
    fmt::print("  outputs           identical to the serial run, bit for bit, in all {} runs\n", runs);
  fmt::print("  peak RSS          {:10.1f} MiB\n", peak_rss_mib());
  fmt::print("  page faults       {:10.1f} per run\n", faults_per_run(c));
  if (!f_.profile) return;
  Table parts({"PARTITION", "EP", "NODES", "MEAN", "SHARE"});
  double total_us = 0;
  for (double us : c.partition_us) total_us += us;
  for (const Partition& p : c.session->report().partitions) {
    const double us = c.partition_us[static_cast<std::size_t>(p.index)];
    parts.add({p.name, p.ep, std::to_string(p.nodes.size()), fmt::format("{:.3f} ms", us / runs / 1000),
               fmt::format("{:.1f}%", total_us > 0 ? 100.0 * us / total_us : 0)});
  }
  fmt::print("\nper partition (mean of {} runs):\n{}", runs, parts.render());
  fmt::print("\nper step (mean of {} runs; a step is a kernel or a fused group of nodes):\n{}", runs,
             c.steps.step_table(runs).render());
  fmt::print("\nper op type:\n{}", c.steps.op_type_table(runs).render());
}

void Bench::print_comparison() const {
  fmt::print("{}: {} EP lists, {} run{} each, alternating, after {} warm-up\n", f_.model, candidates_.size(), rounds_,
             rounds_ == 1 ? "" : "s", warmup_runs_);
  std::vector<std::string> header{""};
  for (const Candidate& c : candidates_) header.push_back(c.label);
  Table t(header);
  auto row = [&](const std::string& what, auto&& cell) {
    std::vector<std::string> cells{what};
    for (const Candidate& c : candidates_) cells.push_back(cell(c, latency_stats(c.samples)));
    t.add(std::move(cells));
  };
  auto ms = [](double v) { return fmt::format("{:.3f} ms", v); };
  row("session creation", [&](const Candidate& c, const LatencyStats&) { return ms(c.session->create_ms()); });
  row("first inference", [&](const Candidate& c, const LatencyStats&) { return ms(c.first_ms); });
  row("median", [&](const Candidate&, const LatencyStats& s) { return ms(s.p50); });
  row("p90", [&](const Candidate&, const LatencyStats& s) { return ms(s.p90); });
  row("p95", [&](const Candidate&, const LatencyStats& s) { return ms(s.p95); });
  row("p99", [&](const Candidate&, const LatencyStats& s) { return ms(s.p99); });
  row("min", [&](const Candidate&, const LatencyStats& s) { return ms(s.min); });
  row("max", [&](const Candidate&, const LatencyStats& s) { return ms(s.max); });
  row("variation (CV)", [](const Candidate&, const LatencyStats& s) { return fmt::format("{:.1f} %", 100 * s.cv); });
  row("throughput", [](const Candidate&, const LatencyStats& s) { return fmt::format("{:.1f}/s", 1000.0 / s.mean); });
  row("page faults per run", [&](const Candidate& c, const LatencyStats&) {
    return fmt::format("{:.1f}", faults_per_run(c));
  });
  const double base = latency_stats(candidates_.front().samples).p50;
  row("median ratio", [&](const Candidate&, const LatencyStats& s) { return fmt::format("{:.3f}", s.p50 / base); });
  fmt::print("{}", t.render());
  fmt::print("peak RSS (all sessions): {:.1f} MiB\n", peak_rss_mib());
  for (std::size_t k = 1; k < candidates_.size(); ++k) {
    const double ratio = latency_stats(candidates_[k].samples).p50 / base;
    fmt::print("[{}] / [{}]: ratio of medians {:.3f} ({} is {:.2f}x {})\n", candidates_[k].label,
               candidates_.front().label, ratio, candidates_[k].label, ratio < 1 ? 1 / ratio : ratio,
               ratio < 1 ? "faster" : "slower");
  }
  if (!f_.profile) return;
  for (const Candidate& c : candidates_) {
    const int runs = static_cast<int>(c.samples.size());
    fmt::print("\nper step on [{}] (mean of {} runs):\n{}", c.label, runs, c.steps.step_table(runs).render());
    fmt::print("\nper op type on [{}]:\n{}", c.label, c.steps.op_type_table(runs).render());
  }
}

void Bench::warn_if_noisy(const Candidate& c) const {
  const LatencyStats s = latency_stats(c.samples);
  if (f_.quiet || s.cv <= kNoisyCv) return;
  fmt::print(stderr,
             "{}latency on [{}] varies: coefficient of variation {:.1f}% (over {:.0f}%); close other programs, "
             "pin threads (--threads) or run longer (--duration, --warmup-time)\n",
             warning_prefix(), c.label, 100 * s.cv, 100 * kNoisyCv);
}

Expected<void> Bench::check_concurrency_flags() const {
  if (f_.concurrency == 1) return {};
  if (f_.profile || !f_.trace.empty())
    return fail(ErrorCode::kUsage, fmt::format("--{} needs --concurrency 1", f_.profile ? "profile" : "trace"),
                "step timings are kept per session, so requests on several threads would overwrite each other's",
                "profile with --concurrency 1 (the default), or drop --profile and --trace");
  return {};
}

int Bench::run() {
  auto stop_with = [this](const Error& e) {
    progress_.done();
    return report(e);
  };
  if (auto r = check_concurrency_flags(); !r) return stop_with(r.error());
  if (auto r = create_sessions(); !r) return stop_with(r.error());
  if (!f_.trace.empty()) {
    trace_ = std::make_unique<ChromeTrace>(fmt::format("nxrt bench {}", f_.model), steady_us(Clock::now()));
    for (std::size_t k = 0; k < candidates_.size(); ++k) trace_->name_track(static_cast<int>(k) + 1, candidates_[k].label);
  }
  if (auto r = warm_up(); !r) return stop_with(r.error());
  if (auto r = measure(); !r) return stop_with(r.error());
  if (trace_)
    if (auto r = trace_->write(f_.trace); !r) return stop_with(r.error());
  progress_.done();
  for (const Candidate& c : candidates_) warn_if_noisy(c);
  if (f_.json) {
    if (candidates_.size() == 1) {
      fmt::print("{}\n", candidate_json(candidates_.front()).dump(2));
      return 0;
    }
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    nlohmann::ordered_json ratios = nlohmann::ordered_json::array();
    const double base = latency_stats(candidates_.front().samples).p50;
    for (const Candidate& c : candidates_) {
      all.push_back(candidate_json(c));
      ratios.push_back({{"eps", c.label}, {"vs", candidates_.front().label},
                        {"median_ratio", latency_stats(c.samples).p50 / base}});
    }
    fmt::print("{}\n", nlohmann::ordered_json{{"model", f_.model}, {"alternating", true}, {"runs", rounds_},
                                              {"warmup", warmup_runs_}, {"results", all}, {"ratios", ratios}}
                           .dump(2));
    return 0;
  }
  if (candidates_.size() == 1)
    print_one(candidates_.front());
  else
    print_comparison();
  if (trace_) fmt::print("\ntrace written to {} (open it in https://ui.perfetto.dev)\n", f_.trace);
  return 0;
}

}  // namespace

Action add_bench(CLI::App& app) {
  auto f = std::make_shared<BenchFlags>();
  auto* cmd = app.add_subcommand("bench", "measure session creation, first inference, latency percentiles and memory");
  cmd->add_option("MODEL", f->model, "the .onnx model (or EPContext model)")->required();
  f->ep.add_to(*cmd, true);
  cmd->add_option("--input", f->inputs, "an input from a .npy or .pb file, or random data")->type_name("NAME=FILE|random")->allow_extra_args(false);
  auto* runs = cmd->add_option("-n,--runs", f->runs, "timed runs (at least, with --duration)")
                   ->check(CLI::Range(1, 100000000))
                   ->capture_default_str();
  cmd->add_option("--duration", f->duration_s, "time for at least this many seconds")
      ->type_name("S")
      ->check(CLI::PositiveNumber);
  auto* warmup = cmd->add_option("--warmup", f->warmup, "untimed runs before timing")
                     ->check(CLI::Range(0, 100000000))
                     ->capture_default_str();
  cmd->add_option("--warmup-time", f->warmup_s, "untimed runs for this many seconds instead of --warmup")
      ->type_name("S")
      ->check(CLI::PositiveNumber)
      ->excludes(warmup);
  cmd->add_option("--concurrency", f->concurrency,
                  "threads sending requests to one session at once; each result must equal a serial run's")
      ->type_name("N")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_flag("--profile", f->profile,
                "time per partition, per step (node or fused group, with the implementation that ran) and per op type");
  cmd->add_option("--trace", f->trace, "write a Chrome trace (JSON for Perfetto) of every timed run and step")
      ->type_name("FILE");
  cmd->add_flag("--json", f->json, "print JSON instead of text");
  cmd->add_flag("-q,--quiet", f->quiet, "no notes, warnings or progress on stderr");
  return [f, runs] {
    f->runs_given = runs->count() > 0;
    return Bench(*f).run();
  };
}

}  // namespace nxrt::cli
