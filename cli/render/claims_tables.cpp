// The explain-claims tables shared by the text and Markdown formats, and their cell texts.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cli_common.h"
#include "render/claims_view.h"

namespace nxrt::cli {
namespace {

std::string plural(std::size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string verdict_text(const KernelMatch& m) {
  if (!m) return "declined: " + m.reason();
  const Cost& c = m.cost();
  if (c.flops == 0 && c.bytes_moved == 0) return "claimed";
  return fmt::format("claimed ({}, {})", human_flops(c.flops), human_bytes(c.bytes_moved));
}

std::string names(const Graph& g, const std::vector<ValueId>& values) {
  std::vector<std::string> out;
  for (ValueId v : values) out.push_back(g.value(v).name);
  return fmt::format("{}", fmt::join(out, ", "));
}

bool shown(const BoundaryValue& b) { return (b.from >= 0 && b.to >= 0) || b.copied(); }

}  // namespace

std::string op_name(const std::string& domain, const std::string& op_type) {
  return domain.empty() ? op_type : fmt::format("{}::{}", domain, op_type);
}

std::string claim_label(const NodeClaim& claim) {
  return claim.in_subgraph ? fmt::format("{} (subgraph)", claim.path) : claim.graph->node(claim.node).name;
}

std::string output_types(const NodeClaim& c) {
  std::vector<std::string> out;
  const Node& n = c.graph->node(c.node);
  for (ValueId v : n.outputs) {
    if (v == kNoValue) continue;
    const ValueType& t = c.graph->value(v).type;
    out.push_back(t.has_static_shape() ? t.to_string() : t.to_string() + " (unknown until run)");
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

std::string partition_name(const ClaimsReport& report, const NodeClaim& claim) {
  return claim.partition >= 0 ? report.partitions[static_cast<std::size_t>(claim.partition)].name : "-";
}

std::string boundary_end(const ClaimsReport& report, int partition, bool is_source) {
  if (partition >= 0) return report.partitions[static_cast<std::size_t>(partition)].name;
  return is_source ? "graph input or unplaced node" : "graph output";
}

std::string tally_text(const BoundaryTally& tally) {
  const std::string known = human_bytes(static_cast<double>(tally.bytes));
  if (tally.unknown_size == 0) return fmt::format("{} ({})", plural(tally.values, "value"), known);
  if (tally.unknown_size == tally.values) return fmt::format("{} (size unknown until run)", plural(tally.values, "value"));
  return fmt::format("{} ({} + {} of unknown size)", plural(tally.values, "value"), known, tally.unknown_size);
}

std::string opset_list(const Graph& graph) {
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : graph.opset_imports) opsets.push_back(fmt::format("{} {}", display_domain(domain), version));
  return fmt::format("{}", fmt::join(opsets, ", "));
}

std::string summary_line(const ClaimsView& view) {
  const ClaimsSummary& s = view.summary;
  std::string line = fmt::format("{}, {} placed, {} unclaimed, {}", plural(s.nodes, "node"), s.nodes - s.unplaced,
                                 s.unplaced, plural(view.analysis.report.partitions.size(), "partition"));
  if (s.subgraph_nodes > 0) line += fmt::format(", {} in subgraphs", plural(s.subgraph_nodes, "node"));
  return line;
}

std::string placed_cell(const NodeClaim& c) {
  if (c.in_subgraph) return "(by parent)";
  if (c.placed_ep.empty()) return "NONE";
  return c.placement_note.empty() ? c.placed_ep : c.placed_ep + "*";
}

std::vector<std::string> placement_notes(const ClaimsView& view) {
  std::vector<std::string> notes;
  for (std::size_t i : view.selected)
    if (const std::string& note = view.analysis.report.nodes[i].placement_note;
        !note.empty() && std::find(notes.begin(), notes.end(), note) == notes.end())
      notes.push_back(note);
  return notes;
}

Table node_table(const ClaimsView& view) {
  const ClaimsReport& r = view.analysis.report;
  std::vector<std::string> header = {"NODE", "OP", "PLACED", "PARTITION", "OUTPUTS"};
  for (const auto& ep : r.eps) header.push_back(ep);
  Table t(header);
  for (std::size_t i : view.selected) {
    const NodeClaim& c = r.nodes[i];
    const Node& n = c.graph->node(c.node);
    std::vector<std::string> row = {claim_label(c), fmt::format("{}-{}", op_name(n.domain, n.op_type), n.opset),
                                    placed_cell(c), partition_name(r, c), output_types(c)};
    for (const EpVerdict& v : c.verdicts) row.push_back(verdict_text(v.match));
    t.add(std::move(row));
  }
  return t;
}

Table context_table(const ClaimsView& view) {
  const Graph& g = *view.analysis.model.graph;
  Table t({"EPCONTEXT NODE", "SOURCE", "EP", "PAYLOAD", "LOCATION"});
  for (const ContextNodeInfo& c : view.analysis.report.context_nodes)
    t.add({g.node(c.node).name, c.source, c.ep.empty() ? "none loaded" : c.ep,
           human_bytes(static_cast<double>(c.payload_bytes)), c.location});
  return t;
}

Table partition_table(const ClaimsView& view) {
  const Graph& g = *view.analysis.model.graph;
  Table t({"PARTITION", "EP", "NODES", "INPUTS", "OUTPUTS"});
  for (const Partition& p : view.analysis.report.partitions)
    t.add({p.name, p.ep, std::to_string(p.nodes.size()), names(g, p.inputs), names(g, p.outputs)});
  return t;
}

Table ep_table(const ClaimsView& view) {
  Table t({"EP", "DEVICE", "NODES", "SUBGRAPH NODES", "PARTITIONS", "EST. FLOPS"});
  for (const EpTotals& e : view.summary.eps)
    t.add({e.ep, e.device.to_string(), std::to_string(e.nodes), std::to_string(e.subgraph_nodes),
           std::to_string(e.partitions), human_flops(e.flops)});
  return t;
}

Table decline_table(const ClaimsView& view, std::size_t max_names) {
  const ClaimsReport& r = view.analysis.report;
  Table t({"DECLINED BY", "OP", "REASON", "COUNT", "NODES"});
  for (const DeclineGroup& d : view.declines) {
    std::vector<std::string> shown_names;
    for (std::size_t i = 0; i < d.claims.size() && i < max_names; ++i) shown_names.push_back(claim_label(r.nodes[d.claims[i]]));
    if (d.claims.size() > max_names) shown_names.push_back(fmt::format("+{} more", d.claims.size() - max_names));
    t.add({d.ep, op_name(d.domain, d.op_type), d.reason,
           std::to_string(d.claims.size()), fmt::format("{}", fmt::join(shown_names, ", "))});
  }
  return t;
}

Table boundary_table(const ClaimsView& view) {
  const ClaimsReport& r = view.analysis.report;
  const Graph& g = *view.analysis.model.graph;
  Table t({"VALUE", "FROM", "TO", "DEVICES", "SIZE"});
  for (const BoundaryValue& b : view.summary.boundaries) {
    if (!shown(b)) continue;
    t.add({g.value(b.value).name, boundary_end(r, b.from, true), boundary_end(r, b.to, false),
           b.copied() ? fmt::format("{} -> {} (copied)", b.from_device.to_string(), b.to_device.to_string())
                      : b.from_device.to_string(),
           b.bytes ? human_bytes(static_cast<double>(*b.bytes)) : "unknown until run"});
  }
  return t;
}

}  // namespace nxrt::cli
