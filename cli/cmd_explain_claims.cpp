// nxrt explain-claims: every EP's verdict on every node, the placement and the partitions.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "commands.h"
#include "render/table.h"

namespace nxrt::cli {
namespace {

struct ExplainFlags {
  std::string model;
  EpFlags ep;
  std::string node;
  std::string op;
  bool declined_only = false;
  std::string format = "table";
};

bool selected(const ExplainFlags& f, const NodeClaim& c) {
  const Node& n = c.graph->node(c.node);
  if (!f.node.empty() && n.name != f.node && c.path != f.node) return false;
  if (!f.op.empty() && n.op_type != f.op) return false;
  if (f.declined_only)
    return std::any_of(c.verdicts.begin(), c.verdicts.end(), [](const EpVerdict& v) { return !v.match; });
  return true;
}

std::string verdict_text(const KernelMatch& m) {
  if (!m) return "declined: " + m.reason();
  const Cost& c = m.cost();
  if (c.flops == 0 && c.bytes_moved == 0) return "claimed";
  return fmt::format("claimed ({}, {})", human_flops(c.flops), human_bytes(c.bytes_moved));
}

std::string output_types(const NodeClaim& c) {
  std::vector<std::string> out;
  const Node& n = c.graph->node(c.node);
  for (ValueId v : n.outputs) {
    if (v == kNoValue) continue;
    const ValueType& t = c.graph->value(v).type;
    out.push_back(t.has_static_shape() || t.dtype == DType::kUndefined ? t.to_string()
                                                                        : t.to_string() + " (unknown until run)");
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

nlohmann::ordered_json opsets_json(const Graph& g) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [domain, version] : g.opset_imports) j[display_domain(domain)] = version;
  return j;
}

nlohmann::ordered_json to_json(const Analysis& a, const ExplainFlags& f) {
  const ClaimsReport& r = a.report;
  const Graph& g = *a.model.graph;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const NodeClaim& c : r.nodes) {
    if (!selected(f, c)) continue;
    const Node& n = c.graph->node(c.node);
    nlohmann::ordered_json verdicts = nlohmann::ordered_json::array();
    for (const EpVerdict& v : c.verdicts) {
      nlohmann::ordered_json j = {{"ep", v.ep}, {"claimed", v.match.is_supported()}};
      if (v.match)
        j["cost"] = {{"flops", v.match.cost().flops}, {"bytes", v.match.cost().bytes_moved}};
      else
        j["reason"] = v.match.reason();
      verdicts.push_back(std::move(j));
    }
    nodes.push_back({{"name", n.name},
                     {"path", c.path},
                     {"op_type", n.op_type},
                     {"domain", display_domain(n.domain)},
                     {"opset", n.opset},
                     {"in_subgraph", c.in_subgraph},
                     {"placed_ep", c.placed_ep.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(c.placed_ep)},
                     {"partition", c.partition >= 0 ? nlohmann::ordered_json(r.partitions[static_cast<std::size_t>(c.partition)].name)
                                                    : nlohmann::ordered_json()},
                     {"outputs", output_types(c)},
                     {"verdicts", std::move(verdicts)}});
  }
  nlohmann::ordered_json partitions = nlohmann::ordered_json::array();
  for (const Partition& p : r.partitions) {
    std::vector<std::string> members, ins, outs;
    for (NodeId id : p.nodes) members.push_back(g.node(id).name);
    for (ValueId v : p.inputs) ins.push_back(g.value(v).name);
    for (ValueId v : p.outputs) outs.push_back(g.value(v).name);
    partitions.push_back({{"name", p.name}, {"ep", p.ep}, {"nodes", members}, {"inputs", ins}, {"outputs", outs}});
  }
  nlohmann::ordered_json contexts = nlohmann::ordered_json::array();
  for (const ContextNodeInfo& c : r.context_nodes)
    contexts.push_back({{"node", g.node(c.node).name},
                        {"source", c.source},
                        {"ep", c.ep.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(c.ep)},
                        {"payload_bytes", c.payload_bytes},
                        {"location", c.location}});
  return {{"model", a.model.path.string()},
          {"ir_version", a.model.ir_version},
          {"opsets", opsets_json(g)},
          {"eps", r.eps},
          {"nodes", std::move(nodes)},
          {"partitions", std::move(partitions)},
          {"context_nodes", std::move(contexts)},
          {"rewrites", a.rewrites},
          {"unclaimed", r.unclaimed().size()},
          {"warnings", a.model.warnings}};
}

void print_table(const Analysis& a, const ExplainFlags& f) {
  const ClaimsReport& r = a.report;
  const Graph& g = *a.model.graph;
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : g.opset_imports) opsets.push_back(fmt::format("{} {}", display_domain(domain), version));
  fmt::print("model: {} (IR {}, {}; {} node{})\nEPs in priority order: {}\n\n", a.model.path.string(),
             a.model.ir_version, fmt::join(opsets, ", "), g.nodes.size(), g.nodes.size() == 1 ? "" : "s",
             fmt::join(r.eps, ", "));
  std::vector<std::string> header = {"NODE", "OP", "PLACED", "PARTITION", "OUTPUTS"};
  for (const auto& ep : r.eps) header.push_back(ep);
  Table nodes(header);
  for (const NodeClaim& c : r.nodes) {
    if (!selected(f, c)) continue;
    const Node& n = c.graph->node(c.node);
    const std::string op = n.domain.empty() ? n.op_type : fmt::format("{}::{}", n.domain, n.op_type);
    std::vector<std::string> row = {
        c.in_subgraph ? fmt::format("{} (subgraph)", c.path) : n.name, fmt::format("{}-{}", op, n.opset),
        c.in_subgraph ? "(by parent)" : (c.placed_ep.empty() ? "NONE" : c.placed_ep),
        c.partition >= 0 ? r.partitions[static_cast<std::size_t>(c.partition)].name : "-", output_types(c)};
    for (const EpVerdict& v : c.verdicts) row.push_back(verdict_text(v.match));
    nodes.add(std::move(row));
  }
  fmt::print("{}", nodes.empty() ? "no node matches the filters\n" : nodes.render());

  if (!r.context_nodes.empty()) {
    Table ctx({"EPCONTEXT NODE", "SOURCE", "EP", "PAYLOAD", "LOCATION"});
    for (const ContextNodeInfo& c : r.context_nodes)
      ctx.add({g.node(c.node).name, c.source, c.ep.empty() ? "none loaded" : c.ep, human_bytes(static_cast<double>(c.payload_bytes)),
               c.location});
    fmt::print("\n{}", ctx.render());
  }
  Table parts({"PARTITION", "EP", "NODES", "INPUTS", "OUTPUTS"});
  for (const Partition& p : r.partitions) {
    std::vector<std::string> ins, outs;
    for (ValueId v : p.inputs) ins.push_back(g.value(v).name);
    for (ValueId v : p.outputs) outs.push_back(g.value(v).name);
    parts.add({p.name, p.ep, std::to_string(p.nodes.size()), fmt::format("{}", fmt::join(ins, ", ")),
               fmt::format("{}", fmt::join(outs, ", "))});
  }
  fmt::print("\n{}", parts.empty() ? "no partitions\n" : parts.render());
  if (!a.rewrites.empty()) fmt::print("\nbefore placement:\n  {}\n", fmt::join(a.rewrites, "\n  "));
  const auto missing = r.unclaimed();
  fmt::print("\nsummary: {} node{}, {} placed, {} unclaimed, {} partition{}\n", g.nodes.size(),
             g.nodes.size() == 1 ? "" : "s", g.nodes.size() - missing.size(), missing.size(), r.partitions.size(), r.partitions.size() == 1 ? "" : "s");
  for (const auto& w : a.model.warnings) fmt::print(stderr, "warning: {}\n", w);
}

int explain_claims(const ExplainFlags& f) {
  auto options = f.ep.session_options();
  if (!options) return report(options.error());
  auto analysis = analyze(f.model, *options);
  if (!analysis) return report(analysis.error());
  if (f.format == "json")
    fmt::print("{}\n", to_json(*analysis, f).dump(2));
  else
    print_table(*analysis, f);
  const auto missing = analysis->report.unclaimed();
  if (missing.empty()) return 0;
  std::fflush(stdout);  // the report first, then the verdict, also when both go to one pipe
  fmt::print(stderr, "error: {} node{} of '{}' cannot be placed on any EP (see the verdicts above)\n", missing.size(),
             missing.size() == 1 ? "" : "s", f.model);
  return static_cast<int>(ErrorCode::kUnclaimed);
}

}  // namespace

Action add_explain_claims(CLI::App& app) {
  auto f = std::make_shared<ExplainFlags>();
  auto* cmd = app.add_subcommand("explain-claims", "show every EP's verdict on every node, the placement and partitions");
  cmd->add_option("MODEL", f->model, "the .onnx model")->required();
  f->ep.add_to(*cmd);
  f->ep.add_target_arch_to(*cmd);
  cmd->add_option("--node", f->node, "only this node (name or subgraph path)");
  cmd->add_option("--op", f->op, "only nodes of this op type");
  cmd->add_flag("--declined-only", f->declined_only, "only nodes that some EP declined");
  cmd->add_option("--format", f->format, "output format")->check(CLI::IsMember({"table", "json"}))->capture_default_str();
  cmd->add_flag_callback("--json", [f] { f->format = "json"; }, "same as --format json");
  return [f] { return explain_claims(*f); };
}

}  // namespace nxrt::cli
