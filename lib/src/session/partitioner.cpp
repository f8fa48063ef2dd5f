// Convex partitioning: groups of placed nodes whose quotient graph stays acyclic.
#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include <fmt/format.h>

#include "nxrt/session/claims.h"

namespace nxrt {
namespace {

struct Group {
  std::string ep;
  std::vector<NodeId> members;
  std::set<int> successors;  // groups that consume a value of this group
};

// Whether `to` is reachable from `from` along group edges.
bool reaches(const std::vector<Group>& groups, int from, int to) {
  std::vector<bool> seen(groups.size(), false);
  std::vector<int> stack{from};
  while (!stack.empty()) {
    const int g = stack.back();
    stack.pop_back();
    if (g == to) return true;
    if (seen[static_cast<std::size_t>(g)]) continue;
    seen[static_cast<std::size_t>(g)] = true;
    for (int s : groups[static_cast<std::size_t>(g)].successors) stack.push_back(s);
  }
  return false;
}

// How many other same-EP groups a node may try to join when it has no predecessor there;
// bounds the work per node (merging unrelated nodes is a nicety, not a requirement).
constexpr int kMaxUnrelatedCandidates = 4;

}  // namespace

void compute_boundary(const Graph& graph, Partition& p) {
  const std::set<NodeId> members(p.nodes.begin(), p.nodes.end());
  std::set<ValueId> seen_inputs;
  p.inputs.clear();
  p.outputs.clear();
  for (NodeId id : p.nodes) {
    const Node& node = graph.node(id);
    std::vector<ValueId> reads = node.inputs;
    reads.insert(reads.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    for (ValueId v : reads) {
      if (v == kNoValue) continue;
      const Value& val = graph.value(v);
      if (val.initializer && !val.is_graph_input) continue;  // the partition owns constants
      if (val.producer >= 0 && members.contains(val.producer)) continue;
      if (seen_inputs.insert(v).second) p.inputs.push_back(v);
    }
  }
  for (NodeId id : p.nodes) {
    for (ValueId v : graph.node(id).outputs) {
      if (v == kNoValue) continue;
      const Value& val = graph.value(v);
      const bool used_outside = std::any_of(val.consumers.begin(), val.consumers.end(),
                                            [&](NodeId c) { return !members.contains(c); });
      if (val.is_graph_output || used_outside) p.outputs.push_back(v);
    }
  }
}

std::string convexity_violation(const Graph& graph, const std::vector<NodeId>& nodes) {
  const std::set<NodeId> members(nodes.begin(), nodes.end());
  // Walk forward from the members through non-members; reaching a member again closes a path
  // that leaves the group. `via` remembers how each outside node was reached.
  std::map<NodeId, NodeId> via;
  std::vector<NodeId> stack;
  auto visit_consumers = [&](NodeId from) -> NodeId {
    for (ValueId v : graph.node(from).outputs) {
      if (v == kNoValue) continue;
      for (NodeId c : graph.value(v).consumers) {
        if (members.contains(c)) {
          if (!members.contains(from)) return c;
          continue;
        }
        if (via.emplace(c, from).second) stack.push_back(c);
      }
    }
    return -1;
  };
  for (NodeId m : nodes) visit_consumers(m);
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    if (const NodeId back = visit_consumers(n); back >= 0) {
      std::vector<std::string> ordered;
      for (NodeId at = n;; at = via.at(at)) {
        ordered.push_back(fmt::format("'{}'", graph.node(at).name));
        if (members.contains(at)) break;
      }
      std::reverse(ordered.begin(), ordered.end());
      ordered.push_back(fmt::format("'{}'", graph.node(back).name));
      std::string text;
      for (std::size_t i = 0; i < ordered.size(); ++i) text += (i ? " -> " : "") + ordered[i];
      return text;
    }
  }
  return {};
}

std::vector<Partition> make_partitions(const Graph& graph, const std::vector<std::string>& placement,
                                       const std::vector<bool>& alone, const std::vector<int>& clusters) {
  auto cluster_of = [&](NodeId id) { return clusters.empty() ? -1 : clusters[static_cast<std::size_t>(id)]; };
  std::vector<Group> groups;
  std::vector<int> group_of(graph.nodes.size(), -1);
  std::map<std::string, std::vector<int>> groups_of_ep;

  for (const Node& node : graph.nodes) {
    const std::string& ep = placement[static_cast<std::size_t>(node.id)];
    std::set<int> pred_groups;
    for (const auto* reads : {&node.inputs, &node.implicit_inputs})
      for (ValueId v : *reads)
        if (v != kNoValue && graph.value(v).producer >= 0)
          if (int g = group_of[static_cast<std::size_t>(graph.value(v).producer)]; g >= 0) pred_groups.insert(g);

    // Joining G adds edges H -> G for every predecessor group H; that closes a cycle
    // exactly when G already reaches one of them.
    auto can_join = [&](int g) {
      if (groups[static_cast<std::size_t>(g)].ep != ep) return false;
      if (cluster_of(groups[static_cast<std::size_t>(g)].members.front()) != cluster_of(node.id)) return false;
      for (int h : pred_groups)
        if (h != g && reaches(groups, g, h)) return false;
      return true;
    };
    int chosen = -1;
    // Unplaced nodes get a group of their own that is never emitted: paths through them
    // must still count, or a group could swallow both ends of such a path.
    if (!ep.empty() && !alone[static_cast<std::size_t>(node.id)]) {
      for (int g : pred_groups)
        if (!alone[static_cast<std::size_t>(groups[static_cast<std::size_t>(g)].members.front())] && can_join(g)) {
          chosen = g;
          break;
        }
      if (chosen < 0) {
        const auto& same_ep = groups_of_ep[ep];
        int tried = 0;
        for (auto it = same_ep.rbegin(); it != same_ep.rend() && tried < kMaxUnrelatedCandidates; ++it, ++tried)
          if (!alone[static_cast<std::size_t>(groups[static_cast<std::size_t>(*it)].members.front())] && can_join(*it)) {
            chosen = *it;
            break;
          }
      }
    }
    if (chosen < 0) {
      chosen = static_cast<int>(groups.size());
      groups.push_back(Group{ep, {}, {}});
      groups_of_ep[ep].push_back(chosen);
    }
    groups[static_cast<std::size_t>(chosen)].members.push_back(node.id);
    group_of[static_cast<std::size_t>(node.id)] = chosen;
    for (int h : pred_groups)
      if (h != chosen) groups[static_cast<std::size_t>(h)].successors.insert(chosen);
  }

  // Execution order: topological over groups, ties broken by the first member's position.
  std::vector<int> indegree(groups.size(), 0);
  for (const auto& g : groups)
    for (int s : g.successors) ++indegree[static_cast<std::size_t>(s)];
  auto later = [&](int a, int b) {
    return groups[static_cast<std::size_t>(a)].members.front() > groups[static_cast<std::size_t>(b)].members.front();
  };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (indegree[g] == 0) ready.push(static_cast<int>(g));
  std::vector<Partition> out;
  std::map<std::string, int> per_ep_count;
  while (!ready.empty()) {
    const int g = ready.top();
    ready.pop();
    Group& group = groups[static_cast<std::size_t>(g)];
    for (int s : group.successors)
      if (--indegree[static_cast<std::size_t>(s)] == 0) ready.push(s);
    if (group.ep.empty()) continue;
    Partition p;
    p.graph = &graph;
    p.ep = group.ep;
    p.index = static_cast<int>(out.size());
    p.name = fmt::format("{}_{}", group.ep, per_ep_count[group.ep]++);
    p.nodes = group.members;  // already topological: nodes were visited in order
    compute_boundary(graph, p);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace nxrt
