// Chrome trace JSON for bench --trace.
#include "chrome_trace.h"

#include <fmt/format.h>

#include "nxrt/io/atomic_file.h"

namespace nxrt::cli {
namespace {

constexpr int kPid = 1;

}  // namespace

ChromeTrace::ChromeTrace(std::string process_name, double origin_us) : origin_us_(origin_us) {
  events_.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", 0}, {"args", {{"name", std::move(process_name)}}}});
}

void ChromeTrace::name_track(int tid, const std::string& name) {
  events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}});
}

void ChromeTrace::add_event(std::string name, const char* category, double start_us, double dur_us, int tid,
                            nlohmann::ordered_json args) {
  events_.push_back({{"name", std::move(name)},
                     {"cat", category},
                     {"ph", "X"},
                     {"ts", start_us - origin_us_},
                     {"dur", dur_us},
                     {"pid", kPid},
                     {"tid", tid},
                     {"args", std::move(args)}});
}

void ChromeTrace::add_run(int tid, int run, double start_us, double dur_us, const Session& session) {
  add_event(fmt::format("run {}", run), "run", start_us, dur_us, tid, {{"run", run}});
  for (const Partition& p : session.report().partitions)
    for (const StepProfile& step : session.compiled(static_cast<std::size_t>(p.index)).profile())
      add_event(step.nodes.empty() ? p.name : step.nodes.front(), "node", step.start_us, step.us, tid,
                {{"run", run},
                 {"op", step.op_type},
                 {"ep", p.ep},
                 {"partition", p.name},
                 {"variant", step.variant},
                 {"nodes", step.nodes}});
}

Expected<void> ChromeTrace::write(const std::filesystem::path& path) const {
  const std::string text = nlohmann::ordered_json{{"traceEvents", events_}, {"displayTimeUnit", "ms"}}.dump();
  if (auto r = write_file_atomically(path, std::as_bytes(std::span(text))); !r)
    return forward_error(std::move(r), fmt::format("writing the trace '{}'", path.string()));
  return {};
}

}  // namespace nxrt::cli
