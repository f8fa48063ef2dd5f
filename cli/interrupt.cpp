// The signal-waiting thread: abandon staged files, then die by the signal received.
#include "interrupt.h"

#include <pthread.h>
#include <signal.h>

#include <thread>

#include "nxrt/io/atomic_file.h"

namespace nxrt::cli {
namespace {

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void clean_up_on_signals() {
  const sigset_t set = handled_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread started later
  std::thread([set] {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return;
    abandon_staged_files();
    // End the way an unhandled signal ends a process, so the shell sees it (exit 128+sig).
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    raise(sig);
  }).detach();
}

}  // namespace nxrt::cli
