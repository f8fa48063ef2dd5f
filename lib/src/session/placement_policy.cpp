// Placement policies: their names, and fewer-partitions (memory-bound partitions move to their neighbours' EP).
#include "nxrt/session/placement_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "nxrt/session/claims.h"

namespace nxrt {

std::string_view placement_policy_name(PlacementPolicy policy) {
  switch (policy) {
    case PlacementPolicy::kFirstClaim:
      return "first-claim";
    case PlacementPolicy::kFewerPartitions:
      return "fewer-partitions";
  }
  return "?";
}

std::vector<std::string_view> placement_policy_names() {
  return {placement_policy_name(PlacementPolicy::kFirstClaim),
          placement_policy_name(PlacementPolicy::kFewerPartitions)};
}

std::optional<PlacementPolicy> parse_placement_policy(std::string_view name) {
  for (PlacementPolicy p : {PlacementPolicy::kFirstClaim, PlacementPolicy::kFewerPartitions})
    if (placement_policy_name(p) == name) return p;
  return std::nullopt;
}

namespace {

// Bounds the sweeps; each one that is kept lowers the partition count, so a model rarely
// needs more than two.
constexpr int kMaxSweeps = 16;
// Node names a note lists per partition before "+N more".
constexpr std::size_t kNamesInNote = 8;

std::size_t at(NodeId id) { return static_cast<std::size_t>(id); }

// Whether the EP at `ep` claims the node with a known cost of at most 1 FLOP per byte
// moved. A cost of zero on both counts is unknown (shapes not known), and does not qualify.
bool memory_bound(const NodeClaim& claim, std::size_t ep) {
  const KernelMatch& m = claim.verdicts[ep].match;
  if (!m) return false;
  const Cost& c = m.cost();
  const bool known = c.flops > 0 || c.bytes_moved > 0;
  return known && c.flops <= c.bytes_moved;
}

std::string node_list(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < nodes.size() && i < kNamesInNote; ++i) names.push_back(graph.node(nodes[i]).name);
  if (nodes.size() > kNamesInNote) names.push_back(fmt::format("+{} more", nodes.size() - kNamesInNote));
  return fmt::format("({})", fmt::join(names, ", "));
}

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  if (items.size() <= 1) return items.empty() ? std::string() : items.front();
  return fmt::format("{} and {}", fmt::join(items.begin(), items.end() - 1, ", "), items.back());
}

// One sweep's view of the partitions: which may move, where, and who borders whom.
class Sweep {
 public:
  Sweep(const Graph& graph, const std::vector<bool>& alone, const std::vector<int>& clusters,
        const std::set<std::string>& group_eps, const ClaimsReport& report)
      : graph_(graph), report_(report), group_eps_(group_eps) {
    const auto& parts = report.partitions;
    ep_of_.resize(parts.size());
    neighbours_.resize(parts.size());
    moving_.assign(parts.size(), false);
    target_.assign(parts.size(), 0);
    for (std::size_t p = 0; p < parts.size(); ++p) ep_of_[p] = ep_index(parts[p].ep);
    for (std::size_t p = 0; p < parts.size(); ++p) moving_[p] = eligible(parts[p], alone, clusters);
  }

  // Settles which eligible partitions move: drops, until none is dropped, every partition
  // whose staying neighbours are not all on one EP that claims it, or that borders a moving
  // partition bound for another EP. Returns the moves, (partition, EP index) pairs.
  std::vector<std::pair<std::size_t, std::size_t>> settle() {
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t p = 0; p < moving_.size(); ++p)
        if (moving_[p] && !choose_target(p)) {
          moving_[p] = false;
          changed = true;
        }
      for (std::size_t p = 0; p < moving_.size(); ++p)
        if (moving_[p])
          for (std::size_t q : neighbours_[p])
            if (moving_[q] && target_[q] != target_[p]) {
              moving_[p] = false;
              changed = true;
              break;
            }
    }
    std::vector<std::pair<std::size_t, std::size_t>> moves;
    for (std::size_t p = 0; p < moving_.size(); ++p)
      if (moving_[p]) moves.emplace_back(p, target_[p]);
    return moves;
  }

  // Why partition `p` moves to the EP at `to`, for each of its nodes.
  std::string note(std::size_t p, std::size_t to) const {
    const Partition& part = report_.partitions[p];
    const std::string& from = part.ep;
    const std::string& dest = report_.eps[to];
    // The neighbours that moved along, by EP: "the onednn partitions (Mul_23, Add_24) and (Mul_68, Add_69)".
    std::vector<std::pair<std::string, std::vector<std::string>>> along;
    for (std::size_t q : neighbours_[p]) {
      if (!moving_[q]) continue;
      const Partition& other = report_.partitions[q];
      auto it = std::find_if(along.begin(), along.end(), [&](const auto& e) { return e.first == other.ep; });
      if (it == along.end()) it = along.insert(along.end(), {other.ep, {}});
      it->second.push_back(node_list(graph_, other.nodes));
    }
    std::vector<std::string> phrases;
    for (const auto& [ep, lists] : along)
      phrases.push_back(fmt::format("the {} partition{} {}", ep, lists.size() == 1 ? "" : "s", and_list(lists)));
    std::string between = fmt::format("{} nodes", dest);
    if (!phrases.empty()) between += fmt::format(" and {}, which moved to {} with it", and_list(phrases), dest);
    return fmt::format(
        "moved from {} to {}: its {} partition {} only does memory-bound work (under 1 FLOP per byte) between {}, and "
        "{} claims all of it",
        from, dest, from, node_list(graph_, part.nodes), between, dest);
  }

 private:
  std::size_t ep_index(const std::string& name) const {
    return static_cast<std::size_t>(std::find(report_.eps.begin(), report_.eps.end(), name) - report_.eps.begin());
  }

  // The per-partition conditions: not pinned, every node memory-bound where it is, and
  // every neighbour a placed node (collected into neighbours_, at least one).
  bool eligible(const Partition& part, const std::vector<bool>& alone, const std::vector<int>& clusters) {
    const std::size_t p = static_cast<std::size_t>(part.index);
    for (NodeId id : part.nodes)
      if (alone[at(id)] || clusters[at(id)] >= 0 || !memory_bound(report_.nodes[at(id)], ep_of_[p])) return false;
    std::set<std::size_t> seen;
    bool any = false;
    auto add = [&](NodeId n) {
      const int q = report_.nodes[at(n)].partition;
      if (q == part.index) return true;
      any = true;
      if (q < 0) return false;  // an unplaced node: nothing would join up
      if (seen.insert(static_cast<std::size_t>(q)).second) neighbours_[p].push_back(static_cast<std::size_t>(q));
      return true;
    };
    for (ValueId v : part.inputs)
      if (const NodeId producer = graph_.value(v).producer; producer >= 0 && !add(producer)) return false;
    for (ValueId v : part.outputs)
      for (NodeId consumer : graph_.value(v).consumers)
        if (!add(consumer)) return false;
    // Only a partition that some neighbour's EP could take is worth waiting for: one that
    // cannot move anyway must count as staying from the start, or its neighbours would
    // lose their only staying neighbour and be dropped with it.
    return any && std::any_of(neighbours_[p].begin(), neighbours_[p].end(),
                              [&](std::size_t q) { return may_take(ep_of_[q], part); });
  }

  // Whether the EP at `ep` may take all of `part`: another EP than its own, not one that
  // places whole groups, and claiming every node.
  bool may_take(std::size_t ep, const Partition& part) const {
    if (ep == ep_of_[static_cast<std::size_t>(part.index)] || group_eps_.contains(report_.eps[ep])) return false;
    return std::all_of(part.nodes.begin(), part.nodes.end(),
                       [&](NodeId id) { return bool(report_.nodes[at(id)].verdicts[ep].match); });
  }

  // Sets target_[p] to the one EP of p's staying neighbours, when there is one and it may
  // take all of p.
  bool choose_target(std::size_t p) {
    std::optional<std::size_t> only;
    for (std::size_t q : neighbours_[p]) {
      if (moving_[q]) continue;
      if (only && *only != ep_of_[q]) return false;
      only = ep_of_[q];
    }
    if (!only || !may_take(*only, report_.partitions[p])) return false;
    target_[p] = *only;
    return true;
  }

  const Graph& graph_;
  const ClaimsReport& report_;
  const std::set<std::string>& group_eps_;
  std::vector<std::size_t> ep_of_;                    // per partition: index into report.eps
  std::vector<std::vector<std::size_t>> neighbours_;  // per partition: bordering partitions
  std::vector<bool> moving_;
  std::vector<std::size_t> target_;  // per moving partition: index into report.eps
};

void assign_partitions(ClaimsReport& report, std::vector<Partition> partitions) {
  for (NodeClaim& c : report.nodes)
    if (!c.in_subgraph) c.partition = -1;
  report.partitions = std::move(partitions);
  for (const Partition& p : report.partitions)
    for (NodeId id : p.nodes) report.nodes[at(id)].partition = p.index;
}

}  // namespace

void move_memory_bound_partitions(const Graph& graph, const std::vector<bool>& alone, const std::vector<int>& clusters,
                                  const std::set<std::string>& group_eps, ClaimsReport& report) {
  std::vector<std::string> placement(graph.nodes.size());
  for (const Node& node : graph.nodes) placement[at(node.id)] = report.nodes[at(node.id)].placed_ep;
  const std::vector<std::string> first_claim = placement;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    Sweep s(graph, alone, clusters, group_eps, report);
    const auto moves = s.settle();
    if (moves.empty()) break;
    for (const auto& [p, to] : moves)
      for (NodeId id : report.partitions[p].nodes) placement[at(id)] = report.eps[to];
    auto partitions = make_partitions(graph, placement, alone, clusters);
    // Moved nodes that make_partitions cannot join up with their new EP's nodes would only
    // trade one hand-over for another: such a sweep is not kept.
    if (partitions.size() >= report.partitions.size()) break;
    for (const auto& [p, to] : moves) {
      const std::string why = s.note(p, to);
      for (NodeId id : report.partitions[p].nodes) {
        NodeClaim& c = report.nodes[at(id)];
        c.placed_ep = report.eps[to];
        c.placement_note = c.placed_ep == first_claim[at(id)]
                               ? std::string()
                               : fmt::format("{}; --placement first-claim keeps it on {}", why, first_claim[at(id)]);
      }
    }
    assign_partitions(report, std::move(partitions));
  }
}

}  // namespace nxrt
