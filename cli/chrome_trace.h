// Chrome trace JSON (the Trace Event Format that Perfetto and chrome://tracing open) for
// bench --trace: one complete ("X") event per run and per profiled step.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "nxrt/ep/error.h"
#include "nxrt/session/session.h"

namespace nxrt::cli {

class ChromeTrace {
 public:
  // Timestamps are written in µs since `origin_us` (on std::chrono::steady_clock).
  ChromeTrace(std::string process_name, double origin_us);

  // Names the track (thread) of one EP configuration.
  void name_track(int tid, const std::string& name);
  // A run of a session, then one event per step of its last (profiled) run.
  void add_run(int tid, int run, double start_us, double dur_us, const Session& session);

  Expected<void> write(const std::filesystem::path& path) const;

 private:
  void add_event(std::string name, const char* category, double start_us, double dur_us, int tid,
                 nlohmann::ordered_json args);

  double origin_us_;
  nlohmann::ordered_json events_ = nlohmann::ordered_json::array();
};

}  // namespace nxrt::cli
