// OptimizerPass: one named graph-to-graph rewrite.
#pragma once

#include <string_view>

#include "nxrt/ep/error.h"
#include "nxrt/ir/graph.h"

namespace nxrt {

class OptimizerPass {
 public:
  virtual ~OptimizerPass() = default;
  virtual std::string_view name() const = 0;
  // Rewrites the graph in place; returns whether anything changed.
  virtual Expected<bool> run(Graph& graph) const = 0;
};

}  // namespace nxrt
