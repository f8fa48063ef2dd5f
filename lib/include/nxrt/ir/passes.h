// The graph rewrites nxrt applies before claiming, and the list that runs them.
#pragma once

#include <memory>
#include <vector>

#include "nxrt/ep/pass.h"

namespace nxrt {

// Turns Constant nodes of the main graph, and Identity nodes of initializers (how exporters
// share a weight), into initializers, so EPs see constant weights and shapes (and can
// pre-pack them) instead of values computed at run time.
class ConstantToInitializer final : public OptimizerPass {
 public:
  std::string_view name() const override { return "constant-to-initializer"; }
  Expected<std::vector<std::string>> run(Graph& graph) const override;
};

// The passes analyze() runs, in order.
std::vector<std::unique_ptr<OptimizerPass>> default_passes();

// Removes the given nodes, renumbers the rest (keeping their order) and rebuilds links.
void remove_nodes(Graph& graph, const std::vector<NodeId>& doomed);

}  // namespace nxrt
