// A partition as a standalone ONNX model (the payload EP blobs carry), and back.
#include "nxrt/model/partition_model.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <set>

#include "nxrt/ep/kernel.h"
#include "nxrt/model/tensor_proto.h"
#include "writer.h"

namespace nxrt {

Expected<std::string> partition_to_onnx(const Partition& partition, const std::set<ValueId>& as_inputs) {
  const Graph& g = *partition.graph;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("nxrt");
  for (const auto& [domain, version] : g.opset_imports) {
    auto* op = model.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  auto* gp = model.mutable_graph();
  gp->set_name(partition.name);
  std::set<ValueId> members_out, written_constants;
  for (NodeId id : partition.nodes) {
    const Node& n = g.node(id);
    if (auto r = node_to_proto(g, n, *gp->add_node()); !r) return std::unexpected(r.error());
    for (ValueId v : n.outputs)
      if (v != kNoValue) members_out.insert(v);
    std::vector<ValueId> reads = n.inputs;
    reads.insert(reads.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
    for (ValueId v : reads) {
      if (v == kNoValue) continue;
      const Value& val = g.value(v);
      if (!val.initializer || val.is_graph_input || as_inputs.contains(v) || !written_constants.insert(v).second)
        continue;
      auto t = val.initializer->materialize();
      if (!t) return forward_error(std::move(t), fmt::format("saving initializer '{}'", val.name));
      auto* init = gp->add_initializer();
      tensor_to_proto(*t, *init);
      init->set_name(val.name);
    }
  }
  for (ValueId v : partition.inputs) value_info_to_proto(g.value(v), *gp->add_input());
  for (ValueId v : as_inputs) value_info_to_proto(g.value(v), *gp->add_input());
  for (ValueId v : partition.outputs) value_info_to_proto(g.value(v), *gp->add_output());
  const std::set<ValueId> outputs(partition.outputs.begin(), partition.outputs.end());
  for (ValueId v : members_out)
    if (!outputs.contains(v) && g.value(v).type.dtype != DType::kUndefined)
      value_info_to_proto(g.value(v), *gp->add_value_info());
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return fail(ErrorCode::kRuntime, fmt::format("cannot serialize partition '{}'", partition.name),
                "protobuf refused the message (over 2 GiB?)");
  return bytes;
}

Expected<Model> partition_from_onnx(std::span<const std::byte> bytes, const std::string& context,
                                    const ExecutionProvider& ep, std::size_t prepared_from) {
  auto proto = std::make_shared<onnx::ModelProto>();
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX) ||
      !proto->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return fail(ErrorCode::kInvalidInput, fmt::format("the partition stored in {} cannot be parsed", context),
                "the blob's model section is corrupted", "recompile the model with nxrt compile-epcontext");
  // Types of every value were written with the blob: no inference needed (or wanted).
  auto model =
      load_model_proto(std::move(proto), context, {.input_shapes = {}, .infer_shapes = false, .check_definitions = false});
  if (!model) return model;
  Graph& g = *model->graph;
  for (std::size_t i = prepared_from; i < g.inputs.size(); ++i) {
    Value& v = g.value(g.inputs[i]);
    const auto shape = v.type.static_shape();
    if (!shape || v.type.dtype == DType::kUndefined)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("{} stores weight '{}' without a type and a static shape", context, v.name),
                  "the blob's model section is corrupted", "recompile the model with nxrt compile-epcontext");
    v.is_graph_input = false;
    v.initializer = WeightHandle::prepared(v.type.dtype, *shape);
  }
  if (prepared_from < g.inputs.size()) g.inputs.resize(prepared_from);
  for (const Node& node : g.nodes)
    if (KernelMatch m = ep.claim(NodeContext(*model->graph, node)); !m)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("{} holds {}, which the {} EP does not claim", context, node.describe(), ep.info().name),
                  m.reason(), "recompile the model with nxrt compile-epcontext");
  return model;
}

Partition whole_graph_partition(const Model& model, std::string ep) {
  const Graph& g = *model.graph;
  Partition p;
  p.graph = &g;
  p.ep = std::move(ep);
  for (const Node& n : g.nodes) p.nodes.push_back(n.id);
  p.inputs = g.inputs;
  p.outputs = g.outputs;
  return p;
}

}  // namespace nxrt
