// Runs a function on a thread with a stack of a given size, for recursive code (libstdc++'s
// std::regex matcher) whose depth grows with its input.
#pragma once

#include <cstddef>
#include <functional>

#include "nxrt/ep/error.h"

namespace nxrt::cpu {

// Calls fn on a new thread whose stack holds `bytes` (reserved, committed as it is touched)
// and waits for it; an error when the thread cannot be created or fn throws.
Expected<void> run_on_large_stack(std::size_t bytes, const std::function<void()>& fn);

}  // namespace nxrt::cpu
