// Fusing elementwise nodes into chains: each chain becomes one generated kernel that reads
// its external inputs with broadcasting and writes only the chain's last value.
#pragma once

#include <set>
#include <vector>

#include "ops/ops.h"

namespace nxrt::cuda {

class ChainFuser {
 public:
  ChainFuser(const Graph& graph, const OpTable& ops, const Partition& partition);

  bool is_elementwise(const Node& node) const;
  // Adds an elementwise node (in topological order); when no later node can extend its
  // chain, the chain's step is generated and added to `builder`.
  Expected<void> add(PlanBuilder& builder, const Node& node);

 private:
  // Whether value `v` may stay inside a chain: produced by a member elementwise node and
  // read once, by a member, and not a partition output.
  bool fusible(ValueId v) const;
  // The input of `node` whose producer's chain it extends, or kNoValue.
  ValueId chain_input(const Node& node) const;
  bool continues(const Node& node) const;
  Expected<void> emit(PlanBuilder& builder, const std::vector<const Node*>& chain) const;

  const Graph& graph_;
  const OpTable& ops_;
  std::set<NodeId> members_;
  std::set<ValueId> outputs_;
  std::map<NodeId, std::size_t> chain_of_;
  std::vector<std::vector<const Node*>> chains_;
};

}  // namespace nxrt::cuda
