// analyze_claims: every EP's verdict per node, priority placement, partitions.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "epcontext_node.h"
#include "nxrt/session/claims.h"

namespace nxrt {
namespace {

// Records verdicts for the nodes of a subgraph (recursively), marked as such.
void claim_subgraph_nodes(const Graph& graph, const std::string& prefix, NodeId owner, const EpRegistry& eps,
                          std::vector<NodeClaim>& out) {
  for (const Node& node : graph.nodes) {
    NodeClaim claim{&graph, node.id, fmt::format("{}/{}", prefix, node.name), true, {}, {}, -1, owner};
    claim.verdicts = eps.verdicts(NodeContext(graph, node));
    out.push_back(std::move(claim));
    for (const auto& [attr, value] : node.attributes.all())
      if (auto* sub = std::get_if<std::shared_ptr<const Graph>>(&value.value))
        claim_subgraph_nodes(**sub, fmt::format("{}/{}/{}", prefix, node.name, attr), owner, eps, out);
  }
}

}  // namespace

std::vector<const NodeClaim*> ClaimsReport::unclaimed() const {
  std::vector<const NodeClaim*> out;
  for (const auto& c : nodes)
    if (!c.in_subgraph && c.placed_ep.empty()) out.push_back(&c);
  return out;
}

Error ClaimsReport::unclaimed_error(const std::string& model_path) const {
  const auto missing = unclaimed();
  std::string why;
  for (const NodeClaim* c : missing) {
    why += fmt::format("\n    {}:", c->graph->node(c->node).describe());
    for (const auto& v : c->verdicts) why += fmt::format("\n      {}: {}", v.ep, v.match.reason());
  }
  return Error{ErrorCode::kUnclaimed,
               fmt::format("{}: {} node{} cannot be placed on any of the EPs [{}]", model_path, missing.size(),
                           missing.size() == 1 ? "" : "s", fmt::join(eps, ", ")),
               fmt::format("every EP declined:{}", why),
               "add an EP that supports these nodes with --ep, or see 'nxrt explain-claims' for details",
               {}};
}

Expected<ClaimsReport> analyze_claims(const Model& model, const EpRegistry& eps, const EpContextRegistry& contexts) {
  const Graph& graph = *model.graph;
  ClaimsReport report;
  for (const auto& ep : eps.eps()) report.eps.push_back(ep->info().name);

  std::vector<std::string> placement(graph.nodes.size());
  std::vector<bool> alone(graph.nodes.size(), false);
  for (const Node& node : graph.nodes) {
    NodeClaim claim{&graph, node.id, node.name, false, {}, {}, -1};
    if (node.is_ep_context()) {
      auto info = describe_context_node(graph, node, contexts);
      if (!info) return std::unexpected(info.error());
      for (const auto& ep : eps.eps()) {
        const EpInfo& ep_info = ep->info();
        claim.verdicts.push_back(
            {ep_info.name,
             ep_info.name == info->ep
                 ? KernelMatch::supported()
                 : KernelMatch::declined(fmt::format(
                       "EPContext: source '{}' is not a key of this EP (it accepts: {}); load the EP that "
                       "produced the model, or recompile the original model with nxrt compile-epcontext",
                       info->source, ep_info.context_sources.empty() ? "none" : fmt::format("{}", fmt::join(ep_info.context_sources, ", "))))});
      }
      placement[static_cast<std::size_t>(node.id)] = info->ep;
      alone[static_cast<std::size_t>(node.id)] = true;
      report.context_nodes.push_back(std::move(*info));
    } else {
      claim.verdicts = eps.verdicts(NodeContext(graph, node));
      for (const auto& v : claim.verdicts)
        if (v.match) {
          placement[static_cast<std::size_t>(node.id)] = v.ep;
          break;
        }
    }
    claim.placed_ep = placement[static_cast<std::size_t>(node.id)];
    report.nodes.push_back(std::move(claim));
  }
  report.partitions = make_partitions(graph, placement, alone);
  for (const Partition& p : report.partitions)
    for (NodeId id : p.nodes) report.nodes[static_cast<std::size_t>(id)].partition = p.index;
  for (const Node& node : graph.nodes)
    for (const auto& [attr, value] : node.attributes.all())
      if (auto* sub = std::get_if<std::shared_ptr<const Graph>>(&value.value))
        claim_subgraph_nodes(**sub, fmt::format("{}/{}", node.name, attr), node.id, eps, report.nodes);
  return report;
}

}  // namespace nxrt
