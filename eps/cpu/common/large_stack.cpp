// pthread-based runner with an explicit stack size (std::thread cannot set one).
#include "common/large_stack.h"

#include <pthread.h>

#include <cstring>
#include <exception>
#include <string>

#include <fmt/format.h>

namespace nxrt::cpu {
namespace {

struct Job {
  const std::function<void()>* fn;
  std::exception_ptr error;
};

// An exception must not leave a pthread's start routine: it is carried back to the caller.
void* call(void* arg) {
  auto* job = static_cast<Job*>(arg);
  try {
    (*job->fn)();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}

std::string describe(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

}  // namespace

Expected<void> run_on_large_stack(std::size_t bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  int rc = pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread{};
  Job job{&fn, nullptr};
  if (rc == 0) rc = pthread_create(&thread, &attr, call, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    return fail(ErrorCode::kRuntime, fmt::format("cannot start a thread with a {} MiB stack", bytes >> 20),
                std::strerror(rc), "raise the process's memory limits");
  pthread_join(thread, nullptr);
  if (job.error)
    return fail(ErrorCode::kRuntime, fmt::format("the function run on a {} MiB stack threw", bytes >> 20),
                describe(job.error), "report it with the model; the exception's text is above");
  return {};
}

}  // namespace nxrt::cpu
