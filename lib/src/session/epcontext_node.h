// Reading com.microsoft::EPContext nodes: attributes, payload location, primaries.
#pragma once

#include <map>
#include <string>

#include "nxrt/ep/epcontext.h"
#include "nxrt/ir/graph.h"
#include "nxrt/session/claims.h"

namespace nxrt {

// Source, owning EP, payload size and location of a node, without reading side files.
Expected<ContextNodeInfo> describe_context_node(const Graph& graph, const Node& node,
                                                const EpContextRegistry& contexts);

// The runtime form of every EPContext node of the graph, by node id: main_context=1 nodes
// first (external payloads memory-mapped behind the path guard), then main_context=0 nodes
// resolved against the primary with the same source and partition_name.
Expected<std::map<NodeId, EpContext>> read_context_nodes(const Graph& graph);

}  // namespace nxrt
