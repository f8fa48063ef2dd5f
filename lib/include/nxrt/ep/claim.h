// NXRT_REQUIRE / NXRT_DENY: a claim check returns a declined KernelMatch with a formatted
// reason; the message is formatted only when the check fails.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nxrt/ep/kernel.h"

// Declines unconditionally: return NXRT_DENY("Conv: {}-D convolution is not supported", n);
#define NXRT_DENY(...) ::nxrt::KernelMatch::declined(::fmt::format(__VA_ARGS__))

// Inside a function returning KernelMatch: declines with the formatted reason when `cond`
// is false; evaluates nothing but `cond` when it holds.
#define NXRT_REQUIRE(cond, ...)     \
  do {                              \
    if (!(cond)) [[unlikely]]       \
      return NXRT_DENY(__VA_ARGS__); \
  } while (false)

// Inside a function returning KernelMatch: forwards a declined verdict of a sub-check.
#define NXRT_REQUIRE_MATCH(expr)            \
  do {                                      \
    if (auto nxrt_m_ = (expr); !nxrt_m_)    \
      return nxrt_m_;                       \
  } while (false)

namespace nxrt {

// A declined verdict that carries an error's message and its fix ("what; how").
inline KernelMatch declined_by(const Error& error) {
  if (error.how.empty()) return KernelMatch::declined(error.what);
  return KernelMatch::declined(::fmt::format("{}; {}", error.what, error.how));
}

}  // namespace nxrt
