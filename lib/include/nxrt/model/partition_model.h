// A partition as a standalone ONNX model: how EP blobs carry the subgraph they compiled.
#pragma once

#include <set>
#include <span>
#include <string>

#include "nxrt/ep/error.h"
#include "nxrt/ep/provider.h"
#include "nxrt/model/model.h"

namespace nxrt {

// The partition's nodes (attributes, subgraphs), the constant initializers they read and
// the boundary values as graph inputs and outputs (in Partition order), with their types.
// Deterministic: the same partition gives the same bytes. Initializers in `as_inputs` are
// written without data, as graph inputs after the boundary ones: for EPs whose blob stores
// them in a prepared form of their own.
Expected<std::string> partition_to_onnx(const Partition& partition, const std::set<ValueId>& as_inputs = {});

// Parses bytes written by partition_to_onnx; `context` names the blob in messages.
Expected<Model> partition_from_onnx(std::span<const std::byte> bytes, const std::string& context);

// The whole graph of `model` as one partition on `ep` (boundary: the graph's inputs and
// outputs, constants excluded).
Partition whole_graph_partition(const Model& model, std::string ep);

}  // namespace nxrt
