// ClaimsReport: every EP's verdict on every node, the placement and the partitions.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nxrt/ep/epcontext.h"
#include "nxrt/ep/provider.h"
#include "nxrt/ep/registry.h"
#include "nxrt/model/model.h"
#include "nxrt/session/placement_policy.h"

namespace nxrt {

struct NodeClaim {
  const Graph* graph = nullptr;
  NodeId node = -1;
  std::string path;              // "Loop_3/body/Add_1" for subgraph nodes, else the name
  bool in_subgraph = false;
  std::vector<EpVerdict> verdicts;  // every EP, priority order
  std::string placed_ep;         // empty: no EP claims it (or it is inside a subgraph)
  int partition = -1;            // index into ClaimsReport::partitions
  NodeId owner = -1;             // subgraph nodes: the main-graph If/Loop/Scan that runs them
  // Why the placement policy put the node on another EP than the first that claims it;
  // empty when it did not move the node.
  std::string placement_note;
};

// An EPContext node as the reader sees it (explain-claims shows these).
struct ContextNodeInfo {
  NodeId node = -1;
  std::string source;
  std::string ep;                // empty when no loaded EP accepts the source
  std::size_t payload_bytes = 0;
  std::string location;          // "inline" or the side file's name
};

struct ClaimsReport {
  std::vector<std::string> eps;      // priority order
  PlacementPolicy policy = kDefaultPlacementPolicy;
  std::vector<NodeClaim> nodes;      // main graph first (topological), then subgraph nodes
  std::vector<Partition> partitions; // in execution order
  std::vector<ContextNodeInfo> context_nodes;

  // Main-graph nodes that no EP claims.
  std::vector<const NodeClaim*> unclaimed() const;
  // An Error (ErrorCode::kUnclaimed) listing each unclaimed node with every EP's reason.
  Error unclaimed_error(const std::string& model_path) const;
};

// Claims, places (first claiming EP in priority order wins, then `policy` may move
// partitions) and partitions the model's main graph; records the verdicts of subgraph nodes
// too. EPContext nodes are placed on the EP that accepts their `source`.
Expected<ClaimsReport> analyze_claims(const Model& model, const EpRegistry& eps, const EpContextRegistry& contexts,
                                      PlacementPolicy policy);

// Groups placed nodes into convex partitions (no path leaves a group and comes back) and
// orders them for execution. `placement[node]` is the EP name, empty for unplaced nodes.
// Nodes listed in `alone` (EPContext nodes) get a partition of their own. Nodes with a
// cluster id (>= 0 in `clusters`, e.g. a group from an EP's GetCapability) share
// partitions only with nodes of the same cluster.
std::vector<Partition> make_partitions(const Graph& graph, const std::vector<std::string>& placement,
                                       const std::vector<bool>& alone, const std::vector<int>& clusters = {});

// PlacementPolicy::kFewerPartitions, on a report placed by first claim and partitioned
// with make_partitions(graph, placement, alone, clusters): a partition whose nodes are all
// memory-bound on its EP (a known cost of at most 1 FLOP per byte) moves to the EP every
// neighbouring node is on (producers of its inputs, consumers of its outputs; at least
// one), when that EP claims all of it. Neighbouring partitions that move to the same EP in
// the same sweep count as that EP. Partitions holding a node of `alone` or of a cluster
// never move, nor does a node move to an EP of `group_eps` (those place whole groups).
// Sweeps repeat while the partition count falls. Sets placed_ep, partition and
// placement_note of the moved nodes, and the partitions.
void move_memory_bound_partitions(const Graph& graph, const std::vector<bool>& alone, const std::vector<int>& clusters,
                                  const std::set<std::string>& group_eps, ClaimsReport& report);

// Why `nodes` cannot run as one partition: a path that leaves the group and comes back
// ("'Relu_1' -> 'Exp_2' -> 'Add_3'"); empty when the group is convex.
std::string convexity_violation(const Graph& graph, const std::vector<NodeId>& nodes);

// The boundary rule, shared by everyone: inputs are values a member consumes that come
// from outside the group (constant initializers excluded), in first-use order; outputs are
// values a member produces that a graph output or a non-member uses, in production order.
void compute_boundary(const Graph& graph, Partition& partition);

}  // namespace nxrt
