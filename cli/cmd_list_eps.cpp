// nxrt list-eps: the EPs of this build, their devices, versions, availability and ops.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "nxrt/ep/provider.h"
#include "render/table.h"

namespace nxrt::cli {
namespace {

struct ListEpsFlags {
  bool ops = false;
  bool json = false;
  std::vector<std::string> plugins;
};

// Ops as "Abs@6", sorted (the registry's order).
std::vector<std::string> op_names(const ExecutionProvider& ep) {
  std::vector<std::string> out;
  for (const OpKey& k : ep.registered_ops()) out.push_back(k.to_string());
  return out;
}

int list_eps(const ListEpsFlags& flags) {
  if (auto loaded = load_plugins(flags.plugins); !loaded) return report(loaded.error());
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  std::string plugin_lines;
  Table table({"EP", "STATUS", "DEVICE", "VERSION", "VENDOR", "EPCONTEXT SOURCES", "OPS"});
  std::string op_lists;
  for (const EpFactory& factory : ep_factories()) {
    // One thread: list-eps only enumerates, it runs nothing.
    auto ep = factory.create(EpConfig{1, {}, nullptr});
    if (!ep) {
      table.add({factory.name, "unavailable: " + ep.error().what, "-", "-", "-", "-", "0"});
      json.push_back({{"name", factory.name}, {"available", false}, {"reason", ep.error().what}});
      continue;
    }
    const EpInfo& info = (*ep)->info();
    const auto ops = op_names(**ep);
    table.add({info.name, info.available ? "available" : "unavailable: " + info.unavailable_reason,
               info.device_name.empty() ? info.device.to_string() : info.device_name, info.version, info.vendor,
               info.context_sources.empty() ? "-" : fmt::format("{}", fmt::join(info.context_sources, ",")),
               std::to_string(ops.size())});
    nlohmann::ordered_json entry = {{"name", info.name},
                                    {"available", info.available},
                                    {"reason", info.unavailable_reason},
                                    {"device", info.device.to_string()},
                                    {"device_name", info.device_name},
                                    {"version", info.version},
                                    {"vendor", info.vendor},
                                    {"capabilities", info.capabilities},
                                    {"context_sources", info.context_sources},
                                    {"op_count", ops.size()}};
    if (!info.library.empty()) {
      entry["library"] = info.library;
      entry["ort_api_version"] = info.ort_api_version;
      plugin_lines += fmt::format("  {}: {} from {}, ORT API {}, devices: {}\n", info.name, info.vendor, info.library,
                                  info.ort_api_version, info.device_name);
    }
    if (flags.ops) entry["ops"] = ops;
    json.push_back(std::move(entry));
    if (flags.ops) op_lists += fmt::format("\n{} ({} ops):\n  {}\n", info.name, ops.size(), fmt::join(ops, " "));
  }
  if (flags.json) {
    fmt::print("{}\n", nlohmann::ordered_json{{"eps", json}}.dump(2));
    return 0;
  }
  fmt::print("{}{}{}", table.render(), plugin_lines.empty() ? "" : "\nONNX Runtime plugin EPs:\n" + plugin_lines, op_lists);
  return 0;
}

}  // namespace

Action add_list_eps(CLI::App& app) {
  auto flags = std::make_shared<ListEpsFlags>();
  auto* cmd = app.add_subcommand("list-eps", "list the EPs of this build: devices, versions, availability, ops");
  cmd->add_flag("--ops", flags->ops, "list every op version each EP registers");
  cmd->add_flag("--json", flags->json, "print JSON instead of a table");
  add_plugin_option(*cmd, flags->plugins);
  return [flags] { return list_eps(*flags); };
}

}  // namespace nxrt::cli
