// OptimizerPass: one named graph-to-graph rewrite.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ir/graph.h"

namespace nxrt {

class OptimizerPass {
 public:
  virtual ~OptimizerPass() = default;
  virtual std::string_view name() const = 0;
  // Rewrites the graph in place. Returns one line per change, for reports ("folded
  // Constant 'c0' into initializer 'shape'"); empty when nothing changed.
  virtual Expected<std::vector<std::string>> run(Graph& graph) const = 0;
};

}  // namespace nxrt
