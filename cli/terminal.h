// Terminal output on stderr: a progress line for long work and coloured warnings, both
// only when stderr is a terminal; NO_COLOR turns colour off.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <thread>

namespace nxrt::cli {

bool stderr_is_terminal();

// "warning: " in yellow on a terminal without NO_COLOR, plain otherwise.
std::string warning_prefix();

// A line on stderr that says what is going on, shown once the work has taken a second
// and redrawn ten times a second with the time spent; erased when done. Does nothing
// unless `enabled` and stderr is a terminal.
class Progress {
 public:
  Progress(bool enabled, std::string text);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Replaces the text (any thread); cheap enough to call between timed runs.
  void set(std::string text);
  // Stops drawing and erases the line (before printing results); the destructor does too.
  void done();

 private:
  void draw_until_stopped(std::stop_token stop);

  std::mutex mutex_;
  std::string text_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool shown_ = false;
  std::jthread thread_;  // last: started after the members it reads
};

}  // namespace nxrt::cli
