// OpKey, KernelDef, OpRegistry (per EP: op -> kernel factory) and EpRegistry (the EPs).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/kernel.h"

namespace nxrt {

class ExecutionProvider;
struct EpConfig;

struct OpKey {
  std::string domain;   // normalised: "" for ai.onnx
  std::string op_type;
  int64_t since_version = 1;

  auto operator<=>(const OpKey&) const = default;
  std::string to_string() const;  // "ai.onnx::Conv@11"
};

// Checks a node (attributes, dtypes, shapes): the one validator a claim and the factory share.
using KernelCheck = std::function<KernelMatch(const NodeContext&)>;
// Builds the kernel; only called after the check claimed the node.
using KernelCreate = std::function<Expected<std::unique_ptr<Kernel>>(const NodeContext&)>;

// One registration: op versions [since_version, until_version] (until 0: open-ended).
struct KernelDef {
  OpKey key;
  int64_t until_version = 0;
  KernelCheck check;
  KernelCreate create;
};

class OpRegistry {
 public:
  // Adds a registration; a second one for the same key is an error (a bug in the EP).
  Expected<void> add(KernelDef def);
  // Adds every entry of a family's table.
  Expected<void> add_all(std::vector<KernelDef> defs);

  // The registration with the highest since_version <= opset, or nullptr.
  const KernelDef* find(std::string_view domain, std::string_view op_type, int64_t opset) const;
  // Earliest registered since_version of an op, for messages; nullopt if unregistered.
  std::optional<int64_t> earliest_version(std::string_view domain, std::string_view op_type) const;

  // Runs the lookup and the check; declines with a reason naming the op, the opset and
  // the versions this EP registers when no entry fits.
  KernelMatch check(const NodeContext& ctx, std::string_view ep_name) const;
  // check() then create(); a declined check becomes an Error with the reason.
  Expected<std::unique_ptr<Kernel>> create(const NodeContext& ctx, std::string_view ep_name) const;

  // Every registration, sorted by key.
  std::vector<const KernelDef*> entries() const;
  std::size_t size() const { return defs_.size(); }

  // The last opset a registration covers: until_version, or for an open-ended ai.onnx one,
  // the opset before the next version of the op nxrt knows that changed more than its types
  // (up to kNewestKnownOpset).
  static int64_t covered_until(const KernelDef& def);

 private:
  std::map<OpKey, KernelDef> defs_;
};

// One EP's answer for one node, as kept in reports.
struct EpVerdict {
  std::string ep;
  KernelMatch match;
};

// Owns the EPs of a session, in the user's priority order.
class EpRegistry {
 public:
  void add(std::unique_ptr<ExecutionProvider> ep);
  std::span<const std::unique_ptr<ExecutionProvider>> eps() const { return eps_; }
  ExecutionProvider* find(std::string_view name) const;
  // Every EP's verdict, in priority order; unavailable EPs decline with their reason.
  std::vector<EpVerdict> verdicts(const NodeContext& ctx) const;

 private:
  std::vector<std::unique_ptr<ExecutionProvider>> eps_;
};

// A built-in EP's factory: enumerate cheaply (name), create on demand.
struct EpFactory {
  std::string name;
  std::string description;
  std::function<Expected<std::unique_ptr<ExecutionProvider>>(const EpConfig&)> create;
};

// The process-wide list of EP factories, filled by register_builtin_eps() (eps/) and by
// plugin loading; the only process-wide state of nxrt.
void register_ep_factory(EpFactory factory);
std::span<const EpFactory> ep_factories();
const EpFactory* find_ep_factory(std::string_view name);

}  // namespace nxrt
