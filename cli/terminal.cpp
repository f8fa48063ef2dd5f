// Progress lines and coloured warnings on stderr, for terminals only.
#include "terminal.h"

#include <fmt/format.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>

namespace nxrt::cli {
namespace {

using namespace std::chrono_literals;

constexpr auto kShowAfter = 1s;
constexpr auto kRedrawEvery = 100ms;
constexpr const char* kEraseLine = "\r\033[K";

}  // namespace

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

std::string warning_prefix() {
  const char* no_color = std::getenv("NO_COLOR");
  const bool color = stderr_is_terminal() && (no_color == nullptr || *no_color == '\0');
  return color ? "\033[33mwarning:\033[0m " : "warning: ";
}

Progress::Progress(bool enabled, std::string text) : text_(std::move(text)) {
  if (enabled && stderr_is_terminal()) thread_ = std::jthread([this](std::stop_token stop) { draw_until_stopped(stop); });
}

Progress::~Progress() { done(); }

void Progress::done() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
  if (shown_) fmt::print(stderr, "{}", kEraseLine);
}

void Progress::set(std::string text) {
  std::lock_guard lock(mutex_);
  text_ = std::move(text);
}

void Progress::draw_until_stopped(std::stop_token stop) {
  std::condition_variable_any wake;
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    wake.wait_for(lock, stop, kRedrawEvery, [] { return false; });
    const auto spent = std::chrono::steady_clock::now() - start_;
    if (stop.stop_requested() || spent < kShowAfter) continue;
    fmt::print(stderr, "{}{} ({:.1f} s)", kEraseLine, text_, std::chrono::duration<double>(spent).count());
    std::fflush(stderr);
    shown_ = true;
  }
}

}  // namespace nxrt::cli
