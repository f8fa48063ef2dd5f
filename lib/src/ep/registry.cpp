// OpRegistry lookups with version ranges, EpRegistry verdicts, and the EP factory list.
#include "nxrt/ep/registry.h"

#include <fmt/format.h>

#include "nxrt/ep/provider.h"
#include "nxrt/model/op_versions.h"

namespace nxrt {

std::string OpKey::to_string() const {
  return fmt::format("{}::{}@{}", display_domain(domain), op_type, since_version);
}

Expected<void> OpRegistry::add(KernelDef def) {
  def.key.domain = normalize_domain(def.key.domain);
  if (defs_.contains(def.key))
    return fail(ErrorCode::kRuntime, fmt::format("kernel {} registered twice", def.key.to_string()),
                "each (domain, op, since_version) has one registration",
                "remove the duplicate entry from the kernel family's table");
  OpKey key = def.key;
  defs_.emplace(std::move(key), std::move(def));
  return {};
}

Expected<void> OpRegistry::add_all(std::vector<KernelDef> defs) {
  for (auto& d : defs)
    if (auto r = add(std::move(d)); !r) return r;
  return {};
}

const KernelDef* OpRegistry::find(std::string_view domain, std::string_view op_type, int64_t opset) const {
  const std::string dom = normalize_domain(domain);
  // The entries of one op are adjacent and sorted by since_version.
  auto it = defs_.upper_bound(OpKey{dom, std::string(op_type), opset});
  if (it == defs_.begin()) return nullptr;
  --it;
  if (it->first.domain != dom || it->first.op_type != op_type) return nullptr;
  return &it->second;
}

std::optional<int64_t> OpRegistry::earliest_version(std::string_view domain, std::string_view op_type) const {
  auto it = defs_.lower_bound(OpKey{normalize_domain(domain), std::string(op_type), 0});
  if (it == defs_.end() || it->first.op_type != op_type || it->first.domain != normalize_domain(domain))
    return std::nullopt;
  return it->first.since_version;
}

int64_t OpRegistry::covered_until(const KernelDef& def) {
  if (def.until_version != 0) return def.until_version;
  if (!def.key.domain.empty()) return 0;
  // A version that only adds types keeps the kernel: its validator declines types it does not run.
  if (const OpVersionChange* next = op_signature_change_after(def.key.op_type, def.key.since_version, kNewestKnownOpset))
    return next->since_version - 1;
  return kNewestKnownOpset;
}

KernelMatch OpRegistry::check(const NodeContext& ctx, std::string_view ep_name) const {
  const Node& n = ctx.node();
  const KernelDef* def = find(n.domain, n.op_type, n.opset);
  if (!def) {
    if (auto first = earliest_version(n.domain, n.op_type))
      return KernelMatch::declined(fmt::format(
          "{}: this EP registers {}::{} from opset {}; the model imports opset {}", n.op_type,
          display_domain(n.domain), n.op_type, *first, n.opset));
    return KernelMatch::declined(fmt::format(
        "{}: {}::{} (opset {}) is not implemented by the {} EP; use an EP that lists it in "
        "'nxrt list-eps --ops'",
        n.op_type, display_domain(n.domain), n.op_type, n.opset, ep_name));
  }
  const int64_t until = covered_until(*def);
  const int64_t first = earliest_version(n.domain, n.op_type).value_or(def->key.since_version);
  if (n.domain.empty() && n.opset > kNewestKnownOpset)
    return KernelMatch::declined(fmt::format(
        "{}: the model imports ai.onnx opset {}, newer than the opsets nxrt knows (up to {}); the {} EP "
        "implements {}-{} (opsets {}-{}); export with opset {} or lower",
        n.op_type, n.opset, kNewestKnownOpset, ep_name, n.op_type, def->key.since_version, first, until,
        kNewestKnownOpset));
  if (until != 0 && n.opset > until) {
    if (const OpVersionChange* v = n.domain.empty() ? op_version_at(n.op_type, n.opset) : nullptr;
        v && v->since_version > until)
      return KernelMatch::declined(fmt::format(
          "{}-{} ({}) is not implemented by the {} EP; it implements opsets {}-{}", n.op_type, v->since_version,
          v->change, ep_name, first, until));
    return KernelMatch::declined(fmt::format(
        "{}: this EP implements opsets {} to {} of {}::{}; the model imports opset {}, whose "
        "semantics changed", n.op_type, def->key.since_version, until,
        display_domain(n.domain), n.op_type, n.opset));
  }
  return def->check(ctx);
}

Expected<std::unique_ptr<Kernel>> OpRegistry::create(const NodeContext& ctx, std::string_view ep_name) const {
  KernelMatch m = check(ctx, ep_name);
  if (!m)
    return fail(ErrorCode::kUnclaimed,
                fmt::format("the {} EP cannot build a kernel for {}", ep_name, ctx.node().describe()),
                m.reason());
  const KernelDef* def = find(ctx.node().domain, ctx.node().op_type, ctx.node().opset);
  auto kernel = def->create(ctx);
  if (!kernel)
    return forward_error(std::move(kernel),
                         fmt::format("creating the {} kernel for {}", ep_name, ctx.node().describe()));
  return kernel;
}

std::vector<const KernelDef*> OpRegistry::entries() const {
  std::vector<const KernelDef*> out;
  out.reserve(defs_.size());
  for (const auto& [key, def] : defs_) out.push_back(&def);
  return out;
}

void EpRegistry::add(std::unique_ptr<ExecutionProvider> ep) { eps_.push_back(std::move(ep)); }

ExecutionProvider* EpRegistry::find(std::string_view name) const {
  for (const auto& ep : eps_)
    if (ep->info().name == name) return ep.get();
  return nullptr;
}

std::vector<EpVerdict> EpRegistry::verdicts(const NodeContext& ctx) const {
  std::vector<EpVerdict> out;
  out.reserve(eps_.size());
  for (const auto& ep : eps_) {
    const EpInfo& info = ep->info();
    if (!info.available) {
      out.push_back({info.name, KernelMatch::declined(fmt::format("the {} EP is unavailable: {}",
                                                                  info.name, info.unavailable_reason))});
      continue;
    }
    out.push_back({info.name, ep->claim(ctx)});
  }
  return out;
}

namespace {
std::vector<EpFactory>& factory_list() {
  static std::vector<EpFactory> list;
  return list;
}
}  // namespace

void register_ep_factory(EpFactory factory) {
  for (auto& f : factory_list())
    if (f.name == factory.name) {
      f = std::move(factory);
      return;
    }
  factory_list().push_back(std::move(factory));
}

std::span<const EpFactory> ep_factories() { return factory_list(); }

const EpFactory* find_ep_factory(std::string_view name) {
  for (const auto& f : factory_list())
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace nxrt
