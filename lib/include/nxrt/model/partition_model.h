// A partition as a standalone ONNX model: how EP blobs carry the subgraph they compiled.
#pragma once

#include <cstdint>
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

// Parses bytes written by partition_to_onnx for `ep`; `context` names the blob in messages.
// The graph inputs from index `prepared_from` on stand for the `as_inputs` initializers, which
// `ep` keeps prepared in its blob: they come back as constants without values
// (WeightHandle::prepared). Every node must be one `ep` claims, else the error gives the
// reason for the first it declines: the EP's own validators, not libonnx's operator
// definitions, check what a blob holds (they decide what the EP can build, and libonnx's
// schema registry would cost ~10 ms per load).
Expected<Model> partition_from_onnx(std::span<const std::byte> bytes, const std::string& context,
                                    const ExecutionProvider& ep, std::size_t prepared_from = SIZE_MAX);

// The whole graph of `model` as one partition on `ep` (boundary: the graph's inputs and
// outputs, constants excluded).
Partition whole_graph_partition(const Model& model, std::string ep);

}  // namespace nxrt
