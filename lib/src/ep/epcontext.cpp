// EpContext payload access and the source-key registry.
#include "nxrt/ep/epcontext.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nxrt/ep/provider.h"

namespace nxrt {

std::span<const std::byte> EpContext::payload() const {
  if (mapping) return mapped_bytes;
  return owned;
}

ExecutionProvider* EpContextRegistry::find(std::string_view source) const {
  auto it = by_source_.find(std::string(source));
  return it == by_source_.end() ? nullptr : it->second;
}

std::string EpContextRegistry::describe_keys() const {
  std::string out;
  for (const auto& name : ep_names_) {
    std::vector<std::string> keys;
    for (const auto& [key, ep] : by_source_)
      if (ep->info().name == name) keys.push_back(key);
    if (!out.empty()) out += ", ";
    out += keys.empty() ? fmt::format("{} (no keys)", name) : fmt::format("{} ({})", name, fmt::join(keys, ", "));
  }
  return out.empty() ? "no EPs loaded" : out;
}

Expected<EpContextRegistry> build_ep_context_registry(std::span<ExecutionProvider* const> eps) {
  EpContextRegistry reg;
  for (ExecutionProvider* ep : eps) {
    reg.ep_names_.push_back(ep->info().name);
    for (const auto& key : ep->info().context_sources) {
      auto [it, inserted] = reg.by_source_.emplace(key, ep);
      if (!inserted)
        return fail(ErrorCode::kUsage,
                    fmt::format("EPContext source '{}' is accepted by two EPs: {} and {}", key,
                                it->second->info().name, ep->info().name),
                    "each source key must dispatch to exactly one EP",
                    "load only one of these EPs, or give the plugin another registration name");
    }
  }
  return reg;
}

}  // namespace nxrt
