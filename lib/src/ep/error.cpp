// Error rendering and context chaining.
#include "nxrt/ep/error.h"

#include <fmt/format.h>

namespace nxrt {

Error& Error::add_context(std::string line) & {
  context.push_back(std::move(line));
  return *this;
}

Error&& Error::add_context(std::string line) && {
  context.push_back(std::move(line));
  return std::move(*this);
}

std::string Error::render() const {
  std::string out = fmt::format("error: {}\n", what);
  if (!why.empty()) out += fmt::format("  why: {}\n", why);
  if (!how.empty()) out += fmt::format("  how to fix: {}\n", how);
  // Outermost context first reads like a call stack from the user's command inward.
  for (auto it = context.rbegin(); it != context.rend(); ++it) out += fmt::format("  while {}\n", *it);
  return out;
}

}  // namespace nxrt
