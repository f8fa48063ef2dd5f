// pthread-based runner with an explicit stack size (std::thread cannot set one).
#include "common/large_stack.h"

#include <pthread.h>

#include <cstring>

#include <fmt/format.h>

namespace nxrt::cpu {
namespace {

void* call(void* fn) {
  (*static_cast<const std::function<void()>*>(fn))();
  return nullptr;
}

}  // namespace

Expected<void> run_on_large_stack(std::size_t bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread{};
  if (rc == 0) rc = pthread_create(&thread, &attr, call, const_cast<std::function<void()>*>(&fn));
  pthread_attr_destroy(&attr);
  if (rc != 0)
    return fail(ErrorCode::kRuntime, fmt::format("cannot start a thread with a {} MiB stack", bytes >> 20),
                std::strerror(rc), "raise the process's memory limits");
  pthread_join(thread, nullptr);
  return {};
}

}  // namespace nxrt::cpu
