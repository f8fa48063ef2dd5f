// analyze_claims: every EP's verdict per node, priority placement, partitions.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "epcontext_node.h"
#include "nxrt/session/claims.h"

namespace nxrt {
namespace {

// Records verdicts for the nodes of a subgraph (recursively), marked as such.
void claim_subgraph_nodes(const Graph& graph, const std::string& prefix, NodeId owner, const EpRegistry& eps,
                          std::vector<NodeClaim>& out) {
  for (const Node& node : graph.nodes) {
    NodeClaim claim{&graph, node.id, fmt::format("{}/{}", prefix, node.name), true, {}, {}, -1, owner, {}};
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

namespace {

// Why an EP's group cannot be placed: a member already placed on a higher-priority EP,
// or a path that leaves the group and comes back; empty when it can.
std::string group_rejection(const Graph& graph, const std::vector<NodeId>& group, const std::vector<std::string>& placement,
                            const std::string& ep) {
  std::vector<std::string> names;
  for (NodeId id : group) names.push_back(fmt::format("'{}'", graph.node(id).name));
  const std::string listed = fmt::format("[{}]", fmt::join(names, ", "));
  for (NodeId id : group)
    if (const auto& owner = placement[static_cast<std::size_t>(id)]; !owner.empty())
      return fmt::format("{}'s group {} was rejected: '{}' is owned by the higher-priority {} EP; put {} first in --ep "
                         "to give it the whole group",
                         ep, listed, graph.node(id).name, owner, ep);
  if (auto path = convexity_violation(graph, group); !path.empty())
    return fmt::format("{}'s group {} was rejected: it is not convex (the path {} leaves the group and comes back), so "
                       "it cannot run as one fused node",
                       ep, listed, path);
  return {};
}

}  // namespace

Expected<ClaimsReport> analyze_claims(const Model& model, const EpRegistry& eps, const EpContextRegistry& contexts,
                                      PlacementPolicy policy) {
  const Graph& graph = *model.graph;
  ClaimsReport report;
  report.policy = policy;
  for (const auto& ep : eps.eps()) report.eps.push_back(ep->info().name);

  // EPs that answer for the whole graph (GetCapability) name the groups they compile.
  std::map<std::string, std::vector<std::vector<NodeId>>> groups_of;
  for (const auto& ep : eps.eps())
    if (const auto* whole = dynamic_cast<const GraphClaimer*>(ep.get())) {
      auto claims = whole->claim_graph(graph);
      if (!claims) return forward_error(std::move(claims), fmt::format("claiming the nodes of '{}'", model.path.string()));
      groups_of[ep->info().name] = std::move(claims->groups);
    }

  std::vector<std::string> placement(graph.nodes.size());
  std::vector<bool> alone(graph.nodes.size(), false);
  for (const Node& node : graph.nodes) {
    NodeClaim claim{&graph, node.id, node.name, false, {}, {}, -1, -1, {}};
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
    }
    report.nodes.push_back(std::move(claim));
  }

  // Priority placement: each EP in turn takes what it claims and no earlier EP took; a
  // group goes whole or not at all.
  std::vector<int> clusters(graph.nodes.size(), -1);
  int next_cluster = 0;
  for (std::size_t e = 0; e < eps.eps().size(); ++e) {
    const std::string& name = report.eps[e];
    auto groups = groups_of.find(name);
    if (groups == groups_of.end()) {
      for (const Node& node : graph.nodes)
        if (auto& at = placement[static_cast<std::size_t>(node.id)]; at.empty() && report.nodes[static_cast<std::size_t>(node.id)].verdicts[e].match)
          at = name;
      continue;
    }
    for (const auto& group : groups->second) {
      const bool own_contexts = std::all_of(group.begin(), group.end(), [&](NodeId id) {
        return alone[static_cast<std::size_t>(id)] && placement[static_cast<std::size_t>(id)] == name;
      });
      if (own_contexts) continue;
      if (auto why = group_rejection(graph, group, placement, name); !why.empty()) {
        for (NodeId id : group) report.nodes[static_cast<std::size_t>(id)].verdicts[e].match = KernelMatch::declined(why);
        continue;
      }
      for (NodeId id : group) {
        placement[static_cast<std::size_t>(id)] = name;
        clusters[static_cast<std::size_t>(id)] = next_cluster;
      }
      ++next_cluster;
    }
  }
  for (const Node& node : graph.nodes) report.nodes[static_cast<std::size_t>(node.id)].placed_ep = placement[static_cast<std::size_t>(node.id)];
  report.partitions = make_partitions(graph, placement, alone, clusters);
  for (const Partition& p : report.partitions)
    for (NodeId id : p.nodes) report.nodes[static_cast<std::size_t>(id)].partition = p.index;
  if (policy == PlacementPolicy::kFewerPartitions) {
    std::set<std::string> group_eps;
    for (const auto& [name, groups] : groups_of) group_eps.insert(name);
    move_memory_bound_partitions(graph, alone, clusters, group_eps, report);
  }
  for (const Node& node : graph.nodes)
    for (const auto& [attr, value] : node.attributes.all())
      if (auto* sub = std::get_if<std::shared_ptr<const Graph>>(&value.value))
        claim_subgraph_nodes(**sub, fmt::format("{}/{}", node.name, attr), node.id, eps, report.nodes);
  return report;
}

}  // namespace nxrt
