// IR -> ONNX protobuf: nodes, attributes and subgraphs (private to lib/src/model).
#pragma once

#include <onnx/onnx_pb.h>

#include "nxrt/ep/error.h"
#include "nxrt/ir/graph.h"

namespace nxrt {

// Writes one node (name, op, domain, inputs, outputs, attributes incl. subgraphs).
Expected<void> node_to_proto(const Graph& graph, const Node& node, onnx::NodeProto& proto);
// Writes a whole graph: nodes, initializers (materialized), inputs, outputs, value_info.
Expected<void> graph_to_proto(const Graph& graph, onnx::GraphProto& proto);
// A value as ValueInfoProto (name and type).
void value_info_to_proto(const Value& value, onnx::ValueInfoProto& proto);

}  // namespace nxrt
