// SIGINT, SIGTERM and SIGHUP: nxrt removes its uncommitted temporary files, then ends by the signal.
#pragma once

namespace nxrt::cli {

// Call first in main, before any thread starts: the signals are blocked in every thread and
// one thread waits for them, so no output is ever left half-written by an interrupt.
void clean_up_on_signals();

}  // namespace nxrt::cli
